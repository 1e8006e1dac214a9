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
  int64_t gpus_per_node = 8;
  double network_Bps = 400e9 / 8;  // per GPU, one direction: 400 Gb/s InfiniBand NIC per GPU
};

// Default cluster for a GPU: 8 GPUs a node and a 400 Gb/s NIC per GPU for datacenter parts; for
// workstation and consumer cards, 4 a box and 25 Gb/s Ethernet between boxes.
Cluster default_cluster(const Gpu& gpu);

enum class Collective { all_reduce, reduce_scatter, all_gather, p2p };

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

}  // namespace gpuplan
