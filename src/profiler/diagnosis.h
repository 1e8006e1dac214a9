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

// The host's CPU over the run, split between the profiled process tree and everything else on the
// machine, so that other jobs' load is never blamed on the profiled run.
struct HostLoad {
  double tree_cores = 0;     // cores the profiled tree kept busy, on average
  double tree_wait_cores = 0;  // cores' worth of time the tree was runnable but waited for a core
  double machine_share = 0;  // share of all cores busy, whoever used them (0..1)
  double other_cores = 0;    // cores busy outside the tree
  int cores = 1;
};
HostLoad host_load(const ProfileData& p);

std::vector<Finding> diagnose(const ProfileData& p);

}  // namespace gpuplan
