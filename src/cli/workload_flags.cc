#include "cli/workload_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <tuple>

#include "model/resolve.h"
#include "util/checked.h"
#include "util/limits.h"
#include "util/suggest.h"

namespace gpuplan::cli {

void add_workload_flags(CLI::App& sub, WorkloadFlags& f) {
  sub.add_option("--model", f.model, "preset id, config.json, model directory, .safetensors or .gguf")->required();
  sub.add_option("--task", f.task, "pretrain, full, lora, qlora or infer")->capture_default_str();
  sub.add_option("--precision", f.precision, "fp32, tf32, bf16, fp16, fp8, int8, int4, nf4, fp4/nvfp4/mxfp4 or a GGUF type such as q4_k_m (infer)")->capture_default_str();
  sub.add_option("--optimizer", f.optimizer, "adamw, adamw8bit, sgd, adafactor or lion")->capture_default_str();
  sub.add_option("--batch", f.batch, "micro-batch per GPU (infer: concurrent sequences)")->capture_default_str();
  sub.add_option("--seq", f.seq, "tokens per sequence (default: 2048, or the model's context if shorter)");
  sub.add_option("--recompute", f.recompute, "activation recomputation: none, selective, op, every:N or full (default: the stack's)");
  sub.add_option("--grad-accum", f.grad_accum, "micro-batches per optimizer step")->capture_default_str();
  sub.add_option("--flash-attention", f.flash, "on or off")->capture_default_str();
  sub.add_option("--gpus", f.gpus, "GPUs in the job")->capture_default_str();
  sub.add_option("--zero", f.zero, "ZeRO stage 0-3 (3 = FSDP full shard)")->capture_default_str();
  sub.add_option("--tp", f.tp, "tensor-parallel degree")->capture_default_str();
  sub.add_option("--pp", f.pp, "pipeline-parallel stages")->capture_default_str();
  sub.add_option("--dp", f.dp, "data-parallel replicas (default: --gpus / (tp x pp))");
  sub.add_option("--virtual-stages", f.virtual_stages, "interleaved pipeline chunks per GPU")->capture_default_str();
  sub.add_option("--lora-rank", f.lora_rank, "LoRA rank of each adapter")->capture_default_str();
  sub.add_option("--lora-targets", f.lora_targets,
                 "linear modules with LoRA adapters: all-linear, attention, mlp, or a comma list of q, k, v, o, gate, up, down "
                 "(PEFT's q_proj... names too; default: all-linear)");
  sub.add_option("--kv-precision", f.kv_precision, "KV cache precision (default: the activation precision)");
  sub.add_flag("--offload-optimizer", f.offload_optimizer, "keep optimizer states in CPU memory");
  sub.add_flag("--optimizer-in-backward", f.optimizer_in_backward,
               "step each parameter in backward as its gradient arrives: one layer of gradients at a time (torchtune optimizer_in_bwd)");
  sub.add_flag("--paged-optimizer", f.paged_optimizer,
               "optimizer states in unified memory, paged to the host when the card is full (bitsandbytes Paged*)");
  sub.add_flag("--no-sequence-parallel", f.no_sequence_parallel, "tensor parallel without sequence parallelism");
  sub.add_option("--cp", f.cp, "context-parallel degree: each sequence split over this many GPUs (ring attention)")->capture_default_str();
  sub.add_option("--shard-group", f.shard_group, "hybrid sharding: ZeRO/FSDP shards over groups of this many replicas, replicated across groups (default: all)");
  sub.add_flag("--no-reshard-after-forward", f.no_reshard_after_forward, "FSDP keeps gathered parameters from forward to backward");
  sub.add_flag("--no-master-weights", f.no_master_weights,
               "the model is held in 16 bits (loaded with torch_dtype=bfloat16): no fp32 master copy, so no autocast weight casts "
               "(default: the stack's)");
  sub.add_flag("--no-double-quant", f.no_double_quant,
               "QLoRA's 4-bit weights keep an fp32 scale per 64 (4.5 bits a weight: bitsandbytes' default, LitGPT's bnb.nf4) "
               "instead of the QLoRA paper's double quantisation (4.127 bits)");
  sub.add_option("--ep", f.ep, "expert-parallel degree for mixture-of-experts models (divides tp x dp; plan searches it when not given)");
  sub.add_option("--capacity-factor", f.capacity_factor, "MoE expert capacity factor when tokens are dropped (default: dropless)");
  sub.add_flag("--assume-dense", f.assume_dense,
               "read an architecture gpuplan does not know as a dense Llama-style decoder (outputs say so)");
}

std::vector<std::string> model_caveats(const ModelSpec& m) { return m.notes; }

void print_model_caveats(const ModelSpec& m) {
  for (const auto& n : model_caveats(m)) fmt::print("note: {}\n", n);
}

void add_stack_flag(CLI::App& sub, WorkloadFlags& f) {
  sub.add_option("--stack", f.stack, "software stack: megatron, megatron-deepspeed, torchtitan, torchtitan-compile, hf, deepspeed, torchtune, "
                                     "unsloth (default: megatron for pretrain, hf for fine-tuning; `gpuplan stacks`)");
  sub.add_option("--loss", f.loss, "cross-entropy: " + loss_choices() + " (default: the stack's)");
  sub.add_option("--loss-chunk-tokens", f.loss_chunk_tokens,
                 "tokens per loss chunk with --loss chunked or fused (default: 8 chunks; fused: Liger's sizing)");
  sub.add_option("--fp8-recipe", f.fp8_recipe, "with --precision fp8: delayed, tensorwise, rowwise, blockwise or mxfp8 (default: the stack's first)");
  sub.add_option("--attention-kernel", f.attention_kernel,
                 "the attention kernel the run uses: fa1, fa2, fa3, cudnn or flash-triton (default: the stack's for the GPU; `gpuplan stacks`)");
  sub.add_option("--tp-overlap", f.tp_overlap,
                 "on or off: tensor-parallel collectives overlapped with the neighbouring GEMMs (Megatron/TE userbuffers, "
                 "torchtitan async TP) (default: the stack's)");
  sub.add_option("--grad-reduce", f.grad_reduce,
                 "fp32 or bf16: the dtype bf16 training accumulates and reduces gradients in (Megatron: fp32 unless "
                 "--grad-reduce-in-bf16, as NeMo's FP8 recipes set) (default: the stack's)");
}

Result<Stack> apply_stack(const WorkloadFlags& f, Workload& w) {
  const StackCatalog& stacks = StackCatalog::builtin();
  auto stack = stacks.find(f.stack.empty() ? default_stack_id(w.task) : f.stack);
  if (!stack) return stack.error();
  if (!f.attention_kernel.empty()) {
    stack = stacks.with_attention_kernel(*stack, f.attention_kernel, "--attention-kernel");
    if (!stack) return stack.error();
  }
  if (!f.tp_overlap.empty()) {
    if (f.tp_overlap != "on" && f.tp_overlap != "off")
      return make_error("--tp-overlap", "must be on or off, not '" + f.tp_overlap + "'");
    stack->overlap_tp = f.tp_overlap == "on";
  }
  if (f.recompute.empty()) w.set_recompute(stack->default_recompute);
  apply_stack_training(*stack, w);
  if (f.no_master_weights) w.fp32_master_weights = false;
  if (!f.grad_reduce.empty()) {
    if (f.grad_reduce != "fp32" && f.grad_reduce != "bf16")
      return make_error("--grad-reduce", "must be fp32 or bf16, not '" + f.grad_reduce + "'" + did_you_mean(f.grad_reduce, {"fp32", "bf16"}));
    w.bf16_grads_in_fp32 = f.grad_reduce == "fp32";
  }
  auto loss = parse_loss(f.loss.empty() ? stack->default_loss : f.loss);
  if (!loss)
    return make_error("--loss", "must be " + loss_choices() + ", not '" + f.loss + "'" + did_you_mean(f.loss, loss_names()));
  w.loss = *loss;
  w.loss_chunk_tokens = f.loss_chunk_tokens;
  if (auto s = w.check_loss_chunk()) return *s;
  if (!f.no_reshard_after_forward) apply_stack_layout(*stack, w);
  if (!f.fp8_recipe.empty() && w.precision != Precision::fp8)
    return make_error("--fp8-recipe", "applies to --precision fp8");
  if (w.precision == Precision::fp8 && w.training()) {
    if (stack->fp8_recipes.empty())
      return make_error("--precision", "stack '" + stack->id + "' has no FP8 recipe; pick a stack that offers one (`gpuplan stacks`)");
    if (!f.fp8_recipe.empty() && !stack->recipe(f.fp8_recipe)) {
      std::vector<std::string> ids;
      for (const auto& r : stack->fp8_recipes) ids.push_back(r.id);
      return make_error("--fp8-recipe", "stack '" + stack->id + "' does not offer '" + f.fp8_recipe + "'" + did_you_mean(f.fp8_recipe, ids) +
                                             " (it offers " + fmt::format("{}", fmt::join(ids, ", ")) + ")");
    }
    w.fp8_recipe = f.fp8_recipe;
  }
  return stack;
}

Status check_attention_kernel(const Stack& stack, const Gpu& gpu) {
  return check_attention_runs_on(stack, gpu.architecture, "--attention-kernel", gpu.name + " (" + gpu.architecture + ")");
}

std::string training_only_flag(const WorkloadFlags& w) {
  if (!w.stack.empty()) return "--stack";
  if (!w.recompute.empty()) return "--recompute";
  if (!w.loss.empty()) return "--loss";
  if (w.loss_chunk_tokens != 0) return "--loss-chunk-tokens";
  if (!w.fp8_recipe.empty()) return "--fp8-recipe";
  if (!w.attention_kernel.empty()) return "--attention-kernel";
  if (!w.tp_overlap.empty()) return "--tp-overlap";
  if (!w.grad_reduce.empty()) return "--grad-reduce";
  if (w.optimizer != "adamw") return "--optimizer";
  if (w.zero != 0) return "--zero";
  if (w.grad_accum != 1) return "--grad-accum";
  if (w.lora_rank != WorkloadFlags{}.lora_rank) return "--lora-rank";
  if (!w.lora_targets.empty()) return "--lora-targets";
  if (w.cp != 1) return "--cp";
  if (w.shard_group != 0) return "--shard-group";
  if (w.no_reshard_after_forward) return "--no-reshard-after-forward";
  if (w.no_master_weights) return "--no-master-weights";
  if (w.no_double_quant) return "--no-double-quant";
  if (w.offload_optimizer) return "--offload-optimizer";
  if (w.optimizer_in_backward) return "--optimizer-in-backward";
  if (w.paged_optimizer) return "--paged-optimizer";
  return "";
}

Result<std::pair<ModelSpec, Workload>> build_workload(const WorkloadFlags& f) {
  auto model = resolve_model(f.model, ReadOptions{f.assume_dense});
  if (!model) return model.error();
  Workload w;
  auto task = parse_task(f.task);
  if (!task) return make_error("--task", "unknown task '" + f.task + "'" + did_you_mean(f.task, {"pretrain", "full", "lora", "qlora", "infer"}));
  w.task = *task;
  auto p = parse_precision(f.precision);
  if (!p) return make_error("--precision", "unknown precision '" + f.precision + "'" + did_you_mean(f.precision, precision_names()));
  w.precision = *p;
  auto o = parse_optimizer(f.optimizer);
  if (!o) return make_error("--optimizer", "unknown optimizer '" + f.optimizer + "'" + did_you_mean(f.optimizer, {"adamw", "adamw8bit", "sgd", "adafactor", "lion"}));
  w.optimizer = *o;
  auto r = parse_recompute(f.recompute.empty() ? "none" : f.recompute);
  if (!r)
    return make_error("--recompute", "must be none, selective, op, full or every:N, not '" + f.recompute + "'" +
                                         did_you_mean(f.recompute, {"none", "selective", "op", "full", "every:2"}));
  w.set_recompute(*r);
  if (f.flash != "on" && f.flash != "off") return make_error("--flash-attention", "must be on or off, not '" + f.flash + "'");
  w.flash_attention = f.flash == "on";
  if (!f.kv_precision.empty()) {
    auto kv = parse_precision(f.kv_precision);
    if (!kv || !is_kv_precision(*kv))
      return make_error("--kv-precision", "must be fp32, bf16, fp16, fp8, int8, q8_0 or q4_0, not '" + f.kv_precision + "'");
    w.kv_precision = *kv;
  }
  w.micro_batch = f.batch;
  w.seq = f.seq != 0 ? f.seq : (model->max_position > 0 ? std::min<int64_t>(2048, model->max_position) : 2048);
  w.grad_accum = f.grad_accum;
  w.lora_rank = f.lora_rank;
  w.double_quant = !f.no_double_quant;
  if (!f.lora_targets.empty()) {
    auto tg = parse_lora_targets(f.lora_targets);
    if (!tg) return tg.error();
    w.lora_targets = *tg;
  }
  w.offload_optimizer = f.offload_optimizer;
  w.optimizer_in_backward = f.optimizer_in_backward;
  w.paged_optimizer = f.paged_optimizer;
  // Each degree is bounded before any product is taken, so tp x pp x dp cannot overflow.
  for (const auto& [flag, v, lo] : {std::tuple{"--gpus", f.gpus, int64_t{1}}, std::tuple{"--tp", f.tp, int64_t{1}},
                                    std::tuple{"--pp", f.pp, int64_t{1}}, std::tuple{"--dp", f.dp, int64_t{0}},
                                    std::tuple{"--ep", f.ep, int64_t{0}}, std::tuple{"--cp", f.cp, int64_t{1}}})
    if (auto s = require_range(v, flag, lo, limits::kMaxGpus)) return *s;
  const int64_t tp_pp = f.tp * f.pp;
  if (tp_pp > limits::kMaxGpus)
    return make_error("--tp", fmt::format("tp {} x pp {} is more than {} GPUs", f.tp, f.pp, limits::kMaxGpus));
  int64_t gpus = f.gpus;
  if (f.dp > 0) {
    const int64_t cp = std::max<int64_t>(1, f.cp);
    if (f.gpus != 1 && f.gpus != f.dp * f.tp * f.pp * cp)
      return make_error("--dp", fmt::format("dp {} x tp {} x pp {}{} is {} GPUs, but --gpus says {}", f.dp, f.tp, f.pp,
                                            cp > 1 ? fmt::format(" x cp {}", cp) : "", f.dp * f.tp * f.pp * cp, f.gpus));
    gpus = f.dp * f.tp * f.pp * cp;
    if (gpus > limits::kMaxGpus)
      return make_error("--dp", fmt::format("dp {} x tp {} x pp {}{} is more than {} GPUs", f.dp, f.tp, f.pp,
                                            cp > 1 ? fmt::format(" x cp {}", cp) : "", limits::kMaxGpus));
  }
  if (gpus % tp_pp != 0)
    return make_error("--gpus", fmt::format("{} is not a multiple of tp x pp = {}", gpus, tp_pp));
  w.par.tp = f.tp;
  w.par.pp = f.pp;
  w.par.dp = gpus / tp_pp;
  w.par.zero = f.zero;
  w.par.virtual_stages = f.virtual_stages;
  w.par.sequence_parallel = !f.no_sequence_parallel;
  w.par.ep = f.ep > 0 ? f.ep : 1;
  if (f.cp < 1) return make_error("--cp", fmt::format("must be at least 1, got {}", f.cp));
  if (w.par.dp % f.cp != 0)
    return make_error("--cp", fmt::format("{} does not divide the {} GPUs left after tp x pp", f.cp, w.par.dp));
  w.par.cp = f.cp;
  w.par.dp /= f.cp;
  w.par.shard_group = f.shard_group;
  w.par.reshard_after_forward = !f.no_reshard_after_forward;
  w.moe_capacity_factor = f.capacity_factor;
  if (auto s = w.validate(*model)) return *s;
  return std::pair{std::move(model).value(), w};
}

Result<std::pair<ModelSpec, Workload>> build_generation_workload(const WorkloadFlags& f) {
  auto built = build_workload(f);
  if (!built) {
    Error e = built.error();
    if (e.field == "--seq") e.field = "--prompt";
    return e;
  }
  if (built->first.traits.encoder) return make_error("--model", "is an encoder; generation needs a decoder model");
  return built;
}

}  // namespace gpuplan::cli
