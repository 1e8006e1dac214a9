#include "serving/step_cost.h"

#include <algorithm>

#include "perf/inference.h"

namespace gpuplan {

double StepCost::step_s(double decode_seqs, double tokens_per_seq, double decode_context_tokens, double prefill_tokens,
                        double prefill_pairs) const {
  const double memory = weight_read_s + kv_read_s_per_token * decode_context_tokens;
  const double compute =
      compute_s_per_token * (decode_seqs * tokens_per_seq + prefill_tokens) + attention_s_per_pair * prefill_pairs;
  return fixed_s + std::max(memory, compute);
}

StepCost step_cost(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff, const Cluster& cluster,
                   const Engine& engine) {
  StepCost c;
  auto run = [&](int64_t prompt, int64_t output) {
    return estimate_inference(m, w, {prompt, output, 1}, gpu, eff, cluster, engine);
  };
  // Decode of one sequence with (almost) nothing cached: the fixed part and the weight read.
  const InferenceEstimate d1 = run(1, 2);
  c.fixed_s = d1.decode_overhead_s + d1.decode_comm_s;
  c.weight_read_s = std::max(0.0, d1.tpot_s - c.fixed_s);
  // The same with a long context: what each cached token adds.
  constexpr int64_t kLong = 4096;
  const InferenceEstimate dl = run(kLong, 2);
  c.kv_read_s_per_token = std::max(0.0, (dl.tpot_s - d1.tpot_s) / static_cast<double>(kLong));
  // Two prefills, t(N) = a N + b N^2 / 2 (causal attention over the prompt): solve for a and b.
  c.request_overhead_s = engine.request_overhead_s;
  constexpr double n1 = 2048, n2 = 8192;
  const double t1 = std::max(1e-9, run(static_cast<int64_t>(n1), 1).ttft_s - c.request_overhead_s - c.fixed_s);
  const double t2 = std::max(1e-9, run(static_cast<int64_t>(n2), 1).ttft_s - c.request_overhead_s - c.fixed_s);
  c.attention_s_per_pair = std::max(0.0, (t2 / n2 - t1 / n1) / ((n2 - n1) / 2));
  c.compute_s_per_token = std::max(1e-12, t1 / n1 - c.attention_s_per_pair * n1 / 2);
  return c;
}

}  // namespace gpuplan
