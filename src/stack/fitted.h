// Parameters fitted on the published runs of data/validation.toml by `gpuplan fit` and stored in
// data/fitted.toml: a few multipliers on the modelled step-time and memory terms, per stack where a
// stack has enough rows, and the error bands the leave-one-publication-out residuals give.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "util/status.h"

namespace gpuplan {

// published / predicted ratios of comparable rows scored out of sample (10th and 90th percentile).
struct FitBand {
  double low = 1, high = 1;
  int rows = 0;  // 0: no band (no comparable rows)
};

// Applied to one training estimate. Identity values leave the sourced model untouched.
struct TrainingFit {
  // Step time = compute_scale x compute-bound work + memory_scale x (memory-bound work, launches,
  // optimizer) + comm_scale x exposed communication (each with its share of the pipeline bubble).
  // comm_scale applies to NVLink; comm_scale_pcie and comm_scale_network to collectives over PCIe
  // and over the inter-node network.
  double compute_scale = 1, memory_scale = 1, comm_scale = 1, comm_scale_pcie = 1, comm_scale_network = 1;
  // The scale of communication over a link named as group_link() names it.
  double comm_scale_for(const std::string& link) const {
    return link == "PCIe" ? comm_scale_pcie : link == "network" ? comm_scale_network : comm_scale;
  }
  // Of the tensor-parallel time a stack's overlap (TE userbuffers, async TP) could hide under the
  // layer's GEMMs, the share it does hide (1: all of it).
  double tp_overlap_scale = 1;
  // Training memory: saved activations x activation_scale; the caching allocator's reserve as a
  // fraction of activations and workspaces (unset: efficiency.toml's allocator_fraction).
  double activation_scale = 1;
  double allocator_fraction = -1;
  FitBand throughput_band, memory_band;  // step time; per-GPU memory
  // Per-GPU memory by task class (memory_band_class()) where the class has rows enough: the error of
  // a QLoRA estimate is not that of FSDP pre-training. memory_band serves the classes without one.
  std::map<std::string, FitBand> memory_band_by_task;
  const FitBand& memory_band_for(const std::string& task_class) const {
    auto it = memory_band_by_task.find(task_class);
    return it != memory_band_by_task.end() ? it->second : memory_band;
  }
};

class FittedParameters {
 public:
  static Result<FittedParameters> from_toml(std::string_view text, const std::string& origin);
  static const FittedParameters& builtin();

  // The stack's own section when the fit had one, else the global one.
  const TrainingFit& for_stack(const std::string& stack_id) const;
  // The same file, as `gpuplan fit` writes it.
  std::string to_toml(const std::string& header) const;

  TrainingFit global;
  std::map<std::string, TrainingFit> stacks;

  // Serving: one multiplier on an engine's step and request times (1: the sourced figures alone),
  // the engine's own where it had rows enough, else the one fitted on every engine's rows.
  double serving_time_scale = 1;
  std::map<std::string, double> serving_engine_time_scale;
  double serving_time_scale_for(const std::string& engine_id) const {
    auto it = serving_engine_time_scale.find(engine_id);
    return it != serving_engine_time_scale.end() ? it->second : serving_time_scale;
  }
  // Bytes/s per SM at which an engine's latency-bound quantised mat-vec streams
  // (Engine::quantized_matvec_latency_bound), fitted on its rows; absent: no bound.
  std::map<std::string, double> serving_matvec_sm_Bps;
  double serving_matvec_sm_Bps_for(const std::string& engine_id) const {
    auto it = serving_matvec_sm_Bps.find(engine_id);
    return it != serving_matvec_sm_Bps.end() ? it->second : 0;
  }
  // The multiplier on an engine's prompt-GEMM efficiency where engines.toml leaves it to the fit
  // (Engine::prefill_matmul_fitted); absent: 1.
  std::map<std::string, double> serving_prefill_matmul_scale;
  double serving_prefill_matmul_scale_for(const std::string& engine_id) const {
    auto it = serving_prefill_matmul_scale.find(engine_id);
    return it != serving_prefill_matmul_scale.end() ? it->second : 1;
  }
  // The share of a per-query-head decode kernel's repeated cache reads that reaches DRAM
  // (Engine::per_query_head_kv_share), fitted on the rows of such builds; absent: 1.
  std::map<std::string, double> serving_per_query_head_kv_share;
  double serving_per_query_head_kv_share_for(const std::string& engine_id) const {
    auto it = serving_per_query_head_kv_share.find(engine_id);
    return it != serving_per_query_head_kv_share.end() ? it->second : 1;
  }
  // Seconds an engine's serving frontend takes to take in one request (Engine::frontend_request_s),
  // fitted where engines.toml gives the frontend's streaming time; absent: 0.
  std::map<std::string, double> serving_frontend_request_s;
  double serving_frontend_request_s_for(const std::string& engine_id) const {
    auto it = serving_frontend_request_s.find(engine_id);
    return it != serving_frontend_request_s.end() ? it->second : 0;
  }
};

}  // namespace gpuplan
