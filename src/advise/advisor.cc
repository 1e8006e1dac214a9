#include "advise/advisor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "advise/candidate_facts.h"
#include "advise/feasibility.h"
#include "memory/fit.h"
#include "util/units.h"

namespace gpuplan {

std::vector<std::string> required_software(const TrainingJob& job) {
  std::vector<std::string> out = {job.stack.id};
  if (job.workload.task == Task::qlora || job.workload.optimizer == Optimizer::adamw8bit) out.push_back("bitsandbytes");
  if (job.workload.precision == Precision::fp8 && job.stack.id == "megatron") out.push_back("transformer-engine");
  return out;
}

std::vector<std::string> required_software(const InferenceService&) { return {"vllm"}; }

std::string Candidate::how() const {
  if (mode == "buy") return "bought " + condition;
  if (mode == "any") return "any way";
  return mode + " from " + provider + " (" + provider_class + ")";
}

namespace {

Candidate base_candidate(const Gpu& gpu, const std::string& mode) {
  Candidate c;
  c.gpu = gpu.id;
  c.gpu_name = gpu.name;
  c.tier = gpu.tier;
  c.mode = mode;
  return c;
}

Candidate& reject(Candidate& c, const char* rule, Sentence why) {
  c.rule = rule;
  c.why = std::move(why);
  return c;
}

std::pair<std::string, double> largest_share(const TrainingEstimate& e) {
  const StepBreakdown& b = e.breakdown;
  const std::pair<const char*, double> parts[] = {
      {"matmul compute", b.compute_s},           {"memory-bound kernels", b.memory_s},
      {"tensor-parallel communication", b.tp_comm_s}, {"pipeline bubble", b.bubble_s},
      {"data-parallel communication", b.dp_comm_exposed_s}, {"optimizer step", b.optimizer_s},
      {"optimizer offload to the CPU", b.offload_s}, {"pipeline sends", b.pp_comm_s},
      {"kernel launches", b.overhead_s},         {"waiting for the host to issue kernels", b.host_bound_s},
      {"expert all-to-all", b.ep_comm_s},        {"context-parallel sends", b.cp_comm_s}};
  const auto* best = &parts[0];
  for (const auto& p : parts)
    if (p.second > best->second) best = &p;
  return {best->first, best->second / e.step_time_s};
}

JobPlan job_plan(const TrainingJob& job, const PlanCandidate& p, double time_s) {
  JobPlan j{job.name, p, time_s, 0, "", 0};
  std::tie(j.bottleneck, j.bottleneck_share) = largest_share(p.estimate);
  return j;
}

// ---- What the GPU can do for the workload, independent of how it is paid for ---------------------
struct GpuPlans {
  std::vector<PlanResult> jobs;
  std::vector<ServingPlan> services;
};

GpuPlans plan_gpu(const AdviseRequest& req, const Gpu& gpu, const EfficiencyTable& table, const Platform& platform,
                  const Headroom& headroom, int64_t& evaluated, const std::function<void(int64_t, int64_t)>& progress) {
  GpuPlans g;
  for (const TrainingJob& job : req.training) {
    PlanSpace space;
    space.max_gpus = req.constraints.max_gpus;
    space.global_batch = job.global_batch;
    space.tokens = job.tokens;
    space.keep = 0;
    space.headroom = headroom;
    space.platform = &platform;
    g.jobs.push_back(plan_training(job.model, job.workload, gpu, table.for_gpu(gpu, job.stack), job.stack,
                                   default_cluster(gpu), space, progress));
    evaluated += g.jobs.back().configs_evaluated;
  }
  // The serving planner sizes replicas on the card less the margin every plan keeps.
  Gpu margin = gpu;
  margin.memory_bytes *= 1 - headroom.fraction;
  for (const InferenceService& s : req.inference)
    g.services.push_back(plan_serving(s.model, s.workload, margin, table.for_gpu(gpu), default_cluster(gpu), s.target, s.engine,
                                        s.attention_dp));
  return g;
}

// Why no plan of a job fits, in words.
Candidate& no_fit(Candidate& c, const TrainingJob& job, const PlanResult& r, const AdviseRequest& req, const Headroom& h) {
  if (!r.refused.empty())
    return reject(c, "software", sentence("{}: {}.", {note(c, "job", job.name), note(c, "refused", r.refused)}));
  c.notes["job"] = job.name;
  return reject(c, "memory",
                sentence("{} does not fit in memory on up to {} x {} while keeping {} of each card free, even with "
                         "recomputation, full sharding and CPU offload.",
                         {fact::text("notes/job", job.name), num(c, "max_gpus", Fact::Kind::count, static_cast<double>(req.constraints.max_gpus)),
                          fact::text("gpu", c.gpu), num(c, "headroom_fraction", Fact::Kind::percent, h.fraction)}));
}

// The services' plans, or the reason one has none.
bool add_services(Candidate& c, const AdviseRequest& req, const GpuPlans& plans) {
  for (size_t k = 0; k < req.inference.size(); ++k) {
    const InferenceService& s = req.inference[k];
    const ServingPlan& sp = plans.services[k];
    if (!sp.refused.empty()) {
      c.notes["service"] = s.name;
      reject(c, "software", sentence("{}: {}.", {fact::text("notes/service", s.name), note(c, "refused", sp.refused)}));
      return false;
    }
    if (!sp.best) {
      std::string why;
      for (const auto& o : sp.options)
        why += fmt::format("{}TP {}{}: {}", why.empty() ? "" : "; ", o.tp, o.attention_dp ? " (attention DP)" : "", o.why_not);
      c.notes["service"] = s.name;
      c.notes["latency"] = why;
      reject(c, "latency", sentence("{} cannot meet its latency targets: {}.", {fact::text("notes/service", s.name), fact::text("notes/latency", why)}));
      return false;
    }
    c.services.push_back({s.name, *sp.best, s.target, 0, 0, s.engine.id});
  }
  return true;
}

double output_tokens_per_month(const ServiceTarget& t) { return t.average_rps * static_cast<double>(t.output_tokens) * kHoursPerMonth * 3600.0; }

// ---- Renting ------------------------------------------------------------------------------------
Candidate price_rental(const AdviseRequest& req, const Gpu& gpu, const CloudPrice& q, const GpuPlans& plans,
                       const PriceBook& book, double tie, const Headroom& headroom) {
  Candidate c = base_candidate(gpu, to_string(q.mode));
  c.provider = q.provider;
  c.provider_class = q.provider_class;
  c.usd_per_gpu_hour = q.usd_per_gpu_hour;
  c.price_basis = q.basis;
  c.price_date = q.date;
  const double months = 12 * req.constraints.own.lifetime_years;
  const bool reserved = commitment_months(q.mode) > 0;
  const int64_t cap = book.max_gpus(q);
  int64_t reserve_gpus = 0;
  double reserve_span = 0;
  for (size_t k = 0; k < req.training.size(); ++k) {
    const TrainingJob& job = req.training[k];
    const PlanResult& r = plans.jobs[k];
    if (r.best_per_count.empty()) return no_fit(c, job, r, req, headroom);
    struct Option {
      JobPlan plan;
      double cost;
    };
    std::vector<Option> options;
    double fastest = 1e300;
    bool capped = false;
    for (const PlanCandidate& p : r.best_per_count) {
      const double t = job.tokens / p.estimate.tokens_per_s;
      Usage u{p.workload.par.gpus(), static_cast<double>(job.runs), t / 3600, job.runs > 1 ? months : t / 3600 / kHoursPerMonth};
      const RentalCost rc = rent_cost(q, book, u);
      if (rc.over_capacity) {
        capped = true;
        continue;
      }
      const double t_eff = rc.lost_gpu_hours > 0 ? t + rc.lost_gpu_hours / static_cast<double>(u.gpus) / u.runs * 3600 : t;
      fastest = std::min(fastest, t_eff);
      if (job.deadline_s && t_eff > *job.deadline_s) continue;
      JobPlan jp = job_plan(job, p, t_eff);
      jp.cost_usd = reserved ? 0 : rc.total_usd;
      // Reservations cost what their GPU count does, so the fewest GPUs that meet the deadline win.
      options.push_back({jp, reserved ? static_cast<double>(u.gpus) : rc.total_usd});
    }
    // The cheapest, and among plans within the model's error of it, the fewest GPUs.
    std::optional<JobPlan> best;
    if (!options.empty()) {
      double cheapest = 1e300;
      for (const auto& o : options) cheapest = std::min(cheapest, o.cost);
      for (const auto& o : options)
        if (o.cost <= cheapest * (1 + tie) &&
            (!best || o.plan.plan.workload.par.gpus() < best->plan.workload.par.gpus() ||
             (o.plan.plan.workload.par.gpus() == best->plan.workload.par.gpus() && o.plan.time_s < best->time_s)))
          best = o.plan;
    }
    if (!best) {
      c.notes["job"] = job.name;
      if (fastest < 1e300 && capped)
        return reject(c, "deadline",
                      sentence("{}: on the at most {} GPUs {} rents as {} without a contract, the fastest plan takes {} a run, past the {} deadline.",
                               {fact::text("notes/job", job.name), num(c, "max_gpus", Fact::Kind::count, static_cast<double>(cap)),
                                fact::text("provider", c.provider), fact::text("mode", c.mode),
                                num(c, "fastest_run_s", Fact::Kind::seconds, fastest), num(c, "deadline_s", Fact::Kind::seconds, *job.deadline_s)}));
      if (fastest < 1e300)
        return reject(c, "deadline",
                      sentence("{}: the fastest plan on {} from {} ({}) takes {} a run, past the {} deadline.",
                               {fact::text("notes/job", job.name), fact::text("gpu", c.gpu), fact::text("provider", c.provider),
                                fact::text("mode", c.mode), num(c, "fastest_run_s", Fact::Kind::seconds, fastest),
                                num(c, "deadline_s", Fact::Kind::seconds, *job.deadline_s)}));
      if (capped)
        return reject(c, "capacity",
                      sentence("{} needs more GPUs than {} rents as {} without a contract (at most {}): {}.",
                               {fact::text("notes/job", job.name), fact::text("provider", c.provider), fact::text("mode", c.mode),
                                num(c, "max_gpus", Fact::Kind::count, static_cast<double>(cap)),
                                note(c, "capacity_source", book.provider_class(q.provider_class)->on_demand_source)}));
      return no_fit(c, job, r, req, headroom);
    }
    if (q.mode == RentalMode::spot) {
      const double t = job.tokens / best->plan.estimate.tokens_per_s;
      const RentalCost rc = rent_cost(q, book, {best->plan.workload.par.gpus(), static_cast<double>(job.runs), t / 3600, months});
      c.facts["spot_interruptions"] += rc.expected_interruptions;
      c.facts["spot_lost_gpu_hours"] += rc.lost_gpu_hours;
    }
    c.gpus = std::max(c.gpus, best->plan.workload.par.gpus());
    c.training_time_s += best->time_s;
    reserve_gpus = std::max(reserve_gpus, best->plan.workload.par.gpus());
    reserve_span = std::max(reserve_span, job.runs > 1 ? months : best->time_s / 3600 / kHoursPerMonth * job.runs);
    c.jobs.push_back(*best);
  }
  if (!add_services(c, req, plans)) return c;
  double serve_month = 0;
  for (auto& s : c.services) {
    if (q.mode == RentalMode::spot) {
      c.notes["service"] = s.name;
      return reject(c, "reliability",
                    sentence("{} is a production service; spot GPUs are taken back at short notice ({}), so a service cannot rest on them.",
                             {fact::text("notes/service", s.name), note(c, "spot_notice", book.provider_class(q.provider_class)->spot_notice)}));
    }
    if (cap > 0 && s.option.gpus_peak > cap) {
      c.notes["service"] = s.name;
      return reject(c, "capacity",
                    sentence("{} needs {} GPUs at peak; {} rents at most {} as {} without a contract.",
                             {fact::text("notes/service", s.name), num(c, "gpus_peak", Fact::Kind::count, static_cast<double>(s.option.gpus_peak)),
                              fact::text("provider", c.provider), num(c, "max_gpus", Fact::Kind::count, static_cast<double>(cap)), fact::text("mode", c.mode)}));
    }
    // Rented services autoscale between the average-load and peak replica counts: the bill follows
    // the average. A reservation holds the peak count for its whole term.
    s.usd_per_month = (reserved ? s.option.gpus_peak : s.option.gpus_min) * kHoursPerMonth * q.usd_per_gpu_hour;
    s.usd_per_million_tokens = s.usd_per_month / (output_tokens_per_month(s.target) / 1e6);
    serve_month += s.usd_per_month;
    c.gpus = std::max(c.gpus, s.option.gpus_peak);
    reserve_gpus = std::max(reserve_gpus, s.option.gpus_peak);
    reserve_span = months;
  }
  if (reserved) {
    const double term = commitment_months(q.mode);
    const double committed = std::max(1.0, std::ceil(reserve_span / term - 1e-9)) * term;
    c.total_cost_usd = static_cast<double>(reserve_gpus) * q.usd_per_gpu_hour * kHoursPerMonth * committed;
    c.facts["committed_months"] = committed;
  } else {
    double train = 0;
    for (const auto& j : c.jobs) train += j.cost_usd;
    c.total_cost_usd = train + serve_month * months;
  }
  c.usd_per_month = c.total_cost_usd / months;
  return c;
}

// ---- Buying -------------------------------------------------------------------------------------
Candidate price_purchase(const AdviseRequest& req, const Gpu& gpu, const PurchasePrice& price, const GpuPlans& plans,
                         const PriceBook& book, const Platform& platform, const Headroom& headroom) {
  Candidate c = base_candidate(gpu, "buy");
  c.condition = price.condition;
  c.price_basis = price.source;
  c.price_date = price.date;
  const double months = 12 * req.constraints.own.lifetime_years;
  if (!add_services(c, req, plans)) return c;
  int64_t serve_peak = 0;
  for (const auto& s : c.services) serve_peak += s.option.gpus_peak;
  // The fewest GPUs that meet each job's deadline; the purchase unit may then leave spare cards.
  int64_t train_need = 0;
  for (size_t k = 0; k < req.training.size(); ++k) {
    const TrainingJob& job = req.training[k];
    const PlanResult& r = plans.jobs[k];
    if (r.best_per_count.empty()) return no_fit(c, job, r, req, headroom);
    int64_t need = 0;
    double fastest = 1e300;
    for (const PlanCandidate& p : r.best_per_count) {
      const double t = job.tokens / p.estimate.tokens_per_s;
      fastest = std::min(fastest, t);
      if (!job.deadline_s || t <= *job.deadline_s) {
        need = p.workload.par.gpus();
        break;
      }
    }
    if (need == 0) {
      c.notes["job"] = job.name;
      return reject(c, "deadline", sentence("{}: the fastest plan on up to {} x {} takes {} a run, past the {} deadline.",
                                            {fact::text("notes/job", job.name), num(c, "max_gpus", Fact::Kind::count, static_cast<double>(req.constraints.max_gpus)),
                                             fact::text("gpu", c.gpu), num(c, "fastest_run_s", Fact::Kind::seconds, fastest),
                                             num(c, "deadline_s", Fact::Kind::seconds, *job.deadline_s)}));
    }
    train_need = std::max(train_need, need);
  }
  auto housing = house(gpu, serve_peak + train_need, platform);
  if (!housing) {
    c.notes["housing"] = housing.error().message;
    return reject(c, "form-factor", sentence("{}", {fact::text("notes/housing", housing.error().message)}));
  }
  // With the cards bought, each job runs on the fastest plan that fits in what is left of them.
  double busy = 0;
  for (size_t k = 0; k < req.training.size(); ++k) {
    const TrainingJob& job = req.training[k];
    const PlanCandidate* pick = nullptr;
    for (const PlanCandidate& p : plans.jobs[k].best_per_count)
      if (p.workload.par.gpus() <= housing->gpus - serve_peak && (!pick || p.estimate.step_time_s < pick->estimate.step_time_s)) pick = &p;
    const double t = job.tokens / pick->estimate.tokens_per_s;
    c.jobs.push_back(job_plan(job, *pick, t));
    c.training_time_s += t;
    busy += t / 3600 * static_cast<double>(pick->workload.par.gpus()) * static_cast<double>(job.runs) / months;
  }
  for (const auto& s : c.services) busy += static_cast<double>(s.option.gpus_min) * kHoursPerMonth;
  busy += req.constraints.busy_hours_per_month * static_cast<double>(housing->gpus);
  auto tco = own_cost(gpu, price, *housing, book, busy, req.constraints.own);
  if (!tco) {
    c.notes["housing"] = tco.error().message;
    return reject(c, "price", sentence("{}", {fact::text("notes/housing", tco.error().message)}));
  }
  c.tco = *tco;
  c.gpus = housing->gpus;
  c.capex_usd = tco->capex_usd;
  c.total_cost_usd = tco->total_usd;
  c.usd_per_month = c.total_cost_usd / months;
  c.usd_per_gpu_hour = tco->busy_gpu_hours_per_month > 0 ? c.total_cost_usd / (tco->busy_gpu_hours_per_month * months) : 0;
  const double power_per_gpu_hour = tco->busy_gpu_hours_per_month > 0 ? tco->power_usd_per_month / tco->busy_gpu_hours_per_month : 0;
  for (auto& j : c.jobs) j.cost_usd = power_per_gpu_hour * j.time_s / 3600 * static_cast<double>(j.plan.workload.par.gpus());
  for (auto& s : c.services) {
    s.usd_per_month = static_cast<double>(s.option.gpus_peak) / static_cast<double>(c.gpus) * c.usd_per_month;
    s.usd_per_million_tokens = s.usd_per_month / (output_tokens_per_month(s.target) / 1e6);
  }
  if (const Licence* l = platform.licence_for(gpu); l && !housing->office) {
    c.notes["licence"] = l->text;
    c.notes["licence_source"] = l->source;
    return reject(c, "licence",
                  sentence("{} cards need {} boxes, more than fit an office, and the GeForce driver licence forbids datacenter "
                           "deployment: \"{}\" ({}).",
                           {num(c, "cards", Fact::Kind::count, static_cast<double>(housing->gpus)),
                            num(c, "boxes", Fact::Kind::count, static_cast<double>(housing->nodes)), fact::text("notes/licence", l->text),
                            fact::text("notes/licence_source", l->source)}));
  }
  return c;
}

// ---- Budgets --------------------------------------------------------------------------------------
void check_budgets(Candidate& c, const Constraints& k) {
  if (c.rejected()) return;
  if (c.mode == "buy") {
    if (k.budget_capex_usd && c.capex_usd > *k.budget_capex_usd)
      reject(c, "budget", sentence("buying {} x {} with their housing costs {} up front, over the {} capital budget.",
                                   {fact::count("gpus", static_cast<double>(c.gpus)), fact::text("gpu", c.gpu),
                                    fact::usd("capex_usd", c.capex_usd), num(c, "budget_capex_usd", Fact::Kind::usd, *k.budget_capex_usd)}));
    else if (k.budget_monthly_usd && c.tco && c.tco->opex_usd_per_month() > *k.budget_monthly_usd)
      reject(c, "budget", sentence("running the bought cards costs {} a month (power, colocation, support, staff), over the {} monthly budget.",
                                   {num(c, "opex_usd_per_month", Fact::Kind::usd, c.tco->opex_usd_per_month()),
                                    num(c, "budget_monthly_usd", Fact::Kind::usd, *k.budget_monthly_usd)}));
  } else if (k.budget_monthly_usd && c.usd_per_month > *k.budget_monthly_usd) {
    reject(c, "budget", sentence("{} a month exceeds the {} monthly budget.",
                                 {fact::usd("usd_per_month", c.usd_per_month), num(c, "budget_monthly_usd", Fact::Kind::usd, *k.budget_monthly_usd)}));
  }
}

}  // namespace

// Caveats of a feasible candidate (advisor_caveats.cc).
void add_caveats(Candidate& c, const AdviseRequest& req, const Gpu& gpu, const PriceBook& book, const Platform& platform,
                 const Headroom& headroom);
// Reasons, tier bests and rent against buy for the ranked advice (advisor_explain.cc).
void explain(Advice& a, const AdviseRequest& req);

Advice advise(const AdviseRequest& req, const Catalog& catalog, const PriceBook& prices, const EfficiencyTable& table,
              const Platform& platform, const AdviseOptions& options, const std::function<void(int64_t, int64_t)>& progress) {
  Advice a;
  const Constraints& k = req.constraints;
  a.horizon_years = k.own.lifetime_years;
  a.headroom = options.headroom;
  for (const Gpu& gpu : catalog.gpus()) {
    if (std::find(k.tiers.begin(), k.tiers.end(), gpu.tier) == k.tiers.end()) continue;
    if (!k.gpus.empty() && std::find(k.gpus.begin(), k.gpus.end(), gpu.id) == k.gpus.end()) continue;
    const PlatformVerdict pv = check_platform(req, gpu, platform);
    if (!pv.rule.empty()) {
      Candidate c = base_candidate(gpu, "any");
      c.notes = pv.notes;
      a.rejected.push_back(reject(c, pv.rule.c_str(), pv.why));
      continue;
    }
    // The offers: the cheapest quote of each rental mode in each provider class, and each purchase.
    const GpuPrice* price = prices.find(gpu.id);
    std::vector<CloudPrice> quotes;
    if (price && k.allows_rental())
      for (const auto& pc : prices.provider_classes())
        for (RentalMode m : {RentalMode::on_demand, RentalMode::capacity_block, RentalMode::reserved_1y, RentalMode::reserved_3y, RentalMode::spot})
          if (k.allows(to_string(m)) && k.allows_class(pc.id))
            if (auto q = price->cheapest(m, pc.id)) quotes.push_back(*q);
    std::vector<PurchasePrice> purchases;
    if (price && k.allows("buy")) purchases = price->purchase;
    if (quotes.empty() && purchases.empty()) {
      Candidate c = base_candidate(gpu, "any");
      a.rejected.push_back(reject(c, "price", sentence("no price on file for {} in the modes and provider classes the workload allows.",
                                                       {fact::text("gpu", gpu.id)})));
      continue;
    }
    const GpuPlans plans = plan_gpu(req, gpu, table, platform, options.headroom, a.configs_evaluated, progress);
    std::vector<Candidate> offers;
    for (const CloudPrice& q : quotes) offers.push_back(price_rental(req, gpu, q, plans, prices, platform.cost_tie_fraction(), options.headroom));
    for (const PurchasePrice& p : purchases) offers.push_back(price_purchase(req, gpu, p, plans, prices, platform, options.headroom));
    for (Candidate& c : offers) {
      for (const auto& [key, value] : pv.notes) c.notes.emplace(key, value);
      check_budgets(c, k);
      if (c.rejected()) {
        a.rejected.push_back(c);
        continue;
      }
      c.caveats = pv.caveats;
      add_caveats(c, req, gpu, prices, platform, options.headroom);
      a.candidates.push_back(c);
    }
  }
  std::stable_sort(a.candidates.begin(), a.candidates.end(),
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
  for (auto& x : a.candidates) x.cost_vs_recommendation = x.total_cost_usd / a.candidates.front().total_cost_usd - 1;
  a.recommendation = a.candidates.front();
  a.caveats = a.recommendation->caveats;
  explain(a, req);
  return a;
}

}  // namespace gpuplan
