#include "hardware/fabric.h"

#include <fmt/format.h>

#include "data/embedded.h"
#include "data/toml_document.h"
#include "util/suggest.h"

namespace gpuplan {

Result<FabricCatalog> FabricCatalog::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  TomlFields top(*doc, origin);
  if (auto s = top.only_keys({"fabric"})) return *s;
  const toml::array* rows = doc->get_as<toml::array>("fabric");
  if (!rows || rows->empty()) return make_error(origin + ": fabric", "needs at least one [[fabric]] row");
  FabricCatalog c;
  for (size_t i = 0; i < rows->size(); ++i) {
    const std::string where = fmt::format("{}: fabric[{}]", origin, i);
    const toml::table* t = rows->get(i)->as_table();
    if (!t) return make_error(where, "must be a table");
    TomlFields f(*t, where);
    if (auto s = f.only_keys({"id", "name", "nic_gbps", "nics_per_node", "source", "source_date", "notes"})) return *s;
    Fabric fab;
    for (auto [k, out] : {std::pair{"id", &fab.id}, std::pair{"name", &fab.name}, std::pair{"source", &fab.source},
                          std::pair{"source_date", &fab.source_date}}) {
      auto v = f.string(k);
      if (!v) return v.error();
      *out = *v;
    }
    auto gbps = f.number("nic_gbps");
    if (!gbps) return gbps.error();
    if (!(*gbps > 0 && *gbps <= 1e5)) return make_error(f.field("nic_gbps"), "must be between 0 and 100000");
    fab.nic_gbps = *gbps;
    auto nics = f.integer("nics_per_node");
    if (!nics) return nics.error();
    if (*nics < 1 || *nics > 1024) return make_error(f.field("nics_per_node"), "must be between 1 and 1024");
    fab.nics_per_node = *nics;
    for (const Fabric& other : c.fabrics_)
      if (other.id == fab.id) return make_error(f.field("id"), "duplicate id '" + fab.id + "'");
    c.fabrics_.push_back(fab);
  }
  return c;
}

const FabricCatalog& FabricCatalog::builtin() {
  static const FabricCatalog c = data::builtin_or_abort(from_toml(data::embedded_file("fabrics.toml"), "built-in fabrics.toml"));
  return c;
}

Result<Fabric> FabricCatalog::find(const std::string& id, const std::string& field) const {
  std::vector<std::string> ids;
  for (const Fabric& f : fabrics_) {
    if (f.id == id) return f;
    ids.push_back(f.id);
  }
  return make_error(field, "unknown fabric '" + id + "'" + did_you_mean(id, ids) + "; `gpuplan fabrics` lists them");
}

}  // namespace gpuplan
