// Collective communication cost: ring all-reduce, reduce-scatter, all-gather and point-to-point
// over the link that joins the group (NVLink inside a node, PCIe for cards without it, the
// network between nodes), with the NCCL bus-bandwidth factors (nccl-tests PERFORMANCE.md).
#pragma once

#include <cstdint>
#include <string>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"

namespace gpuplan {

struct Cluster {
  int64_t gpus_per_node = 8;  // GPUs that share the scale-up link (NVLink domain): 72 for GB200 NVL72
  double network_Bps = 400e9 / 8;  // per GPU, one direction: 400 Gb/s InfiniBand NIC per GPU
  // Where network_Bps came from, for outputs to name what they assumed.
  enum class NetworkSource { assumed, node_nics, workstation, flag, fabric };
  NetworkSource network_source = NetworkSource::assumed;
  // false: the cards' NVLink is not there (a PCIe card without its bridge); collectives in a node
  // go over PCIe.
  bool nvlink = true;
  // NVLink per GPU, both directions together as datasheets give it, where the node has less than
  // the part's (a board without NVSwitch, where a GPU reaches each peer over a few links only);
  // 0: the GPU's own (gpus.toml interconnect_gbps).
  double nvlink_Bps = 0;
};

// Default cluster for a GPU: 8 GPUs a node (or the part's NVLink domain, 72 GPUs for GB200/GB300
// NVL72) and the NICs of the node the part ships in (gpus.toml node_network_gbps: 200 Gb/s a GPU
// in a DGX A100, 800 in a GB300 tray), else 400 Gb/s; for workstation and consumer cards, 4 a box
// and 25 Gb/s Ethernet between boxes.
Cluster default_cluster(const Gpu& gpu);

enum class Collective { all_reduce, reduce_scatter, all_gather, p2p, all_to_all };

struct Link {
  std::string name;   // "NVLink", "PCIe", "network"
  double busbw_Bps;   // achievable bus bandwidth per GPU, one direction
  double latency_s;
};

// The slowest link a group of `ranks` GPUs crosses when its members sit `stride` ranks apart in the
// job (TP innermost: stride 1).
Link group_link(const Gpu& gpu, const Efficiency& eff, const Cluster& c, int64_t ranks, int64_t stride);

// Seconds for one collective of `bytes` (the full buffer per rank) over `ranks` GPUs.
double collective_time(Collective kind, double bytes, int64_t ranks, const Link& link);

// A collective over `ranks` GPUs `stride` apart. Inside a node it is one ring on the scale-up
// link. Across nodes with several members per node it runs in two levels, as NCCL's multi-NIC
// rings and hierarchical algorithms do: reduce-scatter inside the node, the node's members each
// reducing their share across nodes through their own NIC (so the network carries 1/local of the
// buffer per GPU: the node's aggregate NIC bandwidth, not one NIC's), then all-gather inside.
double group_collective_time(Collective kind, double bytes, int64_t ranks, int64_t stride, const Gpu& gpu,
                             const Efficiency& eff, const Cluster& c);

// The latency of one ring all-gather or reduce-scatter over `ranks` GPUs `stride` apart, as NCCL's
// tuning model counts it (src/graph/tuning.cc): a base, then one step per rank less one, of which
// one per node boundary crosses the network and the rest the scale-up link (or PCIe). It grows with
// the group, which is what makes per-layer gathers over thousands of ranks slow.
double ring_latency(int64_t ranks, int64_t stride, const Gpu& gpu, const Efficiency& eff, const Cluster& c);

// Mixture-of-experts dispatch or combine: each of `ranks` GPUs (members `stride` apart) sends
// `bytes` of token copies spread over the group. Inside one NVLink domain it runs on NVLink;
// beyond it, the share bound for other domains leaves through the network while the rest moves
// on NVLink at the same time, and the slower of the two sets the time (DeepEP's split of
// intranode NVLink and internode RDMA traffic).
double all_to_all_time(double bytes, int64_t ranks, int64_t stride, const Gpu& gpu, const Efficiency& eff,
                       const Cluster& c);

}  // namespace gpuplan
