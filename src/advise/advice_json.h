// The `gpuplan advise --json` and `gpuplan plan --json` documents. Field names are an interface:
// scripts read them, and the advisor's reasons and caveats point at them (advise/sentence.h), so
// they are added to, never renamed.
#pragma once

#include <nlohmann/json.hpp>

#include "advise/advisor.h"
#include "planner/serving_planner.h"
#include "planner/training_planner.h"

namespace gpuplan {

nlohmann::json plan_json(const PlanCandidate& c);
// One replica size of the serving planner (the advisor's services carry the same fields).
nlohmann::json serving_option_json(const ServingOption& o);
nlohmann::json candidate_json(const Candidate& c);
nlohmann::json advice_json(const AdviseRequest& req, const Advice& a);

}  // namespace gpuplan
