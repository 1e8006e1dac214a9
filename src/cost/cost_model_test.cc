#include "cost/cost_model.h"

#include <gtest/gtest.h>

#include "hardware/catalog.h"
#include "util/builtin_lookup_for_tests.h"

namespace gpuplan {

namespace {
using testing_support::gpu;
const PriceBook& book() { return PriceBook::builtin(); }
const Platform& platform() { return Platform::builtin(); }
CostReport report(const char* id, int64_t gpus, double hours, double years = 3) {
  CostInputs in;
  in.gpus = gpus;
  in.hours_per_month = hours;
  in.own = book().ownership();
  in.own.lifetime_years = years;
  return cost_options(gpu(id), book().find(id), book(), platform(), in);
}
const CostOption* option(const CostReport& r, const std::string& mode, const std::string& cls = "") {
  for (const auto& o : r.options)
    if (o.mode == mode && (cls.empty() || o.provider_class == cls)) return &o;
  return nullptr;
}
}  // namespace

TEST(CostModel, EveryModeABuyerSeesIsPriced) {
  const CostReport r = report("h100-sxm", 8, 730);
  for (const char* mode : {"on-demand", "capacity-block", "reserved-1y", "reserved-3y", "spot", "buy"})
    EXPECT_NE(option(r, mode), nullptr) << mode;
  for (size_t i = 1; i < r.options.size(); ++i) EXPECT_LE(r.options[i - 1].total_usd, r.options[i].total_usd);
  EXPECT_EQ(r.cheaper, r.options.front().mode);
}

// A commitment is paid for every hour of its term: at 40 busy hours a month the 1-year reservation
// bills 8,760 hours a year, on demand bills 480.
TEST(CostModel, ReservationsBillTheWholeTermBusyOrNot) {
  const CostReport light = report("h100-sxm", 8, 40);
  const CostOption* res = option(light, "reserved-1y");
  const CostOption* od = option(light, "on-demand", "gpu-cloud");
  ASSERT_NE(res, nullptr);
  ASSERT_NE(od, nullptr);
  EXPECT_DOUBLE_EQ(res->rental->billed_gpu_hours, 8 * 36 * 730.0);
  EXPECT_DOUBLE_EQ(od->rental->billed_gpu_hours, 8 * 36 * 40.0);
  EXPECT_GT(res->total_usd, od->total_usd);
  // Around the clock the commitment is the cheaper rental.
  const CostReport full = report("h100-sxm", 8, 730);
  EXPECT_LT(option(full, "reserved-1y")->total_usd, option(full, "on-demand", "gpu-cloud")->total_usd);
}

TEST(CostModel, SpotRedoesTheWorkItsInterruptionsLose) {
  const CostReport spot_report = report("h100-sxm", 8, 730);
  const CostOption* spot = option(spot_report, "spot", "marketplace");
  ASSERT_NE(spot, nullptr);
  const RentalCost& r = *spot->rental;
  EXPECT_GT(r.expected_interruptions, 0);
  EXPECT_GT(r.lost_gpu_hours, 0);
  EXPECT_DOUBLE_EQ(r.billed_gpu_hours, 8 * 36 * 730.0 + r.lost_gpu_hours);
}

TEST(CostModel, OnDemandBeyondOneNodeIsOverCapacity) {
  const CostReport r = report("h100-sxm", 64, 730);
  EXPECT_TRUE(option(r, "on-demand", "gpu-cloud")->rental->over_capacity);
  EXPECT_FALSE(option(r, "reserved-1y")->rental->over_capacity);   // by contract, no published limit
  EXPECT_FALSE(option(r, "capacity-block")->rental->over_capacity);  // up to 64 instances
}

// One H100 SXM cannot be bought alone: the purchase is a 4-GPU HGX board in a server.
TEST(CostModel, SxmModulesAreBoughtOnBoardsInServers) {
  const CostReport buy_report = report("h100-sxm", 1, 730);
  const CostOption* buy = option(buy_report, "buy");
  ASSERT_NE(buy, nullptr);
  const OwnershipTco& t = *buy->tco;
  EXPECT_EQ(t.housing.gpus, 4);
  EXPECT_EQ(t.housing.nodes, 1);
  EXPECT_FALSE(t.housing.office);
  EXPECT_GT(t.servers_usd, 0);
  EXPECT_EQ(t.network_usd, 0);  // one node needs no fabric
  EXPECT_GT(t.colocation_usd_per_month, 0);
}

TEST(CostModel, TcoCountsEveryCostAndTheResale) {
  const CostReport buy_report = report("h100-sxm", 16, 730);
  const CostOption* buy = option(buy_report, "buy");
  ASSERT_NE(buy, nullptr);
  const OwnershipTco& t = *buy->tco;
  const OwnershipCosts& o = book().ownership();
  EXPECT_EQ(t.housing.nodes, 2);
  EXPECT_GT(t.network_usd, 0);  // two servers share a fabric
  EXPECT_DOUBLE_EQ(t.capex_usd, t.cards_usd + t.servers_usd + t.network_usd);
  // Power: 16 cards x 700 W x (1 + host 0.82) x busy 0.8 x 730 h x PUE 1.56 x $0.127.
  EXPECT_NEAR(t.power_usd_per_month, 16 * 0.7 * (1 + o.host_power_fraction) * o.busy_power_fraction * 730 * o.pue *
                                         o.electricity_usd_per_kwh, 1e-6);
  EXPECT_NEAR(t.colocation_usd_per_month, 16 * 0.7 * (1 + o.host_power_fraction) * o.colocation_usd_per_kw_month, 1e-6);
  EXPECT_NEAR(t.support_usd_per_month, t.capex_usd * o.support_fraction_per_year / 12, 1e-6);
  EXPECT_NEAR(t.staff_usd_per_month, 2 * o.staff_hours_per_node_month * o.staff_usd_per_hour, 1e-6);
  EXPECT_GT(t.resale_usd, 0);
  EXPECT_LT(t.resale_usd, t.cards_usd + t.servers_usd);
  EXPECT_NEAR(t.total_usd, t.capex_usd + 36 * t.opex_usd_per_month() - t.resale_usd, 1e-6);
}

TEST(CostModel, ConsumerCardsGoInAnOfficeBoxUntilTheyOutgrowIt) {
  const CostReport small_report = report("rtx-4090", 2, 100);
  const CostOption* small = option(small_report, "buy");
  ASSERT_NE(small, nullptr);
  EXPECT_TRUE(small->tco->housing.office);
  EXPECT_EQ(small->tco->colocation_usd_per_month, 0);
  EXPECT_EQ(small->tco->price.condition, "used");  // discontinued: the street price is used
  const CostReport big_report = report("rtx-4090", 16, 730);
  const CostOption* big = option(big_report, "buy");
  ASSERT_NE(big, nullptr);
  EXPECT_FALSE(big->tco->housing.office);  // four boxes need a rack
}

TEST(CostModel, RoundTheClockUseFavoursBuyingLightUseRenting) {
  const CostReport full = report("h100-sxm", 8, 730);
  const CostOption* buy = option(full, "buy");
  const CostOption* od = option(full, "on-demand", "hyperscaler");
  ASSERT_NE(buy, nullptr);
  ASSERT_NE(od, nullptr);
  EXPECT_LT(buy->total_usd, od->total_usd);  // against AWS list prices
  // Against the cheapest GPU cloud on demand, owning pays back only in its fifth year.
  ASSERT_TRUE(full.break_even_months.has_value());
  EXPECT_GT(*full.break_even_months, 12);
  const CostReport light = report("h100-sxm", 8, 20);
  EXPECT_NE(light.cheaper, "buy");
}

// Break-even utilisation: renting that many hours a month on demand costs what owning does.
TEST(CostModel, BreakEvenUtilisationEqualisesBothSides) {
  const CostReport r = report("h200-sxm", 8, 730);
  ASSERT_TRUE(r.break_even_utilisation.has_value());
  const CostReport at = report("h200-sxm", 8, *r.break_even_utilisation * 730);
  const auto od = book().find("h200-sxm")->cheapest(RentalMode::on_demand);
  const double rent = 8 * od->usd_per_gpu_hour * *r.break_even_utilisation * 730 * 36;
  const CostOption* buy_new = nullptr;
  for (const auto& o : at.options)
    if (o.mode == "buy" && o.condition == book().find("h200-sxm")->purchase_price()->condition) buy_new = &o;
  ASSERT_NE(buy_new, nullptr);
  EXPECT_NEAR(rent, buy_new->total_usd, 1e-6 * rent);
}

TEST(CostModel, MissingPricesGiveNoVerdictOnThatSide) {
  const CostReport r = report("rtx-6000-ada", 1, 730);  // no cloud quote on file
  ASSERT_FALSE(r.options.empty());
  for (const auto& o : r.options) EXPECT_EQ(o.mode, "buy");
  EXPECT_FALSE(r.break_even_months.has_value());
}

}  // namespace gpuplan
