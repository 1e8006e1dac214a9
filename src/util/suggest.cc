#include "util/suggest.h"

#include <algorithm>
#include <cctype>

namespace gpuplan {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& candidates, size_t max) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) {
    size_t d = edit_distance(typed, c);
    // A typed prefix or substring ("4090" for "rtx-4090") is a strong hint.
    if (!typed.empty() && c.find(typed) != std::string::npos) d = std::min<size_t>(d, 1);
    const size_t limit = std::max<size_t>(2, std::max(typed.size(), c.size()) / 2);
    if (d <= limit) scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max; ++i) out.push_back(scored[i].second);
  return out;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
  const auto near = nearest_names(typed, candidates);
  if (near.empty()) return "";
  std::string out = " (did you mean ";
  for (size_t i = 0; i < near.size(); ++i) out += (i ? ", " : "") + near[i];
  return out + "?)";
}

}  // namespace gpuplan
