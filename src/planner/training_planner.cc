#include "planner/training_planner.h"

#include <algorithm>

#include "memory/fit.h"
#include "memory/memory_model.h"

namespace gpuplan {

namespace {

std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= hi; n *= 2)
    if (n >= lo) out.push_back(n);
  return out;
}

// One layout per element; the planner enumerates these before estimating, so it can report progress.
// The recomputation modes worth trying under a stack: none, Megatron-style selective, the stack's
// per-op policy where it has one, and full.
std::vector<RecomputeSpec> recompute_modes(const Stack& stack) {
  std::vector<RecomputeSpec> out = {{Recompute::none, 0}, {Recompute::selective, 0}};
  if (stack.op_recompute_matmul_share > 0) out.push_back({Recompute::op, 0});
  out.push_back({Recompute::full, 0});
  return out;
}

std::vector<Workload> layouts(const ModelSpec& m, const Workload& base, const Stack& stack, const Cluster& cluster,
                              const PlanSpace& space, int64_t gpus) {
  const std::vector<RecomputeSpec> modes = recompute_modes(stack);
  std::vector<Workload> out;
  const int64_t batch = space.global_batch > 0 ? space.global_batch : 4 * gpus;
  for (int64_t tp : powers_of_two(1, std::min(gpus, cluster.gpus_per_node))) {
    if (m.heads % tp != 0) continue;
    for (int64_t pp : powers_of_two(1, gpus / tp)) {
      if (pp > m.layers || gpus % (tp * pp) != 0) continue;
      const int64_t dp = gpus / (tp * pp);
      if (batch % dp != 0) continue;
      const int64_t per_replica = batch / dp;
      for (int64_t mb : space.micro_batches) {
        if (per_replica % mb != 0) continue;
        const int64_t micro = per_replica / mb;
        for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
          for (const RecomputeSpec& rc : modes) {
            for (int64_t v : space.virtual_stages) {
              if (v > 1 && (pp == 1 || pp * v > m.layers || micro % pp != 0)) continue;
              for (int64_t ep : space.expert_parallel.empty() || !m.is_moe() ? std::vector<int64_t>{base.par.ep}
                                                                              : space.expert_parallel) {
              if ((tp * dp) % ep != 0 || (m.is_moe() && m.experts % ep != 0)) continue;
              // ZeRO-3 with pipeline stages re-gathers weights per micro-batch per stage: allowed,
              // and the estimate charges for it.
              Workload w = base;
              w.par.tp = tp;
              w.par.pp = pp;
              w.par.dp = dp;
              w.par.zero = zero;
              w.par.virtual_stages = v;
              w.par.sequence_parallel = tp > 1;
              w.micro_batch = mb;
              w.grad_accum = micro;
              w.set_recompute(rc);
              w.par.ep = ep;
              out.push_back(w);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

bool faster(const PlanCandidate& a, const PlanCandidate& b) {
  return a.estimate.step_time_s < b.estimate.step_time_s;
}

}  // namespace

PlanResult plan_training(const ModelSpec& m, const Workload& base, const Gpu& gpu, const Efficiency& eff,
                         const Stack& stack, const Cluster& cluster, const PlanSpace& space,
                         const std::function<void(int64_t, int64_t)>& progress) {
  PlanResult r;
  const double capacity = usable_memory_bytes(gpu);
  std::vector<std::pair<int64_t, std::vector<Workload>>> by_count;
  int64_t total = 0;
  for (int64_t n : powers_of_two(space.min_gpus, space.max_gpus)) {
    by_count.emplace_back(n, layouts(m, base, stack, cluster, space, n));
    total += static_cast<int64_t>(by_count.back().second.size());
  }
  std::vector<PlanCandidate> top;  // the fastest `keep + 1`, sorted
  for (auto& [n, ws] : by_count) {
    std::optional<PlanCandidate> best_here;
    for (const Workload& w : ws) {
      ++r.configs_evaluated;
      if (progress && r.configs_evaluated % 4096 == 0) progress(r.configs_evaluated, total);
      if (w.validate(m)) continue;
      const double mem = estimate_memory(m, w, eff).nvidia_smi();
      if (mem > capacity) continue;
      ++r.configs_fitting;
      TrainingRun run;
      run.global_batch = w.micro_batch * w.grad_accum * w.par.dp;
      run.tokens = space.tokens;
      PlanCandidate c{w, estimate_training(m, w, gpu, eff, stack, cluster, run), mem};
      if (!best_here || faster(c, *best_here)) best_here = c;
      if (top.size() <= space.keep || faster(c, top.back())) {
        top.insert(std::upper_bound(top.begin(), top.end(), c, faster), c);
        if (top.size() > space.keep + 1) top.pop_back();
      }
    }
    if (best_here) r.best_per_count.push_back(*best_here);
  }
  if (progress) progress(total, total);
  if (!top.empty()) {
    r.best = top.front();
    r.runners_up.assign(top.begin() + 1, top.end());
  }
  return r;
}

}  // namespace gpuplan
