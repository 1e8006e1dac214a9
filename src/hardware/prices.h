// Dated prices: what a GPU costs to buy and to rent per hour, from data/prices.toml or a user's file.
// Kept apart from the specifications because prices change monthly and specs never do.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "util/status.h"

namespace gpuplan {

struct CloudPrice {
  std::string provider;
  double usd_per_gpu_hour = 0;
  std::string basis;  // instance and where the figure was read
  std::string date;
};

struct GpuPrice {
  std::string gpu;  // catalog id
  std::optional<double> purchase_usd;
  std::string purchase_kind, purchase_source, purchase_date;
  std::vector<CloudPrice> cloud;

  // The cheapest on-demand quote, if any provider rents this GPU.
  std::optional<CloudPrice> cheapest_cloud() const;
};

// What owning hardware costs beside the card itself: power, cooling, servers, depreciation.
struct OwnershipCosts {
  double electricity_usd_per_kwh = 0.127;
  double pue = 1.56;
  double host_power_fraction = 0.82;
  double server_overhead_fraction = 0.35;
  double busy_power_fraction = 0.8;
  double lifetime_years = 3;
};

class PriceBook {
 public:
  static Result<PriceBook> from_toml(std::string_view text, const std::string& origin);
  static Result<PriceBook> from_file(const std::string& path);
  static const PriceBook& builtin();

  const GpuPrice* find(const std::string& gpu_id) const;
  const std::vector<GpuPrice>& prices() const { return prices_; }
  const OwnershipCosts& ownership() const { return ownership_; }

 private:
  static Result<PriceBook> from_table(const toml::table& doc, const std::string& origin);
  std::vector<GpuPrice> prices_;
  OwnershipCosts ownership_;
};

}  // namespace gpuplan
