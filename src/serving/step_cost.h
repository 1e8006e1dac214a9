// The cost of one engine iteration (a forward step over a mix of decoding sequences and prefill
// chunks), reduced from the inference performance model to a table and two coefficients so the
// serving simulator can price tens of thousands of steps a second: the forward over the step's
// tokens (weights read or GEMMs, whichever binds, at that batch's GEMM efficiency, expert reads,
// collectives, launches and the engine's host time), plus the KV cache the decoding sequences read,
// plus the attention of the prefill chunks over their prompts.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "workload/workload.h"

namespace gpuplan {

struct StepCost {
  // (tokens, seconds) of a forward over that many tokens with no context, ascending; between
  // points linear, past the last extended along its last segment.
  std::vector<std::pair<double, double>> forward_s;
  double kv_read_s_per_token = 0;   // one cached token read by decode attention
  double attention_s_per_pair = 0;  // prefill attention: one new token against one earlier token
  double request_overhead_s = 0;    // the engine's fixed cost before a request's first token
  // Attention data parallelism over this many GPUs (1: none): decode sequences are spread over
  // them whole, so the step waits on the cache reads of the busiest, ceil(seqs / n) of them.
  double attention_dp = 1;

  double forward(double tokens) const;

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
