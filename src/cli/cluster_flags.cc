#include "cli/cluster_flags.h"

#include <fmt/format.h>

#include "hardware/fabric.h"
#include "util/checked.h"

namespace gpuplan::cli {

void add_cluster_flags(CLI::App& sub, ClusterFlags& c) {
  sub.add_option("--gpus-per-node", c.gpus_per_node, "GPUs per node (default 8 for datacenter parts, 4 otherwise)");
  sub.add_option("--network-gbit-s,--network-gbps", c.network_gbps, "network bandwidth per GPU in Gbit/s (default: the NICs of the node the GPU ships in, gpus.toml node_network_gbps, else 400 IB; 25 for workstation/consumer)");
  sub.add_option("--fabric", c.fabric, "named inter-node fabric: ib-ndr, ib-hdr, roce-400, eth-400, eth-100, ... (`gpuplan fabrics`)");
  sub.add_flag("--no-nvlink", c.no_nvlink, "the cards have no NVLink (a PCIe card without its bridge): collectives in a node go over PCIe");
  sub.add_option("--nvlink-gbps", c.nvlink_gbps, "NVLink bandwidth per GPU in GB/s, both directions together as datasheets give it, where the node wires less than the part offers (a board without NVSwitch) (default: the catalog's, `gpuplan gpus`)");
}

Result<Cluster> make_cluster(const ClusterFlags& f, const Gpu& gpu) {
  if (auto s = require_range(f.gpus_per_node, "--gpus-per-node", 0, 1024)) return *s;
  if (auto s = require_finite(f.network_gbps, "--network-gbps", 0, 1e5)) return *s;
  Cluster c = default_cluster(gpu);
  if (f.gpus_per_node > 0) c.gpus_per_node = f.gpus_per_node;
  if (f.network_gbps > 0) {
    c.network_Bps = f.network_gbps * 1e9 / 8;
    c.network_source = Cluster::NetworkSource::flag;
  }
  c.nvlink = !f.no_nvlink;
  if (auto s = require_finite(f.nvlink_gbps, "--nvlink-gbps", 0, 1e5)) return *s;
  if (f.nvlink_gbps > 0) {
    if (f.no_nvlink) return make_error("--nvlink-gbps", "give --nvlink-gbps or --no-nvlink, not both");
    if (!gpu.has_nvlink()) return make_error("--nvlink-gbps", gpu.id + " has no NVLink; its collectives in a node go over PCIe");
    c.nvlink_Bps = f.nvlink_gbps * 1e9;
  }
  if (!f.fabric.empty()) {
    if (f.network_gbps > 0) return make_error("--fabric", "give --fabric or --network-gbps, not both");
    auto fabric = FabricCatalog::builtin().find(f.fabric);
    if (!fabric) return fabric.error();
    c.network_Bps = fabric->per_gpu_Bps(c.gpus_per_node);
    c.network_source = Cluster::NetworkSource::fabric;
  }
  return c;
}

std::string network_origin(const Cluster& c, const ClusterFlags& f, const Gpu& gpu) {
  switch (c.network_source) {
    case Cluster::NetworkSource::fabric: return "--fabric " + f.fabric;
    case Cluster::NetworkSource::flag: return "--network-gbps";
    case Cluster::NetworkSource::workstation: return "Ethernet between workstation boxes, gpuplan's default";
    case Cluster::NetworkSource::node_nics: return "the NICs of the node " + gpu.id + " ships in (gpus.toml node_network_gbps)";
    case Cluster::NetworkSource::assumed: break;
  }
  return "gpuplan's default, a 400 Gb/s NIC per GPU";
}

nlohmann::json network_json(const Cluster& c, const ClusterFlags& f, const Gpu& gpu) {
  return {{"gpus_per_node", c.gpus_per_node},
          {"nvlink_gbyte_s_per_gpu", c.nvlink && gpu.has_nvlink() ? (c.nvlink_Bps > 0 ? c.nvlink_Bps : gpu.interconnect_Bps) / 1e9 : 0},
          {"network_gbps_per_gpu", c.network_Bps * 8 / 1e9},
          {"network_origin", network_origin(c, f, gpu)}};
}

std::string network_line(const Cluster& c, const ClusterFlags& f, const Gpu& gpu) {
  return fmt::format("{:.0f} Gb/s a GPU between nodes of {} ({})", c.network_Bps * 8 / 1e9, c.gpus_per_node,
                     network_origin(c, f, gpu));
}

}  // namespace gpuplan::cli
