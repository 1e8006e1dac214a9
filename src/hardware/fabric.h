// Named inter-node fabrics (data/fabrics.toml): a NIC's line rate and how many a node has, so a
// user names what they have (`--fabric ib-ndr`) and the model derives each GPU's share of the
// node's network bandwidth.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace gpuplan {

struct Fabric {
  std::string id, name, source, source_date;
  double nic_gbps = 0;        // one NIC, one direction, Gbit/s
  int64_t nics_per_node = 1;
  // Each GPU's share of the node's aggregate, bytes/s, for a node of `gpus_per_node`.
  double per_gpu_Bps(int64_t gpus_per_node) const {
    return nic_gbps * 1e9 / 8 * static_cast<double>(nics_per_node) / static_cast<double>(gpus_per_node);
  }
};

class FabricCatalog {
 public:
  static Result<FabricCatalog> from_toml(std::string_view text, const std::string& origin);
  static const FabricCatalog& builtin();
  // Fails with the nearest ids suggested; `field` names the input ("--fabric").
  Result<Fabric> find(const std::string& id, const std::string& field = "--fabric") const;
  const std::vector<Fabric>& fabrics() const { return fabrics_; }

 private:
  std::vector<Fabric> fabrics_;
};

}  // namespace gpuplan
