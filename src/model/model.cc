#include "model/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "util/limits.h"

namespace gpuplan {

std::optional<FamilyTraits> family_traits(const std::string& family) {
  FamilyTraits llama;  // RMSNorm, SwiGLU, no biases, RoPE: Llama, Mistral, Mixtral, DeepSeek
  FamilyTraits qwen2 = llama;
  qwen2.qkv_bias = true;
  FamilyTraits qwen3 = llama;  // q_norm and k_norm over each head
  qwen3.qk_norm = 1;
  FamilyTraits olmo = llama;   // OLMo 2 and OLMoE: q_norm and k_norm over the whole q and k widths
  olmo.qk_norm = 2;
  FamilyTraits gemma1 = llama;  // Gemma 1: two norms per layer, tied
  gemma1.tied_default = true;
  FamilyTraits gemma2 = llama;
  gemma2.norms_per_layer = 4;
  gemma2.tied_default = true;
  FamilyTraits gemma3 = gemma2;
  gemma3.qk_norm = 1;
  FamilyTraits phimoe = llama;  // LayerNorm with bias, biased attention and LM head
  phimoe.norm_bias = true;
  phimoe.lm_head_bias = true;
  FamilyTraits gpt2;
  gpt2.glu = false;
  gpt2.norm_bias = true;
  gpt2.qkv_bias = true;
  gpt2.out_bias = true;
  gpt2.learned_positions = true;
  gpt2.rotary = false;
  gpt2.dropout = true;
  gpt2.tied_default = true;
  // MPT: GELU MLP, LayerNorm without bias, no biases anywhere, ALiBi instead of learned positions.
  FamilyTraits mpt;
  mpt.glu = false;
  mpt.rotary = false;  // ALiBi: a bias inside the attention kernel, no pass over q and k
  mpt.tied_default = true;
  FamilyTraits bert = gpt2;
  bert.encoder = true;
  bert.final_norm = false;
  bert.bert_heads = true;
  static const std::map<std::string, FamilyTraits> table = {
      {"llama", llama},         {"mistral", llama},      {"mixtral", llama},
      {"qwen2", qwen2},         {"qwen2_moe", qwen2},    {"qwen3", qwen3},
      {"qwen3_moe", qwen3},     {"gemma", gemma1},       {"gemma2", gemma2},
      {"gemma3", gemma3},       {"gemma3_text", gemma3}, {"gpt2", gpt2},
      {"gpt_bigcode", gpt2},    {"bert", bert},          {"phi3", llama},
      {"phimoe", phimoe},       {"olmo2", olmo},         {"olmoe", olmo},
      {"mpt", mpt},             {"deepseek", llama},     {"deepseek_v2", llama},
      {"deepseek_v3", llama},   {"kimi_k2", llama},      {"gpt_oss", llama},
      {"llama4", llama},        {"llama4_text", llama},
  };
  auto it = table.find(family);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> known_families() {
  return {"bert", "deepseek", "deepseek_v2", "deepseek_v3", "gemma", "gemma2", "gemma3",
          "gemma3_text", "gpt2", "gpt_bigcode", "gpt_oss", "kimi_k2", "llama", "llama4",
          "llama4_text", "mistral", "mixtral", "mpt", "olmo2", "olmoe", "phi3", "phimoe",
          "qwen2", "qwen2_moe", "qwen3", "qwen3_moe"};
}

namespace {

struct AttentionCounts {
  int64_t linear = 0, other = 0;  // per layer
};

AttentionCounts attention_counts(const ModelSpec& m) {
  const FamilyTraits& t = m.traits;
  const int64_t h = m.hidden;
  AttentionCounts a;
  if (m.is_mla()) {
    // DeepSeek-V2 section 2.1: queries through an optional low-rank q_lora_rank bottleneck; keys
    // and values from one kv_lora_rank latent (plus a shared RoPE key), each bottleneck normed.
    const int64_t qk = m.qk_nope_dim + m.qk_rope_dim;
    const int64_t q = m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank * m.heads * qk : h * m.heads * qk;
    const int64_t kv = h * (m.kv_lora_rank + m.qk_rope_dim) + m.kv_lora_rank * m.heads * (m.qk_nope_dim + m.v_head_dim);
    a.linear = q + kv + m.heads * m.v_head_dim * h;
    a.other = m.q_lora_rank + m.kv_lora_rank;
  } else {
    a.linear = h * m.q_dim() + 2 * h * m.kv_dim() + m.q_dim() * h;
    a.other = (t.qkv_bias ? m.q_dim() + 2 * m.kv_dim() : 0) + (t.out_bias || t.attn_out_bias ? h : 0);
  }
  if (t.qk_norm == 1) a.other += 2 * m.head_dim;
  if (t.qk_norm == 2) a.other += m.q_dim() + m.kv_dim();
  if (m.attention_sinks) a.other += m.heads;
  return a;
}

int64_t mlp_linear(const ModelSpec& m, int64_t width) { return (m.traits.glu ? 3 : 2) * m.hidden * width; }

ParameterCounts count_from_shape(const ModelSpec& m) {
  const FamilyTraits& t = m.traits;
  ParameterCounts c;
  const int64_t h = m.hidden, f = m.intermediate, L = m.layers;
  c.layers = L;
  c.embedding = m.vocab * h + (t.learned_positions ? m.max_position * h : 0) + m.type_vocab * h +
                (t.bert_heads ? 2 * h : 0);
  c.lm_head = m.tied_embeddings ? 0 : m.vocab * h + (t.lm_head_bias ? m.vocab : 0);
  const AttentionCounts a = attention_counts(m);
  c.attention = L * (a.linear + a.other);
  const int64_t dense = m.dense_layers(), sparse = m.is_moe() ? m.moe_layers : 0;
  const int64_t dense_bias = t.out_bias ? f * (t.glu ? 2 : 1) + h : 0;
  c.dense_mlp = dense * (mlp_linear(m, f) + dense_bias);
  const int64_t ef = m.expert_width();
  const int64_t expert_bias = m.expert_bias ? ef * (t.glu ? 2 : 1) + h : 0;
  c.routed_experts = sparse * m.experts * (mlp_linear(m, ef) + expert_bias);
  c.shared_experts = sparse * m.shared_experts * mlp_linear(m, m.shared_width());
  const int64_t router = h * m.experts + (m.expert_bias ? m.experts : 0) +
                         (m.router_score_bias ? m.experts : 0) + (m.shared_expert_gate ? h : 0);
  c.routers = sparse * router;
  const int64_t norm = t.norm_bias ? 2 * h : h;
  c.norms = L * t.norms_per_layer * norm;
  c.final_norm = t.final_norm ? norm : 0;
  // BERT pre-training: pooler (h*h + h), MLM transform (h*h + h) with LayerNorm (2h), MLM decoder
  // bias (vocab; its weight is tied to the embedding), next-sentence head (2h + 2).
  c.heads = t.bert_heads ? (h * h + h) + (h * h + h + 2 * h) + m.vocab + (2 * h + 2) : 0;
  c.expert_linear = sparse * m.experts * mlp_linear(m, ef);
  c.linear = L * a.linear + dense * mlp_linear(m, f) + c.expert_linear +
             sparse * (m.shared_experts * mlp_linear(m, m.shared_width()) + h * m.experts);
  if (m.mtp_layers > 0) {
    // DeepSeek-V3 section 2.2: each MTP module norms the hidden state and the next token's
    // embedding (2h), projects their concatenation (2h x h), and runs one MoE layer; it shares
    // the embedding and output head with the model and adds its own final norm (h).
    const int64_t moe_layer = a.linear + a.other + t.norms_per_layer * norm +
                              m.experts * (mlp_linear(m, ef) + expert_bias) +
                              m.shared_experts * mlp_linear(m, m.shared_width()) + router;
    c.mtp = m.mtp_layers * (2 * h + 2 * h * h + moe_layer + h);
  }
  return c;
}

}  // namespace

ParameterCounts ModelSpec::parameters() const {
  ParameterCounts c = count_from_shape(*this);
  if (tensor_parameters && c.total() > 0) {
    // The headers are exact; keep the formula's split between terms but match their total.
    const double k = static_cast<double>(*tensor_parameters) / static_cast<double>(c.total());
    if (std::fabs(k - 1.0) > 1e-9) {
      auto scale = [k](int64_t& v) { v = static_cast<int64_t>(std::llround(static_cast<double>(v) * k)); };
      for (int64_t* v : {&c.embedding, &c.lm_head, &c.attention, &c.dense_mlp, &c.routed_experts,
                         &c.shared_experts, &c.routers, &c.norms, &c.final_norm, &c.heads,
                         &c.linear, &c.expert_linear})
        scale(*v);
      c.heads += *tensor_parameters - c.total();  // rounding remainder
    }
  }
  return c;
}

int64_t ModelSpec::active_parameters() const {
  const ParameterCounts c = parameters();
  if (!is_moe()) return c.total();
  const double unused = static_cast<double>(c.routed_experts) * static_cast<double>(experts - experts_per_token) /
                        static_cast<double>(experts);
  return c.total() - static_cast<int64_t>(std::llround(unused));
}

Result<LoraTargets> parse_lora_targets(std::string_view text, const std::string& field) {
  if (text == "all-linear" || text == "all") return LoraTargets{};
  LoraTargets t{false, false, false, false, false, false, false};
  if (text == "attention") {
    t.q = t.k = t.v = t.o = true;
    return t;
  }
  if (text == "mlp") {
    t.gate = t.up = t.down = true;
    return t;
  }
  const std::map<std::string, bool LoraTargets::*, std::less<>> names = {
      {"q", &LoraTargets::q},       {"k", &LoraTargets::k},         {"v", &LoraTargets::v},
      {"o", &LoraTargets::o},       {"gate", &LoraTargets::gate},   {"up", &LoraTargets::up},
      {"down", &LoraTargets::down}, {"q_proj", &LoraTargets::q},    {"k_proj", &LoraTargets::k},
      {"v_proj", &LoraTargets::v},  {"o_proj", &LoraTargets::o},    {"gate_proj", &LoraTargets::gate},
      {"up_proj", &LoraTargets::up}, {"down_proj", &LoraTargets::down}};
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, comma - start);
    auto it = names.find(name);
    if (it == names.end())
      return make_error(field, fmt::format("unknown module '{}' (all-linear, attention, mlp, or a comma list of "
                                                      "q, k, v, o, gate, up, down)", name));
    t.*(it->second) = true;
    start = comma + 1;
  }
  return t;
}

std::string to_string(const LoraTargets& t) {
  if (t.all()) return "all-linear";
  std::string out;
  for (auto [name, on] : {std::pair{"q", t.q}, std::pair{"k", t.k}, std::pair{"v", t.v}, std::pair{"o", t.o},
                          std::pair{"gate", t.gate}, std::pair{"up", t.up}, std::pair{"down", t.down}})
    if (on) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

int64_t ModelSpec::lora_parameters(int64_t rank, const LoraTargets& tg) const {
  // A rank-r adapter on a d_in x d_out matrix adds r * (d_in + d_out) parameters.
  const int64_t h = hidden;
  int64_t attention = 0;
  if (is_mla()) {
    const int64_t qk = qk_nope_dim + qk_rope_dim;
    attention = q_lora_rank > 0 ? rank * ((h + q_lora_rank) + (q_lora_rank + heads * qk)) : rank * (h + heads * qk);
    attention += rank * ((h + kv_lora_rank + qk_rope_dim) + (kv_lora_rank + heads * (qk_nope_dim + v_head_dim)) +
                         (heads * v_head_dim + h));
  } else {
    attention = rank * ((tg.q ? h + q_dim() : 0) + (int64_t{tg.k} + int64_t{tg.v}) * (h + kv_dim()) + (tg.o ? q_dim() + h : 0));
  }
  const int64_t up_side = traits.glu ? int64_t{tg.gate} + int64_t{tg.up} : int64_t{tg.up};
  auto mlp = [&](int64_t f) { return rank * (up_side * (h + f) + (tg.down ? f + h : 0)); };
  const int64_t sparse = is_moe() ? moe_layers : 0;
  return layers * attention + dense_layers() * mlp(intermediate) +
         sparse * (experts * mlp(expert_width()) + shared_experts * mlp(shared_width()));
}

Status ModelSpec::validate() {
  struct Req {
    const char* name;
    int64_t value;
  };
  for (const Req& r : {Req{"layers", layers}, Req{"hidden", hidden},
                       Req{"intermediate", intermediate}, Req{"heads", heads},
                       Req{"vocab", vocab}}) {
    if (r.value <= 0) return make_error(r.name, fmt::format("must be positive (got {})", r.value));
    if (r.value > (int64_t{1} << 24))
      return make_error(r.name, fmt::format("{} is implausibly large", r.value));
  }
  if (kv_heads == 0) kv_heads = heads;
  if (kv_lora_rank > 0 && head_dim == 0) head_dim = qk_nope_dim + qk_rope_dim;
  if (kv_heads < 0 || kv_heads > heads || heads % kv_heads != 0)
    return make_error("kv_heads", fmt::format("must divide heads ({}), got {}", heads, kv_heads));
  if (head_dim == 0) {
    if (hidden % heads != 0)
      return make_error("head_dim", "hidden is not a multiple of heads and no head_dim is given");
    head_dim = hidden / heads;
  }
  if (head_dim < 0 || head_dim > 4096) return make_error("head_dim", fmt::format("{} is implausible", head_dim));
  if (max_position < 0) return make_error("max_position", "must not be negative");
  if (experts < 0 || experts_per_token < 0 || (experts > 0 && (experts_per_token == 0 ||
                                                               experts_per_token > experts)))
    return make_error("experts_per_token", "must be between 1 and the number of experts");
  if (experts > 0 && moe_layers == 0) moe_layers = layers;
  if (moe_layers < 0 || moe_layers > layers)
    return make_error("moe_layers", fmt::format("must be between 1 and the {} layers, got {}", layers, moe_layers));
  for (const Req& r : {Req{"expert_intermediate", expert_intermediate}, Req{"shared_experts", shared_experts},
                       Req{"shared_intermediate", shared_intermediate}, Req{"q_lora_rank", q_lora_rank},
                       Req{"kv_lora_rank", kv_lora_rank}, Req{"qk_rope_head_dim", qk_rope_dim},
                       Req{"qk_nope_head_dim", qk_nope_dim}, Req{"v_head_dim", v_head_dim},
                       Req{"mtp_layers", mtp_layers}}) {
    if (r.value < 0) return make_error(r.name, fmt::format("must not be negative (got {})", r.value));
    if (r.value > (int64_t{1} << 24))
      return make_error(r.name, fmt::format("{} is implausibly large", r.value));
  }
  if (experts > (int64_t{1} << 16)) return make_error("experts", fmt::format("{} experts is implausible", experts));
  if (is_mla() && (qk_rope_dim <= 0 || qk_nope_dim <= 0 || v_head_dim <= 0))
    return make_error("kv_lora_rank", "multi-head latent attention needs qk_rope_head_dim, qk_nope_head_dim and v_head_dim");
  if (sliding_window < 0) return make_error("sliding_window", "must not be negative");
  if (sliding_layers < 0 || sliding_layers > layers)
    return make_error("sliding_layers", "must be between 0 and the number of layers");
  if (type_vocab < 0) return make_error("type_vocab", "must not be negative");
  if (layers > limits::kMaxLayers) return make_error("layers", fmt::format("{} layers is implausible", layers));
  if (experts > limits::kMaxExperts) return make_error("experts", fmt::format("{} experts is implausible", experts));
  // Every count above is bounded, so this estimate of the total cannot overflow; refusing beyond
  // kMaxParameters keeps the exact int64 sums in count_from_shape far from overflowing too.
  const long double h = hidden, widest = std::max({intermediate, expert_intermediate, shared_intermediate});
  const long double per_layer = 4.0L * h * (static_cast<long double>(q_dim()) + kv_dim() + kv_lora_rank + q_lora_rank) +
                                3.0L * h * widest * (1.0L + experts + shared_experts);
  const long double estimate = per_layer * (layers + mtp_layers) + 3.0L * h * (vocab + (traits.learned_positions ? max_position : 0) + type_vocab);
  if (estimate > static_cast<long double>(limits::kMaxParameters))
    return make_error("layers", fmt::format("the shape implies about {:.3g} parameters, beyond any real model",
                                            static_cast<double>(estimate)));
  return std::nullopt;
}

}  // namespace gpuplan
