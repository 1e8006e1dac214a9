// "What does it take to fit?": the steps engineers try, in the order they try them, before adding
// GPUs: a smaller micro-batch with gradient accumulation, activation recomputation (selective, one
// layer in two, full), sharding the optimizer, gradients and parameters over the GPUs (ZeRO 1-3 /
// FSDP), and the optimizer states in CPU memory. Training only; pure memory arithmetic, no timing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "hardware/platform.h"
#include "memory/headroom.h"
#include "model/model.h"
#include "stack/stack.h"
#include "workload/workload.h"

namespace gpuplan {

struct FitStep {
  Workload workload;
  double memory_per_gpu_bytes = 0;
  double host_bytes_per_node = 0;     // CPU memory for offloaded states, per node
  std::vector<std::string> changes;   // what was changed from the request, in words
};

struct FitSearch {
  std::optional<FitStep> first;            // the fewest GPUs, then the least change
  std::optional<FitStep> without_offload;  // the fewest GPUs keeping everything on the GPUs
};

// Powers of two from the request's GPU count up to `max_gpus`. `platform` (may be null) limits the
// search to what the stack offers and what the host memory holds.
FitSearch find_fit(const ModelSpec& m, const Workload& request, const Gpu& gpu, const Efficiency& eff, const Stack& stack,
                   const Platform* platform, const Headroom& headroom, int64_t gpus_per_node, int64_t max_gpus = 4096);

}  // namespace gpuplan
