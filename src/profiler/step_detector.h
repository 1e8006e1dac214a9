// Finds training steps and epochs in a child's output: lines matching regexes (defaults catch tqdm
// bars as printed by Hugging Face and Lightning, and "step N" / "iter N" / "epoch N" logs), or
// "step" / "epoch" lines the script writes to the marker descriptor gpuplan passes it. Patterns
// run on RE2, whose matching time is linear in the line (no catastrophic backtracking, whatever
// the pattern), and only the first kMaxInspectedLine bytes of a line are looked at.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace gpuplan {

// Longer lines (a progress bar of digits, a dumped tensor) are matched on their start only.
inline constexpr size_t kMaxInspectedLine = 4096;

struct StepStats {
  int64_t count = 0;             // steps seen
  std::optional<double> median_s, p90_s, mean_s;
  std::vector<double> durations_s;  // per step, in order
  std::vector<double> epoch_starts_s;
  std::vector<double> epoch_durations_s;  // last one ends at `end_s`
};

class StepDetector {
 public:
  // Empty patterns use the defaults (case-insensitive, RE2 syntax). Throws nothing: an invalid
  // user regex (or a construct RE2 refuses, such as a backreference) is reported by make().
  static std::optional<StepDetector> make(const std::string& step_re, const std::string& epoch_re, std::string* error);
  StepDetector(StepDetector&&) noexcept;
  StepDetector& operator=(StepDetector&&) noexcept;
  ~StepDetector();

  void on_line(double t_s, std::string_view line);
  void on_marker(double t_s, std::string_view line);  // "step", "step 12", "epoch", "epoch 3"
  StepStats stats(double end_s) const;
  const std::vector<std::pair<double, int64_t>>& steps() const { return steps_; }

 private:
  StepDetector() = default;
  void step(double t, std::optional<int64_t> n);
  void epoch(double t, std::optional<int64_t> n);
  std::vector<std::unique_ptr<re2::RE2>> step_res_, epoch_res_;
  std::vector<std::pair<double, int64_t>> steps_;   // (time, step number)
  std::vector<std::pair<double, int64_t>> epochs_;
};

}  // namespace gpuplan
