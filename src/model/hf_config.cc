#include "model/hf_config.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace gpuplan {

using nlohmann::json;

namespace {

// The first of `keys` present in `j`, as a positive integer; 0 if none is present.
Result<int64_t> int_field(const json& j, std::initializer_list<const char*> keys,
                          const std::string& origin) {
  for (const char* k : keys) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_number_integer() && !(it->is_number_float() && it->get<double>() == std::floor(it->get<double>())))
      return make_error(origin + ": " + k, fmt::format("must be an integer, got {}", it->dump()));
    const double v = it->get<double>();
    if (v < 0) return make_error(origin + ": " + k, fmt::format("must not be negative, got {}", it->dump()));
    if (v > 1e12) return make_error(origin + ": " + k, fmt::format("{} is implausibly large", it->dump()));
    return static_cast<int64_t>(v);
  }
  return int64_t{0};
}

}  // namespace

Result<ModelSpec> parse_hf_config(std::string_view json_text, const std::string& origin) {
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return make_error(origin, "malformed JSON");
  if (!root.is_object()) return make_error(origin, "must be a JSON object");
  // Multimodal configs keep the language model under text_config.
  const json& j = root.contains("text_config") && root["text_config"].is_object() ? root["text_config"] : root;

  ModelSpec m;
  m.id = origin;
  m.source = origin;
  std::string model_type;
  for (const json* obj : std::initializer_list<const json*>{&j, &root}) {
    auto it = obj->find("model_type");
    if (it != obj->end()) {
      if (!it->is_string()) return make_error(origin + ": model_type", "must be a string");
      model_type = it->get<std::string>();
      break;
    }
  }
  if (model_type.empty()) return make_error(origin + ": model_type", "is missing");
  auto traits = family_traits(model_type);
  if (!traits) {
    // Unknown families are read as Llama-style decoders, the common case today; say so.
    traits = family_traits("llama");
    m.name = model_type + " (read as a Llama-style decoder)";
  } else {
    m.name = model_type;
  }
  m.family = model_type;
  m.traits = *traits;
  if (auto it = j.find("_name_or_path"); it != j.end() && it->is_string() && !it->get<std::string>().empty())
    m.name = it->get<std::string>();

  struct F {
    int64_t* out;
    std::initializer_list<const char*> keys;
  };
  const F fields[] = {
      {&m.layers, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}},
      {&m.hidden, {"hidden_size", "n_embd", "d_model", "dim"}},
      {&m.intermediate, {"intermediate_size", "n_inner", "ffn_dim", "d_ff"}},
      {&m.heads, {"num_attention_heads", "n_head", "num_heads"}},
      {&m.kv_heads, {"num_key_value_heads", "num_kv_heads"}},
      {&m.head_dim, {"head_dim"}},
      {&m.vocab, {"vocab_size", "padded_vocab_size"}},
      {&m.max_position, {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length"}},
      {&m.type_vocab, {"type_vocab_size"}},
      {&m.experts, {"num_local_experts", "num_experts", "n_routed_experts"}},
      {&m.experts_per_token, {"num_experts_per_tok", "moe_top_k"}},
  };
  for (const F& f : fields) {
    auto r = int_field(j, f.keys, origin);
    if (!r) return r.error();
    *f.out = *r;
  }
  if (model_type == "gpt2" && m.intermediate == 0) m.intermediate = 4 * m.hidden;  // n_inner null
  if (model_type == "gpt_bigcode") {
    auto it = j.find("multi_query");
    if (it == j.end() || (it->is_boolean() && it->get<bool>())) m.kv_heads = 1;
  }
  if (!m.traits.bert_heads) m.type_vocab = 0;
  if (auto it = j.find("attention_bias"); it != j.end() && it->is_boolean()) {
    m.traits.qkv_bias = it->get<bool>();
    m.traits.out_bias = it->get<bool>() && m.traits.out_bias;
  }
  m.tied_embeddings = m.traits.tied_default;
  if (auto it = j.find("tie_word_embeddings"); it != j.end()) {
    if (!it->is_boolean()) return make_error(origin + ": tie_word_embeddings", "must be true or false");
    m.tied_embeddings = it->get<bool>();
  } else if (auto it2 = root.find("tie_word_embeddings"); it2 != root.end() && it2->is_boolean()) {
    m.tied_embeddings = it2->get<bool>();
  }

  // Sliding-window attention: Mistral v0.1 windows every layer; Gemma 2 alternates local and global;
  // Qwen2 carries a window but disables it with use_sliding_window=false.
  auto window = int_field(j, {"sliding_window"}, origin);
  if (!window) return window.error();
  bool use_window = *window > 0;
  if (auto it = j.find("use_sliding_window"); it != j.end() && it->is_boolean())
    use_window = use_window && it->get<bool>();
  if (use_window && m.max_position > 0 && *window >= m.max_position) use_window = false;
  if (use_window) {
    m.sliding_window = *window;
    m.sliding_layers = m.layers;
    if (auto it = j.find("layer_types"); it != j.end() && it->is_array()) {
      int64_t n = 0;
      for (const auto& t : *it) n += t.is_string() && t.get<std::string>() == "sliding_attention";
      m.sliding_layers = n;
    } else if (model_type == "gemma2") {
      m.sliding_layers = m.layers / 2;
    } else if (auto p = j.find("sliding_window_pattern"); p != j.end() && p->is_number_integer() && p->get<int64_t>() > 0) {
      // One global layer in every `pattern` layers (Gemma 3).
      m.sliding_layers = m.layers - m.layers / p->get<int64_t>();
    }
  }

  const char* missing = m.layers == 0 ? "num_hidden_layers" : m.hidden == 0 ? "hidden_size"
                       : m.heads == 0 ? "num_attention_heads" : m.vocab == 0 ? "vocab_size"
                       : m.intermediate == 0 ? "intermediate_size" : nullptr;
  if (missing) return make_error(origin + ": " + missing, "is missing or zero");
  if (auto s = m.validate()) return make_error(origin + ": " + s->field, s->message);
  return m;
}

}  // namespace gpuplan
