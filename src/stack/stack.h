// Software stacks as data: what the framework a team trains with really runs (attention kernel per
// GPU architecture, element-wise fusion, default recomputation and loss, which communication it
// hides behind compute, its FP8 recipes and fixed per-step costs). Loaded from data/stacks.toml,
// where every figure cites its source and date; estimators take a Stack the way they take a Gpu.
#pragma once

#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <utility>
#include <vector>

#include "util/status.h"
#include "workload/workload.h"

namespace gpuplan {

// A fused attention kernel and the share of the dense 16-bit matmul peak it sustains, forward and
// backward together, on each GPU architecture it was measured on ("default": the assumption the
// data file states for architectures without a measurement).
struct AttentionKernel {
  std::string id, name, source, source_date;
  std::vector<std::pair<std::string, double>> fraction;  // architecture -> fraction of bf16 peak
  bool measured_on(const std::string& architecture) const;
  // The architecture's figure, else the "default" one, else 0 (the kernel does not run there).
  double fraction_on(const std::string& architecture) const;
};

// How an FP8 (or FP4) recipe scales its tensors, and what that costs beyond the GEMM itself.
struct LowPrecisionRecipe {
  std::string id, name, source, source_date;
  Precision gemm_precision = Precision::fp8;
  std::vector<std::string> architectures;  // where the recipe runs (MXFP8: Blackwell only)
  // Bytes moved per element of each GEMM operand cast to low precision (amax read, cast read and
  // write), for stacks that do not fuse the cast into the producing kernel.
  double cast_bytes_per_element = 0;
  // The cast left once a stack fuses it into the norm or activation before the GEMM.
  double fused_cast_bytes_per_element = 0;
  // Bytes moved in backward per element of each GEMM's activation input beyond the casts above
  // (re-scaling and re-laying-out that the recipe's gradient GEMMs need), fused or not.
  double backward_input_bytes_per_element = 0;
  // GEMM throughput with this recipe's scaling, as a share of the plain low-precision GEMM.
  double gemm_relative_throughput = 1;
  bool runs_on(const std::string& architecture) const;
};

struct Stack {
  std::string id;     // "megatron"
  std::string name;   // "Megatron-LM / NeMo / Megatron-Bridge (Transformer Engine)"
  std::string covers; // which front ends this record stands for
  std::string source, source_date, notes;

  // Kernels
  std::vector<std::pair<std::string, AttentionKernel>> attention;  // architecture -> kernel; "default" key
  bool fused_elementwise = false;  // norms, activations, RoPE and casts fused (TE, torch.compile, Triton)
  // The model code keeps Q, K and V (and a gated MLP's gate and up) as separate linear modules:
  // each runs as a GEMM of its own size, and per-module work (a low-precision recipe's casts and
  // re-scaling) happens once per projection.
  bool separate_projections = false;
  // Attention that is not one fused kernel (flash off) runs the model code's element-wise ops over
  // the score matrix between QK^T and AV: scale, masks, softmax, dropout and any casts. Bytes moved
  // per score element, forward and backward; 0 means one fused scale-mask-softmax kernel (a read
  // and a write at the activation width, as Megatron's FusedScaleMaskSoftmax).
  double eager_score_forward_bytes = 0, eager_score_backward_bytes = 0;

  // What the stack does unless told otherwise
  RecomputeSpec default_recompute;
  std::string default_loss = "standard";  // standard, chunked, fused or compiled cross-entropy
  double op_recompute_matmul_share = 0;   // Recompute::op: share of matmul forwards run again

  // Communication it hides behind compute
  bool overlap_dp_grads = true;       // gradient all-reduce / reduce-scatter during backward
  bool overlap_param_gather = true;   // FSDP / ZeRO-3 / distributed-optimizer all-gathers prefetched
  bool overlap_tp = false;            // tensor-parallel collectives overlapped with GEMMs

  // Low precision
  std::vector<LowPrecisionRecipe> fp8_recipes;  // the recipes it offers; the first is its default
  bool fp8_param_all_gather = false;     // FSDP all-gathers weights in FP8
  // With pipeline stages, FSDP keeps a stage's gathered parameters from forward to backward
  // (no reshard after forward), as the micro-batches in flight would gather them again.
  bool keep_gathered_under_pp = false;
  // With pipeline stages, FSDP skips the gradient reduce-scatter until the last micro-batch's
  // backward and accumulates the stage's unsharded gradients in its fp32 reduce dtype meanwhile
  // (torch.distributed.pipelining with FSDP2).
  bool pp_defers_grad_reduce = false;
  // FSDP1's no_sync() under gradient accumulation: every micro-batch but the last keeps the whole
  // unsharded gradients instead of shards (Lightning Fabric's no_backward_sync).
  bool accumulation_defers_grad_reduce = false;
  // ZeRO-2 and ZeRO-3 reduce the gradients at every micro-batch, not once a step: each rank keeps
  // only its partition of them, so the others' must leave before the next backward (DeepSpeed's
  // engine.allreduce_gradients: "ZeRO stage >= 2 communicates during non gradient accumulation
  // boundaries as well").
  bool partitioned_grads_reduce_each_micro_batch = false;
  // FSDP1 with use_orig_params=True and a wrapped layer mixing frozen and trainable weights (LoRA
  // under Fabric's defaults): the layer's flat parameter gets gradients for all of its weights.
  bool frozen_weights_get_grads = false;
  // QLoRA's 4-bit base linears keep their input for backward (bitsandbytes' MatMul4Bit stores A
  // whenever it needs a gradient), where a frozen 16-bit nn.Linear keeps none.
  bool quantized_base_keeps_input = false;
  // QLoRA quantises the LM head as well as the block linears (a precision plugin that replaces every
  // nn.Linear), and how many 16-bit copies a 4-bit linear's dequantisation makes at once.
  bool qlora_quantizes_lm_head = false;
  double qlora_dequantized_copies = 1;
  // Mixed precision with an fp32 master copy of the weights (false: the bf16 weights are trained
  // directly, as torchtune's recipes do).
  bool master_weights = true;
  // Mixed precision by torch.autocast over fp32 parameters (the Trainer's --fp16/--bf16 on a model
  // loaded in fp32): every micro-batch casts the weights to 16-bit and their gradients back.
  bool autocast_fp32_weights = false;
  // bf16 training accumulates and reduces the gradients in fp32 buffers (Megatron's main_grad:
  // --accumulate-allreduce-grads-in-fp32, switched on for bf16 unless --grad-reduce-in-bf16).
  bool bf16_grads_in_fp32 = false;
  // AdamW steps in one fused kernel a tensor group (Apex/TE/DeepSpeed FusedAdam, torch fused=True):
  // false for torch's default foreach AdamW and transformers' own, whose separate passes move more.
  bool fused_optimizer = true;
  // Host seconds the stack's Python spends issuing one layer's kernels in a forward pass (a backward
  // and a recomputed forward are taken to cost as much): the floor under a micro-batch's time when
  // the GPU finishes each kernel before the host issues the next. 0: no figure (fused or captured
  // kernels, never host-bound at the sizes modelled).
  double host_layer_pass_s = 0;
  // What each LoRA-adapted linear adds to a layer pass on the host (its dropout, two adapter
  // GEMMs, scale and add, each a dispatch of its own).
  double host_adapter_pass_s = 0;

  // Share of the host's memory bandwidth its CPU optimizer streams at when the optimizer is
  // offloaded; 0 where the stack records none (then it offers no offload).
  double host_optimizer_fraction = 0;
  bool offers_offload() const { return host_optimizer_fraction > 0; }
  // Why an offloaded optimizer cannot be modelled on this stack (REQUIRES: !offers_offload()).
  std::string no_offload_reason() const {
    return "stack " + id + " offers no CPU optimizer offload (see `gpuplan stacks`); try --stack deepspeed";
  }
  // ZeRO-3 keeps parameter tensors smaller than this many elements whole on every rank (DeepSpeed's
  // stage3_param_persistence_threshold); 0: every tensor is sharded.
  int64_t zero3_persistence_threshold = 0;
  // ZeRO-3 runs Python hooks on every submodule's forward and backward and on every parameter's
  // gradient (DeepSpeed's); gpuplan does not time them, and says so in the estimate.
  bool zero3_module_hooks = false;
  // ZeRO-3 fetches a module's parameters when the module starts and prefetches the next modules'
  // only up to this many elements ahead (DeepSpeed's stage3_prefetch_bucket_size): a module larger
  // than that waits for the rest of its gather. In elements, or, where zero3_prefetch_hidden_squares
  // is set, that many times hidden x hidden (the Hugging Face integration's "auto"). Both 0: the
  // stack prefetches whole units (FSDP).
  double zero3_prefetch_params = 0, zero3_prefetch_hidden_squares = 0;
  double zero3_prefetch_window(double hidden) const {
    return zero3_prefetch_hidden_squares > 0 ? zero3_prefetch_hidden_squares * hidden * hidden : zero3_prefetch_params;
  }

  // The attention kernel this stack runs on `architecture`, and the share of the bf16 peak it
  // sustains there.
  const AttentionKernel& attention_kernel(const std::string& architecture) const;
  double attention_fraction(const std::string& architecture) const;
  // nullptr when the stack does not offer the recipe.
  const LowPrecisionRecipe* recipe(const std::string& id) const;
};

class StackCatalog {
 public:
  static Result<StackCatalog> from_toml(std::string_view text, const std::string& origin);
  static const StackCatalog& builtin();

  // Fails with the nearest ids suggested. `field` names the input in errors ("--stack").
  Result<Stack> find(const std::string& id, const std::string& field = "--stack") const;
  const std::vector<Stack>& stacks() const { return stacks_; }
  std::vector<std::string> ids() const;
  const AttentionKernel* kernel(const std::string& id) const;
  // `stack` running attention kernel `id` on every architecture (an older release, or a run that
  // set its attention implementation): fails, naming `field`, for an unknown kernel. Whether it
  // runs on the GPU is check_attention_runs_on's, once the GPU is known.
  Result<Stack> with_attention_kernel(Stack stack, const std::string& id, const std::string& field) const;
  std::vector<std::string> kernel_ids() const;
  const std::vector<AttentionKernel>& kernels() const { return kernels_; }
  const LowPrecisionRecipe* recipe(const std::string& id) const;
  const std::vector<LowPrecisionRecipe>& recipes() const { return recipes_; }

 private:
  static Result<StackCatalog> from_table(const toml::table& doc, const std::string& origin);
  std::vector<Stack> stacks_;
  std::vector<AttentionKernel> kernels_;
  std::vector<LowPrecisionRecipe> recipes_;
};

// Fails, naming `field`, when the stack's attention kernel has no figure on `architecture`
// (FlashAttention-3 is Hopper only); `gpu` names the card in the message.
Status check_attention_runs_on(const Stack& stack, const std::string& architecture, const std::string& field,
                               const std::string& gpu);

// Applies what the stack does by default to a workload: FSDP's resharding under pipeline stages.
void apply_stack_layout(const Stack& stack, Workload& w);
// What the stack does to any training run: its master weights and its FSDP gradient handling.
void apply_stack_training(const Stack& stack, Workload& w);

// The stack a team running this task most likely uses: Megatron-class stacks for pre-training,
// Hugging Face Trainer (PEFT, bitsandbytes) for fine-tuning, LoRA and QLoRA.
std::string default_stack_id(Task task);

}  // namespace gpuplan
