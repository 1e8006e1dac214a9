// The cost of one engine iteration (a forward step over a mix of decoding sequences and prefill
// chunks), reduced from the inference performance model to a few coefficients so the serving
// simulator can price tens of thousands of steps a second. A step costs its fixed part plus the
// larger of reading the weights and KV cache and computing its tokens.
#pragma once

#include <cstdint>

#include "engine/engine.h"
#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "workload/workload.h"

namespace gpuplan {

struct StepCost {
  double fixed_s = 0;               // engine host time, kernel launches, one-token collectives
  double weight_read_s = 0;         // reading every weight once
  double kv_read_s_per_token = 0;   // one cached token read by decode attention
  double compute_s_per_token = 0;   // GEMMs (and their collectives) for one token
  double attention_s_per_pair = 0;  // prefill attention: one new token against one earlier token
  double request_overhead_s = 0;    // the engine's fixed cost before a request's first token

  // One iteration: `decode_seqs` sequences each adding `tokens_per_seq` tokens while reading
  // `decode_context_tokens` cached tokens in all, plus `prefill_tokens` prompt tokens whose
  // attention spans `prefill_pairs` (new token, earlier token) pairs.
  double step_s(double decode_seqs, double tokens_per_seq, double decode_context_tokens, double prefill_tokens,
                double prefill_pairs) const;
};

// Probes estimate_inference at a few shapes and solves for the coefficients. REQUIRES:
// w.validate(m) succeeded with w.task == infer.
StepCost step_cost(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff, const Cluster& cluster,
                   const Engine& engine);

}  // namespace gpuplan
