// The training planner: an exhaustive search over every valid parallel layout (GPU count, TP, PP,
// DP, micro-batch and gradient accumulation, ZeRO stage, recompute, interleaving, optimizer offload)
// at a fixed global batch, for the plans that fit memory with the headroom rule; ranked by time
// (the fastest) and by cost (the fewest GPU-hours per step), with the best layout at each GPU count.
// Only what the software stack really offers and what the cards' links carry is searched.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "hardware/platform.h"
#include "memory/headroom.h"
#include "model/model.h"
#include "perf/comm.h"
#include "perf/training.h"
#include "workload/workload.h"

namespace gpuplan {

// Sequences per optimizer step when none is given: about a million tokens (2^20 / seq, at least 1),
// the same at every GPU count so that plans at different counts train the same model.
int64_t default_global_batch(int64_t seq);

struct PlanSpace {
  int64_t min_gpus = 1, max_gpus = 8;  // powers of two in this range are searched
  int64_t global_batch = 0;            // sequences per step; 0 = default_global_batch(seq)
  std::vector<int64_t> micro_batches = {1, 2, 4, 8};
  std::vector<int64_t> virtual_stages = {1, 2, 4};
  // Expert-parallel degrees to try for a mixture-of-experts model (those that divide tp x dp and
  // the experts); empty = the base workload's.
  std::vector<int64_t> expert_parallel;
  // Context-parallel degrees to try (each divides the GPUs left after tp x pp, and 2 x cp the
  // sequence); {1} = none. Long sequences want {1, 2, 4, 8}.
  std::vector<int64_t> context_parallel = {1};
  std::optional<double> tokens;        // for time to train
  size_t keep = 5;                     // runners-up to keep
  Headroom headroom;                   // the memory margin every plan keeps
  // Stack parallelism, tensor-parallel links, host memory for offload. nullptr: none of these rules.
  const Platform* platform = nullptr;
  bool try_offload = true;             // also try optimizer states in CPU memory
};

struct PlanCandidate {
  Workload workload;
  TrainingEstimate estimate;
  double memory_per_gpu_bytes = 0;
  double capacity_bytes = 0;
  MemoryMargin margin;
  double host_bytes_per_node = 0;  // CPU memory the offloaded states need in each node
  double gpu_hours_per_step() const { return estimate.step_time_s * static_cast<double>(workload.par.gpus()) / 3600.0; }
};

struct PlanResult {
  int64_t global_batch = 0;                  // the batch every plan trains at
  std::optional<PlanCandidate> best;         // fastest
  std::optional<PlanCandidate> cheapest;     // fewest GPU-hours per step
  std::vector<PlanCandidate> runners_up;     // next fastest, in order
  std::vector<PlanCandidate> best_per_count;  // fastest fitting layout at each GPU count
  int64_t configs_evaluated = 0;
  int64_t configs_fitting = 0;
  int64_t excluded_by_stack = 0;   // layouts the stack does not offer
  int64_t excluded_by_link = 0;    // tensor parallelism without NVLink or peer-to-peer
  int64_t excluded_by_memory = 0;  // over the card (with headroom) or over the host memory
  std::string refused;             // why nothing was searched (no platform record for the stack)
};

// `base` gives task, precision, optimizer, sequence and flash attention; the planner chooses the
// rest, with the recomputation modes `stack` offers. `eff` is resolved for the GPU and stack.
// `progress(done, total)` is called now and then (may be empty).
PlanResult plan_training(const ModelSpec& m, const Workload& base, const Gpu& gpu, const Efficiency& eff,
                         const Stack& stack, const Cluster& cluster, const PlanSpace& space,
                         const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace gpuplan
