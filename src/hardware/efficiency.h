// Achievable fractions of datasheet peaks and per-GPU runtime overheads, resolved for one GPU.
// Values come from data/efficiency.toml ([gpu.<id>] over [architecture.<arch>] over [default]);
// a calibration file in the same layout, such as `gpuplan bench` writes, overrides them.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "hardware/gpu.h"
#include "stack/fitted.h"
#include "stack/stack.h"
#include "util/status.h"

namespace gpuplan {

struct Efficiency {
  double matmul_max_fraction = 0.8;
  // Best dense FP8 GEMM, of the FP8 datasheet peak; 0: as matmul_max_fraction (no measurement).
  double matmul_max_fraction_fp8 = 0;
  // Best dense FP4 GEMM (NVFP4 on Blackwell), of the FP4 datasheet peak; 0: as matmul_max_fraction.
  double matmul_max_fraction_fp4 = 0;
  // Best FP32 GEMM on the CUDA cores (no tensor cores), of the FP32 peak; 0: as matmul_max_fraction.
  double matmul_max_fraction_fp32 = 0;
  double memory_max_fraction = 0.85;
  double vector_memory_fraction = 0.7;
  // Fused attention kernels, of the datasheet matmul peak. For training this comes from the
  // stack's kernel (for_gpu(gpu, stack)); the table's own figure serves inference.
  double attention_fraction = 0.73;
  double kernel_overhead_s = 4e-6;
  double cuda_context_bytes = 500 * 1024.0 * 1024.0;
  double workspace_bytes = 64 * 1024.0 * 1024.0;
  double allocator_fraction = 0.12;
  double comm_buffers_bytes = 400 * 1024.0 * 1024.0;
  double nvlink_fraction = 0.74;
  double pcie_fraction = 0.7;
  double network_fraction = 0.9;
  double collective_latency_s = 2e-5;
  // NCCL's latency model for its ring all-gather and reduce-scatter: a base per collective plus a
  // latency per ring step, on the link the step crosses.
  double ring_base_latency_s = 8.4e-6;
  double ring_step_latency_nvlink_s = 3.4e-6;
  double ring_step_latency_pcie_s = 5.7e-6;
  double ring_step_latency_network_s = 1.4e-5;
  // Mixture of experts with dropless routing: tokens the busiest expert-parallel rank receives,
  // relative to a balanced share (1 = balanced). Sets expert compute and buffers on that rank.
  double moe_load_imbalance = 1.0;
  // The busiest rank's load: a run's capacity factor where it drops tokens, else the imbalance.
  double moe_load(double capacity_factor) const { return capacity_factor > 0 ? capacity_factor : moe_load_imbalance; }
  // All-to-all (expert dispatch and combine) bus bandwidth, as a share of the link's collective
  // bus bandwidth.
  double alltoall_fraction = 1.0;
  // (GFLOP, relative efficiency) points, ascending in GFLOP, as measured on a GPU whose dense
  // 16-bit tensor peak is matmul_size_curve_reference_flops: on another GPU a GEMM is read at the
  // size that takes as long there (0: read every GPU's GEMMs at their own size).
  std::vector<std::pair<double, double>> matmul_size_curve;
  double matmul_size_curve_reference_flops = 0;
  // What `gpuplan fit` fitted on the validation rows (data/fitted.toml); training estimates apply it.
  TrainingFit fit;

  // Fraction of the datasheet matmul peak that one GEMM of `flops` reaches.
  double matmul_fraction(double flops) const;
  // The same at a compute precision: FP8 GEMMs reach their own share of the FP8 peak.
  double matmul_fraction(double flops, Precision compute) const;
};

// The GEMM ceilings a precision has of its own beside matmul_max_fraction (0: none measured), each
// with its efficiency.toml key: every place that scales, bounds or writes GEMM ceilings walks this
// one list.
struct GemmCeiling {
  const char* key;
  double Efficiency::*fraction;
};
inline constexpr std::array<GemmCeiling, 3> kPrecisionGemmCeilings = {{
    {"matmul_max_fraction_fp8", &Efficiency::matmul_max_fraction_fp8},
    {"matmul_max_fraction_fp4", &Efficiency::matmul_max_fraction_fp4},
    {"matmul_max_fraction_fp32", &Efficiency::matmul_max_fraction_fp32},
}};

class EfficiencyTable {
 public:
  static Result<EfficiencyTable> from_toml(std::string_view text, const std::string& origin);
  static Result<EfficiencyTable> from_file(const std::string& path);
  static const EfficiencyTable& builtin();

  // `overrides` (a calibration) wins over this table, key by key.
  EfficiencyTable with_overrides(const EfficiencyTable& overrides) const;
  Efficiency for_gpu(const Gpu& gpu) const;
  // For training under a software stack: the attention fraction is the stack's kernel on this
  // architecture, unless a [gpu.<id>] section (a measurement of that GPU, as calibrations write)
  // sets it.
  Efficiency for_gpu(const Gpu& gpu, const Stack& stack) const;
  // The same table with the sourced figures alone (identity fit): what `gpuplan fit` fits on.
  EfficiencyTable without_fit() const;

 private:
  static Result<EfficiencyTable> from_table(toml::table doc, const std::string& origin);
  toml::table doc_;
  FittedParameters fit_;
};

}  // namespace gpuplan
