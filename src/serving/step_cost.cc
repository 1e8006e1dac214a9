#include "serving/step_cost.h"

#include <algorithm>
#include <cmath>

#include "perf/inference.h"

namespace gpuplan {

double StepCost::forward(double tokens) const {
  const auto& f = forward_s;
  if (f.empty()) return 0;
  if (tokens <= f.front().first) return f.front().second;
  size_t i = 1;
  while (i + 1 < f.size() && f[i].first < tokens) ++i;
  const auto [x0, y0] = f[i - 1];
  const auto [x1, y1] = f[i];
  return y0 + (y1 - y0) * (tokens - x0) / (x1 - x0);
}

double StepCost::step_s(double decode_seqs, double tokens_per_seq, double decode_context_tokens, double prefill_tokens,
                        double prefill_pairs) const {
  const double busiest = attention_dp > 1 && decode_seqs > 0 ? std::ceil(decode_seqs / attention_dp) / decode_seqs : 1;
  return forward(decode_seqs * tokens_per_seq + prefill_tokens) + kv_read_s_per_token * decode_context_tokens * busiest +
         attention_s_per_pair * prefill_pairs;
}

StepCost step_cost(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff, const Cluster& cluster,
                   const Engine& engine) {
  StepCost c;
  if (w.par.attention_dp) c.attention_dp = static_cast<double>(w.par.tp);
  // The simulator cuts prompts into steps itself: the runs here take a prompt whole, so that what a
  // long one adds beyond its forward is attention alone.
  Engine whole = engine;
  whole.ubatch_tokens = 0;
  whole.chunked_prefill = false;
  auto run = [&](int64_t prompt, int64_t output, int64_t concurrency) {
    return estimate_inference(m, w, {prompt, output, concurrency}, gpu, eff, cluster, whole);
  };
  // A decode step of N one-token sequences with nothing cached is the forward over N tokens.
  for (int64_t n = 1; n <= (int64_t{1} << 15); n *= 2) c.forward_s.emplace_back(static_cast<double>(n), run(1, 2, n).tpot_s);
  // One sequence with a long context: what each cached token adds to a decode step, as the slope
  // between two long contexts (against an empty cache, the attention's fixed cost at a few tokens
  // would count against the cache).
  constexpr int64_t kLong = 4096;
  c.kv_read_s_per_token =
      std::max(0.0, (run(2 * kLong, 2, 1).tpot_s - run(kLong, 2, 1).tpot_s) / static_cast<double>(kLong));
  // A long prefill beyond the forward over its tokens is its causal attention, N^2 / 2 pairs.
  c.request_overhead_s = engine.request_overhead_s * engine.time_scale;
  constexpr double kPrompt = 8192;
  const double attention = run(static_cast<int64_t>(kPrompt), 1, 1).ttft_s - c.request_overhead_s - c.forward(kPrompt);
  c.attention_s_per_pair = std::max(0.0, attention / (kPrompt * kPrompt / 2));
  return c;
}

}  // namespace gpuplan
