#include "calibrate/cross_gpu.h"

#include <algorithm>
#include <cmath>

namespace gpuplan {

Efficiency scaled(const Efficiency& base, const EfficiencyScale& s) {
  Efficiency e = base;
  e.matmul_max_fraction = std::min(1.0, base.matmul_max_fraction * s.compute);
  for (const GemmCeiling& c : kPrecisionGemmCeilings) e.*c.fraction = std::min(1.0, base.*c.fraction * s.compute);  // 0 (none) stays 0
  e.attention_fraction = std::min(1.0, base.attention_fraction * s.compute);
  e.memory_max_fraction = std::min(1.0, base.memory_max_fraction * s.memory);
  e.vector_memory_fraction = std::min(1.0, base.vector_memory_fraction * s.memory);
  return e;
}

EfficiencyScale fit_efficiency(const Efficiency& base, const std::function<double(const Efficiency&)>& seconds,
                               double measured, Attribution how) {
  auto at = [&](double k) {
    EfficiencyScale s;
    if (how != Attribution::memory) s.compute = k;
    if (how != Attribution::compute) s.memory = k;
    return s;
  };
  // The largest multiplier that keeps every fraction at or below 100% of peak.
  double hi = 1e9;
  if (how != Attribution::memory) {
    double top = std::max(base.matmul_max_fraction, base.attention_fraction);
    for (const GemmCeiling& c : kPrecisionGemmCeilings) top = std::max(top, base.*c.fraction);
    hi = std::min(hi, 1.0 / top);
  }
  if (how != Attribution::compute) hi = std::min(hi, 1.0 / std::max(base.memory_max_fraction, base.vector_memory_fraction));
  double lo = 0.02;
  if (seconds(scaled(base, at(hi))) > measured) {
    EfficiencyScale s = at(hi);
    s.capped = true;
    return s;
  }
  if (seconds(scaled(base, at(lo))) < measured) return at(lo);
  for (int i = 0; i < 60; ++i) {  // bisection in log space: time falls as efficiency rises
    const double mid = std::sqrt(lo * hi);
    if (seconds(scaled(base, at(mid))) > measured) lo = mid;
    else hi = mid;
  }
  return at(std::sqrt(lo * hi));
}

CrossGpuPrediction predict_across(const Efficiency& source_base,
                                  const std::function<double(const Efficiency&)>& source_seconds, double measured,
                                  const Efficiency& target_base,
                                  const std::function<double(const Efficiency&)>& target_seconds, double spread) {
  CrossGpuPrediction p;
  p.uncalibrated_s = target_seconds(target_base);
  p.fit = fit_efficiency(source_base, source_seconds, measured, Attribution::joint);
  p.seconds = target_seconds(scaled(target_base, p.fit));
  p.low_s = p.high_s = p.seconds;
  for (Attribution a : {Attribution::compute, Attribution::memory}) {
    const double t = target_seconds(scaled(target_base, fit_efficiency(source_base, source_seconds, measured, a)));
    p.low_s = std::min(p.low_s, t);
    p.high_s = std::max(p.high_s, t);
  }
  p.low_s /= 1 + spread;
  p.high_s *= 1 + spread;
  return p;
}

}  // namespace gpuplan
