#include "advise/advice_json.h"

namespace gpuplan {

using nlohmann::json;

namespace {
json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }


json tco_json(const OwnershipTco& t) {
  return {{"node_class", t.housing.node->id}, {"nodes", t.housing.nodes}, {"office", t.housing.office},
          {"cards_usd", t.cards_usd}, {"servers_usd", t.servers_usd}, {"network_usd", t.network_usd},
          {"capex_usd", t.capex_usd}, {"it_kw", t.it_kw}, {"power_usd_per_month", t.power_usd_per_month},
          {"colocation_usd_per_month", t.colocation_usd_per_month}, {"support_usd_per_month", t.support_usd_per_month},
          {"staff_usd_per_month", t.staff_usd_per_month}, {"opex_usd_per_month", t.opex_usd_per_month()},
          {"resale_usd", t.resale_usd}, {"busy_gpu_hours_per_month", t.busy_gpu_hours_per_month},
          {"total_usd", t.total_usd}, {"server_source", t.server_source}, {"resale_source", t.resale_source}};
}

json sentences(const std::vector<Sentence>& v) {
  json out = json::array();
  for (const auto& s : v) out.push_back(s.text);
  return out;
}
}  // namespace

json plan_json(const PlanCandidate& c) {
  const Workload& w = c.workload;
  return {{"gpus", w.par.gpus()}, {"tp", w.par.tp}, {"pp", w.par.pp}, {"dp", w.par.dp}, {"ep", w.par.ep}, {"micro_batch", w.micro_batch},
          {"grad_accum", w.grad_accum}, {"global_batch", c.estimate.global_batch}, {"zero", w.par.zero},
          {"recompute", to_string(w.recompute_spec())}, {"offload_optimizer", w.offload_optimizer},
          {"optimizer_location", w.offload_optimizer ? "in CPU memory" : "on the GPUs"},
          {"virtual_stages", w.par.virtual_stages}, {"stack", c.estimate.stack}, {"step_time_s", c.estimate.step_time_s},
          {"mfu", c.estimate.mfu}, {"tokens_per_s", c.estimate.tokens_per_s}, {"gpu_hours_per_step", c.gpu_hours_per_step()},
          {"memory_per_gpu_bytes", static_cast<int64_t>(c.memory_per_gpu_bytes)},
          {"capacity_bytes", static_cast<int64_t>(c.capacity_bytes)}, {"free_fraction", c.margin.free_fraction},
          {"required_headroom_fraction", c.margin.required_fraction},
          {"host_bytes_per_node", static_cast<int64_t>(c.host_bytes_per_node)},
          {"time_to_train_s", opt(c.estimate.time_to_train_s)}};
}

json serving_option_json(const ServingOption& o) {
  return {{"tp", o.tp}, {"attention_dp", o.attention_dp}, {"concurrency_per_replica", o.concurrency}, {"replica_rps", o.replica_rps}, {"headroom", o.headroom},
          {"replicas_peak", o.replicas_peak}, {"replicas_min", o.replicas_min}, {"gpus_peak", o.gpus_peak},
          {"gpus_min", o.gpus_min}, {"ttft_s", o.ttft_s}, {"tpot_s", o.tpot_s},
          {"in_flight_at_capacity", o.in_flight_at_capacity}, {"tokens_per_s_per_gpu", o.tokens_per_s_per_gpu},
          {"why_not", o.ok() ? json(nullptr) : json(o.why_not)}};
}

json candidate_json(const Candidate& c) {
  json jobs = json::array(), services = json::array();
  for (const auto& j : c.jobs)
    jobs.push_back({{"name", j.name}, {"plan", plan_json(j.plan)}, {"time_s", j.time_s}, {"cost_usd", j.cost_usd},
                    {"bottleneck", j.bottleneck}, {"bottleneck_share", j.bottleneck_share}});
  for (const auto& s : c.services) {
    json j = serving_option_json(s.option);
    j.update({{"name", s.name}, {"engine", s.engine}, {"ttft_target_s", s.target.ttft_s}, {"tpot_target_s", s.target.tpot_s},
              {"peak_rps", s.target.peak_rps}, {"average_rps", s.target.average_rps}, {"usd_per_month", s.usd_per_month},
              {"usd_per_million_tokens", s.usd_per_million_tokens}});
    services.push_back(std::move(j));
  }
  json j = {{"gpu", c.gpu}, {"gpu_name", c.gpu_name}, {"tier", to_string(c.tier)}, {"mode", c.mode}, {"how", c.how()},
            {"provider", c.provider}, {"provider_class", c.provider_class}, {"condition", c.condition},
            {"usd_per_gpu_hour", c.usd_per_gpu_hour}, {"price_basis", c.price_basis}, {"price_date", c.price_date},
            {"gpus", c.gpus}, {"total_cost_usd", c.total_cost_usd}, {"capex_usd", c.capex_usd},
            {"usd_per_month", c.usd_per_month}, {"training_time_s", c.training_time_s},
            {"cost_vs_recommendation", c.cost_vs_recommendation}, {"pareto", c.pareto},
            {"tco", c.tco ? tco_json(*c.tco) : json(nullptr)}, {"jobs", jobs}, {"services", services},
            {"caveats", sentences(c.caveats)}, {"facts", c.facts}, {"notes", c.notes}};
  if (c.rejected()) {
    j["rule"] = c.rule;
    j["reason"] = c.why.text;
    j["why"] = c.why.text;
  }
  return j;
}

json advice_json(const AdviseRequest& req, const Advice& a) {
  json cands = json::array(), rej = json::array(), tiers = json::object(), missing = json::array();
  for (const auto& c : a.candidates) cands.push_back(candidate_json(c));
  for (const auto& c : a.rejected) rej.push_back(candidate_json(c));
  for (const auto& [tier, c] : a.best_by_tier) tiers[tier] = candidate_json(c);
  for (Tier t : req.constraints.tiers)
    if (!a.best_by_tier.count(to_string(t))) missing.push_back(to_string(t));
  json rec = nullptr;
  if (a.recommendation) {
    rec = candidate_json(*a.recommendation);
    rec["reasons"] = sentences(a.reasons);
    rec["caveats"] = sentences(a.caveats);
  }
  json rvb = nullptr;
  if (a.rent_vs_buy) {
    const RentVsBuy& v = *a.rent_vs_buy;
    rvb = {{"gpu", v.gpu}, {"buy_gpus", v.buy_gpus}, {"rent_gpus", v.rent_gpus}, {"rent_mode", v.rent_mode},
           {"rent_provider", v.rent_provider}, {"buy_total_usd", v.buy_total_usd}, {"rent_total_usd", v.rent_total_usd},
           {"capex_usd", v.capex_usd}, {"resale_usd", v.resale_usd}, {"busy_gpu_hours_per_month", v.busy_gpu_hours_per_month},
           {"owned_gpu_hours_per_month", v.owned_gpu_hours_per_month}, {"utilisation", v.utilisation},
           {"break_even_months", opt(v.break_even_months)}};
  }
  return {{"schema_version", 2}, {"workload", req.name}, {"horizon_years", a.horizon_years},
          {"headroom", {{"fraction", a.headroom.fraction}, {"basis", a.headroom.basis}, {"keeps_error_band", a.headroom.keep_band}}},
          {"candidate_count", a.candidates.size()}, {"recommendation", rec}, {"candidates", cands}, {"rejected", rej},
          {"best_by_tier", tiers}, {"tiers_without_option", missing}, {"rent_vs_buy", rvb},
          {"configs_evaluated", a.configs_evaluated}};
}

}  // namespace gpuplan
