#include "advise/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cost/cost_model.h"
#include "memory/fit.h"
#include "util/units.h"

namespace gpuplan {

namespace {

std::string largest_share(const TrainingEstimate& e) {
  const StepBreakdown& b = e.breakdown;
  const std::pair<const char*, double> parts[] = {
      {"matmul compute", b.compute_s},           {"memory-bound kernels", b.memory_s},
      {"tensor-parallel communication", b.tp_comm_s}, {"pipeline bubble", b.bubble_s},
      {"data-parallel communication", b.dp_comm_exposed_s}, {"optimizer step", b.optimizer_s},
      {"pipeline sends", b.pp_comm_s},          {"kernel launches", b.overhead_s}};
  const auto* best = &parts[0];
  for (const auto& p : parts)
    if (p.second > best->second) best = &p;
  return fmt::format("{} ({:.0f}% of the step)", best->first, 100 * best->second / e.step_time_s);
}

// The plan one GPU type gives a job under a mode, from the fastest fitting layout at each GPU
// count: for renting, the cheapest count meeting the deadline; for buying, the fewest GPUs meeting it.
struct JobOutcome {
  std::optional<JobPlan> plan;
  std::string why;
};

JobOutcome choose_job_plan(const TrainingJob& job, const PlanResult& r, const Gpu& gpu, const Constraints& c, bool cloud,
                           std::optional<double> rate) {
  if (r.best_per_count.empty())
    return {std::nullopt, fmt::format("{} does not fit in memory on up to {} x {}", job.name, c.max_gpus, gpu.id)};
  std::optional<JobPlan> best;
  double fastest = 1e300;
  for (const PlanCandidate& p : r.best_per_count) {
    const double t = job.tokens / p.estimate.tokens_per_s;
    fastest = std::min(fastest, t);
    if (job.deadline_s && t > *job.deadline_s) continue;
    const double gpu_hours = t / 3600 * p.workload.par.gpus() * job.runs;
    const double cost = cloud ? gpu_hours * rate.value_or(0) : 0;
    const bool better = !best || (cloud ? cost < best->cost_usd : p.workload.par.gpus() < best->plan.workload.par.gpus());
    if (better) best = JobPlan{job.name, p, t, cost, largest_share(p.estimate)};
  }
  if (!best)
    return {std::nullopt, fmt::format("{}: the fastest plan on up to {} x {} takes {}, past the {} deadline", job.name,
                                      c.max_gpus, gpu.id, format_seconds(fastest), format_seconds(*job.deadline_s))};
  return {best, ""};
}

// Output tokens a service generates in a month at its average request rate.
double average_tokens_per_month(const AdviseRequest& req, ptrdiff_t i) {
  const ServiceTarget& t = req.inference[static_cast<size_t>(i)].target;
  return t.average_rps * t.output_tokens * 730.0 * 3600.0;
}

}  // namespace

Advice advise(const AdviseRequest& req, const Catalog& catalog, const PriceBook& prices, const EfficiencyTable& table,
              const std::function<void(int64_t, int64_t)>& progress) {
  Advice a;
  const Constraints& c = req.constraints;
  a.horizon_years = c.own.lifetime_years;
  const double months = 12 * c.own.lifetime_years;
  for (const Gpu& gpu : catalog.gpus()) {
    if (std::find(c.tiers.begin(), c.tiers.end(), gpu.tier) == c.tiers.end()) continue;
    if (!c.gpus.empty() && std::find(c.gpus.begin(), c.gpus.end(), gpu.id) == c.gpus.end()) continue;
    const Efficiency eff = table.for_gpu(gpu);
    const GpuPrice* price = prices.find(gpu.id);
    const auto quote = price ? price->cheapest_cloud() : std::nullopt;
    const std::optional<double> rate = quote ? std::optional<double>(quote->usd_per_gpu_hour) : std::nullopt;
    // Plan every job and service once per GPU type; the modes only choose among the results.
    std::vector<PlanResult> job_plans;
    std::vector<ServingPlan> serving_plans;
    if ((c.allow_cloud && quote) || (c.allow_buy && price && price->purchase_usd)) {
      for (const TrainingJob& job : req.training) {
        PlanSpace space;
        space.max_gpus = c.max_gpus;
        space.global_batch = job.global_batch;
        space.tokens = job.tokens;
        space.keep = 0;
        job_plans.push_back(plan_training(job.model, job.workload, gpu, table.for_gpu(gpu, job.stack), job.stack,
                                          default_cluster(gpu), space, progress));
        a.configs_evaluated += job_plans.back().configs_evaluated;
      }
      for (const InferenceService& s : req.inference)
        serving_plans.push_back(plan_serving(s.model, s.workload, gpu, eff, default_cluster(gpu), s.target));
    }
    for (const char* mode : {"cloud", "buy"}) {
      const bool cloud = std::string_view(mode) == "cloud";
      Candidate cand;
      cand.gpu = gpu.id;
      cand.tier = gpu.tier;
      cand.mode = mode;
      if (cloud && !c.allow_cloud) continue;
      if (!cloud && !c.allow_buy) continue;
      if (cloud && !quote) {
        cand.why = "no cloud price on file for " + gpu.id;
        a.rejected.push_back(cand);
        continue;
      }
      if (!cloud && !(price && price->purchase_usd)) {
        cand.why = "no purchase price on file for " + gpu.id;
        a.rejected.push_back(cand);
        continue;
      }
      // Training jobs.
      int64_t train_gpus = 0;
      double train_power_hours = 0;
      for (size_t k = 0; k < req.training.size(); ++k) {
        const TrainingJob& job = req.training[k];
        JobOutcome o = choose_job_plan(job, job_plans[k], gpu, c, cloud, rate);
        if (!o.plan) {
          cand.why = o.why;
          break;
        }
        train_gpus = std::max<int64_t>(train_gpus, o.plan->plan.workload.par.gpus());
        cand.training_time_s += o.plan->time_s;
        train_power_hours += o.plan->time_s / 3600 * o.plan->plan.workload.par.gpus() * job.runs;
        cand.jobs.push_back(*o.plan);
      }
      // Inference services.
      int64_t serve_peak = 0, serve_min = 0;
      if (cand.why.empty()) {
        for (size_t k = 0; k < req.inference.size(); ++k) {
          const InferenceService& s = req.inference[k];
          const ServingPlan& sp = serving_plans[k];
          if (!sp.best) {
            std::string why = s.name + ": ";
            for (const auto& o : sp.options) why += fmt::format("TP {}: {}; ", o.tp, o.why_not);
            cand.why = why.substr(0, why.size() - 2);
            break;
          }
          ServicePlan p{s.name, *sp.best, 0, 0};
          serve_peak += sp.best->gpus_peak;
          serve_min += sp.best->gpus_min;
          cand.services.push_back(p);
        }
      }
      if (!cand.why.empty()) {
        a.rejected.push_back(cand);
        continue;
      }
      CostInputs in;
      in.own = c.own;
      in.hours_per_month = c.busy_hours_per_month;
      if (cloud) {
        // Rented: each job rents its GPUs while it runs; services autoscale, paying for the replicas
        // the average load needs around the clock.
        cand.gpus = std::max(train_gpus, serve_peak);
        double train_cost = 0;
        for (const auto& j : cand.jobs) train_cost += j.cost_usd;
        double serve_month = 0;
        for (auto& s : cand.services) {
          s.usd_per_month = s.option.gpus_min * 730.0 * *rate;
          s.usd_per_million_tokens = s.usd_per_month / (average_tokens_per_month(req, &s - cand.services.data()) / 1e6);
          serve_month += s.usd_per_month;
        }
        cand.usd_per_month = serve_month + train_cost / months;
        cand.total_cost_usd = train_cost + serve_month * months;
        if (c.budget_monthly_usd && cand.usd_per_month > *c.budget_monthly_usd)
          cand.why = fmt::format("{} a month exceeds the {} monthly budget", format_usd(cand.usd_per_month), format_usd(*c.budget_monthly_usd));
      } else {
        // Owned: enough cards for the services at peak plus the largest training job.
        cand.gpus = serve_peak + train_gpus;
        in.gpus = cand.gpus;
        const CostComparison cmp = compare_rent_buy(gpu, price, in);
        cand.capex_usd = cmp.capex_usd;
        cand.break_even_months = cmp.break_even_months;
        const double power_per_gpu_hour = cmp.power_usd_per_month / std::max(1.0, in.hours_per_month) / cand.gpus;
        const double serve_hours_month = serve_peak * 730.0;
        const double train_hours_month = train_power_hours / months;
        cand.usd_per_month = cand.capex_usd / months + power_per_gpu_hour * (serve_hours_month + train_hours_month);
        cand.total_cost_usd = cand.capex_usd + power_per_gpu_hour * (serve_hours_month + train_hours_month) * months;
        for (auto& s : cand.services) {
          const double share = static_cast<double>(s.option.gpus_peak) / cand.gpus;
          s.usd_per_month = share * cand.usd_per_month;
          s.usd_per_million_tokens = s.usd_per_month / (average_tokens_per_month(req, &s - cand.services.data()) / 1e6);
        }
        for (auto& j : cand.jobs) j.cost_usd = power_per_gpu_hour * j.time_s / 3600 * j.plan.workload.par.gpus();
        if (c.budget_capex_usd && cand.capex_usd > *c.budget_capex_usd)
          cand.why = fmt::format("buying {} x {} costs {}, over the {} capital budget", cand.gpus, gpu.id,
                                 format_usd(cand.capex_usd), format_usd(*c.budget_capex_usd));
      }
      (cand.why.empty() ? a.candidates : a.rejected).push_back(cand);
    }
  }
  std::sort(a.candidates.begin(), a.candidates.end(),
            [](const Candidate& x, const Candidate& y) { return x.total_cost_usd < y.total_cost_usd; });
  // Pareto front of cost against training time: no other candidate is both cheaper and faster.
  for (auto& x : a.candidates) {
    x.pareto = true;
    for (const auto& y : a.candidates)
      if (&x != &y && y.total_cost_usd <= x.total_cost_usd && y.training_time_s <= x.training_time_s &&
          (y.total_cost_usd < x.total_cost_usd || y.training_time_s < x.training_time_s))
        x.pareto = false;
  }
  if (a.candidates.empty()) return a;
  const Candidate& best = a.candidates.front();
  a.recommendation = best;
  const Gpu g = *catalog.find(best.gpu);
  auto& r = a.reasons;
  r.push_back(fmt::format("{} x {} ({}), {}: {} over {:.0f} years, the cheapest of {} options that meet every constraint.",
                          best.gpus, g.name, to_string(best.tier), best.mode == "buy" ? "bought" : "rented",
                          format_usd(best.total_cost_usd), a.horizon_years, a.candidates.size()));
  if (a.candidates.size() > 1) {
    const Candidate& next = a.candidates[1];
    r.push_back(fmt::format("Next: {} x {} {} at {} ({:+.0f}%).", next.gpus, next.gpu, next.mode == "buy" ? "bought" : "rented",
                            format_usd(next.total_cost_usd), 100 * (next.total_cost_usd / best.total_cost_usd - 1)));
  }
  for (const auto& j : best.jobs) {
    const Workload& w = j.plan.workload;
    r.push_back(fmt::format("{}: {} GPUs as tp {} x pp {} x dp {} (ZeRO-{}, micro-batch {}, recompute {}, stack {}) finish a "
                            "run in {} at {:.0f}% MFU; the bottleneck is {}.", j.name, w.par.gpus(), w.par.tp, w.par.pp, w.par.dp,
                            w.par.zero, w.micro_batch, to_string(w.recompute_spec()), j.plan.estimate.stack, format_seconds(j.time_s),
                            100 * j.plan.estimate.mfu, j.bottleneck));
    if (w.par.tp > 1)
      r.push_back(fmt::format("{} splits layers across {} GPUs: {} ({}) carries the tensor-parallel traffic.", j.name,
                              w.par.tp, j.plan.estimate.tp_link, g.has_nvlink() ? g.interconnect : "no NVLink on this card"));
  }
  for (const auto& s : best.services)
    r.push_back(fmt::format("{}: {} replica(s) of TP {} at peak, {} at average load; {} requests in flight per replica "
                            "decode at {} a token (memory-bound: weights and KV cache are read every step), first token in {}; "
                            "about {} per million output tokens.", s.name, s.option.replicas_peak, s.option.tp,
                            s.option.replicas_min, s.option.concurrency, format_seconds(s.option.tpot_s),
                            format_seconds(s.option.ttft_s), format_usd(s.usd_per_million_tokens)));
  std::map<Tier, const Candidate*> best_by_tier;
  for (const auto& x : a.candidates)
    if (!best_by_tier.count(x.tier)) best_by_tier[x.tier] = &x;
  for (const auto& [tier, x] : best_by_tier)
    if (tier != best.tier)
      r.push_back(fmt::format("Best {} option: {} x {} {} at {} ({:+.0f}%).", to_string(tier), x->gpus, x->gpu,
                              x->mode == "buy" ? "bought" : "rented", format_usd(x->total_cost_usd),
                              100 * (x->total_cost_usd / best.total_cost_usd - 1)));
  for (Tier tier : c.tiers)
    if (!best_by_tier.count(tier))
      r.push_back(fmt::format("No {} card meets the constraints (see rejected).", to_string(tier)));
  // Rent or buy, for the recommended card.
  const Candidate* other = nullptr;
  for (const auto& x : a.candidates)
    if (x.gpu == best.gpu && x.mode != best.mode) other = &x;
  if (other) {
    const Candidate& buy = best.mode == "buy" ? best : *other;
    const Candidate& rent = best.mode == "buy" ? *other : best;
    r.push_back(fmt::format("On {}, buying costs {} and renting {} over {:.0f} years at this use ({:.0f} busy hours a month){}.",
                            best.gpu, format_usd(buy.total_cost_usd), format_usd(rent.total_cost_usd), a.horizon_years,
                            c.busy_hours_per_month,
                            buy.break_even_months ? fmt::format("; bought cards pay for themselves after {:.0f} months at this use",
                                                                *buy.break_even_months) : ""));
  }
  return a;
}

}  // namespace gpuplan
