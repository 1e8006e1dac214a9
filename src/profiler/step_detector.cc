#include "profiler/step_detector.h"

#include <re2/re2.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace gpuplan {

namespace {
const char* kDefaultSteps[] = {
    R"((\d+)/\d+ \[\d)",                                     // tqdm: " 45/100 [00:10<00:12, 4.42it/s]"
    R"((?:^|[^A-Za-z])(?:step|iter|iteration)[\s=:#\[]*(\d+))",  // "step 12", "Iter: 12", "global_step=12"
};
const char* kDefaultEpochs[] = {R"((?:^|[^A-Za-z])epoch[\s=:#\[]*(\d+))"};

// Whether `re` occurs in `line`; if so, the first capture group that matched, read as a number.
bool find(const re2::RE2& re, std::string_view line, std::optional<int64_t>& n) {
  const int groups = std::min(re.NumberOfCapturingGroups(), 9);
  re2::StringPiece sub[10];
  if (!re.Match(re2::StringPiece(line.data(), line.size()), 0, line.size(), re2::RE2::UNANCHORED, sub, groups + 1)) return false;
  n.reset();
  for (int i = 1; i <= groups; ++i)
    if (sub[i].data() != nullptr) {
      int64_t v = 0;
      const char* b = sub[i].data();
      const char* e = b + sub[i].size();
      if (std::from_chars(b, e, v).ec == std::errc()) n = v;
      break;
    }
  return true;
}

// Compiles `pattern`, or says why not.
std::unique_ptr<re2::RE2> compile(const std::string& pattern, std::string* why) {
  re2::RE2::Options o;
  o.set_case_sensitive(false);
  o.set_log_errors(false);
  o.set_max_mem(8 << 20);  // a bound on the compiled program, whatever the user's pattern
  auto re = std::make_unique<re2::RE2>(pattern, o);
  if (!re->ok()) {
    *why = re->error();
    return nullptr;
  }
  return re;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * (static_cast<double>(v.size()) - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos)), hi = static_cast<size_t>(std::ceil(pos));
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace

StepDetector::StepDetector(StepDetector&&) noexcept = default;
StepDetector& StepDetector::operator=(StepDetector&&) noexcept = default;
StepDetector::~StepDetector() = default;

std::optional<StepDetector> StepDetector::make(const std::string& step_re, const std::string& epoch_re, std::string* error) {
  StepDetector d;
  auto add = [&](const std::string& user, const char* const* defaults, size_t n_defaults, const char* flag,
                 std::vector<std::unique_ptr<re2::RE2>>& into) {
    std::vector<std::string> patterns(defaults, defaults + n_defaults);
    if (!user.empty()) patterns = {user};
    for (const auto& p : patterns) {
      std::string why;
      auto re = compile(p, &why);
      if (!re) {
        *error = std::string(flag) + ": invalid regular expression (RE2 syntax: no backreferences or lookaround): " + why;
        return false;
      }
      into.push_back(std::move(re));
    }
    return true;
  };
  if (!add(step_re, kDefaultSteps, std::size(kDefaultSteps), "--step-regex", d.step_res_)) return std::nullopt;
  if (!add(epoch_re, kDefaultEpochs, std::size(kDefaultEpochs), "--epoch-regex", d.epoch_res_)) return std::nullopt;
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
  if (line.size() > kMaxInspectedLine) line = line.substr(0, kMaxInspectedLine);
  std::optional<int64_t> n;
  for (const auto& re : epoch_res_)
    if (find(*re, line, n)) {
      epoch(t, n);
      break;
    }
  for (const auto& re : step_res_)
    if (find(*re, line, n)) {
      step(t, n);
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
