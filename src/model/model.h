// A transformer's architecture as the estimators need it (layers, widths, heads, GQA, sliding and
// chunked windows, mixture-of-experts with shared experts and dense layers, multi-head latent
// attention), from a preset, a Hugging Face config.json, or tensor headers; and its parameter counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace gpuplan {

// Structural traits shared by every model of a family (llama, gpt2, bert, ...).
struct FamilyTraits {
  bool glu = true;              // gated MLP (SwiGLU/GeGLU): three matrices instead of two
  int norms_per_layer = 2;      // Gemma 2 has four
  bool norm_bias = false;       // LayerNorm (weight and bias) rather than RMSNorm
  bool qkv_bias = false;
  bool out_bias = false;        // biases on the attention output and MLP projections
  bool attn_out_bias = false;   // a bias on the attention output only (gpt-oss, Phi-3.5-MoE)
  bool lm_head_bias = false;    // Phi-3.5-MoE
  int qk_norm = 0;              // q/k norms: 0 none, 1 per head (head_dim each), 2 over q and kv widths
  bool learned_positions = false;
  bool rotary = true;           // rotary position embeddings on q and k (not MPT's ALiBi, not learned)
  bool dropout = false;         // training keeps dropout masks (GPT-2, BERT)
  bool encoder = false;         // bidirectional, no generation, no KV cache
  bool final_norm = true;       // BERT is post-LN and has none
  bool bert_heads = false;      // embedding LayerNorm, pooler, masked-LM and next-sentence heads
  bool tied_default = false;    // tie_word_embeddings when the config does not say
};

// How readers treat an architecture they do not fully understand.
struct ReadOptions {
  // Read an unknown model_type as a dense Llama-style decoder, ignoring mixture-of-experts,
  // latent-attention and hybrid-layer keys; the spec's notes say so.
  bool assume_dense = false;
};

// Traits for a Hugging Face model_type ("llama", "qwen2", "gpt2", ...); nullopt if unknown.
std::optional<FamilyTraits> family_traits(const std::string& family);
// The model_types family_traits knows, sorted.
std::vector<std::string> known_families();

// Which of a block's linear modules carry LoRA adapters (PEFT's target_modules, LitGPT's lora_query
// ..., torchtune's lora_attn_modules and apply_lora_to_mlp). A module the architecture lacks (a
// gate in a plain MLP) carries none.
struct LoraTargets {
  bool q = true, k = true, v = true, o = true, gate = true, up = true, down = true;
  bool all() const { return q && k && v && o && gate && up && down; }
  bool any() const { return q || k || v || o || gate || up || down; }
  bool operator==(const LoraTargets&) const = default;
};
// "all-linear", "attention", "mlp", or a comma list of q, k, v, o, gate, up, down (or their
// Hugging Face names q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj). Errors name
// `field` (the flag, or a file's key).
Result<LoraTargets> parse_lora_targets(std::string_view text, const std::string& field = "--lora-targets");
std::string to_string(const LoraTargets& t);  // "all-linear" or the comma list

// Parameter counts by kind, summed over all layers.
struct ParameterCounts {
  int64_t embedding = 0;       // token (+ position, token-type) embeddings
  int64_t lm_head = 0;         // 0 when tied to the embedding (+ its bias)
  int64_t attention = 0;       // projections, their biases, q/k norms, sinks, MLA's latent norms
  int64_t dense_mlp = 0;       // MLPs of the dense layers (all layers of a dense model)
  int64_t routed_experts = 0;  // every routed expert of every MoE layer
  int64_t shared_experts = 0;  // always-active experts of the MoE layers
  int64_t routers = 0;         // router weights and biases, shared-expert gates
  int64_t norms = 0;           // per-layer norms
  int64_t final_norm = 0;
  int64_t heads = 0;           // BERT pooler and pre-training heads
  int64_t layers = 0;
  int64_t mtp = 0;             // multi-token prediction modules (DeepSeek-V3): not in total()
  // Weights of the linear layers inside the blocks: what QLoRA and weight-only formats quantise;
  // expert_linear is the routed experts' share of it.
  int64_t linear = 0, expert_linear = 0;

  int64_t blocks() const {
    return attention + dense_mlp + routed_experts + shared_experts + routers + norms;
  }
  // The average layer (MoE models mix dense and sparse layers).
  int64_t per_layer() const { return layers > 0 ? blocks() / layers : 0; }
  int64_t total() const { return embedding + lm_head + blocks() + final_norm + heads; }
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
  int64_t sliding_window = 0;                  // tokens; 0 = none
  int64_t sliding_layers = 0;                  // how many layers use the window
  bool chunked_window = false;                 // Llama 4: local attention in fixed chunks, not sliding

  // Mixture of experts: `experts` routed experts in each of `moe_layers` layers, `experts_per_token`
  // chosen per token, plus `shared_experts` every token passes through. The other layers have a
  // dense MLP of width `intermediate`. 0 experts = a dense model.
  int64_t experts = 0, experts_per_token = 0;
  int64_t moe_layers = 0;            // 0 with experts > 0 means every layer (validate() fills it)
  int64_t expert_intermediate = 0;   // one routed expert's width; 0 = intermediate
  int64_t shared_experts = 0;
  int64_t shared_intermediate = 0;   // one shared expert's width; 0 = expert_intermediate
  bool shared_expert_gate = false;   // Qwen2-MoE: a sigmoid gate (hidden -> 1) on the shared expert
  bool expert_bias = false;          // gpt-oss: biases on every expert projection and the router
  bool router_score_bias = false;    // DeepSeek-V3: a per-expert score-correction bias
  bool quant_experts_only = false;   // the checkpoint quantises routed experts only (gpt-oss MXFP4)

  // Multi-head latent attention (DeepSeek-V2/V3): K and V rebuilt from a cached kv_lora_rank
  // latent plus a shared qk_rope_dim key. head_dim is then qk_nope_dim + qk_rope_dim.
  int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_rope_dim = 0, qk_nope_dim = 0, v_head_dim = 0;
  bool attention_sinks = false;      // gpt-oss: one learned logit per head and layer
  int64_t mtp_layers = 0;            // DeepSeek-V3 multi-token prediction modules

  // What the reader assumed or left out, said on every output ("vision tower not counted").
  std::vector<std::string> notes;
  bool assumed_dense = false;        // read with --assume-dense

  // From tensor headers (safetensors / GGUF), when read: exact totals that override the formula.
  std::optional<int64_t> tensor_parameters;
  std::optional<double> tensor_bytes;
  std::string tensor_dtype;  // dominant dtype in the checkpoint, e.g. "BF16"

  // Published total and active counts (presets only), used by tests of the counter. Publishers
  // differ on whether "active" counts the input embedding (OpenAI's gpt-oss card does not).
  std::optional<int64_t> published_parameters, published_active_parameters;
  bool active_excludes_input_embedding = false;
  bool published_active_truncated = false;  // the publisher cut digits rather than rounding
  std::string published_scope;  // non-empty when the published total covers more (a vision tower)
  std::string parameters_source;

  int64_t q_dim() const { return heads * head_dim; }
  int64_t kv_dim() const { return kv_heads * head_dim; }
  bool is_moe() const { return experts > 0; }
  bool is_mla() const { return kv_lora_rank > 0; }
  int64_t expert_width() const { return expert_intermediate > 0 ? expert_intermediate : intermediate; }
  int64_t shared_width() const { return shared_intermediate > 0 ? shared_intermediate : expert_width(); }
  int64_t dense_layers() const { return layers - (is_moe() ? moe_layers : 0); }
  // Elements of K and V one token keeps in one layer's cache: 2 x kv_dim, or MLA's latent.
  int64_t kv_cache_elements_per_layer() const {
    return is_mla() ? kv_lora_rank + qk_rope_dim : 2 * kv_dim();
  }

  // Counts from the architecture; scaled to tensor_parameters when the headers were read.
  ParameterCounts parameters() const;
  int64_t total_parameters() const { return parameters().total(); }
  // Parameters a token passes through: everything but the routed experts it is not sent to (the
  // input embedding counted, as Mistral, Qwen and DeepSeek count it).
  int64_t active_parameters() const;
  // MTP modules' own parameters (embedding and head shared with the model).
  int64_t mtp_parameters() const { return parameters().mtp; }
  // LoRA adapter parameters at `rank` on the `targets` linear modules of every block.
  int64_t lora_parameters(int64_t rank, const LoraTargets& targets = {}) const;

  // Checks the shape is complete and self-consistent; fills head_dim and kv_heads defaults.
  Status validate();
};

}  // namespace gpuplan
