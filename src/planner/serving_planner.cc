#include "planner/serving_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/units.h"

namespace gpuplan {

ReplicaLoad replica_at_rate(const ServingSetup& setup, const ServiceTarget& t, double rps) {
  Load load;
  const auto n = std::clamp<int64_t>(static_cast<int64_t>(rps * kPlannerWindowS), kPlannerMinRequests, kPlannerMaxRequests);
  load.requests = poisson_arrivals(n, rps, t.prompt_tokens, t.output_tokens, setup.seed);
  if (t.chat_lengths) draw_chat_lengths(load.requests, t.prompt_tokens, t.output_tokens, setup.seed);
  auto r = simulate_serving(setup, load);
  if (!r) return {};
  return {r->ttft_s.p99 <= t.ttft_s && r->tpot_s.p99 <= t.tpot_s, r->ttft_s.p99, r->tpot_s.p99, r->mean_batch};
}

namespace {

// The highest rate one replica serves within the targets: double until it fails, then bisect.
// Both stages are monotone in the rate, so the search ends, and the answer meets the targets.
double max_replica_rate(const ServingSetup& setup, const ServiceTarget& t, double start_rps) {
  double lo = 0, hi = start_rps;
  for (int i = 0; i < 40 && replica_at_rate(setup, t, hi).meets; ++i) lo = hi, hi *= 2;
  if (lo == 0) {  // even the starting rate fails: search below it
    int i = 0;
    for (; i < 40 && !replica_at_rate(setup, t, hi).meets; ++i) hi /= 2;
    if (i == 40) return 0;
    lo = hi, hi *= 2;
  }
  for (int i = 0; i < 8; ++i) {  // to 0.4% of the bracket
    const double mid = (lo + hi) / 2;
    (replica_at_rate(setup, t, mid).meets ? lo : hi) = mid;
  }
  return lo;
}

// Why one request alone misses the targets, or empty.
std::string single_request_check(const InferenceEstimate& one, const InferenceMemory& mem, const ServiceTarget& t,
                                 int64_t tp, const Gpu& gpu) {
  if (mem.kv_capacity_tokens < t.prompt_tokens + t.output_tokens)
    return fmt::format("the weights and one {}-token KV cache do not fit {} x {} within the engine's memory budget",
                       t.prompt_tokens + t.output_tokens, tp, gpu.id);
  if (one.ttft_s > t.ttft_s)
    return fmt::format("time to first token {} exceeds the {} target", format_seconds(one.ttft_s), format_seconds(t.ttft_s));
  if (one.tpot_s > t.tpot_s)
    return fmt::format("time per output token {} at one request exceeds the {} target", format_seconds(one.tpot_s),
                       format_seconds(t.tpot_s));
  return "";
}

}  // namespace

ServingOption plan_replica(const ModelSpec& m, const Workload& base, int64_t tp, const Gpu& gpu, const Efficiency& eff,
                           const Cluster& cluster, const ServiceTarget& t, const Engine& engine, bool attention_dp) {
  Workload w = base;
  w.task = Task::infer;
  w.par.tp = tp;
  w.par.pp = 1;
  w.par.dp = 1;
  ServingOption o;
  o.tp = tp;
  o.attention_dp = attention_dp;
  if (attention_dp)
    if (auto e = engine.use_attention_dp(w, m, "attention_dp")) {
      o.why_not = e->message;
      return o;
    }
  const InferenceRequest one_req{t.prompt_tokens, t.output_tokens, 1};
  const InferenceEstimate one = estimate_inference(m, w, one_req, gpu, eff, cluster, engine);
  const InferenceMemory mem = inference_memory(m, w, one_req, gpu, eff, engine);
  o.ttft_s = one.ttft_s;
  o.tpot_s = one.tpot_s;
  o.why_not = single_request_check(one, mem, t, tp, gpu);
  if (!o.ok()) return o;
  const ServingSetup setup = setup_for(engine, gpu, step_cost(m, w, gpu, eff, cluster, engine), mem.kv_capacity_tokens, m.max_position);
  // Start the search where a static batch of 64 (or what the cache holds) would sit.
  const int64_t c = std::clamp<int64_t>(mem.kv_capacity_tokens / (t.prompt_tokens + t.output_tokens), 1, 64);
  const InferenceEstimate batch = estimate_inference(m, w, {t.prompt_tokens, t.output_tokens, c}, gpu, eff, cluster, engine);
  o.replica_rps = max_replica_rate(setup, t, static_cast<double>(c) / batch.e2e_latency_s);
  if (o.replica_rps <= 0) {
    o.why_not = "no request rate meets the p99 targets";
    return o;
  }
  o.replicas_peak = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(t.peak_rps / o.replica_rps)));
  o.replicas_min = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(t.average_rps / o.replica_rps)));
  o.gpus_peak = o.replicas_peak * tp;
  o.gpus_min = o.replicas_min * tp;
  o.headroom = 1 - t.peak_rps / (static_cast<double>(o.replicas_peak) * o.replica_rps);
  const ReplicaLoad at_peak = replica_at_rate(setup, t, t.peak_rps / static_cast<double>(o.replicas_peak));
  o.ttft_s = at_peak.ttft_p99_s;
  o.tpot_s = at_peak.tpot_p99_s;
  o.concurrency = std::max<int64_t>(1, std::llround(at_peak.mean_batch));
  o.in_flight_at_capacity = replica_at_rate(setup, t, o.replica_rps).mean_batch;
  o.tokens_per_s_per_gpu = o.replica_rps * static_cast<double>(t.output_tokens) / static_cast<double>(tp);
  return o;
}

std::optional<AttentionDpChoice> parse_attention_dp_choice(const std::string& s) {
  if (s == "auto") return AttentionDpChoice::automatic;
  if (s == "on") return AttentionDpChoice::on;
  if (s == "off") return AttentionDpChoice::off;
  return std::nullopt;
}

std::string attention_dp_choice_refusal(AttentionDpChoice choice, const ModelSpec& m, const Engine& engine) {
  return choice == AttentionDpChoice::on ? engine.attention_dp_refusal(m) : "";
}

ServingPlan plan_serving(const ModelSpec& m, const Workload& base, const Gpu& gpu, const Efficiency& eff,
                         const Cluster& cluster, const ServiceTarget& t, const Engine& engine, AttentionDpChoice choice) {
  ServingPlan plan;
  plan.refused = engine.unsupported(gpu, base.precision);
  if (!plan.refused.empty()) return plan;
  // Tensor parallelism up to the NVLink domain: 8 in an HGX node, more in a GB200/GB300 NVL72
  // rack (the replica must also hold the model, which plan_replica checks).
  const bool engine_offers_adp = engine.attention_dp_refusal(m).empty();
  for (int64_t tp = 1; tp <= std::min<int64_t>(64, cluster.gpus_per_node); tp *= 2) {
    if (m.heads % tp != 0) continue;
    // A replica this wide cannot need fewer GPUs than the best narrower plan.
    if (plan.best && tp > plan.best->gpus_peak) break;
    for (bool adp : {false, true}) {
      const bool offered = tp >= 2 && engine_offers_adp;
      if (adp && (!offered || choice == AttentionDpChoice::off)) continue;
      // "on" keeps one GPU's replica (attention DP over one GPU is the same thing).
      if (!adp && offered && choice == AttentionDpChoice::on) continue;
      const ServingOption o = plan_replica(m, base, tp, gpu, eff, cluster, t, engine, adp);
      plan.options.push_back(o);
      if (o.ok() && (!plan.best || o.gpus_peak < plan.best->gpus_peak ||
                     (o.gpus_peak == plan.best->gpus_peak && o.tpot_s < plan.best->tpot_s)))
        plan.best = o;
    }
  }
  return plan;
}

}  // namespace gpuplan
