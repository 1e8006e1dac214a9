// The training planner: an exhaustive search over every valid parallel layout (GPU count, TP, PP,
// DP, micro-batch, ZeRO stage, recompute, interleaving) for the fastest one that fits memory,
// with the runners-up and the best layout at each GPU count.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "perf/training.h"
#include "workload/workload.h"

namespace gpuplan {

struct PlanSpace {
  int64_t min_gpus = 1, max_gpus = 8;  // powers of two in this range are searched
  int64_t global_batch = 0;            // sequences per step; 0 = 4 x the GPU count
  std::vector<int64_t> micro_batches = {1, 2, 4, 8};
  std::vector<int64_t> virtual_stages = {1, 2, 4};
  // Expert-parallel degrees to try for a mixture-of-experts model (those that divide tp x dp and
  // the experts); empty = the base workload's.
  std::vector<int64_t> expert_parallel;
  std::optional<double> tokens;        // for time to train
  size_t keep = 5;                     // runners-up to keep
};

struct PlanCandidate {
  Workload workload;
  TrainingEstimate estimate;
  double memory_per_gpu_bytes = 0;
};

struct PlanResult {
  std::optional<PlanCandidate> best;
  std::vector<PlanCandidate> runners_up;     // next fastest, in order
  std::vector<PlanCandidate> best_per_count;  // fastest fitting layout at each GPU count
  int64_t configs_evaluated = 0;
  int64_t configs_fitting = 0;
};

// `base` gives task, precision, optimizer, sequence and flash attention; the planner chooses the
// rest, with the recomputation modes `stack` offers. `eff` is resolved for the GPU and stack.
// `progress(done, total)` is called now and then (may be empty).
PlanResult plan_training(const ModelSpec& m, const Workload& base, const Gpu& gpu, const Efficiency& eff,
                         const Stack& stack, const Cluster& cluster, const PlanSpace& space,
                         const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace gpuplan
