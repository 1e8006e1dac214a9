#include "model/presets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>


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
                            "parameters_source", "moe_layers", "expert_intermediate", "shared_experts",
                            "shared_intermediate", "shared_expert_gate", "expert_bias",
                            "router_score_bias", "quant_experts_only", "q_lora_rank", "kv_lora_rank",
                            "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "attention_sinks",
                            "mtp_layers", "attention_bias", "chunked_window",
                            "published_active_parameters", "active_excludes_input_embedding", "notes",
                            "published_scope", "published_active_truncated"}))
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
                       Int{"sliding_window", &m.sliding_window, false},
                       Int{"moe_layers", &m.moe_layers, false},
                       Int{"expert_intermediate", &m.expert_intermediate, false},
                       Int{"shared_experts", &m.shared_experts, false},
                       Int{"shared_intermediate", &m.shared_intermediate, false},
                       Int{"q_lora_rank", &m.q_lora_rank, false}, Int{"kv_lora_rank", &m.kv_lora_rank, false},
                       Int{"qk_rope_head_dim", &m.qk_rope_dim, false},
                       Int{"qk_nope_head_dim", &m.qk_nope_dim, false}, Int{"v_head_dim", &m.v_head_dim, false},
                       Int{"mtp_layers", &m.mtp_layers, false}}) {
    auto r = f.optional_integer(i.key);
    if (!r) return r.error();
    if (!*r && i.required) return make_error(f.field(i.key), "is required");
    if (*r) *i.out = **r;
  }
  auto tied = f.optional_boolean("tied_embeddings");
  if (!tied) return tied.error();
  m.tied_embeddings = tied->value_or(m.traits.tied_default);
  struct Flag {
    const char* key;
    bool* out;
  };
  bool attention_bias = false, chunked = false;
  for (const Flag& b : {Flag{"shared_expert_gate", &m.shared_expert_gate}, Flag{"expert_bias", &m.expert_bias},
                        Flag{"router_score_bias", &m.router_score_bias},
                        Flag{"quant_experts_only", &m.quant_experts_only},
                        Flag{"attention_sinks", &m.attention_sinks}, Flag{"attention_bias", &attention_bias},
                        Flag{"chunked_window", &chunked}}) {
    auto r = f.optional_boolean(b.key);
    if (!r) return r.error();
    if (*r) *b.out = **r;
  }
  if (attention_bias) m.traits.qkv_bias = m.traits.attn_out_bias = true;
  m.chunked_window = chunked;
  if (m.sliding_window > 0) {
    // "all", "alternate", or how many layers use the window.
    const toml::node* sl = t.get("sliding_layers");
    if (!sl || (sl->is_string() && sl->value<std::string>() == "all")) m.sliding_layers = m.layers;
    else if (sl->is_string() && sl->value<std::string>() == "alternate") m.sliding_layers = m.layers / 2;
    else if (sl->is_integer() && sl->value<int64_t>().value_or(-1) >= 0) m.sliding_layers = *sl->value<int64_t>();
    else return make_error(f.field("sliding_layers"), "must be \"all\", \"alternate\" or a layer count");
  }
  if (m.kv_lora_rank > 0) m.kv_heads = m.heads;
  auto active = f.optional_integer("published_active_parameters");
  if (!active) return active.error();
  if (*active) m.published_active_parameters = **active;
  auto excl = f.optional_boolean("active_excludes_input_embedding");
  if (!excl) return excl.error();
  m.active_excludes_input_embedding = excl->value_or(false);
  auto trunc = f.optional_boolean("published_active_truncated");
  if (!trunc) return trunc.error();
  m.published_active_truncated = trunc->value_or(false);
  if (const toml::array* notes = t.get_as<toml::array>("notes")) {
    for (const auto& n : *notes) {
      if (!n.is_string()) return make_error(f.field("notes"), "must be strings");
      m.notes.push_back(*n.value<std::string>());
    }
  } else if (t.contains("notes")) {
    return make_error(f.field("notes"), "must be an array of strings");
  }
  auto pub = f.optional_integer("published_parameters");
  if (!pub) return pub.error();
  if (*pub) m.published_parameters = **pub;
  auto scope = f.optional_string("published_scope");
  if (!scope) return scope.error();
  m.published_scope = scope->value_or("");
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
    // hub_ids: the Hugging Face repos whose config.json this preset copies (they map to it).
    toml::table row = *t;
    if (const toml::node* hub = row.get("hub_ids")) {
      const toml::array* ids = hub->as_array();
      if (!ids) return make_error(where + ".hub_ids", "must be an array of \"org/name\" strings");
      for (const auto& n : *ids) {
        const auto id = n.value<std::string>();
        if (!id || id->find('/') == std::string::npos) return make_error(where + ".hub_ids", "must be \"org/name\" strings");
        p.hub_ids_.emplace_back(*id, p.models_.size());
      }
      row.erase("hub_ids");
    }
    auto m = model_from_table(row, where);
    if (!m) return m.error();
    p.models_.push_back(std::move(m).value());
  }
  return p;
}

const Presets& Presets::builtin() {
  static const Presets p = data::builtin_or_abort(from_toml(data::embedded_file("models.toml"), "built-in models.toml"));
  return p;
}

namespace {
bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

Result<ModelSpec> Presets::find(const std::string& id) const {
  for (const auto& m : models_)
    if (m.id == id) return m;
  for (const auto& m : models_)
    if (same_ignoring_case(m.id, id)) return m;
  // A hub id (without a revision) of the repo a preset copies; the hub matches names regardless of case.
  for (const auto& [hub, index] : hub_ids_)
    if (same_ignoring_case(hub, id)) return models_[index];
  return make_error("--model", "unknown model '" + id + "'" + did_you_mean(id, ids()) +
                                   "; `gpuplan models` lists presets, or pass a config.json, a model directory or a Hugging Face id (org/name)");
}

std::vector<std::string> Presets::ids() const {
  std::vector<std::string> out;
  for (const auto& m : models_) out.push_back(m.id);
  return out;
}

}  // namespace gpuplan
