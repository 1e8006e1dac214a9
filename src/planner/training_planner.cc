#include "planner/training_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "memory/fit.h"
#include "memory/memory_model.h"
#include "perf/offload.h"

namespace gpuplan {

int64_t default_global_batch(int64_t seq) { return std::max<int64_t>(1, (int64_t{1} << 20) / std::max<int64_t>(1, seq)); }

namespace {

std::vector<int64_t> powers_of_two(int64_t lo, int64_t hi) {
  std::vector<int64_t> out;
  for (int64_t n = 1; n <= hi; n *= 2)
    if (n >= lo) out.push_back(n);
  return out;
}

// The recomputation modes worth trying under a stack: none, Megatron-style selective, the stack's
// per-op policy where it has one, one layer in two, and full.
std::vector<RecomputeSpec> recompute_modes(const Stack& stack) {
  std::vector<RecomputeSpec> out = {{Recompute::none, 0}, {Recompute::selective, 0}};
  if (stack.op_recompute_matmul_share > 0) out.push_back({Recompute::op, 0});
  out.push_back({Recompute::every, 2});
  out.push_back({Recompute::full, 0});
  return out;
}

// What the search may try on this GPU under this stack.
struct Rules {
  const StackSupport* support = nullptr;
  const Platform* platform = nullptr;
  const NodeClass* node = nullptr;  // host memory and bandwidth for offload
};

// One layout per element; the planner enumerates these before estimating, so it can report progress.
std::vector<Workload> layouts(const ModelSpec& m, const Workload& base, const Stack& stack, const Cluster& cluster,
                              const PlanSpace& space, int64_t batch, int64_t gpus, const Rules& rules) {
  const std::vector<RecomputeSpec> modes = recompute_modes(stack);
  std::vector<bool> offloads = {false};
  if (space.try_offload && rules.node && stack.offers_offload() && (!rules.support || rules.support->offload_optimizer))
    offloads.push_back(true);
  std::vector<Workload> out;
  for (int64_t tp : powers_of_two(1, std::min(gpus, cluster.gpus_per_node))) {
    if (m.heads % tp != 0) continue;
    for (int64_t pp : powers_of_two(1, gpus / tp)) {
      if (pp > m.layers || gpus % (tp * pp) != 0) continue;
      for (int64_t cp : space.context_parallel) {
        if ((gpus / (tp * pp)) % cp != 0 || (cp > 1 && base.seq % (2 * cp) != 0)) continue;
        const int64_t dp = gpus / (tp * pp * cp);
        if (batch % dp != 0) continue;
        const int64_t per_replica = batch / dp;
        std::vector<int64_t> micro_batches = space.micro_batches;
        std::sort(micro_batches.begin(), micro_batches.end());  // ascending: the memory prune relies on it
        for (int64_t mb : micro_batches) {
          if (per_replica % mb != 0) continue;
          const int64_t micro = per_replica / mb;
          for (int zero = 0; zero <= (dp > 1 ? 3 : 0); ++zero) {
            for (const RecomputeSpec& rc : modes) {
              for (int64_t v : space.virtual_stages) {
                if (v > 1 && (pp == 1 || pp * v > m.layers || micro % pp != 0)) continue;
                for (int64_t ep : space.expert_parallel.empty() || !m.is_moe() ? std::vector<int64_t>{base.par.ep}
                                                                                : space.expert_parallel) {
                  if ((tp * dp) % ep != 0 || (m.is_moe() && m.experts % ep != 0)) continue;
                  for (bool offload : offloads) {
                    if (offload && zero == 0 && dp > 1) continue;  // across GPUs, offload comes with sharding
                    Workload w = base;
                    w.par.tp = tp;
                    w.par.pp = pp;
                    w.par.dp = dp;
                    w.par.zero = zero;
                    w.par.virtual_stages = v;
                    w.par.sequence_parallel = tp > 1;
                    w.micro_batch = mb;
                    w.grad_accum = micro;
                    w.offload_optimizer = offload;
                    w.set_recompute(rc);
                    w.par.ep = ep;
                    w.par.cp = cp;
                    out.push_back(w);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

bool faster(const PlanCandidate& a, const PlanCandidate& b) { return a.estimate.step_time_s < b.estimate.step_time_s; }

// The better of two layouts at one GPU count: the faster, except that engineers keep the optimizer
// on the GPUs unless offloading it is faster by more than the model can tell apart (`tie`).
bool better(const PlanCandidate& a, const PlanCandidate& b, double tie) {
  if (a.workload.offload_optimizer != b.workload.offload_optimizer) {
    const PlanCandidate& off = a.workload.offload_optimizer ? a : b;
    const PlanCandidate& on = a.workload.offload_optimizer ? b : a;
    const bool offload_wins = off.estimate.step_time_s * (1 + tie) < on.estimate.step_time_s;
    return a.workload.offload_optimizer ? offload_wins : !offload_wins;
  }
  return faster(a, b);
}

}  // namespace

PlanResult plan_training(const ModelSpec& m, const Workload& base, const Gpu& gpu, const Efficiency& eff,
                         const Stack& stack, const Cluster& cluster, const PlanSpace& space,
                         const std::function<void(int64_t, int64_t)>& progress) {
  PlanResult r;
  r.global_batch = space.global_batch > 0 ? space.global_batch : default_global_batch(base.seq);
  Rules rules;
  rules.platform = space.platform;
  if (space.platform) {
    rules.support = space.platform->stack_support(stack.id);
    if (!rules.support) {
      r.refused = fmt::format("gpuplan has no record of the parallelism the {} stack offers (platform.toml)", stack.id);
      return r;
    }
    const auto nodes = space.platform->nodes_for(gpu);
    if (!nodes.empty()) rules.node = nodes.front();
  }
  const double capacity = usable_memory_bytes(gpu);
  const double tie = space.platform ? space.platform->cost_tie_fraction() : 0;
  std::vector<std::pair<int64_t, std::vector<Workload>>> by_count;
  int64_t total = 0;
  for (int64_t n : powers_of_two(space.min_gpus, space.max_gpus)) {
    by_count.emplace_back(n, layouts(m, base, stack, cluster, space, r.global_batch, n, rules));
    total += static_cast<int64_t>(by_count.back().second.size());
  }
  std::vector<PlanCandidate> top;  // the fastest `keep + 1`, sorted
  // Memory grows with the micro-batch: once a layout is over the card at one micro-batch, it is at
  // every larger one (the layouts come in ascending micro-batch for the same split).
  auto split_key = [](const Workload& w) {
    return fmt::format("{}/{}/{}/{}/{}/{}/{}/{}/{}/{}", w.par.tp, w.par.pp, w.par.dp, w.par.zero, static_cast<int>(w.recompute),
                       w.recompute_every, w.par.virtual_stages, w.par.ep, w.offload_optimizer, w.par.cp);
  };
  std::unordered_set<std::string> over_memory;
  for (auto& [n, ws] : by_count) {
    std::optional<PlanCandidate> best_here;
    for (const Workload& w : ws) {
      ++r.configs_evaluated;
      if (progress && r.configs_evaluated % 4096 == 0) progress(r.configs_evaluated, total);
      if (w.validate(m)) continue;
      if (rules.support && !rules.support->why_not(w).empty()) {
        ++r.excluded_by_stack;
        continue;
      }
      // Without their NVLink, cards reach each other directly only by PCIe peer-to-peer.
      if (rules.platform && !(cluster.nvlink ? rules.platform->direct_link_for_tp(gpu, w.par.tp, cluster.gpus_per_node)
                                             : w.par.tp <= 1 || rules.platform->peer_to_peer(gpu))) {
        ++r.excluded_by_link;
        continue;
      }
      const std::string key = split_key(w);
      if (over_memory.count(key)) {
        ++r.excluded_by_memory;
        continue;
      }
      const MemoryEstimate me = estimate_memory(m, w, eff);
      const double mem = me.nvidia_smi();
      const double host = me.cpu_offload * static_cast<double>(std::min(cluster.gpus_per_node, w.par.gpus()));
      const MemoryMargin margin = margin_on_card(me, capacity, space.headroom);
      if (!margin.fits || (rules.node && host > usable_with_headroom(rules.node->host_memory_bytes, space.headroom))) {
        ++r.excluded_by_memory;
        over_memory.insert(key);
        continue;
      }
      ++r.configs_fitting;
      TrainingRun run;
      run.global_batch = r.global_batch;
      run.tokens = space.tokens;
      PlanCandidate c{w, estimate_training(m, w, gpu, eff, stack, cluster, run), mem, capacity,
                      margin, host};
      if (rules.node) add_host_optimizer_step(c.estimate, m, w, gpu, stack, cluster.gpus_per_node, rules.node->host_memory_Bps);
      if (!best_here || better(c, *best_here, tie)) best_here = c;
      if (!r.cheapest || c.gpu_hours_per_step() < r.cheapest->gpu_hours_per_step()) r.cheapest = c;
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
