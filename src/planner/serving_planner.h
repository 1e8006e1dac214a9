// The serving planner: for each tensor-parallel degree, the most requests a replica can decode at
// once while meeting the TTFT and TPOT targets (continuous batching, with prefill work stealing
// decode time), hence the replicas needed at peak load and at average load.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "perf/inference.h"
#include "workload/workload.h"

namespace gpuplan {

struct ServiceTarget {
  int64_t prompt_tokens = 1024, output_tokens = 256;
  double peak_rps = 1, average_rps = 1;  // requests per second
  double ttft_s = 1.0, tpot_s = 0.1;     // latency targets
};

struct ServingOption {
  int64_t tp = 1;
  int64_t concurrency = 0;        // requests in flight per replica
  double ttft_s = 0, tpot_s = 0;  // at that concurrency, prefill interference included
  double replica_rps = 0;         // requests per second one replica sustains
  int64_t replicas_peak = 0, replicas_min = 0;
  int64_t gpus_peak = 0, gpus_min = 0;
  double tokens_per_s_per_gpu = 0;
  std::string why_not;            // empty when the option meets the targets
  bool ok() const { return why_not.empty(); }
};

struct ServingPlan {
  std::optional<ServingOption> best;  // fewest GPUs at peak
  std::vector<ServingOption> options;
};

ServingPlan plan_serving(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff,
                         const Cluster& cluster, const ServiceTarget& target);

}  // namespace gpuplan
