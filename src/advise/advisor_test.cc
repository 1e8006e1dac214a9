#include "advise/advisor.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace gpuplan {

namespace {
AdviseRequest example(const std::string& name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name);
  std::ostringstream ss;
  ss << in.rdbuf();
  auto r = parse_workload_file(ss.str(), name, 20790, PriceBook::builtin().ownership());
  EXPECT_TRUE(r.ok()) << r.error().to_string();
  return *r;
}
Advice run(const AdviseRequest& r) {
  return advise(r, Catalog::builtin(), PriceBook::builtin(), EfficiencyTable::builtin());
}
}  // namespace

TEST(Advisor, EveryExampleGetsARecommendationWithReasons) {
  for (const char* f : {"qlora-7b-small-team.toml", "full-finetune-70b.toml", "pretrain-405b.toml", "chat-service-8b.toml"}) {
    const Advice a = run(example(f));
    ASSERT_TRUE(a.recommendation.has_value()) << f;
    EXPECT_GE(a.reasons.size(), 3u) << f;
    EXPECT_FALSE(a.rejected.empty()) << f;
    for (size_t i = 1; i < a.candidates.size(); ++i)
      EXPECT_LE(a.candidates[i - 1].total_cost_usd, a.candidates[i].total_cost_usd) << f;
    EXPECT_TRUE(a.candidates.front().pareto) << f;  // the cheapest is never dominated
  }
}

TEST(Advisor, SmallQloraFitsConsumerAndWorkstationCards) {
  const Advice a = run(example("qlora-7b-small-team.toml"));
  bool consumer = false, workstation = false;
  for (const auto& c : a.candidates) {
    consumer = consumer || c.tier == Tier::consumer;
    workstation = workstation || c.tier == Tier::workstation;
  }
  EXPECT_TRUE(consumer);
  EXPECT_TRUE(workstation);
}

// With occasional runs renting by the hour is cheapest; a team that keeps its data in house (buy
// only, $20k budget) lands on a consumer or workstation card, from the prices alone.
TEST(Advisor, SmallQloraBoughtOnABudgetLandsOnConsumerOrWorkstationCards) {
  AdviseRequest r = example("qlora-7b-small-team.toml");
  r.constraints.allow_cloud = false;
  const Advice a = run(r);
  ASSERT_TRUE(a.recommendation);
  EXPECT_NE(a.recommendation->tier, Tier::datacenter) << a.recommendation->gpu;
  EXPECT_EQ(a.recommendation->mode, "buy");
}

TEST(Advisor, Training70bNeedsDatacenterPartsWithAScaleUpFabric) {
  AdviseRequest r = example("full-finetune-70b.toml");
  const Advice a = run(r);
  ASSERT_TRUE(a.recommendation);
  const Gpu g = *Catalog::builtin().find(a.recommendation->gpu);
  EXPECT_EQ(g.tier, Tier::datacenter);
  EXPECT_TRUE(g.has_nvlink());
  // On 24 GB consumer cards the 1.13 TB of model states (70.6B x 16 B) alone need 47+ cards, so
  // the consumer plan takes many more GPUs than the recommendation.
  r.constraints.tiers = {Tier::consumer};
  const Advice consumer = run(r);
  ASSERT_TRUE(consumer.recommendation);
  EXPECT_GE(consumer.recommendation->gpus, 48);
  EXPECT_GT(consumer.recommendation->gpus, 2 * a.recommendation->gpus);
}

TEST(Advisor, RoundTheClockOwnedCardsBeatRentingThemAtTheSameCount) {
  AdviseRequest r = example("chat-service-8b.toml");
  r.constraints.gpus = {"h100-sxm"};
  r.inference[0].target.average_rps = r.inference[0].target.peak_rps;  // flat load: no autoscaling gain
  const Advice a = run(r);
  ASSERT_TRUE(a.recommendation);
  EXPECT_EQ(a.recommendation->mode, "buy");
}

TEST(Advisor, CapitalBudgetRejectsWithTheReason) {
  AdviseRequest r = example("chat-service-8b.toml");
  r.constraints.budget_capex_usd = 1000;
  r.constraints.allow_cloud = false;
  const Advice a = run(r);
  EXPECT_FALSE(a.recommendation.has_value());
  bool named = false;
  for (const auto& c : a.rejected) named = named || c.why.find("capital budget") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(Advisor, DeadlineTooTightIsExplained) {
  AdviseRequest r = example("pretrain-405b.toml");
  r.training[0].deadline_s = 86400;  // 15.6T tokens in a day
  r.constraints.gpus = {"h100-sxm"};
  const Advice a = run(r);
  EXPECT_FALSE(a.recommendation.has_value());
  ASSERT_FALSE(a.rejected.empty());
  EXPECT_NE(a.rejected.front().why.find("deadline"), std::string::npos) << a.rejected.front().why;
}

}  // namespace gpuplan
