// One operation's cost on one GPU: FLOPs and bytes moved, and its time as the larger of compute
// time (at the size-dependent matmul efficiency) and memory time, plus launch overhead. Which of
// the two dominates says whether the operation is compute-bound or memory-bound.
#pragma once

#include <string>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "workload/precision.h"

namespace gpuplan {

enum class OpKind { matmul, attention, vector };

struct Op {
  std::string name;
  OpKind kind = OpKind::vector;
  double flops = 0;   // per call, on this GPU
  double bytes = 0;   // read + written per call, on this GPU
  double calls = 1;   // how many times per step (e.g. layers)
  // Kernel launches per call: below 1 when several calls run as one kernel (a grouped GEMM over
  // the experts, as vLLM's fused_moe and Megatron's grouped GEMM do).
  double launches_per_call = 1;
  // GEMMs: elements of the input operands (activations and weights) and of the output, what a
  // low-precision recipe casts in forward (inputs) and backward (the output's gradient).
  double input_elements = 0, output_elements = 0;
  double activation_elements = 0;  // of the input operands, the activations alone (not the weights)
  // Linear modules of the model code this GEMM stands for where a stack keeps them apart (3 for
  // the Q, K and V projections, 2 for a gated MLP's gate and up).
  double projections = 1;
  bool adapter = false;  // a LoRA adapter's op: trained, unlike the frozen base weights it rides on
  // Bytes its backward moves per call where the model code says so (0: the kind's rule of thumb).
  double backward_bytes = 0;
  // Seconds a call takes beyond its bytes, FLOPs and launches: a kernel floor measured for it.
  double fixed_s = 0;
};

struct OpTime {
  double compute_s = 0, memory_s = 0, overhead_s = 0;
  double total_s() const { return std::max(compute_s, memory_s) + overhead_s; }
  bool memory_bound() const { return memory_s > compute_s; }
};

// Peak dense FLOP/s the GPU applies to `kind` ops in precision `p` (vector ops use the fp32 rate).
double op_peak_flops(const Gpu& gpu, OpKind kind, Precision p);

// Time of one call of `op`.
OpTime time_op(const Op& op, const Gpu& gpu, const Efficiency& eff, Precision p);

// FLOP per byte at which the GPU turns from memory-bound to compute-bound at precision p.
double ridge_point(const Gpu& gpu, Precision p);

}  // namespace gpuplan
