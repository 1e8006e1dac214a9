// The `gpuplan advise --json` and `gpuplan plan --json` documents. Field names are an interface:
// scripts read them, and the advisor's reasons and caveats point at them (advise/sentence.h), so
// they are added to, never renamed.
#pragma once

#include <nlohmann/json.hpp>

#include "advise/advisor.h"
#include "planner/training_planner.h"

namespace gpuplan {

nlohmann::json plan_json(const PlanCandidate& c);
nlohmann::json candidate_json(const Candidate& c);
nlohmann::json advice_json(const AdviseRequest& req, const Advice& a);

}  // namespace gpuplan
