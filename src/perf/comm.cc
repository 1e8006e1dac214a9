#include "perf/comm.h"

#include <algorithm>

namespace gpuplan {

Cluster default_cluster(const Gpu& gpu) {
  Cluster c;
  if (gpu.nvlink_domain_gpus > 0) c.gpus_per_node = gpu.nvlink_domain_gpus;
  if (gpu.node_network_bps > 0) {
    c.network_Bps = gpu.node_network_bps / 8;
    c.network_source = Cluster::NetworkSource::node_nics;
  }
  if (gpu.tier != Tier::datacenter) {
    c.gpus_per_node = 4;
    c.network_Bps = 25e9 / 8;
    c.network_source = Cluster::NetworkSource::workstation;
  }
  return c;
}

Link group_link(const Gpu& gpu, const Efficiency& eff, const Cluster& c, int64_t ranks, int64_t stride) {
  if (ranks <= 1) return {"none", 1e30, 0};
  const bool crosses_nodes = ranks * stride > c.gpus_per_node;
  if (crosses_nodes) return {"network", c.network_Bps * eff.network_fraction, eff.collective_latency_s * 2};
  // NVLink bridges (PCIe cards) join pairs only; larger groups fall back to PCIe.
  const bool bridged_only = gpu.form_factor.find("PCIe") != std::string::npos;
  if (c.nvlink && gpu.has_nvlink() && !(bridged_only && ranks > 2))
    return {"NVLink", (c.nvlink_Bps > 0 ? c.nvlink_Bps : gpu.interconnect_Bps) / 2 * eff.nvlink_fraction, eff.collective_latency_s};
  return {"PCIe", gpu.pcie_Bps() * eff.pcie_fraction, eff.collective_latency_s};
}

double collective_time(Collective kind, double bytes, int64_t ranks, const Link& link) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double n = static_cast<double>(ranks);
  double factor = 1;
  switch (kind) {
    case Collective::all_reduce: factor = 2 * (n - 1) / n; break;
    case Collective::reduce_scatter:
    case Collective::all_gather: factor = (n - 1) / n; break;
    case Collective::p2p: factor = 1; break;
    case Collective::all_to_all: factor = (n - 1) / n; break;
  }
  // Calculon's network model: one latency per collective plus the bus-bandwidth term.
  return link.latency_s + bytes * factor / link.busbw_Bps;
}

}  // namespace gpuplan

namespace gpuplan {

double all_to_all_time(double bytes, int64_t ranks, int64_t stride, const Gpu& gpu, const Efficiency& eff,
                       const Cluster& c) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const double n = static_cast<double>(ranks);
  const Link link = group_link(gpu, eff, c, ranks, stride);
  if (link.name != "network") {
    return link.latency_s + bytes * (n - 1) / n / (link.busbw_Bps * eff.alltoall_fraction);
  }
  // Members per scale-up domain, and the share of each rank's bytes bound elsewhere.
  const double local = std::max(1.0, std::min(n, static_cast<double>(c.gpus_per_node) / std::max<int64_t>(1, stride)));
  const double remote_share = (n - local) / n;
  const Link inner = group_link(gpu, eff, c, static_cast<int64_t>(local), stride);
  const double over_network = bytes * remote_share / (link.busbw_Bps * eff.alltoall_fraction);
  const double over_nvlink = local > 1 ? bytes * (local - 1) / n / (inner.busbw_Bps * eff.alltoall_fraction) : 0;
  return link.latency_s + std::max(over_network, over_nvlink);
}

}  // namespace gpuplan

namespace gpuplan {

namespace {

// Members of a group per scale-up domain: as many as the domain holds that divide the group evenly
// (64 ranks on NVL72 racks run as two domains of 32, not as one flat ring over the network).
int64_t domain_members(int64_t ranks, int64_t stride, const Cluster& c) {
  int64_t local = std::max<int64_t>(1, std::min<int64_t>(ranks, c.gpus_per_node / std::max<int64_t>(1, stride)));
  while (local > 1 && ranks % local != 0) --local;
  return local;
}

Link without_latency(Link link) {
  link.latency_s = 0;
  return link;
}

}  // namespace

double ring_latency(int64_t ranks, int64_t stride, const Gpu& gpu, const Efficiency& eff, const Cluster& c) {
  if (ranks <= 1) return 0;
  const int64_t local = domain_members(ranks, stride, c);
  const int64_t nodes = ranks / local;
  const std::string inner = group_link(gpu, eff, c, local, stride).name;
  const double intra_step = inner == "NVLink" ? eff.ring_step_latency_nvlink_s
                            : inner == "PCIe" ? eff.ring_step_latency_pcie_s
                                              : eff.ring_step_latency_network_s;
  return eff.ring_base_latency_s + static_cast<double>(ranks - nodes) * intra_step +
         static_cast<double>(nodes - 1) * eff.ring_step_latency_network_s;
}

double group_collective_time(Collective kind, double bytes, int64_t ranks, int64_t stride, const Gpu& gpu,
                             const Efficiency& eff, const Cluster& c) {
  const Link link = group_link(gpu, eff, c, ranks, stride);
  const int64_t local = domain_members(ranks, stride, c);
  const bool two_levels = link.name == "network" && local > 1;
  const Link inner = group_link(gpu, eff, c, local, stride);
  const int64_t nodes = ranks / local;
  const double shard = bytes / static_cast<double>(local);
  switch (kind) {
    case Collective::all_reduce:
      if (!two_levels) return collective_time(kind, bytes, ranks, link);
      return collective_time(Collective::reduce_scatter, bytes, local, inner) +
             collective_time(Collective::all_reduce, shard, nodes, link) +
             collective_time(Collective::all_gather, bytes, local, inner);
    case Collective::reduce_scatter:
    case Collective::all_gather: {
      // NCCL runs these as rings (its trees serve all-reduce): the bandwidth terms of the two
      // levels, and the ring's latency over every member.
      if (ranks <= 1 || bytes <= 0) return 0;
      const double moved = two_levels ? collective_time(kind, bytes, local, without_latency(inner)) +
                                            collective_time(kind, shard, nodes, without_latency(link))
                                      : collective_time(kind, bytes, ranks, without_latency(link));
      return moved + ring_latency(ranks, stride, gpu, eff, c);
    }
    default: return collective_time(kind, bytes, ranks, link);
  }
}

}  // namespace gpuplan
