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

// Backward of a GEMM is two GEMMs (input and weight gradients) of the forward's size; a fused
// attention backward does 2.5x the forward's matmul work (FlashAttention-2 paper, section 3.2);
// element-wise backward passes move about twice the bytes.
Op backward_of(const Op& op) {
  Op b = op;
  switch (op.kind) {
    case OpKind::matmul: b.flops *= 2, b.bytes *= 2; break;
    case OpKind::attention: b.flops *= 2.5, b.bytes *= 2; break;
    case OpKind::vector: b.bytes *= 2; break;
  }
  return b;
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

TrainingEstimate estimate_training(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff,
                                   const Stack& stack, const Cluster& cluster, const TrainingRun& run) {
  TrainingEstimate e;
  e.stack = stack.id;
  const double tp = static_cast<double>(w.par.tp), pp = static_cast<double>(w.par.pp);
  const int64_t dp = w.par.dp;
  const Precision p = w.precision == Precision::fp8 ? Precision::fp8 : w.activation_precision() == Precision::fp32
      ? (w.precision == Precision::tf32 ? Precision::tf32 : Precision::fp32) : w.precision;
  const bool peft = w.task == Task::lora || w.task == Task::qlora;

  ForwardShape s;
  s.sequences = static_cast<double>(w.micro_batch);
  s.tokens = static_cast<double>(w.micro_batch * w.seq);
  s.kv_len = static_cast<double>(w.seq);
  s.tp = tp;
  s.sequence_parallel = w.par.sequence_parallel && w.par.tp > 1;
  s.flash = w.flash_attention;
  s.act_bytes = bytes_per_value(w.activation_precision());
  s.weight_bytes = w.task == Task::qlora ? 2 : std::min(2.0, s.act_bytes);  // QLoRA dequantises to 16-bit
  if (w.activation_precision() == Precision::fp32) s.weight_bytes = 4;
  s.other_weight_bytes = s.weight_bytes;
  s.causal_halving = w.flash_attention && !m.traits.encoder;
  set_expert_layout(m, w, eff, s);

  // ---- One micro-batch on one pipeline stage -----------------------------------------------
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / pp);
  PassCost fwd, bwd, recompute;
  double fwd_flops_stage = 0, recompute_flops_stage = 0;
  for (const Op& op : block_forward_ops(m, s)) {
    const OpTime tf = time_op(op, gpu, eff, p);
    fwd.add(tf, op.calls * stage_layers);
    Op b = backward_of(op);
    // Frozen base weights (LoRA/QLoRA) need only input gradients: half the GEMM backward.
    if (peft && op.kind == OpKind::matmul) b.flops /= 2, b.bytes /= 2;
    bwd.add(time_op(b, gpu, eff, p), op.calls * stage_layers);
    const double share = recomputed_share(w, stack, op);
    if (share > 0) recompute.add(tf, op.calls * stage_layers * share);
    if (op.kind != OpKind::vector) {
      fwd_flops_stage += op.flops * op.calls * stage_layers;
      recompute_flops_stage += op.flops * op.calls * stage_layers * share;
    }
  }
  // Embedding on the first stage, LM head and loss on the last; with one stage both.
  PassCost head_fwd, head_bwd;
  for (const Op& op : head_forward_ops(m, s, true)) {
    head_fwd.add(time_op(op, gpu, eff, p), op.calls);
    head_bwd.add(time_op(backward_of(op), gpu, eff, p), op.calls);
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
  const ExpertAllToAll a2a = expert_all_to_all(m, w, s, gpu, eff, cluster);
  e.ep_link = a2a.link;
  // Dispatch and combine in every MoE layer's forward, again in backward and in a recompute.
  const double ep_micro = a2a.per_layer_forward_s * stage_layers * (2 + recompute_comm);

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
  const double t_micro = t_micro_compute + tp_micro + pp_micro + ep_micro;
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
  const double trainable = peft ? static_cast<double>(m.lora_parameters(w.lora_rank)) / m.layers * stage_layers / tp : stage_params;
  const double grad_bytes = trainable * (s.act_bytes == 4 ? 4 : 2);
  const Link dp_link = group_link(gpu, eff, cluster, dp, w.par.tp);
  e.dp_link = dp > 1 ? dp_link.name : "none";
  double dp_total = 0, dp_exposed = 0;
  if (dp > 1) {
    // Gradient all-reduce (or reduce-scatter + all-gather for ZeRO-1/2: the same volume), once per
    // step, overlapped with the last micro-batch's backward.
    const double expert_share = peft || stage_params <= 0 ? 0 : stage_experts / stage_params;
    const Link expert_dp_link = group_link(gpu, eff, cluster, xl.replicas, w.par.tp * w.par.dp / xl.replicas);
    const double grad_sync = collective_time(Collective::all_reduce, grad_bytes * (1 - expert_share), dp, dp_link) +
                             collective_time(Collective::all_reduce, grad_bytes * expert_share, xl.replicas, expert_dp_link);
    dp_total = grad_sync;
    dp_exposed = run.overlap_dp_grads.value_or(stack.overlap_dp_grads) ? std::max(0.0, grad_sync - 0.9 * bwd.total()) : grad_sync;
    if (w.par.zero >= 3) {
      // FSDP gathers the parameters again for each micro-batch's forward and backward; prefetching
      // overlaps the gathers with compute.
      const double gather = collective_time(Collective::all_gather, stage_params * s.weight_bytes, dp, dp_link);
      const double per_micro = 2 * gather;
      dp_total += per_micro * micro;
      dp_exposed += micro * (stack.overlap_param_gather ? std::max(0.0, per_micro - 0.9 * t_micro_compute) : per_micro);
    }
  }

  // ---- Optimizer: read and write weights, gradients and states (AdamW: ~28 B per parameter) ---
  double opt_bytes_per_param = 0;
  switch (w.optimizer) {
    case Optimizer::adamw: opt_bytes_per_param = 28; break;
    case Optimizer::adamw8bit: opt_bytes_per_param = 16; break;
    case Optimizer::sgd:
    case Optimizer::lion: opt_bytes_per_param = 20; break;
    case Optimizer::adafactor: opt_bytes_per_param = 16; break;
  }
  const double opt_shard = w.par.zero >= 1 ? static_cast<double>(dp) : 1.0;
  const double optimizer_s = trainable / opt_shard * opt_bytes_per_param /
                             (gpu.memory_bw_Bps * eff.memory_max_fraction * eff.vector_memory_fraction);

  e.step_time_s = micro * t_micro + bubble + dp_exposed + optimizer_s;
  StepBreakdown& b = e.breakdown;
  const double k = static_cast<double>(micro);
  const PassCost all = [&] { PassCost c = fwd; c += bwd; c += recompute; return c; }();
  b.compute_s = all.compute_s * k;
  b.memory_s = all.memory_s * k;
  b.overhead_s = all.overhead_s * k;
  b.tp_comm_s = tp_micro * k;
  b.pp_comm_s = pp_micro * k;
  b.ep_comm_s = ep_micro * k;
  b.bubble_s = bubble;
  b.dp_comm_exposed_s = dp_exposed;
  b.dp_comm_total_s = dp_total;
  b.optimizer_s = optimizer_s;

  // ---- Throughput and utilisation -------------------------------------------------------------
  e.tokens_per_step = static_cast<double>(e.global_batch * w.seq);
  e.tokens_per_s = e.tokens_per_step / e.step_time_s;
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

}  // namespace gpuplan
