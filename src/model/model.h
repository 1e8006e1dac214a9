// A transformer's architecture as the estimators need it (layers, widths, heads, GQA, MoE, sliding
// windows), from a preset, a Hugging Face config.json, or tensor headers; and its parameter counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "util/status.h"

namespace gpuplan {

// Structural traits shared by every model of a family (llama, gpt2, bert, ...).
struct FamilyTraits {
  bool glu = true;              // gated MLP (SwiGLU/GeGLU): three matrices instead of two
  int norms_per_layer = 2;      // Gemma 2 has four
  bool norm_bias = false;       // LayerNorm (weight and bias) rather than RMSNorm
  bool qkv_bias = false;
  bool out_bias = false;        // biases on the attention output and MLP projections
  bool learned_positions = false;
  bool dropout = false;         // training keeps dropout masks (GPT-2, BERT)
  bool encoder = false;         // bidirectional, no generation, no KV cache
  bool final_norm = true;       // BERT is post-LN and has none
  bool bert_heads = false;      // embedding LayerNorm, pooler, masked-LM and next-sentence heads
  bool tied_default = false;    // tie_word_embeddings when the config does not say
};

// Traits for a Hugging Face model_type ("llama", "qwen2", "gpt2", ...); nullopt if unknown.
std::optional<FamilyTraits> family_traits(const std::string& family);

struct ParameterCounts {
  int64_t embedding = 0;        // token (+ position, token-type) embeddings
  int64_t lm_head = 0;          // 0 when tied to the embedding
  int64_t per_layer_attention = 0;
  int64_t per_layer_mlp = 0;    // all experts
  int64_t per_layer_norms = 0;
  int64_t per_layer_router = 0;
  int64_t final_norm = 0;
  int64_t heads = 0;            // BERT pooler and pre-training heads
  int64_t layers = 0;

  int64_t per_layer() const {
    return per_layer_attention + per_layer_mlp + per_layer_norms + per_layer_router;
  }
  int64_t total() const {
    return embedding + lm_head + layers * per_layer() + final_norm + heads;
  }
  // Weights of the linear layers inside the blocks: what QLoRA and weight-only formats quantise.
  int64_t linear = 0;
};

struct ModelSpec {
  std::string id;       // preset id or the path it was read from
  std::string name;
  std::string family;   // model_type
  std::string source;   // where the shape comes from
  FamilyTraits traits;

  int64_t layers = 0, hidden = 0, intermediate = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t vocab = 0, max_position = 0, type_vocab = 0;
  bool tied_embeddings = false;
  int64_t experts = 0, experts_per_token = 0;  // 0 experts = dense
  int64_t sliding_window = 0;                  // tokens; 0 = none
  int64_t sliding_layers = 0;                  // how many layers use the window

  // From tensor headers (safetensors / GGUF), when read: exact totals that override the formula.
  std::optional<int64_t> tensor_parameters;
  std::optional<double> tensor_bytes;
  std::string tensor_dtype;  // dominant dtype in the checkpoint, e.g. "BF16"

  // Published total (presets only), used by tests of the counter.
  std::optional<int64_t> published_parameters;
  std::string parameters_source;

  int64_t q_dim() const { return heads * head_dim; }
  int64_t kv_dim() const { return kv_heads * head_dim; }
  bool is_moe() const { return experts > 0; }

  // Counts from the architecture; scaled to tensor_parameters when the headers were read.
  ParameterCounts parameters() const;
  int64_t total_parameters() const { return parameters().total(); }
  // Parameters touched per token (MoE: only top-k experts).
  int64_t active_parameters() const;
  // LoRA adapter parameters at `rank` on every linear layer of every block.
  int64_t lora_parameters(int64_t rank) const;

  // Checks the shape is complete and self-consistent; fills head_dim and kv_heads defaults.
  Status validate();
};

}  // namespace gpuplan
