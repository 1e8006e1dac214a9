#include "perf/operations.h"

#include <algorithm>

namespace gpuplan {

namespace {

Op gemm(const char* name, double tokens, double in, double out, double wbytes, double abytes) {
  // [tokens x in] x [in x out]: read input and weights, write output.
  return {name, OpKind::matmul, 2 * tokens * in * out, tokens * in * abytes + in * out * wbytes + tokens * out * abytes, 1};
}

Op vec(const char* name, double elements, double bytes_per_elem, double passes) {
  return {name, OpKind::vector, elements * 4, elements * bytes_per_elem * passes, 1};
}

}  // namespace

std::vector<Op> block_forward_ops(const ModelSpec& m, const ForwardShape& s) {
  const double h = m.hidden, t = s.tp, T = s.tokens;
  const double qd = m.q_dim() / t, kvd = std::max(1.0, m.kv_heads / t) * m.head_dim, f = m.intermediate / t;
  const double rep = s.sequence_parallel ? 1 / t : 1;  // norms and residuals split under SP
  const double wb = s.weight_bytes, ab = s.act_bytes;
  std::vector<Op> ops;
  ops.push_back(vec("attention norm", T * h * rep, ab, 2));
  ops.push_back(gemm("QKV projection", T, h, qd + 2 * kvd, wb, ab));
  // Rotary embeddings read and write Q and K (Vidur measures 83 us for 4,096 Llama-2-7B tokens on
  // an H100, a seventh of the QKV GEMM); models with learned positions add them once, at the input.
  if (!m.traits.learned_positions && !s.kv_cache_read) ops.push_back(vec("rotary embedding", T * (qd + kvd), ab, 2));
  // Attention core: QK^T and AV, 2 x 2 x tokens x kv_len x head_dim per head.
  const double causal = s.causal_halving && !s.kv_cache_read ? 0.5 : 1.0;
  const double core_flops = 4 * T * s.kv_len * qd * causal;
  const double kv_read = s.kv_cache_read ? s.sequences * s.kv_len * 2 * kvd * s.kv_bytes : 2 * T * kvd * ab;
  if (s.flash || s.kv_cache_read) {
    ops.push_back({"attention (fused)", OpKind::attention, core_flops, T * qd * ab * 2 + kv_read, 1});
  } else {
    const double scores = T * s.kv_len * (m.heads / t);
    ops.push_back({"attention scores QK^T", OpKind::matmul, core_flops / 2, T * qd * ab + kv_read / 2 + scores * ab, 1});
    ops.push_back(vec("softmax", scores, ab, 2));
    ops.push_back({"attention x V", OpKind::matmul, core_flops / 2, scores * ab + kv_read / 2 + T * qd * ab, 1});
  }
  ops.push_back(gemm("attention output projection", T, qd, h, wb, ab));
  ops.push_back(vec("residual add + MLP norm", T * h * rep, ab, 4));
  if (m.is_moe()) {
    ops.push_back(gemm("router", T, h, m.experts, s.other_weight_bytes, ab));
    // Each expert sees tokens * top_k / experts tokens; all experts' weights are read.
    const double per_expert = T * m.experts_per_token / m.experts;
    Op up = gemm("expert up/gate projections", per_expert, h, (m.traits.glu ? 2 : 1) * f, wb, ab);
    Op down = gemm("expert down projections", per_expert, f, h, wb, ab);
    up.calls = down.calls = static_cast<double>(m.experts);
    ops.push_back(up);
    ops.push_back(vec("expert activation", T * m.experts_per_token * f, ab, 3));
    ops.push_back(down);
  } else {
    ops.push_back(gemm(m.traits.glu ? "MLP gate+up projection" : "MLP up projection", T, h, (m.traits.glu ? 2 : 1) * f, wb, ab));
    ops.push_back(vec(m.traits.glu ? "SwiGLU activation" : "GELU activation", T * f, ab, m.traits.glu ? 3 : 2));
    ops.push_back(gemm("MLP down projection", T, f, h, wb, ab));
  }
  ops.push_back(vec("residual add", T * h * rep, ab, 3));
  return ops;
}

std::vector<Op> head_forward_ops(const ModelSpec& m, const ForwardShape& s, bool loss) {
  const double h = m.hidden, t = s.tp;
  std::vector<Op> ops;
  ops.push_back(vec("embedding lookup", s.tokens * h, s.act_bytes, 2));
  ops.push_back(vec("final norm", s.tokens * h, s.act_bytes, 2));
  if (m.traits.encoder && !loss) return ops;
  const double rows = s.lm_head_all_tokens ? s.tokens : s.sequences;
  ops.push_back(gemm("LM head", rows, h, m.vocab / t, s.other_weight_bytes, s.act_bytes));
  if (loss) ops.push_back(vec("softmax cross-entropy (fp32)", rows * m.vocab / t, 4, 3));
  return ops;
}

double model_forward_flops(const ModelSpec& m, double tokens, double kv_len) {
  const double h = m.hidden, f = m.intermediate;
  const double attn_proj = 2 * tokens * h * (2.0 * m.q_dim() + 2.0 * m.kv_dim());
  const double core = 4 * tokens * kv_len * m.q_dim();
  const double experts = m.is_moe() ? m.experts_per_token : 1;
  const double mlp = 2 * tokens * h * f * (m.traits.glu ? 3 : 2) * experts;
  const double router = m.is_moe() ? 2 * tokens * h * m.experts : 0;
  const double head = m.traits.encoder ? 0 : 2 * tokens * h * m.vocab;
  return m.layers * (attn_proj + core + mlp + router) + head;
}

}  // namespace gpuplan
