// What the team wants to run: task, precision, optimizer, batch and sequence, recompute, and how the
// job is split over GPUs. The estimators take a Workload; the CLI and workload files build one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "util/status.h"
#include "workload/precision.h"

namespace gpuplan {

enum class Task { pretrain, full, lora, qlora, infer };
enum class Optimizer { adamw, adamw8bit, sgd, adafactor, lion };
// Activation recomputation: none; selective (Megatron: the attention core); op (per-op selective
// checkpointing: matmul and attention outputs saved, element-wise work recomputed, as torchtitan's
// "op" policy); every (checkpoint one layer in `recompute_every`); full (every layer).
enum class Recompute { none, selective, op, every, full };

// How the cross-entropy loss is computed: standard (full logits, upcast to fp32, as Hugging Face
// causal LMs do), chunked (logits upcast chunk by chunk: torchtune's CEWithChunkedOutputLoss),
// fused (projection and loss in one chunked kernel, logits never materialised: Liger, Unsloth) or
// compiled (upcast and loss compiled with the model: torchtitan with compile).
enum class Loss { standard, chunked, fused, compiled };

std::optional<Task> parse_task(const std::string& s);
std::optional<Loss> parse_loss(const std::string& s);
std::string to_string(Loss l);
// The loss names, in order, and as an error message lists them ("standard, chunked, ... or compiled").
std::vector<std::string> loss_names();
std::string loss_choices();
std::optional<Optimizer> parse_optimizer(const std::string& s);
struct RecomputeSpec {
  Recompute mode = Recompute::none;
  int64_t every = 0;  // with Recompute::every: one layer in this many is checkpointed
};
// "none", "selective", "op", "full" or "every:N" (N from 1 to 1024).
std::optional<RecomputeSpec> parse_recompute(const std::string& s);
std::string to_string(Task t);
// The class a training task's memory error is banded by: "qlora", "lora" or "full" (pre-training and
// full fine-tuning keep every weight's gradients and optimizer states); "" for inference.
std::string memory_band_class(Task t);
std::string to_string(Optimizer o);
std::string to_string(Recompute r);
std::string to_string(const RecomputeSpec& r);  // "every:2" for Recompute::every

struct Parallelism {
  int64_t tp = 1;   // tensor parallel degree
  int64_t pp = 1;   // pipeline stages
  int64_t dp = 1;   // data-parallel replicas (ZeRO/FSDP shard over these)
  int zero = 0;     // 0 = DDP, 1 optimizer, 2 + gradients, 3 + parameters (FSDP FULL_SHARD)
  bool sequence_parallel = true;  // with tp > 1 (Megatron-style)
  int64_t virtual_stages = 1;     // interleaved pipeline chunks per GPU
  int64_t ep = 1;   // expert parallel: each stage's routed experts spread over ep of its tp x dp GPUs
  // Context parallel: each sequence split over cp GPUs (ring attention passes K and V around);
  // activations divide by cp. Counted inside tp x pp x dp x cp.
  int64_t cp = 1;
  // Hybrid sharding (HSDP, ZeRO++ hpZ): ZeRO/FSDP shards over groups of this many data-parallel
  // ranks and replicates across groups; 0 = over all of them.
  int64_t shard_group = 0;
  // FSDP frees a layer's gathered parameters after its forward and gathers them again for
  // backward (FSDP2's reshard_after_forward=True); false keeps them from forward to backward.
  bool reshard_after_forward = true;
  // FSDP accumulates unsharded gradients (in fp32) over the micro-batches and reduce-scatters them
  // after the last one, as FSDP2 under torch.distributed.pipelining does.
  bool defer_grad_reduce = false;
  // Inference: attention data-parallel over the tensor-parallel group (TensorRT-LLM's
  // enable_attention_dp, SGLang's --enable-dp-attention): each GPU runs attention with every head
  // for its own share of the requests and caches their keys and values whole, the routed experts
  // spread over ep = tp, and the dense MLPs (shared experts, dense layers) replicated or, with
  // attention_dp_dense_tp, split over the group for the gathered tokens.
  bool attention_dp = false;
  bool attention_dp_dense_tp = false;
  int64_t gpus() const { return tp * pp * dp * cp; }
  // The ranks ZeRO/FSDP shards one parameter over.
  int64_t shard_ranks() const { return (shard_group > 0 ? shard_group : dp) * cp; }
};

// Where a stage's routed experts live: split over `ep` ranks and, within each, over `etp`
// tensor-parallel ranks (Megatron-Core's expert tensor parallelism; 1 when EP spans the TP group,
// as vLLM's --enable-expert-parallel does); the `replicas` copies are the experts' data-parallel
// group, which ZeRO shards over.
struct ExpertLayout {
  int64_t ep = 1, etp = 1, replicas = 1;
  int64_t shards() const { return ep * etp; }
};
ExpertLayout expert_layout(const Parallelism& p);

struct Workload {
  Task task = Task::full;
  Precision precision = Precision::bf16;  // weights and compute; for infer, the weight format
  Optimizer optimizer = Optimizer::adamw;
  int64_t micro_batch = 1;  // sequences per GPU per forward (infer: concurrent sequences)
  int64_t seq = 2048;       // tokens per sequence (infer: context held in the KV cache)
  Recompute recompute = Recompute::none;
  int64_t recompute_every = 0;  // with Recompute::every
  int64_t grad_accum = 1;   // micro-batches per optimizer step per replica
  Loss loss = Loss::standard;
  // Tokens per loss chunk (chunked, fused); 0 = the scheme's own rule (8 chunks; Liger's sizing).
  int64_t loss_chunk_tokens = 0;
  std::string fp8_recipe;  // with fp8: a recipe id of data/stacks.toml; empty = the stack's first
  bool flash_attention = true;
  int64_t lora_rank = 16;
  LoraTargets lora_targets;  // which linear modules carry the adapters (default: every one)
  std::optional<Precision> kv_precision;
  bool offload_optimizer = false;  // optimizer states (and master weights) in CPU memory
  // Each parameter's optimizer step runs in backward as its gradient arrives, so only the layer
  // in flight holds gradients (torchtune optimizer_in_bwd; one micro-batch a step).
  bool optimizer_in_backward = false;
  // Optimizer states in CUDA unified memory (bitsandbytes Paged*): they page out to host memory
  // when the card is full and PyTorch's allocator never counts them.
  bool paged_optimizer = false;
  // Mixed precision keeps an fp32 copy of 16-bit weights; a stack that trains the bf16 weights
  // directly (torchtune) does not.
  bool fp32_master_weights = true;
  // QLoRA's 4-bit weights with their block scales quantised again (the QLoRA paper's double
  // quantisation, 4.127 bits a weight); without it bitsandbytes keeps an fp32 absmax per 64 weights
  // (4.5 bits), its default (bnb_4bit_use_double_quant=False) and LitGPT's bnb.nf4.
  bool double_quant = true;
  double qlora_weight_bytes() const {
    return bytes_per_value(double_quant ? Precision::nf4 : Precision::int4);
  }
  // FSDP1 as Lightning Fabric runs it (the stack's fields of the same names): accumulation under
  // no_sync keeps whole unsharded gradients; frozen weights sharing a wrapped layer with trainable
  // ones get gradients too.
  bool accumulation_defers_grad_reduce = false;
  bool frozen_weights_get_grads = false;
  // QLoRA's 4-bit base linears keep their inputs for backward (the stack's field of the same name).
  bool quantized_base_keeps_input = false;
  // QLoRA's LM head in 4 bits, and the 16-bit copies a dequantisation makes (the stack's fields).
  bool qlora_quantizes_lm_head = false;
  double qlora_dequantized_copies = 1;
  // bf16 gradients accumulated and reduced in fp32 (the stack's field of the same name).
  bool bf16_grads_in_fp32 = false;
  // Whether this run's 16-bit gradients live in fp32 buffers: bf16 (and FP8 recipes, whose
  // weights are bf16) under such a stack.
  bool gradients_in_fp32_buffers() const {
    return bf16_grads_in_fp32 && (precision == Precision::bf16 || precision == Precision::fp8);
  }
  // Mixture of experts: expert buffers sized at capacity_factor x the balanced load when tokens
  // beyond it are dropped (GShard, Switch); 0 = dropless routing (Megatron-Core, vLLM, SGLang).
  double moe_capacity_factor = 0;
  Parallelism par;

  bool training() const { return task != Task::infer; }
  RecomputeSpec recompute_spec() const { return {recompute, recompute_every}; }
  void set_recompute(const RecomputeSpec& r) { recompute = r.mode, recompute_every = r.every; }
  // Fraction of the layers whose forward runs again in backward (full: 1, every:N: 1/N).
  double recomputed_layer_fraction() const;
  // Training computes vocabulary logits and their cross-entropy, except an encoder fine-tuned for
  // a task (BERT for classification or QA spans), whose small task head replaces the MLM head.
  bool lm_head(const ModelSpec& m) const { return !(m.traits.encoder && task != Task::pretrain); }
  // The activation and KV dtype: 16-bit unless training or serving in fp32.
  Precision activation_precision() const;
  Precision kv() const { return kv_precision.value_or(activation_precision()); }

  // Checks ranges and that the split fits the model (tp divides heads, pp at most the layers).
  Status validate(const ModelSpec& m) const;
  // --loss-chunk-tokens in range and given with a loss that chunks.
  Status check_loss_chunk() const;
};

}  // namespace gpuplan
