#include "cost/cost_model.h"

#include <gtest/gtest.h>

#include "hardware/catalog.h"

namespace gpuplan {

namespace {
Gpu gpu(const char* id) { return *Catalog::builtin().find(id); }
}  // namespace

TEST(CostModel, RoundTheClockUseFavoursBuyingAnH100) {
  const Gpu g = gpu("h100-sxm");
  CostInputs in;
  in.gpus = 8;
  in.hours_per_month = 730;
  const CostComparison c = compare_rent_buy(g, PriceBook::builtin().find(g.id), in);
  EXPECT_EQ(c.cheaper, "buy");
  ASSERT_TRUE(c.break_even_months.has_value());
  EXPECT_LT(*c.break_even_months, 36);
  EXPECT_GT(*c.break_even_months, 6);
}

TEST(CostModel, LightUseFavoursRenting) {
  const Gpu g = gpu("h100-sxm");
  CostInputs in;
  in.hours_per_month = 40;
  EXPECT_EQ(compare_rent_buy(g, PriceBook::builtin().find(g.id), in).cheaper, "cloud");
}

TEST(CostModel, BreakEvenUtilisationEqualisesBothSides) {
  const Gpu g = gpu("a100-80gb-sxm");
  const GpuPrice* p = PriceBook::builtin().find(g.id);
  CostInputs in;
  const CostComparison c = compare_rent_buy(g, p, in);
  ASSERT_TRUE(c.break_even_utilisation.has_value());
  in.hours_per_month = *c.break_even_utilisation * 730;
  const CostComparison at = compare_rent_buy(g, p, in);
  EXPECT_NEAR(at.cloud_cost_usd, at.own_cost_usd, 1e-6 * at.own_cost_usd);
}

TEST(CostModel, PowerFollowsTdpPueAndPrice) {
  // 700 W x 0.8 busy x (1 + 0.82 host) x PUE 1.56 = 1.59 kW; x 730 h x $0.127 = $147.4 a month.
  const Gpu g = gpu("h100-sxm");
  CostInputs in;
  const CostComparison c = compare_rent_buy(g, PriceBook::builtin().find(g.id), in);
  EXPECT_NEAR(c.power_usd_per_month, 0.7 * 0.8 * 1.82 * 1.56 * 730 * 0.127, 0.01);
}

TEST(CostModel, MissingPricesGiveNoVerdictOnThatSide) {
  const Gpu g = gpu("rtx-5090");  // no cloud quote on file
  CostInputs in;
  const CostComparison c = compare_rent_buy(g, PriceBook::builtin().find(g.id), in);
  EXPECT_FALSE(c.cloud_usd_per_gpu_hour.has_value());
  EXPECT_FALSE(c.break_even_months.has_value());
  EXPECT_EQ(c.cheaper, "buy");
}

}  // namespace gpuplan
