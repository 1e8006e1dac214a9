#include "model/presets.h"

#include <fmt/format.h>


#include "data/embedded.h"
#include "data/toml_document.h"
#include "util/suggest.h"

namespace gpuplan {

Result<ModelSpec> model_from_table(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "family", "layers", "hidden", "intermediate", "heads",
                            "kv_heads", "head_dim", "vocab", "max_position", "type_vocab",
                            "tied_embeddings", "experts", "experts_per_token", "sliding_window",
                            "sliding_layers", "source", "published_parameters",
                            "parameters_source"}))
    return *s;
  ModelSpec m;
  for (auto [key, out] : {std::pair{"id", &m.id}, std::pair{"name", &m.name},
                          std::pair{"family", &m.family}, std::pair{"source", &m.source}}) {
    auto r = f.string(key);
    if (!r) return r.error();
    *out = *r;
  }
  auto traits = family_traits(m.family);
  if (!traits) return make_error(f.field("family"), "unknown family '" + m.family + "'");
  m.traits = *traits;
  struct Int {
    const char* key;
    int64_t* out;
    bool required;
  };
  for (const Int& i : {Int{"layers", &m.layers, true}, Int{"hidden", &m.hidden, true},
                       Int{"intermediate", &m.intermediate, true}, Int{"heads", &m.heads, true},
                       Int{"kv_heads", &m.kv_heads, false}, Int{"head_dim", &m.head_dim, false},
                       Int{"vocab", &m.vocab, true}, Int{"max_position", &m.max_position, true},
                       Int{"type_vocab", &m.type_vocab, false}, Int{"experts", &m.experts, false},
                       Int{"experts_per_token", &m.experts_per_token, false},
                       Int{"sliding_window", &m.sliding_window, false}}) {
    auto r = f.optional_integer(i.key);
    if (!r) return r.error();
    if (!*r && i.required) return make_error(f.field(i.key), "is required");
    if (*r) *i.out = **r;
  }
  auto tied = f.optional_boolean("tied_embeddings");
  if (!tied) return tied.error();
  m.tied_embeddings = tied->value_or(m.traits.tied_default);
  auto sl = f.optional_string("sliding_layers");
  if (!sl) return sl.error();
  if (m.sliding_window > 0) {
    const std::string mode = sl->value_or("all");
    if (mode == "all") m.sliding_layers = m.layers;
    else if (mode == "alternate") m.sliding_layers = m.layers / 2;
    else return make_error(f.field("sliding_layers"), "must be \"all\" or \"alternate\"");
  }
  auto pub = f.optional_integer("published_parameters");
  if (!pub) return pub.error();
  if (*pub) m.published_parameters = **pub;
  auto ps = f.optional_string("parameters_source");
  if (!ps) return ps.error();
  m.parameters_source = ps->value_or("");
  if (auto s = m.validate()) return make_error(where + "." + s->field, s->message);
  return m;
}

Result<Presets> Presets::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  const toml::array* rows = doc->get_as<toml::array>("model");
  if (!rows) return make_error(origin, "no [[model]] entries");
  Presets p;
  for (size_t i = 0; i < rows->size(); ++i) {
    const std::string where = fmt::format("{}: model[{}]", origin, i);
    const toml::table* t = rows->get(i)->as_table();
    if (!t) return make_error(where, "must be a table");
    auto m = model_from_table(*t, where);
    if (!m) return m.error();
    p.models_.push_back(std::move(m).value());
  }
  return p;
}

const Presets& Presets::builtin() {
  static const Presets p = data::builtin_or_abort(from_toml(data::embedded_file("models.toml"), "built-in models.toml"));
  return p;
}

Result<ModelSpec> Presets::find(const std::string& id) const {
  for (const auto& m : models_)
    if (m.id == id) return m;
  return make_error("--model", "unknown model '" + id + "'" + did_you_mean(id, ids()) +
                                   "; `gpuplan models` lists presets, or pass a config.json or model directory");
}

std::vector<std::string> Presets::ids() const {
  std::vector<std::string> out;
  for (const auto& m : models_) out.push_back(m.id);
  return out;
}

}  // namespace gpuplan
