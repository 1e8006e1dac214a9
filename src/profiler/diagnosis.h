// What a profile means: findings (compute-bound, memory-bandwidth-bound, input-bound, throttled,
// near memory capacity, imbalanced GPUs, driver faults, no GPU) each with the evidence quoted and
// the next step to take. A pure function of the recorded samples.
#pragma once

#include <string>
#include <vector>

#include "profiler/gpu_sampler.h"
#include "profiler/host_sampler.h"
#include "profiler/step_detector.h"

namespace gpuplan {

struct Finding {
  std::string finding;   // short label, e.g. "input-bound"
  std::string evidence;  // the numbers that show it
  std::string advice;    // the concrete next step
};

struct ProfileData {
  std::vector<GpuDevice> devices;      // empty when no driver was found
  std::string gpu_unavailable_reason;  // why, when empty
  std::vector<std::vector<GpuSample>> gpu;  // per GPU, in time order
  std::vector<HostSample> host;
  StepStats steps;
  int cores = 1;
  double wall_s = 0;
};

std::vector<Finding> diagnose(const ProfileData& p);

}  // namespace gpuplan
