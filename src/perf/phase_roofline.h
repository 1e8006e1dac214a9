// The roofline of one phase (a training step, a prefill, a decode step): per operation its
// arithmetic intensity against the GPU's ridge point, whether it is compute- or memory-bound, and
// the verdict for the phase (which side most of its time falls on).
#pragma once

#include <string>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "workload/workload.h"

namespace gpuplan {

enum class Phase { train, prefill, decode };
std::string to_string(Phase p);

struct RooflineOp {
  std::string name;
  double flops = 0, bytes = 0, intensity = 0;  // per call; intensity in FLOP/byte
  double time_s = 0;                           // per step, all calls
  bool memory_bound = false;
};

struct RooflineReport {
  Phase phase = Phase::train;
  double ridge_point = 0;          // FLOP/byte at the matmul precision
  double achievable_ridge = 0;     // with the achievable fractions of peak and bandwidth
  double peak_flops = 0, bandwidth_Bps = 0;
  std::vector<RooflineOp> ops;
  double compute_bound_s = 0, memory_bound_s = 0;
  bool memory_bound() const { return memory_bound_s > compute_bound_s; }
};

// Training uses the workload's micro-batch and sequence; prefill processes micro_batch x seq
// tokens; decode one token for micro_batch sequences at context seq.
RooflineReport roofline(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff, Phase phase);

}  // namespace gpuplan
