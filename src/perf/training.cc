#include "perf/training.h"

#include <algorithm>
#include <cmath>

#include "perf/expert_parallel.h"
#include "perf/operations.h"

namespace gpuplan {

namespace {

struct PassCost {
  double compute_s = 0, memory_s = 0, overhead_s = 0;
  void add(const OpTime& t, double calls) {
    if (t.memory_bound()) memory_s += t.memory_s * calls;
    else compute_s += t.compute_s * calls;
    overhead_s += t.overhead_s * calls;
  }
  double total() const { return compute_s + memory_s + overhead_s; }
  PassCost& operator+=(const PassCost& o) {
    compute_s += o.compute_s, memory_s += o.memory_s, overhead_s += o.overhead_s;
    return *this;
  }
};

}  // namespace

Op backward_of(const Op& op) {
  Op b = op;
  switch (op.kind) {
    case OpKind::matmul: b.flops *= 2, b.bytes *= 2; break;
    case OpKind::attention: b.flops *= 2.5, b.bytes *= 2; break;
    case OpKind::vector: b.bytes = op.backward_bytes > 0 ? op.backward_bytes : 2 * op.bytes; break;
  }
  return b;
}

namespace {

// Bytes per second an element-wise kernel streams (casts, dequantisation, the optimizer update).
double vector_Bps(const Gpu& gpu, const Efficiency& eff) {
  return gpu.memory_bw_Bps * eff.memory_max_fraction * eff.vector_memory_fraction;
}

// `op` as `n` kernels of equal size, each timed on its own (n = 1: the op as it stands).
OpTime time_as_kernels(Op op, double n, const Gpu& gpu, const Efficiency& eff, Precision p) {
  op.flops /= n, op.bytes /= n;
  OpTime t = time_op(op, gpu, eff, p);
  t.compute_s *= n, t.memory_s *= n, t.overhead_s *= n;
  return t;
}

// How much of one forward op runs again in backward. Megatron's selective recompute redoes the
// attention core (the softmax with unfused attention); per-op checkpointing redoes element-wise
// work and the stack's share of the matmuls (torchtitan: every other one); every:N redoes one
// layer in N; full redoes everything.
double recomputed_share(const Workload& w, const Stack& stack, const Op& op) {
  switch (w.recompute) {
    case Recompute::none: return 0;
    case Recompute::selective:
      return op.kind == OpKind::attention || (!w.flash_attention && op.name == "softmax") ? 1 : 0;
    case Recompute::op:
      if (op.kind == OpKind::vector) return 1;
      return op.kind == OpKind::matmul ? stack.op_recompute_matmul_share : 0;
    case Recompute::every:
    case Recompute::full: return w.recomputed_layer_fraction();
  }
  return 0;
}

}  // namespace

OpTime apply_low_precision_recipe(const Op& op, const LowPrecisionRecipe& recipe, const Stack& stack, const Gpu& gpu,
                                  const Efficiency& eff, OpTime& forward, OpTime& backward) {
  forward.compute_s /= recipe.gemm_relative_throughput, backward.compute_s /= recipe.gemm_relative_throughput;
  const double Bps = vector_Bps(gpu, eff);
  // The casts of the GEMM's inputs (forward) and of its output gradient (backward).
  const double cast_bytes = stack.fused_elementwise ? recipe.fused_cast_bytes_per_element : recipe.cast_bytes_per_element;
  forward.memory_s += cast_bytes * op.input_elements / Bps;
  backward.memory_s += cast_bytes * op.output_elements / Bps;
  // Re-scaling a gradient GEMM's output and re-casting the saved input happen per linear module.
  const double modules = stack.separate_projections ? op.projections : 1;
  OpTime extra;
  extra.memory_s = recipe.backward_input_bytes_per_element * op.activation_elements * modules / Bps;
  return extra;
}

const LowPrecisionRecipe* fp8_recipe_of(const Workload& w, const Stack& stack) {
  if (!w.fp8_recipe.empty()) return stack.recipe(w.fp8_recipe);
  return stack.fp8_recipes.empty() ? nullptr : &stack.fp8_recipes.front();
}

std::optional<double> zero3_prefetch_window(const ModelSpec& m, const Stack& stack, const TrainingRun& run) {
  if (run.zero3_prefetch_params) return run.zero3_prefetch_params;
  const double window = stack.zero3_prefetch_window(m.hidden);
  return window > 0 ? std::optional<double>(window) : std::nullopt;
}

TrainingEstimate estimate_training(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff,
                                   const Stack& stack, const Cluster& cluster, const TrainingRun& run) {
  TrainingEstimate e;
  e.stack = stack.id;
  const double tp = static_cast<double>(w.par.tp), pp = static_cast<double>(w.par.pp);
  const int64_t dp = w.par.dp;
  // The block GEMMs run in the training precision; with FP8 only they do (the recipe's scope in
  // Transformer Engine and torchao: linear layers), attention, the LM head and element-wise work
  // stay 16-bit, and every FP8 GEMM pays its recipe's casts.
  const Precision p = w.precision == Precision::fp8 ? Precision::fp8 : w.activation_precision() == Precision::fp32
      ? (w.precision == Precision::tf32 ? Precision::tf32 : Precision::fp32) : w.precision;
  const Precision p16 = p == Precision::fp8 ? Precision::bf16 : p;
  const LowPrecisionRecipe* recipe = p == Precision::fp8 ? fp8_recipe_of(w, stack) : nullptr;
  const bool peft = w.task == Task::lora || w.task == Task::qlora;

  ForwardShape s;
  s.sequences = static_cast<double>(w.micro_batch);
  // Context parallelism: each GPU holds seq / cp of every sequence, attending over all of it.
  s.tokens = static_cast<double>(w.micro_batch * w.seq) / static_cast<double>(w.par.cp);
  s.kv_len = static_cast<double>(w.seq);
  s.tp = tp;
  s.sequence_parallel = w.par.sequence_parallel && w.par.tp > 1;
  s.flash = w.flash_attention;
  s.score_forward_bytes = stack.eager_score_forward_bytes, s.score_backward_bytes = stack.eager_score_backward_bytes;
  s.act_bytes = bytes_per_value(w.activation_precision());
  s.weight_bytes = w.task == Task::qlora ? 2 : std::min(2.0, s.act_bytes);  // QLoRA dequantises to 16-bit
  if (w.activation_precision() == Precision::fp32) s.weight_bytes = 4;
  s.other_weight_bytes = s.weight_bytes;
  s.causal_halving = w.flash_attention && !m.traits.encoder;
  s.lm_head = w.lm_head(m);
  if (peft) s.lora_rank = static_cast<double>(w.lora_rank), s.lora_targets = w.lora_targets;
  set_expert_layout(m, w, eff, s);

  // ---- One micro-batch on one pipeline stage -----------------------------------------------
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / pp);
  PassCost fwd, bwd, recompute;
  double fwd_flops_stage = 0, recompute_flops_stage = 0;
  double attention_fwd_s = 0, attention_bwd_s = 0;  // what ring attention's sends hide behind
  double gemm_fwd_s = 0, gemm_bwd_s = 0;            // one layer's GEMMs, what overlapped TP hides behind
  double adapted_linears = 0;                       // a layer's linears that carry LoRA adapters
  for (const Op& op : block_forward_ops(m, s)) {
    // The model's own linear layers: what a low-precision recipe and QLoRA's 4-bit storage cover.
    const bool base_linear = op.kind == OpKind::matmul && op.name != "router" && !op.adapter;
    const bool low = recipe && base_linear;
    const Precision op_p = low ? p : p16;
    // Each GEMM is timed at its own size, which sets its efficiency: a stack whose model code keeps
    // Q, K and V (or gate and up) apart runs one GEMM a projection, and a backward runs the input-
    // and weight-gradient GEMMs, each the forward's size (frozen base weights only the first).
    const bool frozen = peft && op.kind == OpKind::matmul && !op.adapter;
    const double apart = op.kind == OpKind::matmul && stack.separate_projections ? op.projections : 1;
    OpTime tf = time_as_kernels(op, apart, gpu, eff, op_p);
    Op b = backward_of(op);
    if (frozen) b.flops /= 2, b.bytes /= 2;
    OpTime tb = time_as_kernels(b, op.kind == OpKind::matmul ? apart * (frozen ? 1 : 2) : 1, gpu, eff, op_p);
    const OpTime backward_extra = low ? apply_low_precision_recipe(op, *recipe, stack, gpu, eff, tf, tb) : OpTime{};
    // QLoRA's frozen 4-bit weights are expanded to 16-bit before each use (bitsandbytes MatMul4Bit:
    // dequantize_4bit, then F.linear in forward and a matmul in backward; torchao's NF4Tensor the
    // same): a kernel of its own reading the packed weights and writing 16-bit ones, in the forward,
    // the backward and any recompute.
    OpTime dequantize;
    if (w.task == Task::qlora && base_linear)
      dequantize.memory_s = (op.input_elements - op.activation_elements) * (w.qlora_weight_bytes() + 2) / vector_Bps(gpu, eff);
    fwd.add(tf, op.calls * stage_layers);
    bwd.add(tb, op.calls * stage_layers);
    bwd.add(backward_extra, op.calls * stage_layers);
    fwd.add(dequantize, op.calls * stage_layers);
    bwd.add(dequantize, op.calls * stage_layers);
    if (op.kind == OpKind::attention) attention_fwd_s += tf.total_s() * op.calls, attention_bwd_s += tb.total_s() * op.calls;
    if (op.kind == OpKind::matmul) gemm_fwd_s += tf.total_s() * op.calls, gemm_bwd_s += tb.total_s() * op.calls;
    if (op.kind == OpKind::matmul && op.adapter) adapted_linears += op.calls / 2;  // an A and a B GEMM each
    const double share = recomputed_share(w, stack, op);
    if (share > 0) recompute.add(tf, op.calls * stage_layers * share), recompute.add(dequantize, op.calls * stage_layers * share);
    if (op.kind != OpKind::vector) {
      fwd_flops_stage += op.flops * op.calls * stage_layers;
      recompute_flops_stage += op.flops * op.calls * stage_layers * share;
    }
  }
  // Embedding on the first stage, LM head and loss on the last; with one stage both.
  PassCost head_fwd, head_bwd;
  for (const Op& op : head_forward_ops(m, s, true)) {
    head_fwd.add(time_op(op, gpu, eff, p16), op.calls);
    head_bwd.add(time_op(backward_of(op), gpu, eff, p16), op.calls);
  }
  // With pipeline stages the last one carries the head, and the slowest stage sets the cycle.
  fwd += head_fwd;
  bwd += head_bwd;

  // ---- Tensor-parallel collectives: 2 per layer forward, 2 backward, 2 more per recompute ----
  const Link tp_link = group_link(gpu, eff, cluster, w.par.tp, 1);
  e.tp_link = tp_link.name;
  const double act_msg = s.tokens * m.hidden * s.act_bytes;
  double tp_per_layer_fwd = 0;
  if (w.par.tp > 1) {
    tp_per_layer_fwd = s.sequence_parallel
        ? 2 * (collective_time(Collective::reduce_scatter, act_msg, w.par.tp, tp_link) +
               collective_time(Collective::all_gather, act_msg, w.par.tp, tp_link))
        : 2 * collective_time(Collective::all_reduce, act_msg, w.par.tp, tp_link);
  }
  // Recomputed layers redo their forward collectives; per-op checkpointing saves them.
  const double recompute_comm = w.recomputed_layer_fraction();
  const double tp_micro = tp_per_layer_fwd * stage_layers * (2 + recompute_comm);
  // Overlapped TP (Transformer Engine's userbuffers, torchtitan's async TP) splits each collective
  // into chunks exchanged while the neighbouring GEMM runs: at most what 0.9 of the layer's GEMMs
  // cover can hide; how much of that a stack hides is fitted (tp_overlap_scale).
  const double tp_hideable_micro = !stack.overlap_tp ? 0
      : stage_layers * (std::min(tp_per_layer_fwd, 0.9 * gemm_fwd_s) * (1 + recompute_comm) +
                        std::min(tp_per_layer_fwd, 0.9 * gemm_bwd_s));
  const ExpertAllToAll a2a = expert_all_to_all(m, w, s, gpu, eff, cluster);
  e.ep_link = a2a.link;
  // Dispatch and combine in every MoE layer's forward, again in backward and in a recompute.
  const double ep_micro = a2a.per_layer_forward_s * stage_layers * (2 + recompute_comm);
  // ---- Context parallel: ring attention passes each GPU's K and V chunk around the cp group ---
  // (cp - 1 steps forward; backward sends K, V and their gradients), overlapped with the attention
  // kernels; only what they cannot hide is exposed.
  double cp_micro = 0;
  if (w.par.cp > 1) {
    const Link cp_link = group_link(gpu, eff, cluster, w.par.cp, w.par.tp);
    e.cp_link = cp_link.name;
    const double kv_chunk = s.tokens * 2 * std::max(1.0, m.kv_heads / tp) * m.head_dim * s.act_bytes;
    const double ring_fwd = static_cast<double>(w.par.cp - 1) * collective_time(Collective::p2p, kv_chunk, 2, cp_link);
    cp_micro = stage_layers * (std::max(0.0, ring_fwd - attention_fwd_s) * (1 + recompute_comm) +
                               std::max(0.0, 2 * ring_fwd - attention_bwd_s));
  }

  // ---- Pipeline sends: activations forward, gradients backward, per micro-batch -------------
  const Link pp_link = group_link(gpu, eff, cluster, w.par.pp, w.par.tp * dp);
  e.pp_link = w.par.pp > 1 ? pp_link.name : "none";
  const double v = static_cast<double>(w.par.virtual_stages);
  const double pp_micro = w.par.pp > 1
      ? 2 * v * collective_time(Collective::p2p, act_msg / (s.sequence_parallel ? tp : 1), 2, pp_link) : 0;

  // ---- Step: micro-batches, bubble ---------------------------------------------------------
  int64_t global_batch = run.global_batch > 0 ? run.global_batch : w.micro_batch * w.grad_accum * dp;
  const int64_t per_replica = std::max<int64_t>(1, global_batch / dp);
  const int64_t micro = std::max<int64_t>(1, per_replica / w.micro_batch);
  e.micro_batches = micro;
  e.global_batch = micro * w.micro_batch * dp;
  const double t_micro_compute = fwd.total() + bwd.total() + recompute.total();
  const double t_micro = t_micro_compute + tp_micro + pp_micro + ep_micro + cp_micro;
  // 1F1B: the pipeline fills and drains over p-1 micro-batch slots; interleaving divides by v
  // (Narayanan et al. 2021, section 2.2).
  const double bubble = w.par.pp > 1 ? (pp - 1) / v * t_micro : 0;

  // ---- Data parallel and ZeRO/FSDP ----------------------------------------------------------
  const ParameterCounts pc = m.parameters();
  // Routed experts spread over the expert layout and reduce over their own replicas.
  const ExpertLayout xl = expert_layout(w.par);
  const double layer_experts = static_cast<double>(pc.routed_experts) / m.layers;
  const double stage_experts = stage_layers * layer_experts / static_cast<double>(xl.shards());
  const double stage_params = (stage_layers * (pc.per_layer() - layer_experts) + std::max(pc.embedding, pc.lm_head)) / tp +
                              stage_experts;
  const double trainable = peft ? static_cast<double>(m.lora_parameters(w.lora_rank, w.lora_targets)) / m.layers * stage_layers / tp : stage_params;
  const double grad_bytes =
      trainable * (s.act_bytes == 4 || (!peft && w.gradients_in_fp32_buffers()) ? 4 : 2);
  // Gradients reduce over every replica of a parameter shard: the data-parallel and the
  // context-parallel ranks (cp sits inside dp, outside tp). Hybrid sharding reduce-scatters inside
  // its shard group and all-reduces the shard across the groups.
  const int64_t dp_group = dp * w.par.cp;
  const int64_t shard = w.par.zero >= 1 ? w.par.shard_ranks() : dp_group;
  const Link dp_link = group_link(gpu, eff, cluster, dp_group, w.par.tp);
  e.dp_link = dp_group > 1 ? dp_link.name : "none";
  auto reduce = [&](double bytes) {
    if (shard >= dp_group) return group_collective_time(Collective::all_reduce, bytes, dp_group, w.par.tp, gpu, eff, cluster);
    return group_collective_time(Collective::reduce_scatter, bytes, shard, w.par.tp, gpu, eff, cluster) +
           group_collective_time(Collective::all_reduce, bytes / static_cast<double>(shard), dp_group / shard,
                                 w.par.tp * shard, gpu, eff, cluster);
  };
  double dp_total = 0, dp_exposed = 0, gather_exposed = 0;
  std::string gather_link = "none";
  if (dp_group > 1) {
    // Gradient all-reduce (or reduce-scatter + all-gather for ZeRO-1/2: the same volume), once per
    // step, overlapped with the last micro-batch's backward.
    const double expert_share = peft || stage_params <= 0 ? 0 : stage_experts / stage_params;
    const Link expert_dp_link = group_link(gpu, eff, cluster, xl.replicas, w.par.tp * w.par.dp / xl.replicas);
    // FSDP and ZeRO-3 gather and reduce-scatter one unit (a transformer block) at a time, or one
    // parameter tensor at a time where the run does (tensors under the stack's persistence
    // threshold then stay whole on every rank and are only reduced): every collective after the
    // first pays a ring's latency again, which over thousands of ranks is milliseconds a collective.
    const bool each_tensor = run.gather_each_tensor && w.par.zero >= 3 && shard > 1;
    double reductions = stage_layers, gathers = stage_layers;
    if (each_tensor) {
      const std::vector<int64_t> tensors = layer_parameter_tensors(m, stack);
      reductions = stage_layers * static_cast<double>(tensors.size());
      gathers = stage_layers * static_cast<double>(std::count_if(tensors.begin(), tensors.end(), [&](int64_t numel) {
                  return numel >= stack.zero3_persistence_threshold;
                }));
    }
    double ring = w.par.zero >= 3 && shard > 1 ? ring_latency(shard, w.par.tp, gpu, eff, cluster) : 0;
    // Tensor by tensor, DeepSpeed also passed lists of one view a rank to torch.distributed, whose NCCL
    // process group copies each rank's chunk out of (all_gather) or into (reduce_scatter) a flat
    // buffer: a kernel launch a rank on every collective (ProcessGroupNCCL.cpp, "Copy the
    // flattened output tensors to the outputs"; PR #1188: "all_gather will do implicit memcpy"),
    // and every byte through memory once more: the gradients copied in (read and write); the
    // gathered weights zero-filled first (_allgather_param's torch.zeros) and copied out.
    if (each_tensor) ring += static_cast<double>(shard) * eff.kernel_overhead_s;
    const double copy_Bps = vector_Bps(gpu, eff);
    const double grad_sync = reduce(grad_bytes * (1 - expert_share)) + std::max(0.0, reductions - 1) * ring +
                             (each_tensor ? 2 * grad_bytes / copy_Bps : 0) +
                             collective_time(Collective::all_reduce, grad_bytes * expert_share, xl.replicas, expert_dp_link);
    // A stack whose partitioned gradients leave at every micro-batch (ZeRO-2/3) reduces them `micro`
    // times a step, each under that micro-batch's backward.
    const double reduces = stack.partitioned_grads_reduce_each_micro_batch && w.par.zero >= 2 ? static_cast<double>(micro) : 1;
    dp_total = grad_sync * reduces;
    // The backward's window, with the recompute that runs layer by layer inside it.
    const double bwd_window = 0.9 * (bwd.total() + recompute.total());
    double bwd_gather_on_link = 0;  // prefetched FSDP gathers that share the link with the gradients
    if (w.par.zero >= 3 && shard > 1) {
      // FSDP gathers the parameters for each micro-batch's forward and again for its backward
      // (once, when they are not resharded after forward), in FP8 where the stack casts before
      // gathering; prefetching overlaps the gathers with compute.
      // QLoRA shards and gathers the stored NF4 weights (fsdp_qlora keeps them packed in a 16-bit
      // storage dtype) and dequantises after the gather.
      const double gather_bytes = recipe && stack.fp8_param_all_gather ? 1.0
                                  : w.task == Task::qlora                ? w.qlora_weight_bytes()
                                                                         : s.weight_bytes;
      const double gather =
          group_collective_time(Collective::all_gather, stage_params * gather_bytes, shard, w.par.tp, gpu, eff, cluster) +
          std::max(0.0, gathers - 1) * ring + (each_tensor ? 3 * stage_params * gather_bytes / copy_Bps : 0);
      const double bwd_gather = w.par.reshard_after_forward ? gather : 0;
      dp_total += (gather + bwd_gather) * micro;
      gather_link = group_link(gpu, eff, cluster, shard, w.par.tp).name;
      if (!stack.overlap_param_gather || each_tensor) {
        gather_exposed = micro * (gather + bwd_gather);
      } else {
        // Prefetched gathers hide under the pass they feed: the forward's under the forward, the
        // backward's under the backward, where the gradients' reduce-scatter shares the link with
        // them in the last micro-batch. A fetch-ahead window smaller than a module leaves the rest
        // of that module's gather to wait: of each partitioned tensor, at most the window's worth
        // is fetched ahead.
        double ahead = 1;
        if (const std::optional<double> window = zero3_prefetch_window(m, stack, run)) {
          double all = 0, fetched_ahead = 0;
          for (int64_t numel : layer_parameter_tensors(m, stack)) {
            if (numel < stack.zero3_persistence_threshold) continue;
            const double n = static_cast<double>(numel) / tp;
            all += n, fetched_ahead += std::min(n, *window);
          }
          if (all > 0) ahead = fetched_ahead / all;
        }
        gather_exposed = micro * (gather - std::min(ahead * gather, 0.9 * fwd.total()) +
                                  bwd_gather - std::min(ahead * bwd_gather, bwd_window));
        bwd_gather_on_link = ahead * bwd_gather;
      }
    }
    // What the gradients' reduction adds to the backward beyond what the gathers on its link expose.
    dp_exposed = reduces * (run.overlap_dp_grads.value_or(stack.overlap_dp_grads)
        ? std::max(0.0, bwd_gather_on_link + grad_sync - bwd_window) - std::max(0.0, bwd_gather_on_link - bwd_window)
        : grad_sync);
  }

  // ---- Optimizer: read and write weights, gradients and states (AdamW: ~28 B per parameter) ---
  // Unfused AdamW (torch's foreach default, _multi_tensor_adam in torch/optim/adam.py) runs lerp_,
  // mul_, addcmul_, sqrt, div_, add_ and addcdiv_ as separate passes over fp32 tensors: 12 + 8 + 12
  // + 8 + 8 + 8 + 16 = 72 B a parameter.
  double opt_bytes_per_param = 0;
  switch (w.optimizer) {
    case Optimizer::adamw: opt_bytes_per_param = stack.fused_optimizer ? 28 : 72; break;
    case Optimizer::adamw8bit: opt_bytes_per_param = 16; break;
    case Optimizer::sgd:
    case Optimizer::lion: opt_bytes_per_param = 20; break;
    // Adafactor has no fused kernel (Apex and torch have none); transformers' Adafactor.step, per
    // factored fp32 tensor: the RMS of p (4), grad**2 + eps (16), the row and column means (8), the
    // outer product of their rsqrt (4), times grad (12), the update's RMS clip (12), times lr (8),
    // and p.add_(-update) (20): 84 B a parameter.
    case Optimizer::adafactor: opt_bytes_per_param = 84; break;
  }
  // Those passes run over the parameters' dtype: a model trained in 16 bits with no fp32 master
  // copy (torch.optim states are zeros_like(param)) moves half the bytes, as memory counts them.
  if (!peft && !w.fp32_master_weights && s.act_bytes == 2 && w.optimizer != Optimizer::adamw8bit) opt_bytes_per_param /= 2;
  const double opt_shard = w.par.zero >= 1 ? static_cast<double>(shard) : 1.0;
  const double optimizer_s = trainable / opt_shard * opt_bytes_per_param / vector_Bps(gpu, eff);

  const double k = static_cast<double>(micro);
  // ---- torch.autocast over fp32 parameters ----------------------------------------------------
  // Autocast keeps its 16-bit copy of a weight only within one forward (the cast cache empties
  // when the autocast region exits), so every micro-batch casts each weight (read 4, write 2) and a
  // recompute casts it again; the weight's 16-bit gradient is cast back to fp32 (2 + 4) and, after
  // the first micro-batch, added to .grad (4 + 4 + 4). FSDP and ZeRO-3 cast shards in their own
  // mixed-precision policy instead.
  double autocast_s = 0;
  if (stack.autocast_fp32_weights && w.fp32_master_weights && s.act_bytes == 2 && w.par.zero < 3)
    autocast_s = trainable * (k * 6 * (2 + w.recomputed_layer_fraction()) + (k - 1) * 12) / vector_Bps(gpu, eff);

  // ---- The fitted scales (data/fitted.toml) on the three kinds of term -----------------------
  const double bubble_share = t_micro > 0 ? bubble / t_micro : 0;  // the bubble as micro-batch slots
  const PassCost all = [&] { PassCost c = fwd; c += bwd; c += recompute; return c; }();
  const double comm_micro = tp_micro + pp_micro + ep_micro + cp_micro;
  const double slots = k + bubble_share;
  StepTerms& micro_terms = e.fit_terms.micro;
  micro_terms.compute_s = slots * all.compute_s;
  micro_terms.memory_s = slots * (all.memory_s + all.overhead_s);
  micro_terms.comm_s = slots * comm_micro;
  micro_terms.tp_hidden_s = slots * tp_hideable_micro;
  static_cast<StepTerms&>(e.fit_terms) = micro_terms;
  e.fit_terms.memory_s += optimizer_s + autocast_s;
  e.fit_terms.comm_s += dp_exposed + gather_exposed;
  // Each communication term by the link it crosses; the first `micro_comms` are the micro-batches' own.
  constexpr size_t micro_comms = 4;
  const std::pair<double, const std::string*> comm_terms[] = {
      {slots * tp_micro, &e.tp_link}, {slots * pp_micro, &e.pp_link},
      {slots * ep_micro, &e.ep_link}, {slots * cp_micro, &e.cp_link},
      {dp_exposed, &e.dp_link},       {gather_exposed, &gather_link}};
  for (size_t i = 0; i < std::size(comm_terms); ++i) {
    const auto& [s, link] = comm_terms[i];
    for (StepTerms* t : {static_cast<StepTerms*>(&e.fit_terms), &micro_terms}) {
      if (t == &micro_terms && i >= micro_comms) continue;
      if (*link == "PCIe") t->comm_pcie_s += s;
      if (*link == "network") t->comm_network_s += s;
    }
  }
  // An eager stack's host issues every layer's kernels one at a time, in the forward, the backward
  // and any recomputed forward: a GPU that runs a micro-batch faster than that waits for it.
  e.host_layer_pass_s = stack.host_layer_pass_s + adapted_linears * stack.host_adapter_pass_s;
  e.fit_terms.host_busy_s = slots * e.host_layer_pass_s * stage_layers * (2 + w.recomputed_layer_fraction());
  const TrainingFit& fit = eff.fit;
  e.memory_scale = fit.memory_scale;
  // The TP collectives' exposed time: at the link's scale, less what the overlap hides.
  const double tp_exposed_micro =
      std::max(0.0, fit.comm_scale_for(e.tp_link) * tp_micro - fit.tp_overlap_scale * tp_hideable_micro);
  e.step_time_s = fit.compute_scale * e.fit_terms.compute_s + fit.memory_scale * e.fit_terms.memory_s +
                  slots * tp_exposed_micro;
  double micro_s = fit.compute_scale * micro_terms.compute_s + fit.memory_scale * micro_terms.memory_s + slots * tp_exposed_micro;
  for (size_t i = 0; i < std::size(comm_terms); ++i) {
    const auto& [s, link] = comm_terms[i];
    if (link == &e.tp_link) continue;
    e.step_time_s += fit.comm_scale_for(*link) * s;
    if (i < micro_comms) micro_s += fit.comm_scale_for(*link) * s;
  }
  StepBreakdown& b = e.breakdown;
  b.compute_s = all.compute_s * k * fit.compute_scale;
  b.memory_s = (all.memory_s * k + autocast_s) * fit.memory_scale;
  b.overhead_s = all.overhead_s * k * fit.memory_scale;
  b.tp_comm_s = tp_exposed_micro * k;
  b.pp_comm_s = pp_micro * k * fit.comm_scale_for(e.pp_link);
  b.ep_comm_s = ep_micro * k * fit.comm_scale_for(e.ep_link);
  b.cp_comm_s = cp_micro * k * fit.comm_scale_for(e.cp_link);
  b.bubble_s = bubble_share * (fit.compute_scale * all.compute_s + fit.memory_scale * (all.memory_s + all.overhead_s)) +
               bubble_share / k * (b.tp_comm_s + b.pp_comm_s + b.ep_comm_s + b.cp_comm_s);
  b.dp_comm_exposed_s = dp_exposed * fit.comm_scale_for(e.dp_link) + gather_exposed * fit.comm_scale_for(gather_link);
  b.dp_comm_total_s = dp_total * fit.comm_scale_for(e.dp_link);
  b.optimizer_s = optimizer_s * fit.memory_scale;
  b.host_bound_s = std::max(0.0, e.fit_terms.host_busy_s - micro_s);
  e.step_time_s += b.host_bound_s;
  if (w.par.zero >= 3 && stack.zero3_module_hooks)
    e.not_modelled.push_back(
        "DeepSpeed's ZeRO-3 Python hooks on every module and parameter are not timed: where the GPU's work a layer pass "
        "is short (small models, short sequences) a step can take several times this estimate (Qwen's README full "
        "fine-tunes at 256-1,024 tokens a sequence; the README's Accuracy section gives the figures)");

  // ---- Throughput and utilisation -------------------------------------------------------------
  e.tokens_per_step = static_cast<double>(e.global_batch * w.seq);
  e.tokens_per_s = e.tokens_per_step / e.step_time_s;
  if (fit.throughput_band.rows > 0) {
    // The band holds published / predicted step times of comparable runs scored out of sample.
    e.step_time_s_band = std::pair{e.step_time_s * fit.throughput_band.low, e.step_time_s * fit.throughput_band.high};
    e.tokens_per_s_band = std::pair{e.tokens_per_step / e.step_time_s_band->second, e.tokens_per_step / e.step_time_s_band->first};
  }
  const double fwd_flops = model_forward_flops(m, e.tokens_per_step, static_cast<double>(w.seq));
  const double passes = peft ? 2.0 : 3.0;  // frozen weights skip the weight-gradient GEMMs
  e.model_flops_per_step = fwd_flops * passes;
  const double recompute_fraction = fwd_flops_stage > 0 ? recompute_flops_stage / fwd_flops_stage : 0;
  e.hardware_flops_per_step = fwd_flops * (passes + recompute_fraction);
  const double gpus = static_cast<double>(w.par.gpus());
  const double peak = op_peak_flops(gpu, OpKind::matmul, p);
  e.mfu = e.model_flops_per_step / (e.step_time_s * gpus * peak);
  e.hfu = e.hardware_flops_per_step / (e.step_time_s * gpus * peak);
  if (run.tokens) {
    e.time_to_train_s = *run.tokens / e.tokens_per_s;
    e.gpu_hours = *e.time_to_train_s / 3600.0 * gpus;
  }
  return e;
}

std::vector<int64_t> layer_parameter_tensors(const ModelSpec& m, const Stack& stack) {
  const FamilyTraits& t = m.traits;
  const int64_t h = m.hidden, q = m.q_dim(), kv = m.kv_dim();
  std::vector<int64_t> n;
  for (int i = 0; i < t.norms_per_layer; ++i) {
    n.push_back(h);
    if (t.norm_bias) n.push_back(h);
  }
  // Attention: q, k and v apart or as one fused matrix, then the output projection; MLA's query
  // (through its low-rank bottleneck where it has one) and its KV latent's down and up projections.
  if (m.is_mla()) {
    const int64_t qk = m.qk_nope_dim + m.qk_rope_dim, latent = m.kv_lora_rank;
    if (m.q_lora_rank > 0) n.insert(n.end(), {h * m.q_lora_rank, m.q_lora_rank, m.q_lora_rank * m.heads * qk});
    else n.push_back(h * m.heads * qk);
    n.insert(n.end(), {h * (latent + m.qk_rope_dim), latent, latent * m.heads * (m.qk_nope_dim + m.v_head_dim)});
    n.push_back(m.heads * m.v_head_dim * h);
  } else {
    for (int64_t width : stack.separate_projections ? std::vector<int64_t>{q, kv, kv} : std::vector<int64_t>{q + 2 * kv}) {
      n.push_back(width * h);
      if (t.qkv_bias) n.push_back(width);
    }
    n.push_back(h * q);
  }
  if (t.out_bias || t.attn_out_bias) n.push_back(h);
  if (t.qk_norm > 0) n.insert(n.end(), {m.head_dim, m.head_dim});
  if (m.attention_sinks) n.push_back(m.heads);
  // MLP: up (and gate, apart or fused) and down, with their biases; an MoE layer holds its experts'.
  const auto mlp = [&](int64_t width, bool bias) {
    const int64_t ups = t.glu ? 2 : 1;
    for (int64_t width_in : stack.separate_projections || !t.glu ? std::vector<int64_t>(ups, width) : std::vector<int64_t>{ups * width}) {
      n.push_back(width_in * h);
      if (bias) n.push_back(width_in);
    }
    n.push_back(h * width);
    if (bias) n.push_back(h);
  };
  if (!m.is_moe() || m.dense_layers() * 2 > m.layers) {
    mlp(m.intermediate, t.out_bias);
  } else {
    for (int64_t e = 0; e < m.experts; ++e) mlp(m.expert_width(), m.expert_bias);
    for (int64_t e = 0; e < m.shared_experts; ++e) mlp(m.shared_width(), false);
    n.push_back(m.experts * h);  // the router
  }
  return n;
}

}  // namespace gpuplan
