#include "perf/roofline.h"

#include <algorithm>

namespace gpuplan {

double op_peak_flops(const Gpu& gpu, OpKind kind, Precision p) {
  if (kind == OpKind::vector) return gpu.fp32_flops > 0 ? gpu.fp32_flops : gpu.peak_matmul_flops(Precision::bf16) / 8;
  double peak = gpu.peak_matmul_flops(gpu.gemm_precision(p));
  // bf16 on Volta/Turing runs as fp16 (frameworks fall back); fp8 without fp8 units as 16-bit.
  if (peak <= 0) peak = gpu.peak_matmul_flops(Precision::fp16);
  if (peak <= 0) peak = gpu.peak_matmul_flops(Precision::bf16);
  return peak;
}

namespace {

// The size at which the curve reads a 16-bit GEMM of `flops` on a GPU of 16-bit tensor peak
// `peak16`: the GEMM that takes as long on the GPU the curve was measured on. A card with three
// times the peak needs three times the work to fill it as well (the same rule as for FP32 GEMMs
// above, across cards).
double curve_flops(double flops, double peak16, const Efficiency& eff) {
  if (!(eff.matmul_size_curve_reference_flops > 0) || !(peak16 > 0)) return flops;
  return flops * eff.matmul_size_curve_reference_flops / peak16;
}

}  // namespace

OpTime time_op(const Op& op, const Gpu& gpu, const Efficiency& eff, Precision p) {
  OpTime t;
  const double peak = op_peak_flops(gpu, op.kind, p);
  double frac = 1.0;
  switch (op.kind) {
    case OpKind::matmul: {
      // The size curve was measured on tensor cores. A GEMM on the FP32 units (no tensor cores, or
      // a framework that keeps FP32 matmuls off them) runs 8-16x slower and fills the GPU as a
      // GEMM that takes as long on its tensor cores does: it is read at that size.
      const Precision unit = gpu.gemm_precision(p);
      const double peak16 = op_peak_flops(gpu, OpKind::matmul, Precision::bf16);
      const bool simt = unit == Precision::fp32 && peak > 0 && peak16 > peak;
      frac = eff.matmul_fraction(curve_flops(simt ? op.flops * peak16 / peak : op.flops, peak16, eff), unit);
      break;
    }
    // Fused attention has its own ceiling (efficiency.toml attention_fraction), with the same
    // size dependence as GEMMs.
    case OpKind::attention:
      frac = eff.attention_fraction *
             eff.matmul_fraction(curve_flops(op.flops, op_peak_flops(gpu, OpKind::matmul, Precision::bf16), eff)) /
             eff.matmul_max_fraction;
      break;
    case OpKind::vector: frac = 0.5; break;
  }
  t.compute_s = peak > 0 ? op.flops / (peak * frac) : 0;
  const double bw = gpu.memory_bw_Bps * eff.memory_max_fraction *
                    (op.kind == OpKind::vector ? eff.vector_memory_fraction : 1.0);
  t.memory_s = op.bytes / bw;
  t.overhead_s = eff.kernel_overhead_s * op.launches_per_call + op.fixed_s;
  return t;
}

double ridge_point(const Gpu& gpu, Precision p) {
  return op_peak_flops(gpu, OpKind::matmul, p) / gpu.memory_bw_Bps;
}

}  // namespace gpuplan
