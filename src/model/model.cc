#include "model/model.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace gpuplan {

std::optional<FamilyTraits> family_traits(const std::string& family) {
  FamilyTraits llama;  // RMSNorm, SwiGLU, no biases, RoPE: Llama, Mistral, Mixtral
  FamilyTraits qwen2 = llama;
  qwen2.qkv_bias = true;
  FamilyTraits gemma2 = llama;
  gemma2.norms_per_layer = 4;
  gemma2.tied_default = true;
  FamilyTraits gpt2;
  gpt2.glu = false;
  gpt2.norm_bias = true;
  gpt2.qkv_bias = true;
  gpt2.out_bias = true;
  gpt2.learned_positions = true;
  gpt2.dropout = true;
  gpt2.tied_default = true;
  // MPT: GELU MLP, LayerNorm without bias, no biases anywhere, ALiBi instead of learned positions.
  FamilyTraits mpt;
  mpt.glu = false;
  mpt.tied_default = true;
  FamilyTraits bert = gpt2;
  bert.encoder = true;
  bert.final_norm = false;
  bert.bert_heads = true;
  static const std::map<std::string, FamilyTraits> table = {
      {"llama", llama},      {"mistral", llama}, {"mixtral", llama}, {"qwen2", qwen2},
      {"qwen2_moe", qwen2},  {"gemma", gemma2},  {"gemma2", gemma2}, {"gemma3", gemma2},
      {"gemma3_text", gemma2}, {"gpt2", gpt2},   {"gpt_bigcode", gpt2}, {"bert", bert},
      {"phi3", llama},       {"qwen3", llama},   {"olmo2", llama},   {"mpt", mpt},
  };
  if (family == "gemma") {
    FamilyTraits g = llama;  // Gemma 1: two norms per layer, tied
    g.tied_default = true;
    return g;
  }
  auto it = table.find(family);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

namespace {

ParameterCounts count_from_shape(const ModelSpec& m) {
  const FamilyTraits& t = m.traits;
  ParameterCounts c;
  const int64_t h = m.hidden, f = m.intermediate;
  c.layers = m.layers;
  c.embedding = m.vocab * h + (t.learned_positions ? m.max_position * h : 0) + m.type_vocab * h +
                (t.bert_heads ? 2 * h : 0);
  c.lm_head = m.tied_embeddings ? 0 : m.vocab * h;
  const int64_t attn_linear = h * m.q_dim() + 2 * h * m.kv_dim() + m.q_dim() * h;
  c.per_layer_attention = attn_linear + (t.qkv_bias ? m.q_dim() + 2 * m.kv_dim() : 0) +
                          (t.out_bias ? h : 0);
  const int64_t mlp_linear = (t.glu ? 3 : 2) * h * f;
  const int64_t mlp_bias = t.out_bias ? f * (t.glu ? 2 : 1) + h : 0;
  const int64_t experts = m.is_moe() ? m.experts : 1;
  c.per_layer_mlp = experts * (mlp_linear + mlp_bias);
  c.per_layer_router = m.is_moe() ? h * m.experts : 0;
  const int64_t norm = t.norm_bias ? 2 * h : h;
  c.per_layer_norms = t.norms_per_layer * norm;
  c.final_norm = t.final_norm ? norm : 0;
  // BERT pre-training: pooler (h*h + h), MLM transform (h*h + h) with LayerNorm (2h), MLM decoder
  // bias (vocab; its weight is tied to the embedding), next-sentence head (2h + 2).
  c.heads = t.bert_heads ? (h * h + h) + (h * h + h + 2 * h) + m.vocab + (2 * h + 2) : 0;
  c.linear = m.layers * (attn_linear + experts * mlp_linear + c.per_layer_router);
  return c;
}

}  // namespace

ParameterCounts ModelSpec::parameters() const {
  ParameterCounts c = count_from_shape(*this);
  if (tensor_parameters && c.total() > 0) {
    // The headers are exact; keep the formula's split between terms but match their total.
    const double k = static_cast<double>(*tensor_parameters) / static_cast<double>(c.total());
    if (std::fabs(k - 1.0) > 1e-9) {
      auto scale = [k](int64_t& v) { v = static_cast<int64_t>(std::llround(v * k)); };
      scale(c.embedding), scale(c.lm_head), scale(c.per_layer_attention), scale(c.per_layer_mlp),
          scale(c.per_layer_norms), scale(c.per_layer_router), scale(c.final_norm),
          scale(c.heads), scale(c.linear);
      c.heads += *tensor_parameters - c.total();  // rounding remainder
    }
  }
  return c;
}

int64_t ModelSpec::active_parameters() const {
  const ParameterCounts c = parameters();
  if (!is_moe()) return c.total();
  const int64_t per_expert = c.per_layer_mlp / experts;
  return c.total() - layers * per_expert * (experts - experts_per_token);
}

int64_t ModelSpec::lora_parameters(int64_t rank) const {
  // A rank-r adapter on a d_in x d_out matrix adds r * (d_in + d_out) parameters.
  const int64_t h = hidden, f = intermediate;
  int64_t per_layer = rank * ((h + q_dim()) + 2 * (h + kv_dim()) + (q_dim() + h));
  const int64_t mlp = rank * ((traits.glu ? 2 : 1) * (h + f) + (f + h));
  per_layer += (is_moe() ? experts : 1) * mlp;
  return layers * per_layer;
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
  if (sliding_window < 0) return make_error("sliding_window", "must not be negative");
  if (sliding_layers < 0 || sliding_layers > layers)
    return make_error("sliding_layers", "must be between 0 and the number of layers");
  if (type_vocab < 0) return make_error("type_vocab", "must not be negative");
  return std::nullopt;
}

}  // namespace gpuplan
