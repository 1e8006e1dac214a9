#include "perf/inference.h"

#include <algorithm>
#include <cmath>

#include "memory/fit.h"
#include "perf/expert_parallel.h"
#include "perf/operations.h"

namespace gpuplan {

namespace {

// Expanding the stored weights of one forward to a 16-bit copy: a streaming kernel per linear that
// reads the stored weights and writes the copy (llama.cpp's ggml_cuda_op_mul_mat_cublas:
// to_fp16_cuda into a pool buffer; bitsandbytes' dequantize_4bit before F.linear). The routed
// experts count as far as the forward touches them.
double dequantize_forward_s(const ModelSpec& m, const ForwardShape& s, const Gpu& gpu, const Efficiency& eff, Precision p) {
  const ParameterCounts pc = m.parameters();
  double linear = static_cast<double>(pc.linear - pc.expert_linear);
  if (m.is_moe()) linear += static_cast<double>(pc.expert_linear) * std::min(1.0, expert_work(m, s).experts_touched * s.ep / m.experts);
  linear /= s.tp;
  Op op;
  op.name = "dequantize weights";
  op.kind = OpKind::vector;
  op.bytes = linear * (s.weight_bytes + 2);
  op.launches_per_call = 0;
  return time_op(op, gpu, eff, p).total_s();
}

// Where the engine dequantises stored weights before its prompt GEMMs, once per physical batch.
double prompt_dequantize_s(const ModelSpec& m, const ForwardShape& pre, const Gpu& gpu, const Efficiency& eff,
                           const Engine& engine, Precision p) {
  if (pre.weight_bytes >= 2 || pre.tokens <= 1 || !(engine.dequantizes_prompt(gpu) || engine.dequantizes_rows(pre.tokens))) return 0;
  const double batches = engine.ubatch_tokens > 0 ? std::ceil(pre.tokens / static_cast<double>(engine.ubatch_tokens)) : 1;
  return batches * dequantize_forward_s(m, pre, gpu, eff, p);
}

// The prompt forward as the engine runs it: whole, or in pieces of at most `ubatch` tokens
// (llama.cpp's physical batch n_ubatch, or the step budget of an engine that chunks prefills),
// each a forward of its own that reads every weight again and attends to the context before it.
// Prompts shorter than a batch are packed whole into it; a longer prompt is cut into pieces, the
// logits computed with the last. Over a layer split of `stages` GPUs the batches flow through the
// stages one after another (llama.cpp PR #6017's pipeline parallelism): each stage holds 1/stages
// of a batch's time, and the last batch leaves the last stage stages - 1 steps after it left the
// first. `forwards` receives how many forwards it took.
template <class Forward>
double prefill_forward_s(const ForwardShape& pre, int64_t ubatch_tokens, double prompt, double stages, const Forward& forward,
                         double& forwards) {
  const double ub = static_cast<double>(ubatch_tokens);
  forwards = 1;
  if (ubatch_tokens <= 0 || pre.tokens <= ub) return forward(pre, true);
  double sum = 0, longest = 0;
  forwards = 0;
  auto add = [&](const ForwardShape& b, bool head, double times) {
    const double t = forward(b, head);
    sum += times * t;
    forwards += times;
    longest = std::max(longest, t);
  };
  if (prompt < ub) {
    const double per_batch = std::floor(ub / prompt), batches = std::floor(pre.sequences / per_batch);
    const double rest = pre.sequences - batches * per_batch;
    ForwardShape b = pre;
    b.sequences = per_batch;
    b.tokens = per_batch * prompt;
    add(b, true, batches);
    if (rest > 0) {
      b.sequences = rest;
      b.tokens = rest * prompt;
      add(b, true, 1);
    }
  } else {
    for (double done = 0; done < prompt; done += ub) {
      const double c = std::min(ub, prompt - done);
      ForwardShape b = pre;
      b.sequences = 1;
      b.tokens = c;
      // The piece's queries see the context before it whole and themselves causally: a fused
      // kernel skips the masked part, an unfused one computes the full rectangle.
      b.kv_len = pre.causal_halving ? done + c / 2 : done + c;
      b.causal_halving = false;
      add(b, done + c >= prompt, pre.sequences);
    }
  }
  return stages > 1 ? sum / stages + (stages - 1) / stages * longest : sum;
}

}  // namespace

InferenceEstimate estimate_inference(const ModelSpec& m, const Workload& w, const InferenceRequest& r,
                                     const Gpu& gpu, const Efficiency& gpu_eff, const Cluster& cluster, const Engine& engine) {
  InferenceEstimate e;
  e.engine = engine.id;
  // Prefill runs the engine's GEMMs, decode its memory-bound kernels (and, under CUDA graphs, its
  // cheaper launches); the expert and link layout below depends only on the GPU's table.
  const Efficiency& eff = gpu_eff;
  const Efficiency pre_eff = engine.prefill_efficiency(gpu_eff, gpu, w.precision);
  const Efficiency dec_eff = engine.decode_efficiency(gpu_eff, gpu, w.precision, m.experts > 0);
  const double tp = static_cast<double>(w.par.tp);
  const Precision p = w.precision;
  ForwardShape s;
  s.tp = tp;
  s.flash = w.flash_attention;
  s.score_forward_bytes = engine.eager_score_bytes;
  s.moe_call_overhead_s = engine.moe_call_overhead_s;
  s.mla_decode_overhead_s = engine.mla_decode_overhead_s;
  s.act_bytes = w.activation_precision() == Precision::fp32 ? 4 : 2;
  s.weight_bytes = bytes_per_value(p);
  s.other_weight_bytes = bytes_per_value(p) < 2 ? 2 : bytes_per_value(p);
  s.kv_bytes = bytes_per_value(w.kv());
  s.lm_head_all_tokens = false;
  if (m.quant_experts_only && is_weight_only(p) && !is_gguf_mix(p)) {
    // The checkpoint's 4-bit format covers the experts only (gpt-oss): the rest stays 16-bit.
    s.expert_weight_bytes = s.weight_bytes;
    s.weight_bytes = s.other_weight_bytes;
  }
  set_expert_layout(m, w, eff, s);
  if (w.par.attention_dp) {
    s.attention_dp = tp;
    s.dense_tp = w.par.attention_dp_dense_tp;
  }
  const Link link = group_link(gpu, eff, cluster, w.par.tp, 1);
  e.tp_link = link.name;
  e.ep_link = expert_all_to_all(m, w, s, gpu, eff, cluster).link;
  const double layers = static_cast<double>(m.layers);

  auto forward_time = [&](const ForwardShape& shape, const Gpu& card, const Efficiency& eff, double* weight_s, double* kv_s, double* compute_s,
                          double* comm_s, double* overhead_s, bool head = true) {
    double total = 0;
    for (const Op& op : block_forward_ops(m, shape)) {
      const OpTime t = time_op(op, card, eff, p);
      total += t.total_s() * op.calls * layers;
      if (overhead_s) *overhead_s += t.overhead_s * op.calls * layers;
      if (compute_s && !t.memory_bound()) *compute_s += t.compute_s * op.calls * layers;
      if (t.memory_bound() && weight_s && kv_s) {
        if (op.kind == OpKind::attention) *kv_s += t.memory_s * op.calls * layers;
        else *weight_s += t.memory_s * op.calls * layers;
      }
    }
    if (head)
      for (const Op& op : head_forward_ops(m, shape.local(), false)) total += time_op(op, card, eff, p).total_s() * op.calls;
    const double hidden_bytes = shape.tokens * m.hidden * shape.act_bytes;
    double comm = 0;
    if (w.par.attention_dp && engine.attention_dp_gather) {
      // Each layer gathers the whole batch to every GPU after attention and reduce-scatters it back.
      comm = layers * (collective_time(Collective::all_gather, hidden_bytes, w.par.tp, link) +
                       collective_time(Collective::reduce_scatter, hidden_bytes, w.par.tp, link));
    } else {
      // Two all-reduces of the hidden state per layer under tensor-parallel attention.
      if (w.par.tp > 1 && !w.par.attention_dp) comm = 2 * layers * collective_time(Collective::all_reduce, hidden_bytes, w.par.tp, link);
      // Expert parallelism sends each token's copies to its experts' ranks and back.
      comm += layers * expert_all_to_all(m, w, shape, gpu, eff, cluster).per_layer_forward_s;
    }
    if (comm_s) *comm_s += comm;
    return total + comm;
  };

  // Prefill: the batch's prompts in one forward, as static-batch servers and benchmarks run it.
  ForwardShape pre = s;
  pre.sequences = static_cast<double>(r.concurrency);
  pre.tokens = static_cast<double>(r.prompt_tokens) * static_cast<double>(r.concurrency);
  pre.kv_len = static_cast<double>(r.prompt_tokens);
  pre.expert_launches = pre.tokens > 1 ? engine.moe_expert_launches_batch : engine.moe_expert_launches_one_token;
  // A fused kernel skips the masked half of causal attention; unfused, the score GEMMs compute it
  // all and the mask is applied after (llama.cpp without -fa, eager PyTorch), as in training.
  pre.causal_halving = w.flash_attention;
  // The engine's fitted time scale multiplies every time it spends (data/fitted.toml).
  const double k = engine.time_scale;
  e.request_overhead_s = engine.request_overhead_s * k;
  e.prompt_dequantize_s = prompt_dequantize_s(m, pre, gpu, pre_eff, engine, p) * k;
  const Gpu pre_gpu = engine.prefill_gpu(gpu);
  auto prefill_time = [&](const ForwardShape& shape, bool head) {
    return forward_time(shape, pre_gpu, pre_eff, nullptr, nullptr, nullptr, nullptr, nullptr, head);
  };
  e.prefill_chunk_tokens = engine.prefill_chunk_tokens(gpu);
  double forwards = 1;
  e.ttft_s = (prefill_forward_s(pre, e.prefill_chunk_tokens, static_cast<double>(r.prompt_tokens), static_cast<double>(w.par.pp),
                                prefill_time, forwards) +
              engine.step_overhead_s + engine.request_overhead_s) * k + e.prompt_dequantize_s;
  e.prefill_tokens_per_s = pre.tokens / e.ttft_s;
  e.prefill_forwards = static_cast<int64_t>(forwards);

  // Decode: one token for each of `concurrency` sequences, attending to the average context.
  ForwardShape dec = s;
  dec.sequences = static_cast<double>(r.concurrency);
  dec.tokens = static_cast<double>(r.concurrency);
  dec.kv_len = static_cast<double>(r.prompt_tokens) + static_cast<double>(r.output_tokens) / 2.0;
  dec.kv_cache_read = true;
  if (engine.per_query_head_decode) dec.per_query_head_kv_share = engine.per_query_head_kv_share;
  dec.causal_halving = false;
  dec.expert_launches = dec.tokens > 1 ? engine.moe_expert_launches_batch : engine.moe_expert_launches_one_token;
  // A batch of rows above the engine's GEMV limit: every step expands the weights and its GEMMs
  // read the 16-bit copy.
  if (dec.weight_bytes < 2 && engine.dequantizes_rows(dec.tokens)) {
    e.decode_dequantize_s = dequantize_forward_s(m, dec, gpu, dec_eff, p);
    dec.weight_bytes = 2;
  }
  e.decode_overhead_s = engine.step_overhead_s;
  e.tpot_s = forward_time(dec, gpu, dec_eff, &e.decode_weight_read_s, &e.decode_kv_read_s, &e.decode_compute_s,
                          &e.decode_comm_s, &e.decode_overhead_s) +
             engine.step_overhead_s + e.decode_dequantize_s;
  for (double* t : {&e.tpot_s, &e.decode_weight_read_s, &e.decode_kv_read_s, &e.decode_compute_s, &e.decode_comm_s,
                    &e.decode_overhead_s, &e.decode_dequantize_s})
    *t *= k;
  e.e2e_latency_s = e.ttft_s + std::max<int64_t>(0, r.output_tokens - 1) * e.tpot_s;
  e.output_tokens_per_s = 1.0 / e.tpot_s;
  e.total_output_tokens_per_s = r.concurrency / e.tpot_s;

  return e;
}

InferenceMemory inference_memory(const ModelSpec& m, const Workload& w, const InferenceRequest& r, const Gpu& gpu,
                                 const Efficiency& eff, const Engine& engine) {
  InferenceMemory out;
  Workload mw = w;
  mw.task = Task::infer;
  mw.seq = r.prompt_tokens + r.output_tokens;
  mw.micro_batch = 1;
  const MemoryEstimate mem = estimate_memory(m, mw, eff);
  out.weight_bytes_per_gpu = mem.weights * engine.weight_memory_relative.lookup(gpu.architecture, w.precision, 1.0);
  double kv_cache = mem.kv_cache;
  if (m.sliding_window > 0 &&
      std::find(engine.full_kv_families.begin(), engine.full_kv_families.end(), m.family) != engine.full_kv_families.end()) {
    ModelSpec full = m;  // the engine caches the windowed layers at full length
    full.sliding_window = full.sliding_layers = 0;
    kv_cache = estimate_memory(full, mw, eff).kv_cache;
  }
  out.kv_bytes_per_token = kv_cache / static_cast<double>(mw.seq);
  out.kv_replication = kv_cache_replication(m, w.par);
  // The engine's budget: a max_batched_tokens forward (one sequence) gives the activation peak it
  // profiles; what its share of the card leaves after weights, that peak and the runtime's own
  // memory is the KV cache.
  const Engine::BatchLimits lim = engine.limits_on(gpu);
  Workload pw = mw;
  pw.seq = std::min<int64_t>(lim.max_batched_tokens, std::max<int64_t>(mw.seq, 1));
  const MemoryEstimate peak = estimate_memory(m, pw, eff);
  out.profile_peak_bytes = engine.profile_run_peak ? peak.activations + peak.workspace : 0;
  if (engine.profile_run_peak && engine.profile_sampler_bytes_per_logit > 0) {
    const double rows = static_cast<double>(std::min(lim.max_num_seqs, lim.max_batched_tokens));
    out.profile_sampler_bytes = engine.profile_sampler_bytes_per_logit * rows * static_cast<double>(m.vocab);
    out.profile_peak_bytes = std::max(out.profile_peak_bytes, out.profile_sampler_bytes);
  }
  const double runtime = mem.cuda_context + mem.comm_buffers;
  out.memory_fraction = engine.memory_fraction(gpu, w.par.tp, w.par.pp);
  out.kv_budget_bytes = std::max(0.0, usable_memory_bytes(gpu) * out.memory_fraction - out.weight_bytes_per_gpu -
                                          out.profile_peak_bytes - runtime);
  if (out.kv_bytes_per_token > 0) {
    const auto blocks = static_cast<int64_t>(out.kv_budget_bytes / (out.kv_bytes_per_token * engine.kv_block_tokens));
    out.kv_capacity_tokens = blocks * engine.kv_block_tokens;
    // As many whole requests as the engine's cache holds: its budget, not the card's memory less
    // the weights (the two part where the engine reserves more, or caches windowed layers in full).
    const int64_t n = out.kv_capacity_tokens / std::max<int64_t>(1, mw.seq);
    out.max_concurrency = n > 0 ? std::optional<int64_t>(n) : std::nullopt;
  } else {
    out.max_concurrency = check_fit(m, mw, gpu, eff).max_batch;  // no KV cache (encoders): the card's memory
  }
  // Under attention data parallelism each GPU caches its own requests: the replica holds tp times
  // one GPU's cache and sequences.
  if (w.par.attention_dp) {
    out.kv_capacity_tokens *= w.par.tp;
    if (out.max_concurrency) *out.max_concurrency *= w.par.tp;
  }
  return out;
}

}  // namespace gpuplan
