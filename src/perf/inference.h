// The inference performance model: prefill (compute-bound) gives time to first token; each decode
// step reads every weight and the KV cache (memory-bound) and gives time per output token; then
// per-request and total throughput; and, separately, the most concurrent sequences the KV cache allows.
// The serving engine sets the kernel efficiencies and the fixed per-step and per-request costs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/engine.h"
#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "workload/workload.h"

namespace gpuplan {

struct InferenceRequest {
  int64_t prompt_tokens = 512;
  int64_t output_tokens = 128;
  int64_t concurrency = 1;  // sequences decoded together (batch)
};

struct InferenceEstimate {
  double ttft_s = 0;             // prefill of the batch's prompts together (static batching)
  double tpot_s = 0;             // one decode step at the average context length
  double e2e_latency_s = 0;      // ttft + (output - 1) x tpot
  double output_tokens_per_s = 0;          // per request
  double total_output_tokens_per_s = 0;    // all concurrent requests
  double prefill_tokens_per_s = 0;
  // Decode step split.
  double decode_weight_read_s = 0, decode_kv_read_s = 0, decode_compute_s = 0, decode_comm_s = 0,
         decode_overhead_s = 0;  // kernel launches, measured kernel floors and the engine's per-step host time
  double request_overhead_s = 0;  // the engine's fixed cost inside ttft_s
  double prompt_dequantize_s = 0;  // inside ttft_s: quantised weights expanded to FP16 for cuBLAS
  double decode_dequantize_s = 0;  // inside tpot_s: the same, every step of a batch past the GEMV limit
  // The prompts ran as this many forwards of at most prefill_chunk_tokens (0: no limit) each.
  int64_t prefill_forwards = 1, prefill_chunk_tokens = 0;
  std::string tp_link, ep_link, engine;
};

// What serving the request costs in memory: the most concurrent sequences whose KV caches fit in
// the engine's cache budget, and the bytes behind that. Kept apart from the timing because it runs
// the memory model, which callers sweeping concurrency need only once.
struct InferenceMemory {
  std::optional<int64_t> max_concurrency;  // (prompt + output)-token sequences the engine's KV cache holds
  // Weights as the engine holds them (Engine::weight_memory_relative); KV bytes a token costs, with
  // sliding-window layers at full length where the engine caches them so.
  double weight_bytes_per_gpu = 0, kv_bytes_per_token = 0;
  // The engine's KV-cache budget: its share of the card (gpu_memory_utilization) less weights,
  // CUDA context and, where it profiles one, the activation peak of a max_batched_tokens step,
  // in whole blocks. 0 when nothing is left.
  double kv_budget_bytes = 0, profile_peak_bytes = 0;
  double profile_sampler_bytes = 0;  // the profile's sampling peak, where the engine samples in it
  int64_t kv_capacity_tokens = 0;
  double memory_fraction = 0;  // the engine's share of the card (Engine::memory_fraction)
  // GPUs of the tensor-parallel group caching each key/value (kv_cache_replication): what attention
  // data parallelism would divide the cache by.
  double kv_replication = 1;
};

// `w` carries the weight precision, KV precision and TP degree; micro_batch and seq are ignored
// in favour of `r`. REQUIRES: w.validate(m) succeeded.
InferenceEstimate estimate_inference(const ModelSpec& m, const Workload& w, const InferenceRequest& r,
                                     const Gpu& gpu, const Efficiency& eff, const Cluster& cluster, const Engine& engine);
InferenceMemory inference_memory(const ModelSpec& m, const Workload& w, const InferenceRequest& r, const Gpu& gpu,
                                 const Efficiency& eff, const Engine& engine);

}  // namespace gpuplan
