// The memory model: per-GPU bytes of a (model, workload) split into weights, gradients, optimizer
// states, activations, KV cache and runtime overhead, each with the formula that produced it.
// A pure function: no I/O. Totals are given as allocated, reserved, and as nvidia-smi shows them.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hardware/efficiency.h"
#include "model/model.h"
#include "workload/workload.h"

namespace gpuplan {

struct MemoryTerm {
  std::string group;   // weights, gradients, optimizer, activations, kv_cache, overhead
  std::string name;    // "layer activations", "fp32 master weights", ...
  double bytes = 0;
  std::string formula; // how it was computed, for people
};

struct MemoryEstimate {
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0;
  double workspace = 0;          // library and dequantisation buffers (allocated by the framework)
  double allocator_reserve = 0;  // caching-allocator slack: reserved minus allocated
  double cuda_context = 0;       // CUDA context and loaded kernels (outside the allocator)
  double comm_buffers = 0;       // NCCL buffers (outside the allocator)
  double fsdp_working_set = 0;   // unsharded parameters held during compute (inside `weights`)
  double cpu_offload = 0;        // bytes moved to host memory
  int64_t parameters = 0, trainable_parameters = 0;
  // Training: the nvidia-smi figure scaled by the cross-validated published / predicted band of
  // comparable runs (data/fitted.toml); absent without a band.
  std::optional<std::pair<double, double>> per_gpu_bytes_band;
  std::vector<MemoryTerm> terms;

  double overhead() const { return workspace + allocator_reserve + cuda_context + comm_buffers; }
  // What torch.cuda.max_memory_allocated() would report.
  double allocated() const { return weights + gradients + optimizer + activations + kv_cache + workspace; }
  // What torch.cuda.max_memory_reserved() would report.
  double reserved() const { return allocated() + allocator_reserve; }
  // What nvidia-smi shows for the process: the figure that must fit on the card.
  double nvidia_smi() const { return reserved() + cuda_context + comm_buffers; }
  // Weights, gradients and optimizer states alone, without working sets (the ZeRO paper's measure).
  double model_states() const { return weights - fsdp_working_set + gradients + optimizer; }
};

// REQUIRES: w.validate(m) succeeded.
MemoryEstimate estimate_memory(const ModelSpec& m, const Workload& w, const Efficiency& eff);

// GPUs of a tensor-parallel group that hold each cached key/value: tensor-parallel attention splits
// the KV heads, so past tp = kv_heads every head is cached on tp / kv_heads GPUs, and a latent
// (MLA) cache is whole on all of them. 1: nothing is cached twice (attention data parallelism
// caches each request on one GPU).
double kv_cache_replication(const ModelSpec& m, const Parallelism& p);

}  // namespace gpuplan
