#include "hardware/prices.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/embedded.h"
#include "data/toml_document.h"

namespace gpuplan {

std::string to_string(RentalMode m) {
  switch (m) {
    case RentalMode::on_demand: return "on-demand";
    case RentalMode::capacity_block: return "capacity-block";
    case RentalMode::reserved_1y: return "reserved-1y";
    case RentalMode::reserved_3y: return "reserved-3y";
    case RentalMode::spot: return "spot";
  }
  return "on-demand";
}

std::optional<RentalMode> parse_rental_mode(std::string_view s) {
  for (RentalMode m : {RentalMode::on_demand, RentalMode::capacity_block, RentalMode::reserved_1y, RentalMode::reserved_3y,
                       RentalMode::spot})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

double commitment_months(RentalMode m) {
  return m == RentalMode::reserved_1y ? 12 : m == RentalMode::reserved_3y ? 36 : 0;
}

const PurchasePrice* GpuPrice::purchase_price() const {
  const PurchasePrice* best = nullptr;
  for (const auto& p : purchase)
    if (!best || (p.condition == "new" && best->condition != "new")) best = &p;
  return best;
}

std::optional<double> GpuPrice::purchase_usd() const {
  const PurchasePrice* p = purchase_price();
  return p ? std::optional<double>(p->usd) : std::nullopt;
}

std::optional<CloudPrice> GpuPrice::cheapest(RentalMode mode, const std::string& provider_class) const {
  std::optional<CloudPrice> best;
  for (const auto& c : cloud)
    if (c.mode == mode && (provider_class.empty() || c.provider_class == provider_class) &&
        (!best || c.usd_per_gpu_hour < best->usd_per_gpu_hour))
      best = c;
  return best;
}

std::optional<CloudPrice> GpuPrice::cheapest_cloud() const { return cheapest(RentalMode::on_demand); }

namespace {

struct NumberKey {
  const char* key;
  double* out;
  double lo, hi;
};

Status read_numbers(const TomlFields& f, std::initializer_list<NumberKey> keys, bool required) {
  for (const NumberKey& k : keys) {
    auto v = f.optional_number(k.key);
    if (!v) return v.error();
    if (!*v) {
      if (required) return make_error(f.field(k.key), "is required");
      continue;
    }
    if (!(**v >= k.lo) || **v > k.hi) return make_error(f.field(k.key), fmt::format("must be between {} and {}", k.lo, k.hi));
    *k.out = **v;
  }
  return std::nullopt;
}

Result<std::string> required_text(const TomlFields& f, const char* key) {
  auto s = f.string(key);
  if (!s) return s.error();
  if (s->empty()) return make_error(f.field(key), "must not be empty");
  return *s;
}

Status parse_ownership(const toml::table& t, const std::string& where, OwnershipCosts& o) {
  TomlFields f(t, where);
  static const char* const kKeys[] = {"electricity_usd_per_kwh", "pue", "office_pue", "host_power_fraction",
                                      "busy_power_fraction", "idle_power_fraction", "lifetime_years",
                                      "colocation_usd_per_kw_month", "support_fraction_per_year", "staff_usd_per_hour",
                                      "staff_hours_per_node_month", "staff_hours_per_box_month"};
  for (const auto& [key, v] : t) {
    const std::string k(key.str());
    if (k.size() > 7 && k.substr(k.size() - 7) == "_source") continue;  // every figure carries its source
    if (std::none_of(std::begin(kKeys), std::end(kKeys), [&](const char* n) { return k == n; }))
      return make_error(f.field(k), "unknown ownership key");
  }
  return read_numbers(f,
                      {{"electricity_usd_per_kwh", &o.electricity_usd_per_kwh, 0, 10},
                       {"pue", &o.pue, 1, 5},
                       {"office_pue", &o.office_pue, 1, 5},
                       {"host_power_fraction", &o.host_power_fraction, 0, 5},
                       {"busy_power_fraction", &o.busy_power_fraction, 0, 1.5},
                       {"idle_power_fraction", &o.idle_power_fraction, 0, 1},
                       {"lifetime_years", &o.lifetime_years, 0.1, 30},
                       {"colocation_usd_per_kw_month", &o.colocation_usd_per_kw_month, 0, 100000},
                       {"support_fraction_per_year", &o.support_fraction_per_year, 0, 2},
                       {"staff_usd_per_hour", &o.staff_usd_per_hour, 0, 100000},
                       {"staff_hours_per_node_month", &o.staff_hours_per_node_month, 0, 744},
                       {"staff_hours_per_box_month", &o.staff_hours_per_box_month, 0, 744}},
                      false);
}

Result<CloudPrice> parse_cloud(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"provider", "class", "mode", "usd_per_gpu_hour", "max_gpus", "min_days", "basis", "date"})) return *s;
  CloudPrice c;
  for (auto [key, out] : {std::pair{"provider", &c.provider}, std::pair{"class", &c.provider_class},
                          std::pair{"basis", &c.basis}, std::pair{"date", &c.date}}) {
    auto v = required_text(f, key);
    if (!v) return v.error();
    *out = *v;
  }
  auto mode = f.string("mode");
  if (!mode) return mode.error();
  auto m = parse_rental_mode(*mode);
  if (!m) return make_error(f.field("mode"), "must be on-demand, capacity-block, reserved-1y, reserved-3y or spot, not '" + *mode + "'");
  c.mode = *m;
  auto rate = f.number("usd_per_gpu_hour");
  if (!rate) return rate.error();
  if (!(*rate > 0) || *rate > 10000) return make_error(f.field("usd_per_gpu_hour"), "must be positive and below 10000");
  c.usd_per_gpu_hour = *rate;
  auto mg = f.optional_integer("max_gpus");
  if (!mg) return mg.error();
  if (*mg) {
    if (**mg < 0 || **mg > (1 << 24)) return make_error(f.field("max_gpus"), "must be 0 (no published limit) or a GPU count");
    c.max_gpus = **mg;
  }
  if (auto s = read_numbers(f, {{"min_days", &c.min_days, 0, 3650}}, false)) return *s;
  return c;
}

Result<PurchasePrice> parse_purchase(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"condition", "usd", "kind", "source", "date"})) return *s;
  PurchasePrice p;
  for (auto [key, out] : {std::pair{"condition", &p.condition}, std::pair{"kind", &p.kind}, std::pair{"source", &p.source},
                          std::pair{"date", &p.date}}) {
    auto v = required_text(f, key);
    if (!v) return v.error();
    *out = *v;
  }
  if (p.condition != "new" && p.condition != "used") return make_error(f.field("condition"), "must be new or used");
  if (p.kind != "msrp" && p.kind != "street" && p.kind != "list" && p.kind != "estimate" && p.kind != "quote")
    return make_error(f.field("kind"), "must be msrp, street, list, estimate or quote");
  auto usd = f.number("usd");
  if (!usd) return usd.error();
  if (!(*usd > 0) || *usd > 1e9) return make_error(f.field("usd"), "must be positive");
  p.usd = *usd;
  return p;
}

template <class T, class Parse>
Status table_rows(const toml::node* n, const std::string& where, std::vector<T>& out, Parse parse) {
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) return make_error(where, "must be an array of tables");
  for (size_t i = 0; i < a->size(); ++i) {
    const std::string w = fmt::format("{}[{}]", where, i);
    const toml::table* t = a->get(i)->as_table();
    if (!t) return make_error(w, "must be a table");
    auto r = parse(*t, w);
    if (!r) return r.error();
    out.push_back(*r);
  }
  return std::nullopt;
}

Result<GpuPrice> parse_price(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"gpu", "purchase", "cloud"})) return *s;
  GpuPrice p;
  auto gpu = required_text(f, "gpu");
  if (!gpu) return gpu.error();
  p.gpu = *gpu;
  if (auto s = table_rows(t.get("purchase"), where + ".purchase", p.purchase, parse_purchase)) return *s;
  if (auto s = table_rows(t.get("cloud"), where + ".cloud", p.cloud, parse_cloud)) return *s;
  return p;
}

Result<ProviderClass> parse_class(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "on_demand_max_gpus", "on_demand_source", "spot_interruptions_per_month",
                            "spot_notice", "spot_source", "spot_restart_hours", "spot_restart_source"}))
    return *s;
  ProviderClass c;
  for (auto [key, out] : {std::pair{"id", &c.id}, std::pair{"name", &c.name}, std::pair{"on_demand_source", &c.on_demand_source},
                          std::pair{"spot_notice", &c.spot_notice}, std::pair{"spot_source", &c.spot_source},
                          std::pair{"spot_restart_source", &c.spot_restart_source}}) {
    auto v = required_text(f, key);
    if (!v) return v.error();
    *out = *v;
  }
  auto mg = f.integer("on_demand_max_gpus");
  if (!mg) return mg.error();
  if (*mg < 1 || *mg > (1 << 24)) return make_error(f.field("on_demand_max_gpus"), "must be a positive GPU count");
  c.on_demand_max_gpus = *mg;
  if (auto s = read_numbers(f, {{"spot_interruptions_per_month", &c.spot_interruptions_per_month, 0, 1000},
                                {"spot_restart_hours", &c.spot_restart_hours, 0, 1000}}, true))
    return *s;
  return c;
}

Result<ServerPrice> parse_server(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"node", "usd", "network_usd_per_node", "source", "date"})) return *s;
  ServerPrice s;
  for (auto [key, out] : {std::pair{"node", &s.node}, std::pair{"source", &s.source}, std::pair{"date", &s.date}}) {
    auto v = required_text(f, key);
    if (!v) return v.error();
    *out = *v;
  }
  if (auto e = read_numbers(f, {{"usd", &s.usd, 0, 1e8}, {"network_usd_per_node", &s.network_usd_per_node, 0, 1e8}}, true)) return *e;
  return s;
}

Result<FabricPrice> parse_fabric(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"max_nodes", "usd_per_node", "source"})) return *s;
  FabricPrice p;
  auto n = f.integer("max_nodes");
  if (!n) return n.error();
  if (*n < 2) return make_error(f.field("max_nodes"), "must be at least 2");
  p.max_nodes = *n;
  if (auto e = read_numbers(f, {{"usd_per_node", &p.usd_per_node, 0, 1e8}}, true)) return *e;
  auto src = required_text(f, "source");
  if (!src) return src.error();
  p.source = *src;
  return p;
}

Result<ResaleRule> parse_resale(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"tier", "retention_per_year", "source"})) return *s;
  ResaleRule r;
  auto tier = f.string("tier");
  if (!tier) return tier.error();
  if (*tier == "datacenter") r.tier = Tier::datacenter;
  else if (*tier == "workstation") r.tier = Tier::workstation;
  else if (*tier == "consumer") r.tier = Tier::consumer;
  else return make_error(f.field("tier"), "must be datacenter, workstation or consumer");
  if (auto e = read_numbers(f, {{"retention_per_year", &r.retention_per_year, 0, 1}}, true)) return *e;
  auto src = required_text(f, "source");
  if (!src) return src.error();
  r.source = *src;
  return r;
}

// Replaces the row of `out` with the same key, or appends.
template <class T, class Key>
void upsert(std::vector<T>& out, const T& row, Key key) {
  for (auto& r : out)
    if (key(r) == key(row)) {
      r = row;
      return;
    }
  out.push_back(row);
}

}  // namespace

Result<PriceBook> PriceBook::from_table(const toml::table& doc, const std::string& origin, const PriceBook* base) {
  TomlFields top(doc, origin);
  if (auto s = top.only_keys({"extends", "ownership", "resale", "server", "fabric", "provider_class", "price"})) return *s;
  auto extends = top.optional_string("extends");
  if (!extends) return extends.error();
  PriceBook book;
  if (*extends) {
    if (**extends != "builtin") return make_error(top.field("extends"), "must be \"builtin\"");
    book = base ? *base : builtin();
  }
  if (const toml::node* own = doc.get("ownership")) {
    const toml::table* t = own->as_table();
    if (!t) return make_error(origin + ": ownership", "must be a table");
    if (auto s = parse_ownership(*t, origin + ": ownership", book.ownership_)) return *s;
  }
  std::vector<ProviderClass> classes;
  std::vector<ServerPrice> servers;
  std::vector<FabricPrice> fabric;
  std::vector<ResaleRule> resale;
  std::vector<GpuPrice> prices;
  if (auto s = table_rows(doc.get("provider_class"), origin + ": provider_class", classes, parse_class)) return *s;
  if (auto s = table_rows(doc.get("server"), origin + ": server", servers, parse_server)) return *s;
  if (auto s = table_rows(doc.get("fabric"), origin + ": fabric", fabric, parse_fabric)) return *s;
  if (auto s = table_rows(doc.get("resale"), origin + ": resale", resale, parse_resale)) return *s;
  if (auto s = table_rows(doc.get("price"), origin + ": price", prices, parse_price)) return *s;
  if (prices.empty() && !*extends) return make_error(origin, "no [[price]] entries");
  for (const auto& c : classes) upsert(book.classes_, c, [](const ProviderClass& x) { return x.id; });
  for (const auto& s : servers) upsert(book.servers_, s, [](const ServerPrice& x) { return x.node; });
  for (const auto& r : resale) upsert(book.resale_, r, [](const ResaleRule& x) { return static_cast<int>(x.tier); });
  for (const auto& f : fabric) upsert(book.fabric_, f, [](const FabricPrice& x) { return x.max_nodes; });
  std::sort(book.fabric_.begin(), book.fabric_.end(), [](const FabricPrice& a, const FabricPrice& b) { return a.max_nodes < b.max_nodes; });
  for (size_t i = 0; i < prices.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (prices[i].gpu == prices[j].gpu)
        return make_error(fmt::format("{}: price[{}].gpu", origin, i), "'" + prices[i].gpu + "' already has a [[price]] row");
  for (const auto& p : prices) upsert(book.prices_, p, [](const GpuPrice& x) { return x.gpu; });
  // Every quote names a provider class the book defines: a mode's capacity rule comes from it.
  for (size_t i = 0; i < book.prices_.size(); ++i)
    for (const auto& q : book.prices_[i].cloud)
      if (!book.provider_class(q.provider_class))
        return make_error(fmt::format("{}: price for {}", origin, book.prices_[i].gpu),
                          fmt::format("quote from {} names provider class '{}', which no [[provider_class]] defines",
                                      q.provider, q.provider_class));
  return book;
}

Result<PriceBook> PriceBook::from_toml(std::string_view text, const std::string& origin, const PriceBook* base) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  return from_table(*doc, origin, base);
}

Result<PriceBook> PriceBook::from_file(const std::string& path, const PriceBook* base) {
  auto doc = parse_toml_file(path);
  if (!doc) return doc.error();
  return from_table(*doc, path, base);
}

const PriceBook& PriceBook::builtin() {
  static const PriceBook b =
      data::builtin_or_abort(from_toml(data::embedded_file("prices.toml"), "built-in prices.toml", nullptr));
  return b;
}

const GpuPrice* PriceBook::find(const std::string& gpu_id) const {
  for (const auto& p : prices_)
    if (p.gpu == gpu_id) return &p;
  return nullptr;
}

const ProviderClass* PriceBook::provider_class(const std::string& id) const {
  for (const auto& c : classes_)
    if (c.id == id) return &c;
  return nullptr;
}

const ServerPrice* PriceBook::server(const std::string& node_id) const {
  for (const auto& s : servers_)
    if (s.node == node_id) return &s;
  return nullptr;
}

std::optional<FabricPrice> PriceBook::fabric(int64_t nodes) const {
  if (nodes <= 1) return FabricPrice{nodes, 0, "one node needs no fabric"};
  for (const auto& f : fabric_)
    if (nodes <= f.max_nodes) return f;
  return fabric_.empty() ? std::nullopt : std::optional<FabricPrice>(fabric_.back());
}

const ResaleRule* PriceBook::resale(Tier tier) const {
  for (const auto& r : resale_)
    if (r.tier == tier) return &r;
  return nullptr;
}

int64_t PriceBook::max_gpus(const CloudPrice& q) const {
  if (q.max_gpus) return *q.max_gpus;
  if (q.mode == RentalMode::on_demand || q.mode == RentalMode::spot) {
    const ProviderClass* c = provider_class(q.provider_class);
    return c ? c->on_demand_max_gpus : 8;
  }
  return 0;
}

}  // namespace gpuplan
