#include "profiler/step_detector.h"

#include <algorithm>
#include <cmath>

namespace gpuplan {

namespace {
const char* kDefaultSteps[] = {
    R"((\d+)/\d+ \[\d)",                                     // tqdm: " 45/100 [00:10<00:12, 4.42it/s]"
    R"((?:^|[^A-Za-z])(?:step|iter|iteration)[\s=:#\[]*(\d+))",  // "step 12", "Iter: 12", "global_step=12"
};
const char* kDefaultEpochs[] = {R"((?:^|[^A-Za-z])epoch[\s=:#\[]*(\d+))"};

std::optional<int64_t> number(const std::smatch& m) {
  for (size_t i = 1; i < m.size(); ++i)
    if (m[i].matched) {
      try {
        return std::stoll(m[i].str());
      } catch (...) {
        return std::nullopt;
      }
    }
  return std::nullopt;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (static_cast<double>(v.size()) - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = static_cast<size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace

std::optional<StepDetector> StepDetector::make(const std::string& step_re, const std::string& epoch_re, std::string* error) {
  StepDetector d;
  const auto flags = std::regex::ECMAScript | std::regex::icase | std::regex::optimize;
  try {
    if (step_re.empty()) {
      for (const char* r : kDefaultSteps) d.step_res_.emplace_back(r, flags);
    } else {
      d.step_res_.emplace_back(step_re, flags);
    }
  } catch (const std::regex_error& e) {
    *error = "--step-regex: invalid regular expression: " + std::string(e.what());
    return std::nullopt;
  }
  try {
    if (epoch_re.empty()) {
      for (const char* r : kDefaultEpochs) d.epoch_res_.emplace_back(r, flags);
    } else {
      d.epoch_res_.emplace_back(epoch_re, flags);
    }
  } catch (const std::regex_error& e) {
    *error = "--epoch-regex: invalid regular expression: " + std::string(e.what());
    return std::nullopt;
  }
  return d;
}

void StepDetector::step(double t, std::optional<int64_t> n) {
  const int64_t last = steps_.empty() ? 0 : steps_.back().second;
  const int64_t k = n.value_or(last + 1);
  if (k > last) steps_.emplace_back(t, k);  // progress bars repaint the same step; count it once
}

void StepDetector::epoch(double t, std::optional<int64_t> n) {
  const int64_t last = epochs_.empty() ? -1 : epochs_.back().second;
  const int64_t k = n.value_or(last + 1);
  if (epochs_.empty() || k > last) epochs_.emplace_back(t, k);
}

void StepDetector::on_line(double t, std::string_view line) {
  if (line.size() > 4096) line = line.substr(0, 4096);
  const std::string s(line);
  std::smatch m;
  for (const auto& re : epoch_res_)
    if (std::regex_search(s, m, re)) {
      epoch(t, number(m));
      break;
    }
  for (const auto& re : step_res_)
    if (std::regex_search(s, m, re)) {
      step(t, number(m));
      break;
    }
}

void StepDetector::on_marker(double t, std::string_view line) {
  auto rest = [&](size_t skip) -> std::optional<int64_t> {
    const std::string tail(line.substr(std::min(skip, line.size())));
    try {
      size_t used = 0;
      const long long v = std::stoll(tail, &used);
      return v;
    } catch (...) {
      return std::nullopt;
    }
  };
  if (line.rfind("step", 0) == 0) step(t, rest(4));
  else if (line.rfind("epoch", 0) == 0) epoch(t, rest(5));
}

StepStats StepDetector::stats(double end_s) const {
  StepStats s;
  s.count = steps_.empty() ? 0 : steps_.back().second - (steps_.front().second - 1);
  for (size_t i = 1; i < steps_.size(); ++i) {
    const double dt = steps_[i].first - steps_[i - 1].first;
    const double dn = static_cast<double>(steps_[i].second - steps_[i - 1].second);
    s.durations_s.push_back(dt / dn);
  }
  if (!s.durations_s.empty()) {
    s.median_s = quantile(s.durations_s, 0.5);
    s.p90_s = quantile(s.durations_s, 0.9);
    double sum = 0;
    for (double d : s.durations_s) sum += d;
    s.mean_s = sum / static_cast<double>(s.durations_s.size());
  }
  for (size_t i = 0; i < epochs_.size(); ++i) {
    s.epoch_starts_s.push_back(epochs_[i].first);
    s.epoch_durations_s.push_back((i + 1 < epochs_.size() ? epochs_[i + 1].first : end_s) - epochs_[i].first);
  }
  return s;
}

}  // namespace gpuplan
