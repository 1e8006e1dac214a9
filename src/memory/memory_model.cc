#include "memory/memory_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/units.h"

namespace gpuplan {

namespace {

double kv_heads_per_gpu(const ModelSpec& m, double tp) {
  return std::max<double>(1, std::floor(static_cast<double>(m.kv_heads) / tp));
}

double ceil_div(double a, double b) { return std::ceil(a / b); }

// Bytes saved for backward by one transformer layer, per GPU (Korthikanti et al. 2022, "Reducing
// Activation Recomputation in Large Transformer Models", section 4, generalised to GQA, GLU MLPs,
// MoE and dropout-free models). Their dense GPT layer comes out as sbh(34 + 5as/h) with 16-bit
// activations, sbh(10 + 24/t + 5as/(ht)) under tensor parallelism, and 34sbh/t with sequence
// parallelism and selective recompute.
// Elements per token an MoE layer saves beyond its input: each routed copy of the token (top-k of
// them, times the capacity factor or the busiest rank's load imbalance) with its expert's
// intermediate tensors, the shared experts', and the router logits (Korthikanti's MLP terms per
// expert, as llm-analysis counts them for MoE).
double moe_layer_activations(const ModelSpec& m, const Workload& w, const Efficiency& eff) {
  const ExpertLayout xl = expert_layout(w.par);
  const double per_glu = m.traits.glu ? 4.0 : 2.0;
  const double load = eff.moe_load(w.moe_capacity_factor);
  const double routed = m.experts_per_token * load * (per_glu * m.expert_width() + m.hidden) / xl.etp;
  const double shared = m.shared_experts * per_glu * m.shared_width() / w.par.tp;
  return routed + shared + static_cast<double>(m.experts) / w.par.tp;
}

// Routed experts' weights: spread over the expert-parallel layout rather than only the TP group,
// stored in the weight format (a checkpoint that quantises only its experts, as gpt-oss's MXFP4
// does, keeps the other linears in 16-bit), and sharded by ZeRO over the experts' own replicas.
struct ExpertWeights {
  double layer_params = 0;          // routed-expert parameters in the average layer
  double layer_params_per_gpu = 0;  // of those, on one GPU
  double bytes = 0;                 // per expert parameter
  double dense_linear_bytes = 0;    // per parameter of the other block linears
  double zero_replicas = 1;         // the data-parallel group ZeRO shards the experts over
};

ExpertWeights expert_weights(const ModelSpec& m, const ParameterCounts& pc, const Workload& w, double lb, double ob) {
  ExpertWeights x;
  const ExpertLayout xl = expert_layout(w.par);
  x.layer_params = static_cast<double>(pc.routed_experts) / m.layers;
  x.layer_params_per_gpu = x.layer_params / static_cast<double>(xl.shards());
  x.bytes = lb;
  x.dense_linear_bytes = m.quant_experts_only && is_weight_only(w.precision) && !is_gguf_mix(w.precision) ? ob : lb;
  x.zero_replicas = static_cast<double>(xl.replicas);
  return x;
}

struct LayerActivations {
  double stored;  // kept from forward to backward
  double core;    // attention scores (softmax, dropout): the part selective recompute drops
};

LayerActivations layer_activations(const ModelSpec& m, const Workload& w, bool flash, const Efficiency& eff) {
  const double t = static_cast<double>(w.par.tp);
  const bool sp = w.par.sequence_parallel && w.par.tp > 1;
  const double rep = sp ? 1.0 / t : 1.0;  // tensors replicated across TP ranks unless SP splits them
  const double B = bytes_per_value(w.activation_precision());
  // Context parallelism splits each sequence over cp GPUs.
  const double tokens = static_cast<double>(w.seq) * static_cast<double>(w.micro_batch) / static_cast<double>(w.par.cp);
  const double h = m.hidden, qd = m.q_dim(), kvd = m.kv_dim(), f = m.intermediate;
  // Elements per token.
  double attn = h * rep                 // norm input
                + h * rep               // QKV projection input
                + (qd + kvd) / t        // Q and K for QK^T
                + kvd / t               // V
                + qd / t;               // output projection input
  if (m.is_mla()) attn += (m.q_lora_rank + m.kv_lora_rank + m.qk_rope_dim) / t;  // the latents, saved
  const double mlp_per_expert = (m.traits.glu ? 4.0 : 2.0) * f / t;  // GLU: gate, act, up, product
  double mlp = h * rep + h * rep;  // norm input, first projection input
  // MoE layers average in with the dense ones (DeepSeek's first layers, Llama 4's interleaving).
  const double sparse = m.is_moe() ? static_cast<double>(m.moe_layers) / m.layers : 0.0;
  mlp += (1 - sparse) * mlp_per_expert + sparse * moe_layer_activations(m, w, eff);
  const double extra_norms = (m.traits.norms_per_layer - 2) * h * rep;
  // QLoRA through bitsandbytes keeps, beyond what a 16-bit LoRA run keeps, the input of every 4-bit
  // linear: MatMul4Bit stores A for backward whenever it needs a gradient (bitsandbytes
  // autograd/_functions.py: "if any(ctx.needs_input_grad[:2]): ctx.tensors = (A, B)"), where
  // PyTorch saves a frozen 16-bit linear's input only for its weight gradient, which it does not
  // compute (torchgen gen_variable_type.py guard_for). The adapters keep their own inputs after
  // dropout, so nothing is shared: the attention input, the output projection's (a fresh copy once
  // the heads are transposed back), the MLP input and the down projection's.
  double kept_inputs = 0;
  if (w.task == Task::qlora && w.quantized_base_keeps_input) {
    const ExpertLayout xl = expert_layout(w.par);
    const double moe_down = m.is_moe() ? (m.experts_per_token * eff.moe_load(w.moe_capacity_factor) * m.expert_width() / xl.etp +
                                          m.shared_experts * m.shared_width() / t) : 0.0;
    kept_inputs = h * rep + qd / t + h * rep + (1 - sparse) * f / t + sparse * moe_down;
  }
  double bytes = (attn + mlp + extra_norms + kept_inputs) * B;
  if (m.traits.dropout) bytes += 2 * h * rep;  // two 1-byte dropout masks
  double core = 0;
  const double heads = m.heads / t;
  if (flash) {
    bytes += heads * 4.0;  // log-sum-exp per head, fp32
  } else {
    // Softmax output; with dropout also its mask (1 byte) and output: a*s per token.
    const double per = m.traits.dropout ? 2 * B + 1 : B;
    core = heads * static_cast<double>(w.seq) * per;
  }
  return {bytes * tokens, core * tokens};
}

// Per-op selective checkpointing as torchtitan's "op" policy does it (torchtitan
// activation_checkpoint.py: SDPA outputs saved, every other matmul output saved, norms,
// activations and the other matmuls recomputed). With the layer input kept as the checkpoint
// boundary, a dense block keeps: input h, saved Q and V projections, the attention output, the
// MLP up (w1) output and the block output h, per token.
double op_checkpoint_bytes(const ModelSpec& m, const Workload& w) {
  const double t = static_cast<double>(w.par.tp);
  const bool sp = w.par.sequence_parallel && w.par.tp > 1;
  const double rep = sp ? 1.0 / t : 1.0;
  const double B = bytes_per_value(w.activation_precision());
  const double tokens = static_cast<double>(w.seq) * static_cast<double>(w.micro_batch) / static_cast<double>(w.par.cp);
  const double f = m.is_moe() ? m.experts_per_token * m.intermediate : m.intermediate;
  const double per_token = 2 * m.hidden * rep + (2.0 * m.q_dim() + m.kv_dim()) / t + f / t;
  return per_token * B * tokens + tokens * (m.heads / t) * 4.0;  // + fp32 log-sum-exp
}

// The widest MLP a token passes through: a dense layer's, or an MoE layer's top-k experts' plus its
// shared experts'.
double widest_mlp(const ModelSpec& m) {
  const double moe_width = m.is_moe() ? static_cast<double>(m.experts_per_token * m.expert_width() +
                                                            m.shared_experts * m.shared_width()) : 0.0;
  return std::max(m.dense_layers() > 0 ? static_cast<double>(m.intermediate) : 0.0, moe_width);
}

// The activation gradients alive at once in a layer's backward. The MLP's are the most: the
// gradient of the down projection's input, then (a gated MLP) the gradients of the gate and up
// outputs computed from it before it is freed, three tensors of the MLP's width (two without a
// gate); beside them the residual stream's gradient in and out. Without a fused attention kernel
// the attention backward holds the gradients of the probabilities and the scores, a s x s each.
double backward_gradient_bytes(const ModelSpec& m, const Workload& w, double tokens) {
  const double t = static_cast<double>(w.par.tp);
  const double rep = w.par.sequence_parallel && w.par.tp > 1 ? 1.0 / t : 1.0;
  const double B = bytes_per_value(w.activation_precision());
  const double width = widest_mlp(m);
  const double residual = 2 * m.hidden * rep * B * tokens;
  const double mlp = (m.traits.glu ? 3.0 : 2.0) * width / t * B * tokens;
  const double attention =
      w.flash_attention ? 0 : 2 * (m.heads / t) * static_cast<double>(w.seq) * B * tokens;
  return residual + std::max(mlp, attention);
}

// The logits and cross-entropy tensors per GPU. standard: eager cross-entropy on the upcast logits
// (Hugging Face causal LMs and torchtitan upcast before the loss). Forward holds the 16-bit logits,
// their fp32 upcast and the fp32 log-softmax (B + 8 bytes a value); backward starts with the saved
// log-softmax, nll_loss's dense fp32 gradient and log_softmax_backward's fp32 output, all alive
// together (12 bytes). chunked: the 16-bit logits whole, the fp32 work one chunk at a time
// (torchtune's CEWithChunkedOutputLoss, 8 chunks). fused: the projection and loss run chunk by
// chunk and the logits never exist whole; Liger's fused linear cross-entropy sizes a chunk at about
// tokens / ceil(vocab / hidden) rows (liger_kernel/ops/fused_linear_cross_entropy.py), so a
// chunk's logits are about tokens x hidden values, in 16-bit and fp32. The chunks write the
// gradient of the hidden states as they go (Liger's grad_input, torchtitan's ChunkedLossWrapper
// accumulator), held from the loss to the backward: tokens x hidden x B. A run that names its
// chunk in tokens (--loss-chunk-tokens) holds that many tokens' logits at a time. compiled: the
// upcast and cross-entropy compiled as one graph (torchtitan compiles its loss with the model,
// "so that forward and backward casts can be fused with the loss forward and backward", PR #642):
// the fp32 values live only inside the fused kernels, leaving the 16-bit logits and their 16-bit
// gradient (2 x B).
constexpr double kLossChunks = 8;
double logits_bytes(const ModelSpec& m, const Workload& w, double tokens, double B) {
  const double t = static_cast<double>(w.par.tp), v = static_cast<double>(m.vocab) / t;
  const double chunk = w.loss_chunk_tokens > 0 ? std::min(tokens, static_cast<double>(w.loss_chunk_tokens)) : 0;
  switch (w.loss) {
    case Loss::standard: return tokens * v * std::max(B + 8, 12.0);
    case Loss::compiled: return tokens * v * 2 * B;
    case Loss::chunked: return tokens * v * B + (chunk > 0 ? chunk * v * 8 : tokens * v * 8 / kLossChunks);
    case Loss::fused:
      return (chunk > 0 ? chunk * v : tokens * std::min<double>(v, static_cast<double>(m.hidden))) * (B + 8) +
             tokens * static_cast<double>(m.hidden) * B;
  }
  return 0;
}
std::string loss_formula(const ModelSpec& m, const Workload& w, double B) {
  const int64_t c = w.loss_chunk_tokens;
  switch (w.loss) {
    case Loss::standard:
      return B + 8 > 12 ? fmt::format("s x b x vocab {} x ({} + 4 + 4) B (standard loss)", m.vocab, B)
                        : fmt::format("s x b x vocab {} x (4 + 4 + 4) B (standard loss: log-softmax and two fp32 gradients)", m.vocab);
    case Loss::compiled: return fmt::format("s x b x vocab {} x ({} + {}) B (compiled loss: the logits and their gradient)", m.vocab, B, B);
    case Loss::chunked:
      return c > 0 ? fmt::format("s x b x vocab {} x {} B + {} tokens x vocab x 8 B (chunked loss)", m.vocab, B, c)
                   : fmt::format("s x b x vocab {} x ({} + 8/{:.0f}) B (chunked loss)", m.vocab, B, kLossChunks);
    case Loss::fused:
      return c > 0 ? fmt::format("{} tokens x vocab {} x ({} + 8) B + s x b x hidden x {} B (fused loss: a chunk of logits and the hidden gradient)", c, m.vocab, B, B)
                   : fmt::format("s x b x hidden {} x ({} + 8 + {}) B (fused loss: one chunk of logits and the hidden gradient)", m.hidden, B, B);
  }
  return "";
}

}  // namespace

MemoryEstimate estimate_memory(const ModelSpec& m, const Workload& w, const Efficiency& eff) {
  MemoryEstimate e;
  const ParameterCounts pc = m.parameters();
  e.parameters = pc.total();
  // ZeRO/FSDP shard over the data-parallel and context-parallel ranks together (torchtitan's
  // dp_shard x cp mesh), or over the shard group of hybrid sharding.
  const double t = static_cast<double>(w.par.tp), pp = static_cast<double>(w.par.pp),
               dp = static_cast<double>(w.par.shard_ranks());
  const double L = static_cast<double>(m.layers);
  const double stage_layers = ceil_div(L, pp);
  auto add = [&](const char* group, std::string name, double bytes, std::string formula) {
    if (bytes <= 0) return;
    e.terms.push_back({group, std::move(name), bytes, std::move(formula)});
  };

  // ---- Weights -------------------------------------------------------------------------------
  // Quantised formats cover the block linears; embeddings, norms and the LM head stay 16-bit
  // (bitsandbytes, GPTQ/AWQ and QLoRA all keep them so).
  Precision linear_p = w.precision, other_p = w.precision;
  if (w.task == Task::qlora) linear_p = Precision::nf4, other_p = Precision::bf16;
  if (w.precision == Precision::tf32) linear_p = other_p = Precision::fp32;
  if (w.precision == Precision::fp8 && w.training()) linear_p = other_p = Precision::bf16;  // fp8 casts on the fly
  if (w.task == Task::infer && bytes_per_value(w.precision) < 2 && !is_gguf_mix(w.precision)) other_p = Precision::bf16;
  const double lb = w.task == Task::qlora ? w.qlora_weight_bytes() : bytes_per_value(linear_p), ob = bytes_per_value(other_p);
  const ExpertWeights xw = expert_weights(m, pc, w, lb, ob);
  const double layer_linear = static_cast<double>(pc.linear - pc.expert_linear) / L;
  const double layer_other = static_cast<double>(pc.per_layer()) - layer_linear - xw.layer_params;
  // Under attention data parallelism every GPU holds the attention, norms, routers, embeddings and
  // LM head whole, and the dense MLPs whole unless the engine keeps them split.
  const double t_rest = w.par.attention_dp ? 1.0 : t;
  const double t_dense = w.par.attention_dp && !w.par.attention_dp_dense_tp ? 1.0 : t;
  const double dense_linear = std::clamp(static_cast<double>(pc.dense_mlp + pc.shared_experts) / L, 0.0, layer_linear);
  const double rest_linear = layer_linear - dense_linear;
  const double layer_bytes = (rest_linear * xw.dense_linear_bytes + layer_other * ob) / t_rest +
                             dense_linear * xw.dense_linear_bytes / t_dense + xw.layer_params_per_gpu * xw.bytes;
  const double layer_params = (rest_linear + layer_other) / t_rest + dense_linear / t_dense + xw.layer_params_per_gpu;
  const double emb_params = static_cast<double>(pc.embedding) / t_rest;
  // With pipeline stages a tied LM head is a second copy on the last stage (Megatron does so). A
  // stack whose QLoRA quantises the LM head too holds it apart from the 16-bit embedding, in 4 bits.
  const bool quantized_head = w.task == Task::qlora && w.qlora_quantizes_lm_head;
  const double head_params =
      static_cast<double>(pc.lm_head > 0 ? pc.lm_head : (w.par.pp > 1 || quantized_head ? pc.embedding : 0)) / t_rest;
  const double head_b = quantized_head ? lb : ob;
  const double tail_params = static_cast<double>(pc.final_norm + pc.heads) / t_rest;
  // The most loaded pipeline stage: the first (embedding) or the last (LM head).
  const double first_params = stage_layers * layer_params + emb_params + (w.par.pp == 1 ? head_params + tail_params : 0);
  const double last_params = stage_layers * layer_params + (w.par.pp == 1 ? emb_params : 0) + head_params + tail_params;
  const double gpu_params = std::max(first_params, last_params);
  const bool first_is_max = first_params >= last_params;
  const double gpu_weight_bytes = stage_layers * layer_bytes +
      (first_is_max || w.par.pp == 1 ? emb_params * ob : 0) +
      (!first_is_max || w.par.pp == 1 ? head_params * head_b + tail_params * ob : 0);
  std::string split = w.par.tp > 1 || w.par.pp > 1
      ? fmt::format(" on the busiest of {} pipeline stages, / tp {}", w.par.pp, w.par.tp) : "";
  const bool shard_params = w.par.zero >= 3 && w.par.shard_ranks() > 1;
  // ZeRO shards routed experts over their own replicas (the expert data-parallel group), the rest over dp.
  const double stage_expert = stage_layers * xw.layer_params_per_gpu;
  auto zero_share = [&](double all, double experts) { return (all - experts) / dp + experts / xw.zero_replicas; };
  if (shard_params) {
    add("weights", "parameters (ZeRO-3/FSDP shard)", zero_share(gpu_weight_bytes, stage_expert * xw.bytes),
        fmt::format("{} params x {:.3g} B{} / dp {}", format_count(gpu_params), gpu_weight_bytes / gpu_params, split, w.par.shard_ranks()));
    // The layer being computed and the one prefetched are gathered in full (FSDP prefetch);
    // without resharding after forward every layer of the stage stays gathered until backward.
    e.fsdp_working_set = (w.par.reshard_after_forward ? 2 : stage_layers) * layer_bytes;
    add("weights", "gathered layers (FSDP working set)", e.fsdp_working_set,
        w.par.reshard_after_forward ? "2 unsharded layers: current + prefetched"
                                    : "every layer of the stage unsharded (no reshard after forward)");
  } else {
    add("weights", "parameters", gpu_weight_bytes,
        fmt::format("{} params; linears {} ({:.3g} B), rest {}{}", format_count(gpu_params),
                    to_string(linear_p), lb, to_string(other_p), split));
  }

  // ---- Gradients and optimizer states ----------------------------------------------------------
  const bool peft = w.task == Task::lora || w.task == Task::qlora;
  const double zero_dp = dp;
  if (w.training()) {
    double trainable = 0, grad_b = 0, master_b = 0;
    if (peft) {
      // Adapters are kept and updated in fp32 (PEFT's default), so no separate master copy.
      trainable = static_cast<double>(m.lora_parameters(w.lora_rank, w.lora_targets)) / L * stage_layers / t;
      grad_b = 4;
      const std::string where = fmt::format("rank {} on {}", w.lora_rank, w.lora_targets.all() ? "every linear" : to_string(w.lora_targets));
      if (shard_params) add("weights", "LoRA adapters (fp32, ZeRO-3/FSDP shard)", trainable * 4 / dp, where);
      else add("weights", "LoRA adapters (fp32)", trainable * 4, where);
    } else {
      trainable = gpu_params;
      const bool mixed = bytes_per_value(other_p) < 4;
      // ZeRO accounting: 16-bit gradients in mixed precision, unless the stack keeps bf16's in fp32.
      grad_b = mixed && !w.gradients_in_fp32_buffers() ? 2 : 4;
      master_b = mixed && w.fp32_master_weights ? 4 : 0;
    }
    e.trainable_parameters = static_cast<int64_t>(peft ? m.lora_parameters(w.lora_rank, w.lora_targets) : pc.total());
    const double grad_div = w.par.zero >= 2 ? zero_dp : 1;
    const double expert_trainable = peft ? 0 : stage_expert;
    if (shard_params && w.par.defer_grad_reduce && !peft && !w.optimizer_in_backward) {
      // Reduce-scatter waits for the last micro-batch: the stage's gradients stay whole, in fp32.
      add("gradients", "gradients (unsharded until the last micro-batch)", trainable * 4,
          fmt::format("{} trainable x 4 B (FSDP's fp32 reduce dtype; reduced once per step under pipeline stages)",
                      format_count(trainable)));
    } else if (const bool no_sync = shard_params && w.accumulation_defers_grad_reduce && w.grad_accum > 1,
               frozen = shard_params && w.task == Task::lora && w.frozen_weights_get_grads;
               (no_sync || frozen) && !w.optimizer_in_backward) {
      // FSDP1 under Lightning Fabric: a wrapped layer's flat parameter mixing frozen and trainable
      // weights gets gradients for all of them (PyTorch's FSDP docs: "equivalent to not freezing
      // those parameters"), and no_sync() keeps them unsharded until the syncing micro-batch
      // ("FSDP will accumulate the full model gradients (instead of gradient shards)").
      const double params = frozen ? stage_layers * layer_params : trainable;
      const double b = frozen ? ob : grad_b;
      add("gradients", no_sync ? "gradients (unsharded until the last micro-batch)" : "gradients (frozen weights too)",
          (no_sync ? params : params / dp) * b,
          fmt::format("{} {} x {} B{}", format_count(params), frozen ? "wrapped-layer weights, frozen included," : "trainable", b,
                      no_sync ? " (FSDP1 no_sync over the accumulation steps)" : fmt::format(" / {} ranks", w.par.shard_ranks())));
    } else if (w.optimizer_in_backward) {
      const double layer = trainable / std::max(1.0, stage_layers);
      add("gradients", "gradients of the layer in flight", layer * grad_b,
          fmt::format("{} trainable per layer x {} B (the optimizer steps in backward)", format_count(layer), grad_b));
    } else {
      add("gradients", "gradients", (grad_div > 1 ? zero_share(trainable, expert_trainable) : trainable) * grad_b,
          fmt::format("{} trainable x {} B{}{}", format_count(trainable), grad_b,
                      grad_div > 1 ? fmt::format(" / {} ranks (ZeRO-2+)", w.par.shard_ranks()) : "",
                      !peft && w.gradients_in_fp32_buffers() ? " (the stack accumulates bf16 gradients in fp32)" : ""));
    }
    double state_b = 0;
    std::string state_name;
    bool like_weights = false;  // torch creates these states like the parameter (zeros_like(p))
    switch (w.optimizer) {
      case Optimizer::adamw: state_b = 8, state_name = "AdamW m and v", like_weights = true; break;
      case Optimizer::adamw8bit: state_b = 2, state_name = "8-bit AdamW m and v (blockwise int8)"; break;
      case Optimizer::sgd: state_b = 4, state_name = "SGD momentum", like_weights = true; break;
      // Hugging Face's performance guide: Adafactor "uses slightly more than 4 bytes" per parameter.
      case Optimizer::adafactor: state_b = 4, state_name = "Adafactor factored moments"; break;
      case Optimizer::lion: state_b = 4, state_name = "Lion momentum", like_weights = true; break;
    }
    // With no fp32 master copy the optimizer steps the 16-bit weights themselves, so states made
    // like the parameter are 16-bit too.
    if (like_weights) {
      const bool states16 = !peft && bytes_per_value(other_p) < 4 && !w.fp32_master_weights;
      if (states16) state_b /= 2;
      state_name += states16 ? " (16-bit, like the weights)" : " (fp32)";
    }
    const double opt_div = w.par.zero >= 1 ? zero_dp : 1;
    const double opt_params = opt_div > 1 ? zero_share(trainable, expert_trainable) : trainable;
    const double opt_bytes = opt_params * (state_b + master_b);
    const std::string why = fmt::format("{} trainable x ({} B states + {} B fp32 master){}",
                                        format_count(trainable), state_b, master_b,
                                        opt_div > 1 ? fmt::format(" / {} ranks (ZeRO-1+)", w.par.shard_ranks()) : "");
    if (w.offload_optimizer) {
      e.cpu_offload = opt_bytes;
      e.terms.push_back({"optimizer", state_name + " (offloaded to CPU)", 0, why});
    } else if (w.paged_optimizer) {
      // Unified memory: resident on the card while it has room, paged to host memory when not;
      // outside PyTorch's allocator, so host memory must hold them in the worst case.
      e.cpu_offload = opt_params * state_b;
      e.terms.push_back({"optimizer", state_name + " (paged: host memory when the card is full)", 0, why});
      add("optimizer", "fp32 master weights", opt_params * master_b, "mixed precision keeps an fp32 copy");
    } else {
      add("optimizer", state_name, opt_params * state_b, why);
      add("optimizer", "fp32 master weights", opt_params * master_b, "mixed precision keeps an fp32 copy");
    }
  }

  // ---- Activations -----------------------------------------------------------------------------
  const double B = bytes_per_value(w.activation_precision());
  const double tokens = static_cast<double>(w.seq) * static_cast<double>(w.micro_batch) /
                        static_cast<double>(w.training() ? w.par.cp : 1);
  if (w.training()) {
    // The fitted activation scale (data/fitted.toml) multiplies every saved tensor below.
    const double act_scale = eff.fit.activation_scale;
    auto add_act = [&](std::string name, double bytes, std::string formula) {
      add("activations", std::move(name), bytes * act_scale,
          act_scale == 1 ? std::move(formula) : fmt::format("{} x {:.3g} fitted", formula, act_scale));
    };
    const LayerActivations la = layer_activations(m, w, w.flash_attention, eff);
    const bool sp = w.par.sequence_parallel && w.par.tp > 1;
    double per_layer = 0;
    std::string how;
    switch (w.recompute) {
      case Recompute::none: per_layer = la.stored + la.core; how = "all saved tensors"; break;
      case Recompute::selective: per_layer = la.stored; how = "attention core recomputed"; break;
      case Recompute::op: per_layer = std::min(la.stored, op_checkpoint_bytes(m, w)); how = "per-op checkpointing"; break;
      case Recompute::every: {
        const double n = static_cast<double>(w.recompute_every);
        per_layer = (la.stored + la.core) * (1 - 1 / n) + tokens * m.hidden * B / (sp ? t : 1) / n;
        how = fmt::format("one layer in {} checkpointed", w.recompute_every);
        break;
      }
      case Recompute::full: per_layer = tokens * m.hidden * B / (sp ? t : 1); how = "layer inputs only (full recompute)"; break;
    }
    // 1F1B keeps min(pp, micro-batches) micro-batches in flight on the first stage; interleaving
    // adds (p-1)/(p*v) (Narayanan et al. 2021).
    double inflight = 1;
    if (w.par.pp > 1) {
      inflight = std::min<double>(pp, static_cast<double>(w.grad_accum));
      if (w.par.virtual_stages > 1) inflight *= 1 + (pp - 1) / (pp * w.par.virtual_stages);
    }
    add_act("layer activations", per_layer * stage_layers * inflight,
        fmt::format("{} layers x {} per layer ({}){}", stage_layers, format_bytes(per_layer), how,
                    inflight > 1 ? fmt::format(" x {:.2g} micro-batches in flight", inflight) : ""));
    // Backward holds, beside the saved tensors, the activation gradients of the op it is in; full
    // recompute also rebuilds the layer's activations first.
    const double one_layer = la.stored + la.core;
    const bool rebuilds = w.recomputed_layer_fraction() > 0;
    const double grads = backward_gradient_bytes(m, w, tokens);
    add_act("backward working set", grads + (rebuilds ? one_layer : 0),
        rebuilds ? "one recomputed layer + the MLP backward's activation gradients"
                 : "the MLP backward's activation gradients");
    add_act("embedding output", tokens * m.hidden * B / (sp ? t : 1), "s x b x h");
    const bool last_stage_here = w.par.pp == 1 || !first_is_max;
    if (last_stage_here && w.lm_head(m)) {
      add_act("logits and loss", logits_bytes(m, w, tokens, B), loss_formula(m, w, B));
    }
  } else {
    // Inference: only one layer's transient tensors live at once, for the tokens of one forward.
    // Serving engines cap the tokens batched into a forward (vLLM's max_num_batched_tokens, 8,192
    // by default with chunked prefill), so many long sequences do not all prefill at once.
    const double mlp_width = widest_mlp(m);
    const double per_token = (4.0 * m.hidden + m.q_dim() + 2.0 * m.kv_dim() +
                              (m.traits.glu ? 3.0 : 2.0) * mlp_width) / t * B;
    const double batched = std::min(tokens, std::max<double>(static_cast<double>(w.seq), 8192));
    add("activations", "prefill working set (one layer)", per_token * batched,
        fmt::format("{:.0f} tokens per forward x (4h + q + 2kv + MLP width) / tp", batched));
    if (!w.flash_attention)
      add("activations", "attention scores", m.heads / t * static_cast<double>(w.seq) * tokens * B * 2,
          "heads x s^2 x b x 2 (scores and softmax)");
    if (!m.traits.encoder)
      add("activations", "logits (last token)", static_cast<double>(w.micro_batch) * m.vocab * 4.0,
          "b x vocab x 4 B");
  }

  // ---- KV cache --------------------------------------------------------------------------------
  if (w.task == Task::infer && !m.traits.encoder) {
    const double kv_heads_gpu = kv_heads_per_gpu(m, w.par.attention_dp ? 1.0 : t);
    const double kvb = bytes_per_value(w.kv());
    // K and V per head; with latent attention one shared latent and RoPE key, whole on every TP
    // rank (vLLM's MLA backends replicate it; DeepSeek-V2 section 2.1.2).
    const double per_token_layer = m.is_mla() ? static_cast<double>(m.kv_lora_rank + m.qk_rope_dim) * kvb
                                              : 2.0 * kv_heads_gpu * m.head_dim * kvb;
    const double window_layers = static_cast<double>(m.sliding_layers) / L * stage_layers;
    const double full_layers = stage_layers - window_layers;
    const double s = static_cast<double>(w.seq);
    const double windowed = m.sliding_window > 0 ? std::min<double>(s, m.sliding_window) : s;
    const double bytes = static_cast<double>(w.micro_batch) * per_token_layer *
                         (full_layers * s + window_layers * windowed);
    const std::string window = m.sliding_window > 0
        ? fmt::format(" ({} layers capped at a {}-token {})", window_layers, m.sliding_window, m.chunked_window ? "chunk" : "window")
        : "";
    add("kv_cache", "KV cache", bytes,
        m.is_mla() ? fmt::format("{} layers x ({} latent + {} RoPE key) x {} B x {} tokens x {} sequences (MLA){}",
                                 stage_layers, m.kv_lora_rank, m.qk_rope_dim, kvb, w.seq, w.micro_batch, window)
                   : fmt::format("2 x {} layers x {} KV heads x {} head_dim x {} B x {} tokens x {} sequences{}",
                                 stage_layers, kv_heads_gpu, m.head_dim, kvb, w.seq, w.micro_batch, window));
  }

  // ---- Overhead --------------------------------------------------------------------------------
  add("overhead", "library workspaces (cuBLAS etc.)", eff.workspace_bytes, "efficiency.toml workspace_mib");
  if (bytes_per_value(linear_p) < 2 && linear_p != Precision::fp8) {
    // Weight-only kernels dequantise one linear at a time into 16-bit; a QLoRA that quantises the
    // LM head dequantises that too, and one whose 4-bit state was made from float16 weights casts
    // the float16 copy to the compute dtype, two copies alive at once.
    double largest = std::max<double>(static_cast<double>(m.hidden) * std::max(m.q_dim(), m.intermediate),
                                      static_cast<double>(m.hidden) * m.q_dim());
    if (quantized_head) largest = std::max(largest, static_cast<double>(m.hidden) * static_cast<double>(m.vocab));
    const double copies = w.task == Task::qlora ? w.qlora_dequantized_copies : 1;
    std::string how = quantized_head ? "largest linear (the LM head) in 16-bit" : "largest linear in 16-bit";
    if (copies > 1) how += fmt::format(", {:.0f} copies", copies);
    add("overhead", "dequantisation buffer", largest / t * 2 * copies, how);
  }
  for (const auto& term : e.terms) {
    if (term.group == "weights") e.weights += term.bytes;
    else if (term.group == "gradients") e.gradients += term.bytes;
    else if (term.group == "optimizer") e.optimizer += term.bytes;
    else if (term.group == "activations") e.activations += term.bytes;
    else if (term.group == "kv_cache") e.kv_cache += term.bytes;
    else if (term.group == "overhead") e.workspace += term.bytes;
  }
  const bool fitted_reserve = w.training() && eff.fit.allocator_fraction >= 0;
  const double reserve_fraction = fitted_reserve ? eff.fit.allocator_fraction : eff.allocator_fraction;
  e.allocator_reserve = reserve_fraction * (e.activations + e.workspace);
  add("overhead", "allocator reserve", e.allocator_reserve,
      fmt::format("{:.0f}% of activations and workspaces (caching-allocator fragmentation{})", reserve_fraction * 100,
                  fitted_reserve ? ", fitted" : ""));
  e.cuda_context = eff.cuda_context_bytes;
  add("overhead", "CUDA context and kernels", e.cuda_context, "per GPU, outside the allocator");
  if (w.par.gpus() > 1) {
    e.comm_buffers = eff.comm_buffers_bytes;
    add("overhead", "NCCL buffers", e.comm_buffers, "multi-GPU jobs, outside the allocator");
  }
  if (const FitBand& band = eff.fit.memory_band_for(memory_band_class(w.task)); w.training() && band.rows > 0)
    e.per_gpu_bytes_band = std::pair{e.nvidia_smi() * band.low, e.nvidia_smi() * band.high};
  return e;
}

double kv_cache_replication(const ModelSpec& m, const Parallelism& p) {
  const int64_t tp = p.tp;
  if (tp <= 1 || p.attention_dp || m.traits.encoder) return 1;
  const double t = static_cast<double>(tp);
  if (m.is_mla()) return t;
  return std::max(1.0, kv_heads_per_gpu(m, t) * t / static_cast<double>(m.kv_heads));
}

}  // namespace gpuplan
