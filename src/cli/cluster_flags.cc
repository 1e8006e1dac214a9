#include "cli/cluster_flags.h"

#include "hardware/fabric.h"
#include "util/checked.h"

namespace gpuplan::cli {

void add_cluster_flags(CLI::App& sub, ClusterFlags& c) {
  sub.add_option("--gpus-per-node", c.gpus_per_node, "GPUs per node (default 8 for datacenter parts, 4 otherwise)");
  sub.add_option("--network-gbit-s,--network-gbps", c.network_gbps, "network bandwidth per GPU in Gbit/s (default: the NICs of the node the GPU ships in, gpus.toml node_network_gbps, else 400 IB; 25 for workstation/consumer)");
  sub.add_option("--fabric", c.fabric, "named inter-node fabric: ib-ndr, ib-hdr, roce-400, eth-400, eth-100, ... (`gpuplan fabrics`)");
  sub.add_flag("--no-nvlink", c.no_nvlink, "the cards have no NVLink (a PCIe card without its bridge): collectives in a node go over PCIe");
}

Result<Cluster> make_cluster(const ClusterFlags& f, const Gpu& gpu) {
  if (auto s = require_range(f.gpus_per_node, "--gpus-per-node", 0, 1024)) return *s;
  if (auto s = require_finite(f.network_gbps, "--network-gbps", 0, 1e5)) return *s;
  Cluster c = default_cluster(gpu);
  if (f.gpus_per_node > 0) c.gpus_per_node = f.gpus_per_node;
  if (f.network_gbps > 0) c.network_Bps = f.network_gbps * 1e9 / 8;
  c.nvlink = !f.no_nvlink;
  if (!f.fabric.empty()) {
    if (f.network_gbps > 0) return make_error("--fabric", "give --fabric or --network-gbps, not both");
    auto fabric = FabricCatalog::builtin().find(f.fabric);
    if (!fabric) return fabric.error();
    c.network_Bps = fabric->per_gpu_Bps(c.gpus_per_node);
  }
  return c;
}

std::string network_origin(const ClusterFlags& f, const Gpu& gpu) {
  if (!f.fabric.empty()) return "--fabric " + f.fabric;
  if (f.network_gbps > 0) return "--network-gbps";
  if (gpu.tier != Tier::datacenter) return "Ethernet between workstation boxes, gpuplan's default";
  if (gpu.node_network_bps > 0) return "the NICs of the node " + gpu.id + " ships in (gpus.toml node_network_gbps)";
  return "gpuplan's default, a 400 Gb/s NIC per GPU";
}

}  // namespace gpuplan::cli
