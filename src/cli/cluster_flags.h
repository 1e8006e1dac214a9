// The flags that describe the cluster around the GPUs (GPUs per node, the network or a named
// fabric, NVLink present or not), shared by train, infer and plan, and the Cluster they make.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "hardware/gpu.h"
#include "perf/comm.h"
#include "util/status.h"

namespace gpuplan::cli {

struct ClusterFlags {
  int64_t gpus_per_node = 0;  // 0: the GPU's usual node
  double network_gbps = 0;    // 0: the default network, or the fabric's
  std::string fabric;
  bool no_nvlink = false;
  double nvlink_gbps = 0;     // 0: the GPU's NVLink figure
};

void add_cluster_flags(CLI::App& sub, ClusterFlags& c);
// `gpu`'s default cluster with the flags applied; errors name the flag.
Result<Cluster> make_cluster(const ClusterFlags& f, const Gpu& gpu);
// The network between nodes `c` assumes and where it came from, for outputs to name: as JSON
// fields (gpus_per_node, network_gbps_per_gpu, network_origin) and as a phrase.
std::string network_origin(const Cluster& c, const ClusterFlags& f, const Gpu& gpu);
nlohmann::json network_json(const Cluster& c, const ClusterFlags& f, const Gpu& gpu);
std::string network_line(const Cluster& c, const ClusterFlags& f, const Gpu& gpu);

}  // namespace gpuplan::cli
