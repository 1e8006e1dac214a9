// Cross-GPU prediction from one measured run: fit the performance model's compute and memory
// efficiencies so it reproduces the measurement on the GPU it was taken on, then predict other GPUs
// with the fitted model. One measurement cannot say how much of the gap is compute and how much is
// memory, so the fit is also made each way and the spread of the three predictions is the band.
#pragma once

#include <functional>
#include <string>

#include "hardware/efficiency.h"

namespace gpuplan {

enum class Attribution { joint, compute, memory };

// Multipliers on the efficiency table's achievable fractions.
struct EfficiencyScale {
  double compute = 1, memory = 1;
  bool capped = false;  // the measurement was faster than the model allows even at 100% of peak
};

Efficiency scaled(const Efficiency& base, const EfficiencyScale& s);

// `seconds(eff)` is the model's time for the measured quantity under efficiencies `eff`; it must
// fall as efficiency rises. Finds the scale under which it equals `measured_s`.
EfficiencyScale fit_efficiency(const Efficiency& base, const std::function<double(const Efficiency&)>& seconds,
                               double measured_s, Attribution how);

struct CrossGpuPrediction {
  double seconds = 0;            // joint fit
  double low_s = 0, high_s = 0;  // band across attributions and measurement spread
  EfficiencyScale fit;
  double uncalibrated_s = 0;     // the model alone, for comparison
};

// Fits on the source (its base efficiencies and time function), predicts the target.
// `spread` widens the band: the run's own step-time variation (p90 / median - 1).
CrossGpuPrediction predict_across(const Efficiency& source_base,
                                  const std::function<double(const Efficiency&)>& source_seconds, double measured_s,
                                  const Efficiency& target_base,
                                  const std::function<double(const Efficiency&)>& target_seconds, double spread = 0);

}  // namespace gpuplan
