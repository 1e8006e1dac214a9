#include "hardware/prices.h"

#include <fmt/format.h>


#include "data/embedded.h"
#include "data/toml_document.h"

namespace gpuplan {

std::optional<CloudPrice> GpuPrice::cheapest_cloud() const {
  std::optional<CloudPrice> best;
  for (const auto& c : cloud)
    if (!best || c.usd_per_gpu_hour < best->usd_per_gpu_hour) best = c;
  return best;
}

Result<PriceBook> PriceBook::from_table(const toml::table& doc, const std::string& origin) {
  const toml::array* rows = doc.get_as<toml::array>("price");
  if (!rows) return make_error(origin, "no [[price]] entries");
  PriceBook book;
  if (const toml::node* own = doc.get("ownership")) {
    const toml::table* t = own->as_table();
    if (!t) return make_error(origin + ": ownership", "must be a table");
    TomlFields f(*t, origin + ": ownership");
    struct K {
      const char* key;
      double* out;
      double lo, hi;
    };
    OwnershipCosts& o = book.ownership_;
    for (const K& k : {K{"electricity_usd_per_kwh", &o.electricity_usd_per_kwh, 0, 10},
                       K{"pue", &o.pue, 1, 5}, K{"host_power_fraction", &o.host_power_fraction, 0, 5},
                       K{"server_overhead_fraction", &o.server_overhead_fraction, 0, 10},
                       K{"busy_power_fraction", &o.busy_power_fraction, 0, 1.5},
                       K{"lifetime_years", &o.lifetime_years, 0.1, 30}}) {
      auto v = f.optional_number(k.key);
      if (!v) return v.error();
      if (!*v) continue;
      if (**v < k.lo || **v > k.hi) return make_error(f.field(k.key), fmt::format("must be between {} and {}", k.lo, k.hi));
      *k.out = **v;
    }
    for (const auto& [key, v] : *t) {
      const std::string k(key.str());
      if (k.size() > 7 && k.substr(k.size() - 7) == "_source") continue;
      bool known = false;
      for (const char* n : {"electricity_usd_per_kwh", "pue", "host_power_fraction", "server_overhead_fraction",
                            "busy_power_fraction", "lifetime_years"})
        known = known || k == n;
      if (!known) return make_error(f.field(k), "unknown ownership key");
    }
  }
  for (size_t i = 0; i < rows->size(); ++i) {
    const std::string where = fmt::format("{}: price[{}]", origin, i);
    const toml::table* t = rows->get(i)->as_table();
    if (!t) return make_error(where, "must be a table");
    TomlFields f(*t, where);
    if (auto s = f.only_keys({"gpu", "purchase_usd", "purchase_kind", "purchase_source",
                              "purchase_date", "cloud"}))
      return *s;
    GpuPrice p;
    auto gpu = f.string("gpu");
    if (!gpu) return gpu.error();
    p.gpu = *gpu;
    auto usd = f.optional_number("purchase_usd");
    if (!usd) return usd.error();
    if (*usd && **usd <= 0) return make_error(f.field("purchase_usd"), "must be positive");
    p.purchase_usd = *usd;
    for (auto [key, out] : {std::pair{"purchase_kind", &p.purchase_kind},
                            std::pair{"purchase_source", &p.purchase_source},
                            std::pair{"purchase_date", &p.purchase_date}}) {
      auto s = f.optional_string(key);
      if (!s) return s.error();
      *out = s->value_or("");
    }
    if (p.purchase_usd && (p.purchase_source.empty() || p.purchase_date.empty()))
      return make_error(where, "a purchase price needs purchase_source and purchase_date");
    if (const toml::node* cloud = t->get("cloud")) {
      const toml::array* arr = cloud->as_array();
      if (!arr) return make_error(f.field("cloud"), "must be an array of tables");
      for (size_t j = 0; j < arr->size(); ++j) {
        const std::string cw = fmt::format("{}.cloud[{}]", where, j);
        const toml::table* ct = arr->get(j)->as_table();
        if (!ct) return make_error(cw, "must be a table");
        TomlFields cf(*ct, cw);
        if (auto s = cf.only_keys({"provider", "usd_per_gpu_hour", "basis", "date"})) return *s;
        CloudPrice c;
        auto provider = cf.string("provider");
        auto rate = cf.number("usd_per_gpu_hour");
        auto basis = cf.string("basis");
        auto date = cf.string("date");
        if (!provider) return provider.error();
        if (!rate) return rate.error();
        if (!basis) return basis.error();
        if (!date) return date.error();
        if (*rate <= 0) return make_error(cf.field("usd_per_gpu_hour"), "must be positive");
        c.provider = *provider;
        c.usd_per_gpu_hour = *rate;
        c.basis = *basis;
        c.date = *date;
        p.cloud.push_back(std::move(c));
      }
    }
    book.prices_.push_back(std::move(p));
  }
  return book;
}

Result<PriceBook> PriceBook::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  return from_table(*doc, origin);
}

Result<PriceBook> PriceBook::from_file(const std::string& path) {
  auto doc = parse_toml_file(path);
  if (!doc) return doc.error();
  return from_table(*doc, path);
}

const PriceBook& PriceBook::builtin() {
  static const PriceBook b = data::builtin_or_abort(from_toml(data::embedded_file("prices.toml"), "built-in prices.toml"));
  return b;
}

const GpuPrice* PriceBook::find(const std::string& gpu_id) const {
  for (const auto& p : prices_)
    if (p.gpu == gpu_id) return &p;
  return nullptr;
}

}  // namespace gpuplan
