// The recommendation's reasons: why this card and this way of paying, how its plans run, what the
// next options and the other tiers cost, and owning against renting at the workload's real use.
// Every number is a fact that points at the field of `advise --json` holding it.
#include <fmt/format.h>

#include <algorithm>

#include "advise/advisor.h"

namespace gpuplan {

namespace {

void headline(Advice& a) {
  const Candidate& r = *a.recommendation;
  a.reasons.push_back(sentence("{} x {} ({}), {}: {} over {} years, the cheapest of {} options that meet every constraint.",
                               {fact::count("/recommendation/gpus", static_cast<double>(r.gpus)), fact::text("/recommendation/gpu_name", r.gpu_name),
                                fact::text("/recommendation/tier", to_string(r.tier)), fact::text("/recommendation/how", r.how()),
                                fact::usd("/recommendation/total_cost_usd", r.total_cost_usd), fact::number("/horizon_years", a.horizon_years),
                                fact::count("/candidate_count", static_cast<double>(a.candidates.size()))}));
  if (a.candidates.size() > 1) {
    const Candidate& n = a.candidates[1];
    a.reasons.push_back(sentence("Next: {} x {}, {}, at {} ({} more).",
                                 {fact::count("/candidates/1/gpus", static_cast<double>(n.gpus)), fact::text("/candidates/1/gpu", n.gpu),
                                  fact::text("/candidates/1/how", n.how()), fact::usd("/candidates/1/total_cost_usd", n.total_cost_usd),
                                  fact::percent("/candidates/1/cost_vs_recommendation", n.cost_vs_recommendation)}));
  }
}

void job_reasons(Advice& a) {
  const Candidate& r = *a.recommendation;
  for (size_t j = 0; j < r.jobs.size(); ++j) {
    const JobPlan& job = r.jobs[j];
    const Workload& w = job.plan.workload;
    const std::string at = fmt::format("/recommendation/jobs/{}/", j), p = at + "plan/";
    const std::vector<Fact> tail = {
        fact::count(p + "micro_batch", static_cast<double>(w.micro_batch)), fact::count(p + "grad_accum", static_cast<double>(w.grad_accum)),
        fact::count(p + "global_batch", static_cast<double>(job.plan.estimate.global_batch)),
        fact::text(p + "recompute", to_string(w.recompute_spec())), fact::text(p + "optimizer_location", w.offload_optimizer ? "in CPU memory" : "on the GPUs"),
        fact::text(p + "stack", job.plan.estimate.stack), fact::seconds(at + "time_s", job.time_s), fact::percent(p + "mfu", job.plan.estimate.mfu),
        fact::text(at + "bottleneck", job.bottleneck), fact::percent(at + "bottleneck_share", job.bottleneck_share)};
    const char* rest = "micro-batch {} with {} accumulation steps ({} sequences a step), recompute {}, optimizer {}, stack {}: a run "
                       "takes {} at {} MFU; the largest share of the step is {} ({}).";
    std::vector<Fact> facts = {fact::text(at + "name", job.name)};
    std::string tmpl;
    if (w.par.gpus() == 1) {
      tmpl = std::string("{}: one GPU, ") + rest;
    } else {
      tmpl = std::string("{}: {} GPUs as tp {} x pp {} x dp {} with ZeRO-{}, ") + rest;
      for (const Fact& f : {fact::count(p + "gpus", static_cast<double>(w.par.gpus())), fact::count(p + "tp", static_cast<double>(w.par.tp)),
                            fact::count(p + "pp", static_cast<double>(w.par.pp)), fact::count(p + "dp", static_cast<double>(w.par.dp)),
                            fact::count(p + "zero", w.par.zero)})
        facts.push_back(f);
    }
    facts.insert(facts.end(), tail.begin(), tail.end());
    a.reasons.push_back(sentence(tmpl, facts));
  }
  for (size_t s = 0; s < r.services.size(); ++s) {
    const ServicePlan& sp = r.services[s];
    const std::string at = fmt::format("/recommendation/services/{}/", s);
    a.reasons.push_back(sentence(
        "{} under {}: {} replica(s) of TP {} at the peak of {} requests a second ({} of their capacity left as headroom), "
        "{} at the average of {}; {} requests in flight per replica decode at {} a token at p99 (target {}), first token "
        "in {} at p99 (target {}); about {} per million output tokens.",
        {fact::text(at + "name", sp.name), fact::text(at + "engine", sp.engine),
         fact::count(at + "replicas_peak", static_cast<double>(sp.option.replicas_peak)),
         fact::count(at + "tp", static_cast<double>(sp.option.tp)), fact::number(at + "peak_rps", sp.target.peak_rps),
         fact::percent(at + "headroom", sp.option.headroom),
         fact::count(at + "replicas_min", static_cast<double>(sp.option.replicas_min)), fact::number(at + "average_rps", sp.target.average_rps),
         fact::count(at + "concurrency_per_replica", static_cast<double>(sp.option.concurrency)), fact::seconds(at + "tpot_s", sp.option.tpot_s),
         fact::seconds(at + "tpot_target_s", sp.target.tpot_s), fact::seconds(at + "ttft_s", sp.option.ttft_s),
         fact::seconds(at + "ttft_target_s", sp.target.ttft_s), fact::usd(at + "usd_per_million_tokens", sp.usd_per_million_tokens)}));
    if (sp.option.attention_dp)
      a.reasons.push_back(sentence("{} runs attention data-parallel over each replica's {} GPUs: each its own requests with "
                                   "every KV head, the experts spread over them (`infer --attention-dp`).",
                                   {fact::text(at + "name", sp.name), fact::count(at + "tp", static_cast<double>(sp.option.tp))}));
  }
}

void tier_reasons(Advice& a, const AdviseRequest& req) {
  for (const Candidate& c : a.candidates) a.best_by_tier.emplace(to_string(c.tier), c);
  const Candidate& r = *a.recommendation;
  for (const auto& [tier, c] : a.best_by_tier) {
    if (tier == to_string(r.tier)) continue;
    const std::string at = "/best_by_tier/" + tier + "/";
    a.reasons.push_back(sentence("Best {} option: {} x {}, {}, at {} ({} more).",
                                 {fact::text(at + "tier", tier), fact::count(at + "gpus", static_cast<double>(c.gpus)), fact::text(at + "gpu", c.gpu),
                                  fact::text(at + "how", c.how()), fact::usd(at + "total_cost_usd", c.total_cost_usd),
                                  fact::percent(at + "cost_vs_recommendation", c.cost_vs_recommendation)}));
  }
  size_t missing = 0;
  for (Tier t : req.constraints.tiers)
    if (!a.best_by_tier.count(to_string(t)))
      a.reasons.push_back(sentence("No {} card meets every constraint (see rejected).",
                                   {fact::text(fmt::format("/tiers_without_option/{}", missing++), to_string(t))}));
}

void rent_vs_buy(Advice& a, const AdviseRequest& req) {
  const Candidate& r = *a.recommendation;
  const Candidate *rent = nullptr, *buy = nullptr;
  for (const Candidate& c : a.candidates) {
    if (c.gpu != r.gpu) continue;
    if (c.mode == "buy" && !buy) buy = &c;
    if (c.mode != "buy" && !rent) rent = &c;
  }
  if (!rent || !buy) return;
  const double months = 12 * req.constraints.own.lifetime_years;
  RentVsBuy v;
  v.gpu = r.gpu;
  v.buy_gpus = buy->gpus;
  v.rent_gpus = rent->gpus;
  v.rent_mode = rent->mode;
  v.rent_provider = rent->provider;
  v.buy_total_usd = buy->total_cost_usd;
  v.rent_total_usd = rent->total_cost_usd;
  v.capex_usd = buy->capex_usd;
  v.resale_usd = buy->tco->resale_usd;
  v.busy_gpu_hours_per_month = buy->tco->busy_gpu_hours_per_month;
  v.owned_gpu_hours_per_month = static_cast<double>(buy->gpus) * kHoursPerMonth;
  v.utilisation = v.busy_gpu_hours_per_month / v.owned_gpu_hours_per_month;
  // Cumulative rent passes the purchase and its running costs after capex / (rent - opex) months.
  const double saving = rent->total_cost_usd / months - buy->tco->opex_usd_per_month();
  if (saving > 0 && v.capex_usd / saving <= months) v.break_even_months = v.capex_usd / saving;
  a.rent_vs_buy = v;
  a.reasons.push_back(sentence(
      "On {}: buying {} cards costs {} over {} years ({} up front, {} back at resale) against {} renting {} {} from {}; the "
      "workload keeps the bought cards busy {} of the {} GPU-hours they offer a month ({}).",
      {fact::text("/rent_vs_buy/gpu", v.gpu), fact::count("/rent_vs_buy/buy_gpus", static_cast<double>(v.buy_gpus)),
       fact::usd("/rent_vs_buy/buy_total_usd", v.buy_total_usd), fact::number("/horizon_years", a.horizon_years),
       fact::usd("/rent_vs_buy/capex_usd", v.capex_usd), fact::usd("/rent_vs_buy/resale_usd", v.resale_usd),
       fact::usd("/rent_vs_buy/rent_total_usd", v.rent_total_usd), fact::count("/rent_vs_buy/rent_gpus", static_cast<double>(v.rent_gpus)),
       fact::text("/rent_vs_buy/rent_mode", v.rent_mode), fact::text("/rent_vs_buy/rent_provider", v.rent_provider),
       fact::count("/rent_vs_buy/busy_gpu_hours_per_month", v.busy_gpu_hours_per_month),
       fact::count("/rent_vs_buy/owned_gpu_hours_per_month", v.owned_gpu_hours_per_month), fact::percent("/rent_vs_buy/utilisation", v.utilisation)}));
  if (v.break_even_months)
    a.reasons.push_back(sentence("At this use, buying pays for itself after {} months.", {fact::count("/rent_vs_buy/break_even_months", *v.break_even_months)}));
  else
    a.reasons.push_back(sentence("At this use, renting stays cheaper than buying for all {} years.", {fact::number("/horizon_years", a.horizon_years)}));
}

}  // namespace

void explain(Advice& a, const AdviseRequest& req) {
  headline(a);
  job_reasons(a);
  tier_reasons(a, req);
  rent_vs_buy(a, req);
}

}  // namespace gpuplan
