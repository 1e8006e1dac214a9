#include "perf/phase_roofline.h"

#include "perf/operations.h"
#include "perf/roofline.h"

namespace gpuplan {

std::string to_string(Phase p) {
  switch (p) {
    case Phase::train: return "train";
    case Phase::prefill: return "prefill";
    case Phase::decode: return "decode";
  }
  return "?";
}

RooflineReport roofline(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff, Phase phase) {
  RooflineReport r;
  r.phase = phase;
  const Precision p = phase == Phase::train ? w.activation_precision() : w.precision;
  r.ridge_point = ridge_point(gpu, p);
  r.peak_flops = op_peak_flops(gpu, OpKind::matmul, p);
  r.bandwidth_Bps = gpu.memory_bw_Bps;
  r.achievable_ridge = r.peak_flops * eff.matmul_max_fraction / (r.bandwidth_Bps * eff.memory_max_fraction);
  ForwardShape s;
  s.tp = static_cast<double>(w.par.tp);
  s.flash = w.flash_attention;
  s.act_bytes = bytes_per_value(w.activation_precision());
  s.weight_bytes = phase == Phase::train ? s.act_bytes : bytes_per_value(w.precision);
  s.other_weight_bytes = std::max(2.0, s.weight_bytes);
  s.kv_bytes = bytes_per_value(w.kv());
  s.sequences = static_cast<double>(w.micro_batch);
  if (phase == Phase::decode) {
    s.tokens = s.sequences;
    s.kv_len = static_cast<double>(w.seq);
    s.kv_cache_read = true;
    s.causal_halving = false;
    s.lm_head_all_tokens = false;
  } else {
    s.tokens = s.sequences * static_cast<double>(w.seq);
    s.kv_len = static_cast<double>(w.seq);
    s.lm_head_all_tokens = phase == Phase::train;
    s.lm_head = w.lm_head(m);
  }
  const double layers = static_cast<double>(m.layers);
  auto add = [&](const Op& op, double calls) {
    const OpTime t = time_op(op, gpu, eff, p);
    RooflineOp ro{op.name, op.flops, op.bytes, op.bytes > 0 ? op.flops / op.bytes : 0, t.total_s() * calls, t.memory_bound()};
    (ro.memory_bound ? r.memory_bound_s : r.compute_bound_s) += ro.time_s;
    r.ops.push_back(ro);
  };
  for (const Op& op : block_forward_ops(m, s)) add(op, op.calls * layers);
  for (const Op& op : head_forward_ops(m, s, phase == Phase::train)) add(op, op.calls);
  return r;
}

}  // namespace gpuplan
