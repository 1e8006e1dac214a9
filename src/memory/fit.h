// "Will it fit on this card?": headroom, the largest micro-batch and the longest sequence that fit,
// and the smallest split over more GPUs that makes a job fit when one card is not enough.
#pragma once

#include <cstdint>
#include <optional>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "memory/headroom.h"
#include "memory/memory_model.h"

namespace gpuplan {

// The memory a card offers to one process: the marketed capacity read in binary units
// (an "80 GB" A100 reports 81,920 MiB in nvidia-smi), as HBM and GDDR capacities are binary.
double usable_memory_bytes(const Gpu& gpu);

// The margin `e` leaves on a card of `capacity_bytes` under `h` (its error band included).
MemoryMargin margin_on_card(const MemoryEstimate& e, double capacity_bytes, const Headroom& h);

struct FitReport {
  bool fits = false;                    // fits with the required headroom
  double capacity_bytes = 0;
  double headroom_bytes = 0;            // capacity minus the nvidia-smi total; negative if over
  MemoryMargin margin;                  // how close, against the headroom rule
  std::optional<int64_t> max_batch;     // largest micro-batch that fits; nullopt if even 1 does not
  std::optional<int64_t> max_seq;       // longest sequence at the given batch, capped at max_position
  bool max_seq_capped = false;          // max_seq reached the model's context limit
};

// max_batch and max_seq keep the headroom too.
FitReport check_fit(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff,
                    const Headroom& headroom = {});

// The fewest GPUs (powers of two up to `max_gpus`) that make the job fit: ZeRO-3/FSDP for training,
// tensor parallelism for inference. nullopt if none does.
std::optional<Workload> smallest_fitting_split(const ModelSpec& m, const Workload& w, const Gpu& gpu,
                                               const Efficiency& eff, int64_t max_gpus = 4096,
                                               const Headroom& headroom = {});

}  // namespace gpuplan
