#include "planner/serving_planner.h"

#include <fmt/format.h>

#include <cmath>

#include "util/units.h"

namespace gpuplan {

namespace {

struct Point {
  double ttft_s, tpot_s, rps;
  bool stable;
};

// Little's law: a replica holding c requests, each in service for ttft + output x tpot, serves
// c / that requests a second. Prefilling new arrivals takes that share of the GPU's time from
// decoding, stretching the decode step by 1 / (1 - rps x prefill time).
Point at_concurrency(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff, const Cluster& cl,
                     const ServiceTarget& t, int64_t c, double prefill_one_s) {
  const InferenceEstimate e = estimate_inference(m, w, {t.prompt_tokens, t.output_tokens, c}, gpu, eff, cl);
  double tpot = e.tpot_s;
  double rps = 0;
  for (int i = 0; i < 8; ++i) {  // fixed point: rps depends on tpot, tpot on rps
    rps = c / (prefill_one_s + t.output_tokens * tpot);
    const double busy = rps * prefill_one_s;
    if (busy >= 0.95) return {prefill_one_s, tpot, rps, false};
    tpot = e.tpot_s / (1 - busy);
  }
  return {prefill_one_s, tpot, rps, true};
}

}  // namespace

ServingPlan plan_serving(const ModelSpec& m, const Workload& base, const Gpu& gpu, const Efficiency& eff,
                         const Cluster& cluster, const ServiceTarget& t) {
  ServingPlan plan;
  // Tensor parallelism up to the NVLink domain: 8 in an HGX node, more in a GB200/GB300 NVL72
  // rack (the replica must also hold the model, which the search below checks).
  for (int64_t tp = 1; tp <= std::min<int64_t>(64, cluster.gpus_per_node); tp *= 2) {
    if (m.heads % tp != 0) continue;
    Workload w = base;
    w.task = Task::infer;
    w.par.tp = tp;
    w.par.pp = 1;
    w.par.dp = 1;
    ServingOption o;
    o.tp = tp;
    const InferenceEstimate one = estimate_inference(m, w, {t.prompt_tokens, t.output_tokens, 1}, gpu, eff, cluster);
    const InferenceMemory mem = inference_memory(m, w, {t.prompt_tokens, t.output_tokens, 1}, gpu, eff);
    o.ttft_s = one.ttft_s;
    o.tpot_s = one.tpot_s;
    if (!mem.max_concurrency) {
      o.why_not = fmt::format("the weights and one {}-token KV cache do not fit {} x {}", t.prompt_tokens + t.output_tokens, tp, gpu.id);
    } else if (one.ttft_s > t.ttft_s) {
      o.why_not = fmt::format("time to first token {} exceeds the {} target", format_seconds(one.ttft_s), format_seconds(t.ttft_s));
    } else if (one.tpot_s > t.tpot_s) {
      o.why_not = fmt::format("time per output token {} at one request exceeds the {} target", format_seconds(one.tpot_s), format_seconds(t.tpot_s));
    }
    if (o.ok()) {
      // Largest concurrency meeting the TPOT target, up to what memory allows (TPOT grows with c).
      int64_t lo = 1, hi = *mem.max_concurrency;
      Point best = at_concurrency(m, w, gpu, eff, cluster, t, 1, one.ttft_s);
      if (!best.stable || best.tpot_s > t.tpot_s) {
        o.why_not = "prefill of arriving requests leaves no time to decode within the TPOT target";
      } else {
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo + 1) / 2;
          const Point p = at_concurrency(m, w, gpu, eff, cluster, t, mid, one.ttft_s);
          if (p.stable && p.tpot_s <= t.tpot_s) lo = mid, best = p;
          else hi = mid - 1;
        }
        o.concurrency = lo;
        o.tpot_s = best.tpot_s;
        o.replica_rps = best.rps;
        o.replicas_peak = static_cast<int64_t>(std::ceil(t.peak_rps / best.rps));
        o.replicas_min = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(t.average_rps / best.rps)));
        o.gpus_peak = o.replicas_peak * tp;
        o.gpus_min = o.replicas_min * tp;
        o.tokens_per_s_per_gpu = best.rps * t.output_tokens / tp;
      }
    }
    plan.options.push_back(o);
    if (o.ok() && (!plan.best || o.gpus_peak < plan.best->gpus_peak ||
                   (o.gpus_peak == plan.best->gpus_peak && o.tpot_s < plan.best->tpot_s)))
      plan.best = o;
  }
  return plan;
}

}  // namespace gpuplan
