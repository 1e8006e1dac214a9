// What a buyer pays: renting (on-demand, capacity blocks, 1- and 3-year reservations billed for the
// whole term, spot with the work its interruptions lose) against owning (cards, the servers and
// fabric that house them, colocation or office power, support, staff, less the resale value at the
// end). Pure functions of prices, platform facts and a usage pattern.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hardware/gpu.h"
#include "hardware/platform.h"
#include "hardware/prices.h"
#include "util/status.h"

namespace gpuplan {

// Hours in an average month (8,760 / 12, rounded as cloud price sheets bill a month).
inline constexpr double kHoursPerMonth = 730;

// How rented GPUs are used over the horizon: `runs` times, each `hours_per_run` long on `gpus`
// GPUs, spread over `span_months` (how long a commitment must last to cover them).
struct Usage {
  int64_t gpus = 1;
  double runs = 1;
  double hours_per_run = 1;
  double span_months = 1;
  double busy_gpu_hours() const { return static_cast<double>(gpus) * runs * hours_per_run; }
};

struct RentalCost {
  CloudPrice quote;
  double billed_gpu_hours = 0;  // what the bill counts: busy hours, block days, or the whole term
  double total_usd = 0;
  int64_t max_gpus = 0;         // the most the quote rents without a contract; 0 = no published limit
  bool over_capacity = false;   // usage.gpus > max_gpus
  double expected_interruptions = 0;  // spot: over all runs
  double lost_gpu_hours = 0;          // spot: work redone after interruptions (in billed_gpu_hours)
};

RentalCost rent_cost(const CloudPrice& quote, const PriceBook& book, const Usage& usage);

// Where bought cards live: enough node classes for the cards, in an office when they fit one.
struct Housing {
  const NodeClass* node = nullptr;
  int64_t gpus = 0;    // cards bought: the need rounded up to the purchase unit
  int64_t nodes = 0;   // servers or workstation boxes
  bool office = false;  // an office or lab, not a colocation site
  double box_watts = 0;  // peak draw of one node (cards at TDP and the host), for the office circuit check
};

// Fails when the platform data has no node class for the card.
Result<Housing> house(const Gpu& gpu, int64_t gpus_needed, const Platform& platform);

struct OwnershipTco {
  Housing housing;
  PurchasePrice price;
  double cards_usd = 0, servers_usd = 0, network_usd = 0;
  double capex_usd = 0;
  double it_kw = 0;  // provisioned load: the cards' TDP and their hosts
  double power_usd_per_month = 0, colocation_usd_per_month = 0, support_usd_per_month = 0, staff_usd_per_month = 0;
  double months = 0;
  double resale_usd = 0;  // what the hardware sells for at the end
  double total_usd = 0;   // capex + opex over the months - resale
  double busy_gpu_hours_per_month = 0;
  std::string server_source, fabric_source, resale_source;
  double opex_usd_per_month() const {
    return power_usd_per_month + colocation_usd_per_month + support_usd_per_month + staff_usd_per_month;
  }
};

// Fails when the book has no server price for the housing's node class.
Result<OwnershipTco> own_cost(const Gpu& gpu, const PurchasePrice& price, const Housing& housing, const PriceBook& book,
                              double busy_gpu_hours_per_month, const OwnershipCosts& own);

// One line of `gpuplan cost`: a way to get `gpus` GPUs busy `hours_per_month` for the horizon.
struct CostOption {
  std::string mode;  // on-demand, capacity-block, reserved-1y, reserved-3y, spot, buy
  std::string provider, provider_class, condition;  // condition: new or used, when buying
  std::optional<RentalCost> rental;
  std::optional<OwnershipTco> tco;
  double total_usd = 0;
  double usd_per_month = 0;
};

struct CostInputs {
  int64_t gpus = 1;
  double hours_per_month = 730;  // hours each GPU is busy (730 = always)
  OwnershipCosts own;            // lifetime_years is the horizon
};

struct CostReport {
  std::vector<CostOption> options;  // cheapest first
  // Against the cheapest on-demand quote, when both sides have prices:
  std::optional<double> break_even_months;       // when cumulative rent passes capex + owning costs
  std::optional<double> break_even_utilisation;  // busy share of the month at which both cost the same over the horizon
  std::string cheaper;                           // mode of the cheapest option; "" when none
};

CostReport cost_options(const Gpu& gpu, const GpuPrice* price, const PriceBook& book, const Platform& platform,
                        const CostInputs& in);

}  // namespace gpuplan
