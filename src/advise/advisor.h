// The advisor: every GPU type and every way to get it (rent on demand, in capacity blocks, on 1- or
// 3-year reservations, as spot, or buy), priced as a buyer sees it, for the whole workload. First
// the platform rules (data types, software, licence, form factor, links), then memory with the
// headroom rule, deadlines, latency targets, capacity and budgets; what fails one is rejected with
// the rule and the reason. The rest is ranked by total cost over the horizon, with the Pareto front
// of cost against time, and one recommendation whose reasons and caveats are built from facts that
// `advise --json` prints (advise/advice_json.h).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advise/sentence.h"
#include "advise/workload_file.h"
#include "cost/cost_model.h"
#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "hardware/platform.h"
#include "hardware/prices.h"
#include "memory/headroom.h"
#include "planner/serving_planner.h"
#include "planner/training_planner.h"

namespace gpuplan {

struct JobPlan {
  std::string name;
  PlanCandidate plan;
  double time_s = 0;       // one run, spot interruptions included
  double cost_usd = 0;     // all runs (rented: the bill; owned: power only, the cards are capex)
  std::string bottleneck;  // the largest share of the step
  double bottleneck_share = 0;
};

struct ServicePlan {
  std::string name;
  ServingOption option;
  ServiceTarget target;
  double usd_per_month = 0;
  double usd_per_million_tokens = 0;
  std::string engine;  // the serving engine the plan assumes
};

struct Candidate {
  std::string gpu, gpu_name;
  Tier tier = Tier::datacenter;
  std::string mode;  // on-demand, capacity-block, reserved-1y, reserved-3y, spot, buy
  std::string provider, provider_class;  // rentals
  std::string condition;                 // buy: new or used
  double usd_per_gpu_hour = 0;           // rentals: the quote; buy: the owned cost per busy GPU-hour
  std::string price_basis, price_date;
  int64_t gpus = 0;            // cards rented at once, or bought
  double total_cost_usd = 0;   // over the horizon
  double capex_usd = 0, usd_per_month = 0;
  double training_time_s = 0;  // all jobs, one run each, back to back
  double cost_vs_recommendation = 0;  // total / the recommendation's total - 1
  std::optional<OwnershipTco> tco;    // buy
  std::vector<JobPlan> jobs;
  std::vector<ServicePlan> services;
  bool pareto = false;
  std::vector<Sentence> caveats;
  // Rejected: the rule broken (dtype, software, licence, form-factor, interconnect, memory, deadline,
  // latency, capacity, reliability, budget, price, platform) and why, in words a manager understands.
  std::string rule;
  Sentence why;
  // Numbers and texts the sentences quote that have no other field, under "facts" and "notes" in
  // the entry's JSON; sentence facts point at "facts/<key>" and "notes/<key>".
  std::map<std::string, double> facts;
  std::map<std::string, std::string> notes;
  bool rejected() const { return !rule.empty(); }
  // "on-demand from Lambda (gpu-cloud)", "bought new".
  std::string how() const;
};

// Owning against renting the recommended GPU, with the workload's real use of the cards.
struct RentVsBuy {
  std::string gpu;
  int64_t buy_gpus = 0, rent_gpus = 0;
  std::string rent_mode, rent_provider;
  double buy_total_usd = 0, rent_total_usd = 0, capex_usd = 0, resale_usd = 0;
  double busy_gpu_hours_per_month = 0;   // what the workload keeps the bought cards busy
  double owned_gpu_hours_per_month = 0;  // what the bought cards could deliver
  double utilisation = 0;                // busy / owned
  std::optional<double> break_even_months;  // rent spend passes owning; none when renting stays cheaper
};

struct Advice {
  std::optional<Candidate> recommendation;
  std::vector<Sentence> reasons;
  std::vector<Sentence> caveats;
  std::vector<Candidate> candidates;  // feasible, cheapest first
  std::vector<Candidate> rejected;
  std::map<std::string, Candidate> best_by_tier;  // cheapest feasible per tier
  std::optional<RentVsBuy> rent_vs_buy;
  int64_t configs_evaluated = 0;
  double horizon_years = 3;
  Headroom headroom;
};

struct AdviseOptions {
  Headroom headroom;  // the margin every plan keeps
};

Advice advise(const AdviseRequest& req, const Catalog& catalog, const PriceBook& prices, const EfficiencyTable& eff,
              const Platform& platform, const AdviseOptions& options,
              const std::function<void(int64_t, int64_t)>& progress = {});

// The software a training job needs on the GPU: its stack, bitsandbytes for QLoRA and 8-bit
// optimizers, Transformer Engine for fp8; a service needs its serving engine (vLLM).
std::vector<std::string> required_software(const TrainingJob& job);
std::vector<std::string> required_software(const InferenceService& service);

}  // namespace gpuplan
