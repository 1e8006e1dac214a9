#include "perf/operations.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace gpuplan {

namespace {

Op gemm(const char* name, double tokens, double in, double out, double wbytes, double abytes) {
  // [tokens x in] x [in x out]: read input and weights, write output.
  Op op{name, OpKind::matmul, 2 * tokens * in * out, tokens * in * abytes + in * out * wbytes + tokens * out * abytes, 1};
  op.input_elements = tokens * in + in * out;
  op.activation_elements = tokens * in;
  op.output_elements = tokens * out;
  return op;
}

Op vec(const char* name, double elements, double bytes_per_elem, double passes) {
  return {name, OpKind::vector, elements * 4, elements * bytes_per_elem * passes, 1};
}

}  // namespace

ExpertWork expert_work(const ModelSpec& m, const ForwardShape& s) {
  ExpertWork w;
  if (!m.is_moe()) return w;
  const double E = static_cast<double>(m.experts), k = static_cast<double>(m.experts_per_token);
  // Distinct tokens across the expert-parallel group: ranks that split tensor-parallel work share
  // their tokens, the others bring their own.
  const double group_tokens = std::max(1.0, s.tokens * s.ep * s.etp / s.tp);
  const double touched_share = 1 - std::pow(1 - k / E, group_tokens);
  w.experts_touched = E / s.ep * touched_share;
  w.token_copies = group_tokens * k * s.moe_load / s.ep;
  return w;
}

namespace {

// Attention projections and core of one layer. Latent attention (DeepSeek) projects queries
// through an optional q_lora bottleneck and keys/values through the kv_lora latent, whose down
// projections every TP rank runs whole; decode works on the latent directly with the up
// projections absorbed into the query and output (FlashMLA, vLLM's MLA backends).
void attention_ops(const ModelSpec& m, const ForwardShape& s, double kv_len, std::vector<Op>& ops) {
  const double h = m.hidden, t = s.tp, T = s.tokens, wb = s.weight_bytes, ab = s.act_bytes;
  const double causal = s.causal_halving && !s.kv_cache_read ? 0.5 : 1.0;
  if (m.is_mla()) {
    const double heads = m.heads / t, qk = static_cast<double>(m.qk_nope_dim + m.qk_rope_dim);
    const double lora = static_cast<double>(m.kv_lora_rank), rope = static_cast<double>(m.qk_rope_dim);
    if (m.q_lora_rank > 0) {
      ops.push_back(gemm("MLA query down projection", T, h, static_cast<double>(m.q_lora_rank), wb, ab));
      ops.push_back(gemm("MLA query up projection", T, static_cast<double>(m.q_lora_rank), heads * qk, wb, ab));
    } else {
      ops.push_back(gemm("MLA query projection", T, h, heads * qk, wb, ab));
    }
    ops.push_back(gemm("MLA KV down projection (latent)", T, h, lora + rope, wb, ab));
    if (s.kv_cache_read) {
      ops.push_back(gemm("MLA key up projection, absorbed into queries", T, heads * m.qk_nope_dim, lora, wb, ab));
      const double core = 2 * T * kv_len * heads * (2 * lora + rope);
      const double cache = s.sequences * kv_len * (lora + rope) * s.kv_bytes;
      Op latent{"MLA attention over the latent cache", OpKind::attention, core, T * heads * (lora + rope) * ab * 2 + cache, 1};
      latent.fixed_s = s.mla_decode_overhead_s;
      ops.push_back(latent);
      ops.push_back(gemm("MLA value up projection, absorbed", T, lora, heads * m.v_head_dim, wb, ab));
    } else {
      ops.push_back(gemm("MLA KV up projection", T, lora, heads * (m.qk_nope_dim + m.v_head_dim), wb, ab));
      const double core = 2 * T * kv_len * heads * (qk + m.v_head_dim) * causal;
      ops.push_back({"attention (fused)", OpKind::attention, core, T * heads * (2 * qk + m.v_head_dim) * ab * 2, 1});
    }
    ops.push_back(gemm("attention output projection", T, heads * m.v_head_dim, h, wb, ab));
    return;
  }
  const double qd = m.q_dim() / t, kvd = std::max(1.0, m.kv_heads / t) * m.head_dim;
  Op qkv = gemm("QKV projection", T, h, qd + 2 * kvd, wb, ab);
  qkv.projections = 3;
  ops.push_back(qkv);
  // Rotary embeddings read and write Q and K (Vidur measures 83 us for 4,096 Llama-2-7B tokens on
  // an H100, a seventh of the QKV GEMM); models with learned positions add them once, at the input,
  // and ALiBi (MPT) biases the scores inside the attention kernel.
  if (m.traits.rotary && !s.kv_cache_read) ops.push_back(vec("rotary embedding", T * (qd + kvd), ab, 2));
  // Attention core: QK^T and AV, 2 x 2 x tokens x kv_len x head_dim per head.
  const double core_flops = 4 * T * kv_len * qd * causal;
  const double kv_reads = 1 + s.per_query_head_kv_share * std::max(0.0, qd / kvd - 1);
  const double kv_read = s.kv_cache_read ? s.sequences * kv_len * 2 * kvd * s.kv_bytes * kv_reads : 2 * T * kvd * ab;
  if (s.flash || s.kv_cache_read) {
    ops.push_back({"attention (fused)", OpKind::attention, core_flops, T * qd * ab * 2 + kv_read, 1});
  } else {
    const double scores = T * kv_len * (m.heads / t);
    ops.push_back({"attention scores QK^T", OpKind::matmul, core_flops / 2, T * qd * ab + kv_read / 2 + scores * ab, 1});
    Op chain = s.score_forward_bytes > 0 ? vec("softmax", scores, s.score_forward_bytes, 1) : vec("softmax", scores, ab, 2);
    chain.backward_bytes = scores * s.score_backward_bytes;
    ops.push_back(chain);
    ops.push_back({"attention x V", OpKind::matmul, core_flops / 2, scores * ab + kv_read / 2 + T * qd * ab, 1});
  }
  ops.push_back(gemm("attention output projection", T, qd, h, wb, ab));
}

// The MoE block: router, the routed experts this GPU holds (only those some token chose), and the
// shared experts every token passes through. `share` is the fraction of layers that are sparse.
// A rank-r LoRA adapter beside a frozen [d_in x d_out] linear, as Hugging Face PEFT's lora.Linear
// runs it: result + lora_B(lora_A(x)) * scaling, i.e. two thin GEMMs that read the linear's whole
// input and write a full-width output, then the scale and the add over that output (read and
// write, then two reads and a write). The same adapters ModelSpec::lora_parameters counts.
void add_adapter(std::vector<Op>& ops, double tokens, double d_in, double d_out, double share, const ForwardShape& s) {
  if (s.lora_rank <= 0 || tokens <= 0) return;
  const double r = s.lora_rank, ab = s.act_bytes;
  for (Op op : {gemm("LoRA adapter A", tokens, d_in, r, ab, ab), gemm("LoRA adapter B", tokens, r, d_out, ab, ab),
                vec("LoRA adapter scale and add", tokens * d_out, ab, 5)}) {
    op.adapter = true;
    op.calls = share;
    ops.push_back(op);
  }
}

void adapter_ops(const ModelSpec& m, const ForwardShape& s, double sparse, std::vector<Op>& ops) {
  const double h = m.hidden, T = s.tokens, t = s.tp;
  const LoraTargets& tg = s.lora_targets;  // all-linear for MLA (Workload::validate)
  if (m.is_mla()) {
    const double qk = m.qk_nope_dim + m.qk_rope_dim;
    if (m.q_lora_rank > 0) {
      add_adapter(ops, T, h, m.q_lora_rank, 1, s);
      add_adapter(ops, T, m.q_lora_rank, m.heads * qk / t, 1, s);
    } else {
      add_adapter(ops, T, h, m.heads * qk / t, 1, s);
    }
    add_adapter(ops, T, h, m.kv_lora_rank + m.qk_rope_dim, 1, s);
    add_adapter(ops, T, m.kv_lora_rank, m.heads * (m.qk_nope_dim + m.v_head_dim) / t, 1, s);
    add_adapter(ops, T, m.heads * m.v_head_dim / t, h, 1, s);
  } else {
    if (tg.q) add_adapter(ops, T, h, m.q_dim() / t, 1, s);
    if (tg.k || tg.v) add_adapter(ops, T, h, m.kv_dim() / t, (tg.k ? 1.0 : 0.0) + (tg.v ? 1.0 : 0.0), s);  // keys and values
    if (tg.o) add_adapter(ops, T, m.q_dim() / t, h, 1, s);
  }
  const double up = m.traits.glu ? (tg.gate ? 1.0 : 0.0) + (tg.up ? 1.0 : 0.0) : (tg.up ? 1.0 : 0.0);
  auto mlp = [&](double tokens, double f, double share) {
    if (up > 0) add_adapter(ops, tokens, h, f, up * share, s);
    if (tg.down) add_adapter(ops, tokens, f, h, share, s);
  };
  if (sparse < 1) mlp(T, m.intermediate / t, 1 - sparse);
  if (sparse > 0) {
    mlp(expert_work(m, s).token_copies, m.expert_width() / s.etp, sparse);
    if (m.shared_experts > 0) mlp(T, m.shared_experts * m.shared_width() / t, sparse);
  }
}

void moe_ops(const ModelSpec& m, const ForwardShape& s, const ForwardShape& dense, double share, std::vector<Op>& ops) {
  const double h = m.hidden, T = s.tokens, wb = s.weight_bytes, ab = s.act_bytes;
  const double up = m.traits.glu ? 2 : 1;
  auto scaled = [share](Op op) { op.calls *= share; return op; };
  ops.push_back(scaled(gemm("router", T, h, static_cast<double>(m.experts), s.other_weight_bytes, ab)));
  const ExpertWork xw = expert_work(m, s);
  const double ef = m.expert_width() / s.etp, per_expert = xw.token_copies / std::max(xw.experts_touched, 1e-9);
  const double xb = s.expert_weight_bytes > 0 ? s.expert_weight_bytes : wb;
  Op gate_up = gemm("expert up/gate projections", per_expert, h, up * ef, xb, ab);
  Op down = gemm("expert down projections", per_expert, ef, h, xb, ab);
  gate_up.calls = down.calls = xw.experts_touched * share;
  // One grouped GEMM runs all of a layer's experts, or the engine launches kernels expert by
  // expert (gate and up then being two matmuls).
  if (s.expert_launches > 0) {
    gate_up.launches_per_call = s.expert_launches * up;
    down.launches_per_call = s.expert_launches;
  } else {
    gate_up.launches_per_call = down.launches_per_call = 1 / std::max(xw.experts_touched, 1.0);
  }
  ops.push_back(gate_up);
  ops.push_back(scaled(vec("expert activation", xw.token_copies * ef, ab, 3)));
  ops.push_back(down);
  if (s.moe_call_overhead_s > 0) {
    Op fixed = vec("fused-MoE call (routing, alignment, ramp)", 0, ab, 0);
    fixed.launches_per_call = 0;
    fixed.fixed_s = s.moe_call_overhead_s;
    ops.push_back(scaled(fixed));
  }
  if (m.shared_experts > 0) {
    const double sf = m.shared_experts * m.shared_width() / dense.tp, Td = dense.tokens;
    ops.push_back(scaled(gemm("shared expert up/gate projections", Td, h, up * sf, wb, ab)));
    ops.push_back(scaled(gemm("shared expert down projection", Td, sf, h, wb, ab)));
  }
}

}  // namespace

ForwardShape ForwardShape::local() const {
  ForwardShape l = *this;
  if (attention_dp > 1) {
    // Requests are spread over the GPUs whole: the busiest holds ceil(sequences / attention_dp).
    l.sequences = std::ceil(sequences / attention_dp);
    l.tokens = tokens * l.sequences / std::max(sequences, 1.0);
    l.tp = 1;
    l.attention_dp = 1;
  }
  return l;
}

std::vector<Op> block_forward_ops(const ModelSpec& m, const ForwardShape& s) {
  std::optional<ForwardShape> local;  // copied only under attention data parallelism
  if (s.attention_dp > 1) local = s.local();
  const ForwardShape& att = local ? *local : s;
  const ForwardShape& dense = s.dense_tp ? s : att;
  const double h = m.hidden, T = att.tokens;
  const double f = m.intermediate / dense.tp, Td = dense.tokens;
  const double rep = s.sequence_parallel ? 1 / s.tp : 1;  // norms and residuals split under SP
  const double wb = s.weight_bytes, ab = s.act_bytes;
  // Windowed layers (sliding, or Llama 4's chunks) attend to at most the window.
  const double window_share = m.sliding_window > 0 ? static_cast<double>(m.sliding_layers) / m.layers : 0.0;
  const double kv_len = (1 - window_share) * s.kv_len + window_share * std::min<double>(s.kv_len, m.sliding_window);
  std::vector<Op> ops;
  ops.push_back(vec("attention norm", T * h * rep, ab, 2));
  attention_ops(m, att, kv_len, ops);
  ops.push_back(vec("residual add + MLP norm", T * h * rep, ab, 4));
  const double sparse = m.is_moe() ? static_cast<double>(m.moe_layers) / m.layers : 0.0;
  if (sparse > 0) moe_ops(m, s, dense, sparse, ops);
  if (sparse < 1) {
    const double share = 1 - sparse;
    Op up = gemm(m.traits.glu ? "MLP gate+up projection" : "MLP up projection", Td, h, (m.traits.glu ? 2 : 1) * f, wb, ab);
    up.projections = m.traits.glu ? 2 : 1;
    Op act = vec(m.traits.glu ? "SwiGLU activation" : "GELU activation", Td * f, ab, m.traits.glu ? 3 : 2);
    Op down = gemm("MLP down projection", Td, f, h, wb, ab);
    for (Op* op : {&up, &act, &down}) op->calls = share, ops.push_back(*op);
  }
  ops.push_back(vec("residual add", T * h * rep, ab, 3));
  adapter_ops(m, s, sparse, ops);
  return ops;
}

std::vector<Op> head_forward_ops(const ModelSpec& m, const ForwardShape& s, bool loss) {
  const double h = m.hidden, t = s.tp;
  std::vector<Op> ops;
  ops.push_back(vec("embedding lookup", s.tokens * h, s.act_bytes, 2));
  ops.push_back(vec("final norm", s.tokens * h, s.act_bytes, 2));
  if (m.traits.encoder && (!loss || !s.lm_head)) return ops;
  const double rows = s.lm_head_all_tokens ? s.tokens : s.sequences;
  ops.push_back(gemm("LM head", rows, h, m.vocab / t, s.other_weight_bytes, s.act_bytes));
  if (loss) ops.push_back(vec("softmax cross-entropy (fp32)", rows * m.vocab / t, 4, 3));
  return ops;
}

double model_forward_flops(const ModelSpec& m, double tokens, double kv_len) {
  // Every block matmul a token passes through (only its top-k routed experts), twice its
  // parameters in FLOPs; attention's QK^T and AV; and the LM head.
  const ParameterCounts pc = m.parameters();
  const double unused_experts = m.is_moe() ? static_cast<double>(pc.expert_linear) *
                                                 (1 - static_cast<double>(m.experts_per_token) / m.experts) : 0.0;
  const double matmuls = 2 * tokens * (static_cast<double>(pc.linear) - unused_experts);
  const double qk = m.is_mla() ? static_cast<double>(m.qk_nope_dim + m.qk_rope_dim) : m.head_dim;
  const double v = m.is_mla() ? static_cast<double>(m.v_head_dim) : m.head_dim;
  const double core = 2 * tokens * kv_len * m.heads * (qk + v);
  const double head = m.traits.encoder ? 0 : 2 * tokens * static_cast<double>(m.hidden) * m.vocab;
  return matmuls + m.layers * core + head;
}

}  // namespace gpuplan
