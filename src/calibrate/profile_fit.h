// Fitting the model to a `gpuplan profile` summary: what ran (model, batch, sequence, precision, GPU
// count, from the summary or the command line), on which GPU, and how long a step took; the
// efficiency scale that reproduces it; and an efficiency table calibrated with that scale.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "calibrate/cross_gpu.h"
#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "model/model.h"
#include "perf/comm.h"
#include "perf/training.h"
#include "util/status.h"
#include "workload/workload.h"

namespace gpuplan {

// Command-line values that replace or complete the summary's "workload" record.
struct ProfileWorkloadOverrides {
  std::string model, task, precision, source_gpu, stack;
  int64_t micro_batch = 0, seq = 0, gpus = 0, grad_accum = 0;
};

struct ProfileFit {
  ModelSpec model;
  Workload workload;  // as it ran on the source
  Stack stack;        // what it ran under (--stack, the summary's "stack", or the task's usual one)
  Gpu source;
  TrainingRun run;
  double measured_step_s = 0, spread = 0;
  EfficiencyScale scale;
  double uncalibrated_step_s = 0;
};

Result<ProfileFit> fit_profile(const nlohmann::json& summary, const ProfileWorkloadOverrides& o, const Catalog& catalog,
                               const EfficiencyTable& table);  // REQUIRES: table.without_fit()

// `table` with every catalog GPU's fractions multiplied by `s` (the run's own efficiency).
EfficiencyTable calibrated_table(const EfficiencyTable& table, const Catalog& catalog, const EfficiencyScale& s);

}  // namespace gpuplan
