// The hardware catalog: the accelerators gpuplan knows, loaded from TOML (built-in data/gpus.toml
// or a user's file in the same layout) and looked up by id.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

#include "hardware/gpu.h"
#include "util/status.h"

namespace gpuplan {

class Catalog {
 public:
  static Result<Catalog> from_toml(std::string_view text, const std::string& origin);
  static Result<Catalog> from_file(const std::string& path);
  // The built-in catalog; parsed once per process.
  static const Catalog& builtin();

  // Fails with the nearest ids suggested when `id` is unknown. `field` names the input in errors.
  Result<Gpu> find(const std::string& id, const std::string& field = "--gpu") const;
  const std::vector<Gpu>& gpus() const { return gpus_; }
  std::vector<std::string> ids() const;
  // The catalog id for a device name as the driver reports it ("NVIDIA H100 80GB HBM3"), if known.
  std::optional<std::string> match_device(const std::string& driver_name, double memory_bytes) const;

 private:
  static Result<Catalog> from_table(const toml::table& doc, const std::string& origin);
  std::vector<Gpu> gpus_;
};

}  // namespace gpuplan
