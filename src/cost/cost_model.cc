#include "cost/cost_model.h"

#include <algorithm>

namespace gpuplan {

namespace {
double power_usd_per_gpu_hour(const Gpu& gpu, const OwnershipCosts& o) {
  const double watts = gpu.tdp_w * o.busy_power_fraction * (1 + o.host_power_fraction) * o.pue;
  return watts / 1000.0 * o.electricity_usd_per_kwh;
}
}  // namespace

double owned_usd_per_gpu_hour(const Gpu& gpu, const GpuPrice& price, const CostInputs& in) {
  const double capex = price.purchase_usd.value_or(0) * (1 + in.own.server_overhead_fraction);
  const double busy_hours = std::max(1.0, in.hours_per_month) * 12 * in.own.lifetime_years;
  return capex / busy_hours + power_usd_per_gpu_hour(gpu, in.own);
}

CostComparison compare_rent_buy(const Gpu& gpu, const GpuPrice* price, const CostInputs& in) {
  CostComparison c;
  const double n = static_cast<double>(in.gpus);
  const double months = 12 * in.own.lifetime_years;
  if (price) {
    if (auto q = price->cheapest_cloud()) {
      c.cloud_usd_per_gpu_hour = q->usd_per_gpu_hour;
      c.cloud_provider = q->provider;
    }
    c.purchase_usd_per_gpu = price->purchase_usd;
  }
  c.power_usd_per_month = n * power_usd_per_gpu_hour(gpu, in.own) * in.hours_per_month;
  if (c.cloud_usd_per_gpu_hour) {
    c.cloud_usd_per_month = n * *c.cloud_usd_per_gpu_hour * in.hours_per_month;
    c.cloud_cost_usd = c.cloud_usd_per_month * months;
  }
  if (c.purchase_usd_per_gpu) {
    c.capex_usd = n * *c.purchase_usd_per_gpu * (1 + in.own.server_overhead_fraction);
    c.own_usd_per_month = c.capex_usd / months + c.power_usd_per_month;
    c.own_cost_usd = c.capex_usd + c.power_usd_per_month * months;
  }
  if (c.cloud_usd_per_gpu_hour && c.purchase_usd_per_gpu) {
    // Cumulative cloud spend passes capex + power after capex / (cloud - power) months.
    const double saving = c.cloud_usd_per_month - c.power_usd_per_month;
    if (saving > 0) c.break_even_months = c.capex_usd / saving;
    // Utilisation u at which renting u x 730 h a month costs what owning does over the lifetime.
    const double per_hour_gap = n * (*c.cloud_usd_per_gpu_hour - power_usd_per_gpu_hour(gpu, in.own));
    if (per_hour_gap > 0) {
      const double hours = c.capex_usd / (per_hour_gap * months);
      c.break_even_utilisation = hours / 730.0;
    }
    c.cheaper = c.own_cost_usd < c.cloud_cost_usd ? "buy" : "cloud";
  } else if (c.cloud_usd_per_gpu_hour) {
    c.cheaper = "cloud";
  } else if (c.purchase_usd_per_gpu) {
    c.cheaper = "buy";
  }
  return c;
}

}  // namespace gpuplan
