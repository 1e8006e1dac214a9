#include "advise/advisor.h"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "advise/advice_json.h"
#include "advise/advisor_test_support.h"
#include "stack/fitted.h"

namespace gpuplan {

TEST(Advisor, EveryExampleGetsARecommendationWithReasonsAndCaveats) {
  for (const char* f : {"qlora-7b-small-team.toml", "full-finetune-70b.toml", "pretrain-405b.toml", "chat-service-8b.toml"}) {
    const Advice& a = testing_support::advise_file(testing_support::example_path(f));
    ASSERT_TRUE(a.recommendation.has_value()) << f;
    EXPECT_GE(a.reasons.size(), 3u) << f;
    EXPECT_FALSE(a.caveats.empty()) << f;
    EXPECT_FALSE(a.rejected.empty()) << f;
    for (size_t i = 1; i < a.candidates.size(); ++i)
      EXPECT_LE(a.candidates[i - 1].total_cost_usd, a.candidates[i].total_cost_usd) << f;
    EXPECT_TRUE(a.candidates.front().pareto) << f;  // the cheapest is never dominated
    for (const Candidate& r : a.rejected) {
      EXPECT_FALSE(r.rule.empty()) << f;
      EXPECT_FALSE(r.why.text.empty()) << f;
    }
  }
}

// Every number (and every name with digits) in every reason, caveat and rejection comes from the
// JSON document `advise --json` prints: each fact's field holds the value the sentence shows, and
// nothing numeric is left in a sentence once its facts are taken out.
TEST(Advisor, EveryNumberInEveryReasonIsAFieldOfTheJson) {
  std::vector<std::string> files;
  for (const char* f : {"qlora-7b-small-team.toml", "full-finetune-70b.toml", "pretrain-405b.toml", "chat-service-8b.toml"})
    files.push_back(testing_support::example_path(f));
  for (const auto& f : testing_support::panel_files()) files.push_back(f);
  for (const std::string& f : files) {
    const AdviseRequest req = testing_support::read_request(f);
    const Advice& a = testing_support::advise_file(f);
    const nlohmann::json j = advice_json(req, a);
    size_t checked = 0;
    auto check = [&](const Sentence& s, const nlohmann::json& anchor, const std::string& where) {
      EXPECT_EQ(testing_support::unchecked_numbers(s, j, anchor), "") << f << " " << where << ": " << s.text;
      ++checked;
    };
    if (a.recommendation) {
      for (const Sentence& s : a.reasons) check(s, j["recommendation"], "reason");
      for (const Sentence& s : a.caveats) check(s, j["recommendation"], "caveat");
      EXPECT_EQ(j["recommendation"]["reasons"].size(), a.reasons.size());
      EXPECT_EQ(j["recommendation"]["caveats"].size(), a.caveats.size());
    }
    for (size_t i = 0; i < a.candidates.size(); ++i)
      for (const Sentence& s : a.candidates[i].caveats) check(s, j["candidates"][i], "candidate caveat");
    for (size_t i = 0; i < a.rejected.size(); ++i) {
      check(a.rejected[i].why, j["rejected"][i], "rejection");
      EXPECT_EQ(j["rejected"][i]["reason"], a.rejected[i].why.text);
      EXPECT_EQ(j["rejected"][i]["rule"], a.rejected[i].rule);
    }
    EXPECT_GT(checked, 0u) << f;
  }
}

TEST(Advisor, TheCheckerCatchesANumberThatIsNotAField) {
  const nlohmann::json j = {{"recommendation", {{"gpus", 8}}}};
  const Sentence ok = sentence("{} GPUs.", {fact::count("/recommendation/gpus", 8)});
  EXPECT_EQ(testing_support::unchecked_numbers(ok, j, j["recommendation"]), "");
  const Sentence wrong = sentence("{} GPUs.", {fact::count("/recommendation/gpus", 16)});
  EXPECT_NE(testing_support::unchecked_numbers(wrong, j, j["recommendation"]), "");
  const Sentence missing = sentence("{} GPUs.", {fact::count("/recommendation/nodes", 1)});
  EXPECT_NE(testing_support::unchecked_numbers(missing, j, j["recommendation"]), "");
  const Sentence stray{"8 GPUs for 3 days.", {fact::count("/recommendation/gpus", 8)}};
  EXPECT_NE(testing_support::unchecked_numbers(stray, j, j["recommendation"]), "");
  const Sentence names{"An fp16 model on H100s.", {}};
  EXPECT_EQ(testing_support::unchecked_numbers(names, j, j["recommendation"]), "");  // digits inside names
}

// With a $20k capital budget and no cloud, a small team lands on consumer or workstation cards it
// can keep in the office.
TEST(Advisor, SmallQloraBoughtOnABudgetLandsOnOfficeCards) {
  AdviseRequest r = testing_support::read_request(testing_support::example_path("qlora-7b-small-team.toml"));
  r.constraints.modes = {"buy"};
  const Advice a = testing_support::advise_request(r);
  ASSERT_TRUE(a.recommendation);
  EXPECT_NE(a.recommendation->tier, Tier::datacenter) << a.recommendation->gpu;
  EXPECT_EQ(a.recommendation->mode, "buy");
  ASSERT_TRUE(a.recommendation->tco);
  EXPECT_TRUE(a.recommendation->tco->housing.office);
  EXPECT_LE(a.recommendation->capex_usd, 20000);
}

TEST(Advisor, CapitalBudgetRejectsWithTheRule) {
  AdviseRequest r = testing_support::read_request(testing_support::example_path("chat-service-8b.toml"));
  r.constraints.budget_capex_usd = 1000;
  r.constraints.modes = {"buy"};
  const Advice a = testing_support::advise_request(r);
  EXPECT_FALSE(a.recommendation.has_value());
  bool named = false;
  for (const auto& c : a.rejected) named = named || (c.rule == "budget" && c.why.text.find("capital budget") != std::string::npos);
  EXPECT_TRUE(named);
}

TEST(Advisor, DeadlineTooTightIsExplained) {
  AdviseRequest r = testing_support::read_request(testing_support::example_path("pretrain-405b.toml"));
  r.training[0].deadline_s = 86400;  // 15.6T tokens in a day
  r.constraints.gpus = {"h100-sxm"};
  const Advice a = testing_support::advise_request(r);
  EXPECT_FALSE(a.recommendation.has_value());
  bool deadline = false;
  for (const auto& c : a.rejected) deadline = deadline || c.rule == "deadline";
  EXPECT_TRUE(deadline);
}

// The rent-against-buy sentence uses the workload's real use, never a round-the-clock assumption.
TEST(Advisor, RentAgainstBuyUsesTheWorkloadsOwnHours) {
  const Advice& a = testing_support::advise_file(testing_support::example_path("full-finetune-70b.toml"));
  ASSERT_TRUE(a.rent_vs_buy);
  const RentVsBuy& v = *a.rent_vs_buy;
  EXPECT_LT(v.utilisation, 0.1);  // one 60-hour run over three years
  EXPECT_FALSE(v.break_even_months.has_value());
  EXPECT_LT(v.rent_total_usd, v.buy_total_usd);
}

TEST(Advisor, HeadroomIsKeptOnEveryPlan) {
  for (const char* f : {"qlora-7b-small-team.toml", "full-finetune-70b.toml"}) {
    const Advice& a = testing_support::advise_file(testing_support::example_path(f));
    const std::string stack = testing_support::read_request(testing_support::example_path(f)).training.at(0).stack.id;
    for (const Candidate& c : a.candidates)
      for (const JobPlan& j : c.jobs) {
        EXPECT_GE(j.plan.margin.free_fraction + 1e-12, a.headroom.fraction) << f << " " << c.gpu;
        EXPECT_LE(j.plan.memory_per_gpu_bytes, j.plan.capacity_bytes * (1 - a.headroom.fraction) + 1) << f;
        // By default the margin also holds the top of the estimate's cross-validated error band.
        const FitBand& band = FittedParameters::builtin().for_stack(stack)
                                  .memory_band_for(memory_band_class(j.plan.workload.task));
        ASSERT_GT(band.rows, 0) << f;
        EXPECT_LE(j.plan.memory_per_gpu_bytes * band.high, j.plan.capacity_bytes * (1 + 1e-9)) << f << " " << c.gpu;
      }
  }
  // A larger margin never lets a plan use more of the card.
  AdviseRequest r = testing_support::read_request(testing_support::example_path("qlora-7b-small-team.toml"));
  const Advice wide = testing_support::advise_request(r, 0.3);
  for (const Candidate& c : wide.candidates)
    for (const JobPlan& j : c.jobs) EXPECT_GE(j.plan.margin.free_fraction + 1e-12, 0.3) << c.gpu;
}

}  // namespace gpuplan
