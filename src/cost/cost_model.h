// Rent or buy: the cost of GPU-hours in the cloud against owning the cards (purchase, servers,
// power with cooling overhead, straight-line depreciation), the break-even point in months and in
// utilisation, and costs per training run and per million tokens. Pure functions of prices and
// assumptions.
#pragma once

#include <optional>
#include <string>

#include "hardware/gpu.h"
#include "hardware/prices.h"

namespace gpuplan {

struct CostInputs {
  int64_t gpus = 1;
  double hours_per_month = 730;  // hours the hardware is busy (730 = always)
  OwnershipCosts own;            // lifetime_years is the comparison horizon
};

struct CostComparison {
  std::optional<double> cloud_usd_per_gpu_hour;  // cheapest quote
  std::string cloud_provider;
  std::optional<double> purchase_usd_per_gpu;
  double capex_usd = 0;                 // cards plus servers
  double power_usd_per_month = 0;       // at the busy hours
  double cloud_usd_per_month = 0;
  double own_usd_per_month = 0;         // depreciation + power
  double cloud_cost_usd = 0;            // over the horizon
  double own_cost_usd = 0;              // over the horizon
  std::optional<double> break_even_months;       // when cumulative cloud spend passes owning
  std::optional<double> break_even_utilisation;  // busy share of the month at which both cost the same
  std::string cheaper;                  // "cloud", "buy", or "" when a price is missing
};

CostComparison compare_rent_buy(const Gpu& gpu, const GpuPrice* price, const CostInputs& in);

// Dollars for `gpu_hours` in the cloud, or on owned hardware at its hourly cost of ownership when
// busy `hours_per_month` (depreciation spread over the busy hours, plus power).
double owned_usd_per_gpu_hour(const Gpu& gpu, const GpuPrice& price, const CostInputs& in);

}  // namespace gpuplan
