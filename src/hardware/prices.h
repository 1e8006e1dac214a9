// Dated prices as a buyer sees them: per GPU, new and used purchase prices, and cloud quotes per
// provider class (hyperscaler, GPU cloud, marketplace) and rental mode (on-demand, capacity block,
// 1- and 3-year reservations, spot); and what owning costs beside the cards (servers, fabric,
// colocation, power, support, staff, resale). From data/prices.toml or a user's file in that layout.
// Kept apart from the specifications because prices change monthly and specs never do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "hardware/gpu.h"
#include "util/status.h"

namespace gpuplan {

// How GPUs are rented. Commitments (reserved) are paid for the whole term, used or not; a capacity
// block is paid for the days reserved; spot instances can be taken back.
enum class RentalMode { on_demand, capacity_block, reserved_1y, reserved_3y, spot };
std::string to_string(RentalMode m);  // "on-demand", "capacity-block", "reserved-1y", "reserved-3y", "spot"
std::optional<RentalMode> parse_rental_mode(std::string_view s);
// Months a commitment lasts: 12 or 36 for reservations, 0 otherwise.
double commitment_months(RentalMode m);

struct CloudPrice {
  std::string provider;
  std::string provider_class;  // a ProviderClass id
  RentalMode mode = RentalMode::on_demand;
  double usd_per_gpu_hour = 0;
  std::optional<int64_t> max_gpus;  // most GPUs without a sales contract; 0 = no published limit
  double min_days = 0;              // shortest reservation (capacity blocks)
  std::string basis;  // instance and where the figure was read
  std::string date;
};

struct PurchasePrice {
  std::string condition = "new";  // "new" or "used"
  double usd = 0;
  std::string kind, source, date;  // kind: msrp, street, list, estimate
};

struct GpuPrice {
  std::string gpu;  // catalog id
  std::vector<PurchasePrice> purchase;
  std::vector<CloudPrice> cloud;

  // The price a buyer pays today: new if sold new, else used. Empty when there is none.
  const PurchasePrice* purchase_price() const;
  std::optional<double> purchase_usd() const;
  // The cheapest on-demand quote, if any provider rents this GPU on demand.
  std::optional<CloudPrice> cheapest_cloud() const;
  // The cheapest quote for a mode, optionally within a provider class.
  std::optional<CloudPrice> cheapest(RentalMode mode, const std::string& provider_class = "") const;
};

struct ProviderClass {
  std::string id, name;
  int64_t on_demand_max_gpus = 8;
  std::string on_demand_source;
  double spot_interruptions_per_month = 0;  // per instance
  double spot_restart_hours = 0.5;          // work lost per interruption: half a checkpoint interval plus the restart
  std::string spot_notice, spot_source, spot_restart_source;
};

struct ServerPrice {
  std::string node;  // a platform.toml node class
  double usd = 0, network_usd_per_node = 0;
  std::string source, date;
};

struct FabricPrice {
  int64_t max_nodes = 0;
  double usd_per_node = 0;
  std::string source;
};

struct ResaleRule {
  Tier tier = Tier::datacenter;
  double retention_per_year = 0.7;
  std::string source;
};

// What owning hardware costs beside the card itself.
struct OwnershipCosts {
  double electricity_usd_per_kwh = 0.127;
  double pue = 1.56;         // in a colocation site
  double office_pue = 1.0;   // in an office or lab
  double host_power_fraction = 0.82;
  double busy_power_fraction = 0.8;
  double idle_power_fraction = 0.1;
  double lifetime_years = 3;
  double colocation_usd_per_kw_month = 184.06;
  double support_fraction_per_year = 0.10;
  double staff_usd_per_hour = 91;
  double staff_hours_per_node_month = 8;
  double staff_hours_per_box_month = 2;
};

class PriceBook {
 public:
  // A file with `extends = "builtin"` overlays `base`: its [[price]] rows replace base rows of the
  // same GPU, its [ownership] keys replace base keys, and other rows replace base rows of the same id.
  static Result<PriceBook> from_toml(std::string_view text, const std::string& origin, const PriceBook* base = nullptr);
  static Result<PriceBook> from_file(const std::string& path, const PriceBook* base = nullptr);
  static const PriceBook& builtin();

  const GpuPrice* find(const std::string& gpu_id) const;
  const std::vector<GpuPrice>& prices() const { return prices_; }
  const OwnershipCosts& ownership() const { return ownership_; }
  const ProviderClass* provider_class(const std::string& id) const;
  const std::vector<ProviderClass>& provider_classes() const { return classes_; }
  const ServerPrice* server(const std::string& node_id) const;
  // Fabric cost per node for a purchase of `nodes` servers (0 for one node).
  std::optional<FabricPrice> fabric(int64_t nodes) const;
  const ResaleRule* resale(Tier tier) const;
  // The most GPUs a quote rents without a sales contract; 0 = no published limit.
  int64_t max_gpus(const CloudPrice& q) const;

 private:
  static Result<PriceBook> from_table(const toml::table& doc, const std::string& origin, const PriceBook* base);
  std::vector<GpuPrice> prices_;
  OwnershipCosts ownership_;
  std::vector<ProviderClass> classes_;
  std::vector<ServerPrice> servers_;
  std::vector<FabricPrice> fabric_;
  std::vector<ResaleRule> resale_;
};

}  // namespace gpuplan
