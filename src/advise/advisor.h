// The advisor: every GPU type and mode (rent or buy) that can run the whole workload, with the GPU
// count, layouts and cost of each; those that cannot, with the reason; a ranking by total cost, the
// Pareto front of cost against time, and one recommendation whose reasons come from the numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "advise/workload_file.h"
#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "hardware/prices.h"
#include "planner/serving_planner.h"
#include "planner/training_planner.h"

namespace gpuplan {

struct JobPlan {
  std::string name;
  PlanCandidate plan;
  double time_s = 0;     // one run
  double cost_usd = 0;   // all runs (cloud: GPU-hours x rate; buy: power only, the cards are capex)
  std::string bottleneck;  // the largest share of the step
};

struct ServicePlan {
  std::string name;
  ServingOption option;
  double usd_per_month = 0;
  double usd_per_million_tokens = 0;
};

struct Candidate {
  std::string gpu;
  Tier tier = Tier::datacenter;
  std::string mode;        // "cloud" or "buy"
  int64_t gpus = 0;        // cards to rent at once or to buy
  double total_cost_usd = 0;  // over the constraint horizon (lifetime_years)
  double capex_usd = 0, usd_per_month = 0;
  double training_time_s = 0;  // all jobs, one run each, back to back
  std::optional<double> break_even_months;
  std::vector<JobPlan> jobs;
  std::vector<ServicePlan> services;
  bool pareto = false;
  std::string why;  // why rejected (empty for feasible candidates)
};

struct Advice {
  std::optional<Candidate> recommendation;
  std::vector<std::string> reasons;
  std::vector<Candidate> candidates;  // feasible, cheapest first
  std::vector<Candidate> rejected;
  int64_t configs_evaluated = 0;
  double horizon_years = 3;
};

Advice advise(const AdviseRequest& req, const Catalog& catalog, const PriceBook& prices, const EfficiencyTable& eff,
              const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace gpuplan
