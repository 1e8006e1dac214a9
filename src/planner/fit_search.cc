#include "planner/fit_search.h"

#include <fmt/format.h>

#include <algorithm>

#include "memory/fit.h"
#include "memory/memory_model.h"

namespace gpuplan {

namespace {

// The ladder at one GPU count: each rung keeps the ones before it.
std::vector<std::pair<Workload, std::vector<std::string>>> ladder(const Workload& request, int64_t gpus) {
  std::vector<std::pair<Workload, std::vector<std::string>>> out;
  Workload w = request;
  w.par.tp = 1, w.par.pp = 1, w.par.dp = gpus;
  w.par.virtual_stages = 1;
  if (gpus == 1) w.par.zero = 0;
  std::vector<std::string> changes;
  out.push_back({w, changes});
  if (w.micro_batch > 1) {
    // The same sequences per step through gradient accumulation.
    w.grad_accum *= w.micro_batch;
    w.micro_batch = 1;
    changes.push_back("micro-batch 1 with gradient accumulation");
    out.push_back({w, changes});
  }
  const Recompute given = request.recompute;
  for (RecomputeSpec rc : {RecomputeSpec{Recompute::selective, 0}, RecomputeSpec{Recompute::every, 2}, RecomputeSpec{Recompute::full, 0}}) {
    if (given == Recompute::full || (given == Recompute::every && rc.mode != Recompute::full) ||
        (given == Recompute::selective && rc.mode == Recompute::selective))
      continue;
    Workload x = w;
    x.set_recompute(rc);
    out.push_back({x, [&] { auto c = changes; c.push_back(fmt::format("{} recompute", to_string(rc))); return c; }()});
  }
  if (given != Recompute::full) {
    w.set_recompute({Recompute::full, 0});
    changes.push_back("full recompute");
  }
  for (int zero = std::max(1, request.par.zero); gpus > 1 && zero <= 3; ++zero) {
    w.par.zero = zero;
    out.push_back({w, [&] { auto c = changes; c.push_back(fmt::format("ZeRO-{} over {} GPUs", zero, gpus)); return c; }()});
  }
  if (gpus > 1) changes.push_back(fmt::format("ZeRO-3 over {} GPUs", gpus));
  if (!request.offload_optimizer) {
    w.offload_optimizer = true;
    changes.push_back("optimizer states in CPU memory");
    out.push_back({w, changes});
  }
  return out;
}

}  // namespace

FitSearch find_fit(const ModelSpec& m, const Workload& request, const Gpu& gpu, const Efficiency& eff, const Stack& stack,
                   const Platform* platform, const Headroom& headroom, int64_t gpus_per_node, int64_t max_gpus) {
  FitSearch r;
  const double capacity = usable_memory_bytes(gpu);
  const StackSupport* support = platform ? platform->stack_support(stack.id) : nullptr;
  const auto nodes = platform ? platform->nodes_for(gpu) : std::vector<const NodeClass*>{};
  const double host_limit = nodes.empty() ? 0 : usable_with_headroom(nodes.front()->host_memory_bytes, headroom);
  for (int64_t n = std::max<int64_t>(1, request.par.gpus()); n <= max_gpus && !(r.first && r.without_offload); n *= 2) {
    for (auto& [w, changes] : ladder(request, n)) {
      if (w.validate(m)) continue;
      if (support && !support->why_not(w).empty()) continue;
      const MemoryEstimate e = estimate_memory(m, w, eff);
      const double host = e.cpu_offload * static_cast<double>(std::min(gpus_per_node, n));
      if (!margin_on_card(e, capacity, headroom).fits || (host > 0 && host_limit > 0 && host > host_limit)) continue;
      FitStep s{w, e.nvidia_smi(), host, changes};
      if (!r.first) r.first = s;
      if (!w.offload_optimizer && !r.without_offload) r.without_offload = s;
      break;  // the least change that fits at this count
    }
  }
  return r;
}

}  // namespace gpuplan
