// "Did you mean ...?": the known names closest to a mistyped one, by edit distance.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

size_t edit_distance(std::string_view a, std::string_view b);

// Up to `max` candidates, closest first, that are plausibly what `typed` meant.
std::vector<std::string> nearest_names(std::string_view typed,
                                       const std::vector<std::string>& candidates, size_t max = 3);

// " (did you mean a, b?)" or "" when nothing is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace gpuplan
