// The time a training step spends on optimizer states kept in CPU memory (ZeRO-Offload, Ren et al.
// 2021, "ZeRO-Offload: Democratizing Billion-Scale Model Training", section 4): each GPU sends its
// gradient shard over PCIe and gets its updated 16-bit weights back, and the host updates the
// node's shards, reading and writing fp32 master weights and optimizer moments in host memory.
// Counted after the backward pass, not overlapped (DeepSpeed's delayed parameter update is off by
// default), at the PCIe peak and at the share of the host's memory bandwidth the stack's CPU
// optimizer was measured to stream at (data/stacks.toml host_optimizer_fraction).
#pragma once

#include <cstdint>

#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/training.h"
#include "stack/stack.h"
#include "workload/workload.h"

namespace gpuplan {

// REQUIRES: w.offload_optimizer. `gpus_per_node` GPUs share a host whose optimizer streams
// `host_optimizer_Bps` through its memory.
double offload_optimizer_step_s(const ModelSpec& m, const Workload& w, const Gpu& gpu, int64_t gpus_per_node,
                                double host_optimizer_Bps);

// The host memory bandwidth of the node class platform.toml houses `gpu` in; 0 where none.
double node_host_memory_Bps(const Gpu& gpu);

// Where `w` offloads its optimizer, puts its update on the host: the step's GPU optimizer time is
// replaced by the host step (at the estimate's fitted memory-bound scale, and in its fit terms) on
// a host of `host_memory_Bps` (0: the node class that houses `gpu`, platform.toml's) with
// `stack`'s CPU optimizer, and what follows from the step time (tokens/s, MFU, HFU, bands, time
// and GPU-hours to train) is updated. Nothing otherwise. REQUIRES: stack.host_optimizer_fraction > 0 where w offloads.
void add_host_optimizer_step(TrainingEstimate& e, const ModelSpec& m, const Workload& w, const Gpu& gpu,
                             const Stack& stack, int64_t gpus_per_node, double host_memory_Bps = 0);

}  // namespace gpuplan
