// Built-in model presets (data/models.toml): common architectures by id, each citing its config.json.
#pragma once

#include <string>
#include <vector>

#include "model/model.h"
#include <toml++/toml.h>

#include "util/status.h"

namespace gpuplan {

// One [[model]] table in the layout of data/models.toml.
Result<ModelSpec> model_from_table(const toml::table& t, const std::string& where);

class Presets {
 public:
  static Result<Presets> from_toml(std::string_view text, const std::string& origin);
  static const Presets& builtin();

  // By id (case-insensitively), or by a Hugging Face id listed in the preset's hub_ids.
  Result<ModelSpec> find(const std::string& id) const;
  const std::vector<ModelSpec>& models() const { return models_; }
  std::vector<std::string> ids() const;

 private:
  std::vector<ModelSpec> models_;
  std::vector<std::pair<std::string, size_t>> hub_ids_;  // hub id, index into models_
};

}  // namespace gpuplan
