#include "model/hf_config.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace gpuplan {

using nlohmann::json;

namespace {

// The first of `keys` present in `j`, as a non-negative integer; 0 if none is present.
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

// An array of small non-negative integers (layer indices, 0/1 flags); nullopt when absent.
Result<std::optional<std::vector<int64_t>>> int_list(const json& j, const char* key, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<std::vector<int64_t>>{};
  if (!it->is_array()) return make_error(origin + ": " + key, "must be an array of integers");
  if (it->size() > (1u << 16)) return make_error(origin + ": " + key, "has implausibly many entries");
  std::vector<int64_t> out;
  for (const auto& v : *it) {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (1 << 20))
      return make_error(origin + ": " + key, fmt::format("entries must be small non-negative integers, got {}", v.dump()));
    out.push_back(v.get<int64_t>());
  }
  return std::optional<std::vector<int64_t>>(std::move(out));
}

std::string str_field(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

bool bool_field(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// Words in a config key that mark a structural choice: experts, latent attention, multi-token
// prediction, per-layer schedules, state-space or linear-attention layers. A key holding one of
// them that the family's reader does not interpret would change the parameter count silently.
bool is_structural(const std::string& key) {
  static const char* markers[] = {
      "expert", "moe", "router", "lora_rank", "mamba", "ssm", "linear_", "conv_", "layer_types",
      "attn_type", "hybrid", "block_type", "nextn", "mtp", "dense_replace", "sparse_step", "mlp_only",
      "interleave", "chunk", "rope_head_dim", "nope", "v_head_dim", "state_size", "d_state",
      "attention_interval", "kv_shared", "altup", "laurel", "per_layer", "dt_rank", "time_step",
      "num_shared", "shared_intermediate", "index_", "topk", "n_group", "scoring_func"};
  for (const char* m : markers)
    if (key.find(m) != std::string::npos) return true;
  return false;
}

// The structural keys each family's reader interprets (or knows to be irrelevant to the shape:
// routing and loss settings).
const std::set<std::string>& understood_keys(const std::string& family) {
  static const std::set<std::string> dense = {"layer_types"};
  static const std::set<std::string> mixtral = {"layer_types", "num_local_experts", "num_experts_per_tok",
                                                "router_aux_loss_coef", "output_router_logits",
                                                "router_jitter_noise"};
  static const std::set<std::string> qwen_moe = {
      "layer_types", "num_experts", "num_experts_per_tok", "moe_intermediate_size",
      "shared_expert_intermediate_size", "decoder_sparse_step", "mlp_only_layers", "norm_topk_prob",
      "router_aux_loss_coef", "output_router_logits"};
  static const std::set<std::string> deepseek = {
      "n_routed_experts", "n_shared_experts", "num_experts_per_tok", "moe_intermediate_size",
      "moe_layer_freq", "first_k_dense_replace", "n_group", "topk_group", "topk_method",
      "routed_scaling_factor", "scoring_func", "norm_topk_prob", "aux_loss_alpha", "seq_aux", "ep_size",
      "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
      "num_nextn_predict_layers", "router_aux_loss_coef", "output_router_logits"};
  static const std::set<std::string> gpt_oss = {"layer_types", "num_local_experts", "num_experts_per_tok",
                                                "experts_per_token", "router_aux_loss_coef",
                                                "output_router_logits"};
  static const std::set<std::string> llama4 = {
      "layer_types", "num_local_experts", "num_experts_per_tok", "interleave_moe_layer_step", "moe_layers",
      "attention_chunk_size", "no_rope_layers", "router_aux_loss_coef", "router_jitter_noise",
      "output_router_logits"};
  static const std::set<std::string> phimoe = {"layer_types", "num_local_experts", "num_experts_per_tok",
                                               "router_aux_loss_coef", "router_jitter_noise",
                                               "input_jitter_noise", "output_router_logits"};
  static const std::set<std::string> olmoe = {"layer_types", "num_experts", "num_experts_per_tok",
                                              "norm_topk_prob", "router_aux_loss_coef", "output_router_logits"};
  if (family == "mixtral") return mixtral;
  if (family == "qwen2_moe" || family == "qwen3_moe") return qwen_moe;
  if (family == "deepseek" || family == "deepseek_v2" || family == "deepseek_v3" || family == "kimi_k2")
    return deepseek;
  if (family == "gpt_oss") return gpt_oss;
  if (family == "llama4_text" || family == "llama4") return llama4;
  if (family == "phimoe") return phimoe;
  if (family == "olmoe") return olmoe;
  return dense;
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Keys of `j` that change the structure in ways `family` is not read with, and layer kinds in
// layer_types the estimators do not model (linear attention, Mamba, ...).
std::vector<std::string> not_understood(const json& j, const std::string& family, bool family_known) {
  std::vector<std::string> out;
  const auto& ok = understood_keys(family);
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_null() || (it->is_number() && it->get<double>() == 0) || (it->is_boolean() && !it->get<bool>()))
      continue;  // a structural key set to nothing or off changes nothing
    if (it->is_array() && it->empty()) continue;
    if (is_structural(it.key()) && (!family_known || !ok.count(it.key()))) out.push_back(it.key());
  }
  if (auto lt = j.find("layer_types"); lt != j.end() && lt->is_array()) {
    std::set<std::string> odd;
    for (const auto& t : *lt)
      if (!t.is_string() || (t != "full_attention" && t != "sliding_attention" && t != "chunked_attention"))
        odd.insert(t.is_string() ? t.get<std::string>() : t.dump());
    for (const auto& o : odd) out.push_back("layer_types=" + o);
  }
  return out;
}

Status read_moe(const json& j, const std::string& family, const std::string& origin, ModelSpec& m) {
  auto experts = int_field(j, {"num_local_experts", "num_experts", "n_routed_experts"}, origin);
  if (!experts) return experts.error();
  auto top_k = int_field(j, {"num_experts_per_tok", "experts_per_token", "moe_top_k"}, origin);
  if (!top_k) return top_k.error();
  m.experts = *experts;
  m.experts_per_token = *top_k;
  if (m.experts == 0) return std::nullopt;
  const std::string where = origin + ": ";
  if (family == "qwen2_moe" || family == "qwen3_moe") {
    // Qwen2MoeConfig: layer i is sparse unless listed in mlp_only_layers, and every
    // decoder_sparse_step-th layer (counting from 1) is sparse.
    auto width = int_field(j, {"moe_intermediate_size"}, origin);
    auto shared = int_field(j, {"shared_expert_intermediate_size"}, origin);
    auto step = int_field(j, {"decoder_sparse_step"}, origin);
    auto only = int_list(j, "mlp_only_layers", origin);
    if (!width) return width.error();
    if (!shared) return shared.error();
    if (!step) return step.error();
    if (!only) return only.error();
    m.expert_intermediate = *width;
    if (*shared > 0) m.shared_experts = 1, m.shared_intermediate = *shared, m.shared_expert_gate = true;
    const int64_t s = std::max<int64_t>(1, *step);
    const std::vector<int64_t> listed = only->value_or(std::vector<int64_t>{});
    const std::set<int64_t> dense(listed.begin(), listed.end());
    m.moe_layers = 0;
    for (int64_t i = 0; i < m.layers; ++i) m.moe_layers += !dense.count(i) && (i + 1) % s == 0;
    if (m.moe_layers == 0) return make_error(where + "mlp_only_layers", "leaves no mixture-of-experts layer");
  } else if (family.rfind("deepseek", 0) == 0 || family == "kimi_k2") {
    // DeepseekV3Config: the first first_k_dense_replace layers are dense, then every
    // moe_layer_freq-th layer is sparse; n_shared_experts experts of the routed width always run.
    auto width = int_field(j, {"moe_intermediate_size"}, origin);
    auto shared = int_field(j, {"n_shared_experts"}, origin);
    auto first_dense = int_field(j, {"first_k_dense_replace"}, origin);
    auto freq = int_field(j, {"moe_layer_freq"}, origin);
    if (!width) return width.error();
    if (!shared) return shared.error();
    if (!first_dense) return first_dense.error();
    if (!freq) return freq.error();
    m.expert_intermediate = *width;
    m.shared_experts = *shared;
    const int64_t f = std::max<int64_t>(1, *freq);
    m.moe_layers = 0;
    for (int64_t i = 0; i < m.layers; ++i) m.moe_layers += i >= *first_dense && i % f == 0;
    if (m.moe_layers == 0) return make_error(where + "first_k_dense_replace", "leaves no mixture-of-experts layer");
    m.router_score_bias = str_field(j, "topk_method") == "noaux_tc";
  } else if (family == "llama4_text" || family == "llama4") {
    // Llama4TextConfig: experts of width intermediate_size with one shared expert of the same
    // width; dense layers use intermediate_size_mlp; sparse layers are listed in moe_layers or
    // else every interleave_moe_layer_step-th layer.
    auto dense_width = int_field(j, {"intermediate_size_mlp"}, origin);
    auto step = int_field(j, {"interleave_moe_layer_step"}, origin);
    auto listed = int_list(j, "moe_layers", origin);
    if (!dense_width) return dense_width.error();
    if (!step) return step.error();
    if (!listed) return listed.error();
    m.expert_intermediate = m.intermediate;
    if (*dense_width > 0) m.intermediate = *dense_width;
    m.shared_experts = 1;
    if (*listed) {
      std::set<int64_t> uniq;
      for (int64_t i : **listed) {
        if (i >= m.layers) return make_error(where + "moe_layers", fmt::format("layer {} is beyond the {} layers", i, m.layers));
        uniq.insert(i);
      }
      m.moe_layers = static_cast<int64_t>(uniq.size());
    } else {
      const int64_t s = std::max<int64_t>(1, *step);
      m.moe_layers = 0;
      for (int64_t i = s - 1; i < m.layers; i += s) ++m.moe_layers;
    }
    if (m.moe_layers == 0) return make_error(where + "moe_layers", "lists no mixture-of-experts layer");
  } else if (family == "gpt_oss") {
    // GptOssExperts: gate_up and down projections each with a bias; the router has a bias too.
    m.expert_bias = true;
  }
  return std::nullopt;
}

Status read_mla(const json& j, const std::string& origin, ModelSpec& m) {
  struct F {
    int64_t* out;
    const char* key;
  };
  for (const F& f : {F{&m.q_lora_rank, "q_lora_rank"}, F{&m.kv_lora_rank, "kv_lora_rank"},
                     F{&m.qk_rope_dim, "qk_rope_head_dim"}, F{&m.qk_nope_dim, "qk_nope_head_dim"},
                     F{&m.v_head_dim, "v_head_dim"}, F{&m.mtp_layers, "num_nextn_predict_layers"}}) {
    auto r = int_field(j, {f.key}, origin);
    if (!r) return r.error();
    *f.out = *r;
  }
  if (m.kv_lora_rank > 0) {
    if (m.qk_rope_dim == 0 || m.qk_nope_dim == 0 || m.v_head_dim == 0)
      return make_error(origin + ": kv_lora_rank", "latent attention needs qk_rope_head_dim, qk_nope_head_dim and v_head_dim");
    m.head_dim = m.qk_nope_dim + m.qk_rope_dim;
    m.kv_heads = m.heads;  // K and V are rebuilt per head from the latent
  }
  return std::nullopt;
}

// Sliding-window attention: Mistral v0.1 windows every layer; Gemma 2 alternates local and global;
// Gemma 3 keeps one global layer in sliding_window_pattern; gpt-oss lists layer_types; Qwen2 carries
// a window but disables it with use_sliding_window=false. Llama 4 attends within fixed chunks on
// its RoPE layers and globally on the others.
Status read_windows(const json& j, const std::string& family, const std::string& origin, ModelSpec& m) {
  if (family == "llama4_text" || family == "llama4") {
    auto chunk = int_field(j, {"attention_chunk_size"}, origin);
    auto rope = int_list(j, "no_rope_layers", origin);
    if (!chunk) return chunk.error();
    if (!rope) return rope.error();
    if (*chunk == 0) return std::nullopt;
    m.sliding_window = *chunk;
    m.chunked_window = true;
    if (*rope) {
      int64_t n = 0;
      for (size_t i = 0; i < (*rope)->size() && static_cast<int64_t>(i) < m.layers; ++i) n += (**rope)[i] != 0;
      m.sliding_layers = n;
    } else {
      m.sliding_layers = m.layers - m.layers / 4;  // Llama4TextConfig: every 4th layer is NoPE and global
    }
    return std::nullopt;
  }
  auto window = int_field(j, {"sliding_window"}, origin);
  if (!window) return window.error();
  bool use_window = *window > 0 && bool_field(j, "use_sliding_window", true);
  if (use_window && m.max_position > 0 && *window >= m.max_position) use_window = false;
  if (!use_window) return std::nullopt;
  m.sliding_window = *window;
  m.sliding_layers = m.layers;
  if (auto it = j.find("layer_types"); it != j.end() && it->is_array()) {
    int64_t n = 0;
    for (const auto& t : *it) n += t.is_string() && t.get<std::string>() == "sliding_attention";
    m.sliding_layers = std::min(n, m.layers);
  } else if (family == "gemma2") {
    m.sliding_layers = m.layers / 2;
  } else if (auto p = j.find("sliding_window_pattern"); p != j.end() && p->is_number_integer() && p->get<int64_t>() > 0) {
    m.sliding_layers = m.layers - m.layers / p->get<int64_t>();  // one global layer in every `pattern`
  }
  return std::nullopt;
}

std::string architectures(const json& root) {
  std::vector<std::string> names;
  if (auto it = root.find("architectures"); it != root.end() && it->is_array())
    for (const auto& a : *it)
      if (a.is_string()) names.push_back(a.get<std::string>());
  return join(names);
}

}  // namespace

Result<ModelSpec> parse_hf_config(std::string_view json_text, const std::string& origin, const ReadOptions& options) {
  json root = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return make_error(origin, "malformed JSON");
  if (!root.is_object()) return make_error(origin, "must be a JSON object");
  // Multimodal configs keep the language model under text_config.
  const bool nested = root.contains("text_config") && root["text_config"].is_object();
  const json& j = nested ? root["text_config"] : root;

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
  const std::vector<std::string> odd = not_understood(j, model_type, traits.has_value());
  if (!traits && !options.assume_dense) {
    const std::string arch = architectures(root);
    return make_error(origin + ": model_type",
                      fmt::format("unknown architecture '{}'{}{}; gpuplan reads {}; --assume-dense reads it as a "
                                  "dense Llama-style decoder",
                                  model_type, arch.empty() ? "" : " (" + arch + ")",
                                  odd.empty() ? "" : ", with keys " + join(odd), join(known_families())));
  }
  if (!odd.empty() && !options.assume_dense)
    return make_error(origin + ": " + join(odd),
                      fmt::format("not understood for model_type '{}' (mixture-of-experts, latent-attention or "
                                  "hybrid-layer keys the reader does not interpret); --assume-dense ignores them",
                                  model_type));
  const bool dense_override = options.assume_dense && (!traits || !odd.empty());
  m.family = model_type;
  m.traits = traits ? *traits : *family_traits("llama");
  m.name = model_type;
  if (auto it = j.find("_name_or_path"); it != j.end() && it->is_string() && !it->get<std::string>().empty())
    m.name = it->get<std::string>();
  if (dense_override) {
    m.assumed_dense = true;
    m.notes.push_back(fmt::format("--assume-dense: '{}' read as a dense {} decoder{}", model_type,
                                  traits ? model_type : "Llama-style",
                                  odd.empty() ? "" : "; ignored " + join(odd)));
  }
  if (nested && (root.contains("vision_config") || root.contains("audio_config")))
    m.notes.push_back("the language model under text_config is counted; the vision/audio towers are not");

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
    // Llama-style attention_bias puts biases on q, k, v and o alike.
    m.traits.qkv_bias = it->get<bool>();
    m.traits.attn_out_bias = it->get<bool>();
    m.traits.out_bias = it->get<bool>() && m.traits.out_bias;
  }
  m.traits.lm_head_bias = bool_field(j, "lm_head_bias", false);
  m.tied_embeddings = m.traits.tied_default;
  if (auto it = j.find("tie_word_embeddings"); it != j.end()) {
    if (!it->is_boolean()) return make_error(origin + ": tie_word_embeddings", "must be true or false");
    m.tied_embeddings = it->get<bool>();
  } else if (auto it2 = root.find("tie_word_embeddings"); it2 != root.end() && it2->is_boolean()) {
    m.tied_embeddings = it2->get<bool>();
  }
  const char* missing = m.layers == 0 ? "num_hidden_layers" : m.hidden == 0 ? "hidden_size"
                       : m.heads == 0 ? "num_attention_heads" : m.vocab == 0 ? "vocab_size"
                       : m.intermediate == 0 ? "intermediate_size" : nullptr;
  if (missing) return make_error(origin + ": " + missing, "is missing or zero");

  if (!dense_override) {
    if (auto s = read_moe(j, model_type, origin, m)) return *s;
    if (auto s = read_mla(j, origin, m)) return *s;
  }
  if (model_type == "gpt_oss") {
    m.attention_sinks = true;
    if (auto q = j.find("quantization_config"); q != j.end() && q->is_object() && str_field(*q, "quant_method") == "mxfp4")
      m.quant_experts_only = true;  // modules_to_not_convert keeps attention, router, embeddings in bf16
  }
  if (auto s = read_windows(j, dense_override ? "" : model_type, origin, m)) return *s;
  if (auto s = m.validate()) return make_error(origin + ": " + s->field, s->message);
  return m;
}

}  // namespace gpuplan
