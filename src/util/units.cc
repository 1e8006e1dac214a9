#include "util/units.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <utility>

namespace gpuplan {

std::string format_bytes(double bytes) {
  const double a = std::fabs(bytes);
  if (a >= kGiB) return fmt::format("{:.2f} GiB", bytes / kGiB);
  if (a >= kMiB) return fmt::format("{:.1f} MiB", bytes / kMiB);
  if (a >= kKiB) return fmt::format("{:.1f} KiB", bytes / kKiB);
  return fmt::format("{:.0f} B", bytes);
}

std::string format_seconds(double s) {
  const double a = std::fabs(s);
  if (a < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (a < 1.0) return fmt::format("{:.2f} ms", s * 1e3);
  if (a < 120.0) return fmt::format("{:.2f} s", s);
  if (a < 7200.0) return fmt::format("{:.1f} min", s / 60.0);
  if (a < 3 * 86400.0) return fmt::format("{:.1f} h", s / 3600.0);
  return fmt::format("{:.1f} days", s / 86400.0);
}

std::string format_flops(double f) {
  if (std::fabs(f) >= 1e15) return fmt::format("{:.2f} PFLOP/s", f / 1e15);
  if (std::fabs(f) >= 1e12) return fmt::format("{:.1f} TFLOP/s", f / 1e12);
  return fmt::format("{:.1f} GFLOP/s", f / 1e9);
}

std::string format_usd_short(double usd) {
  if (!std::isfinite(usd)) return fmt::format("${}", usd);
  const double a = std::fabs(usd);
  const char* sign = usd < 0 ? "-" : "";
  if (a < 10) return fmt::format("{}${:.2f}", sign, a);
  if (a < 1000) return fmt::format("{}${:.0f}", sign, a);
  static constexpr std::pair<double, const char*> kScales[] = {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "k"}};
  for (auto [scale, suffix] : kScales)
    if (a >= scale * 0.9995) {
      std::string v = fmt::format("{:.3g}", a / scale);
      return fmt::format("{}${}{}", sign, v, suffix);
    }
  return fmt::format("{}${:.0f}", sign, a);
}

std::string format_usd(double usd) {
  if (!std::isfinite(usd)) return fmt::format("${}", usd);
  if (std::fabs(usd) < 10.0) return fmt::format("${:.2f}", usd);
  // Beyond 1e15 (where llround would no longer fit), digit grouping has no reader.
  if (std::fabs(usd) >= 1e15) return fmt::format("{}${:.3g}", usd < 0 ? "-" : "", std::fabs(usd));
  const auto whole = static_cast<long long>(std::llround(usd));
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (whole < 0 ? "-$" : "$") + out;
}

std::string format_count(double n) {
  const double a = std::fabs(n);
  if (a >= 1e12) return fmt::format("{:.2f}T", n / 1e12);
  if (a >= 1e9) return fmt::format("{:.2f}B", n / 1e9);
  if (a >= 1e6) return fmt::format("{:.1f}M", n / 1e6);
  if (a >= 1e3) return fmt::format("{:.1f}K", n / 1e3);
  return fmt::format("{:.0f}", n);
}

std::string plural(int64_t n, std::string_view one, std::string_view many) {
  if (n == 1) return fmt::format("1 {}", one);
  return many.empty() ? fmt::format("{} {}s", n, one) : fmt::format("{} {}", n, many);
}

Result<double> parse_count(std::string_view text, const std::string& field) {
  static constexpr std::pair<std::string_view, double> kSuffixes[] = {
      {"Ki", 1024.0}, {"Mi", 1024.0 * 1024}, {"Gi", 1024.0 * 1024 * 1024}, {"k", 1e3}, {"K", 1e3},
      {"M", 1e6},     {"B", 1e9},            {"G", 1e9},                   {"T", 1e12}};
  double scale = 1;
  std::string_view digits = text;
  for (const auto& [suffix, factor] : kSuffixes) {
    if (digits.size() > suffix.size() && digits.substr(digits.size() - suffix.size()) == suffix) {
      digits.remove_suffix(suffix.size());
      scale = factor;
      break;
    }
  }
  if (digits.size() > 1 && digits.front() == '+') digits.remove_prefix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc::result_out_of_range && end == digits.data() + digits.size())
    return make_error(field, fmt::format("'{}' is beyond the range of a double", text));
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return make_error(field, fmt::format("'{}' is not a number (suffixes: 128k, 32M, 2B, 1.5T, 4Ki)", text));
  if (!std::isfinite(v) || !std::isfinite(v * scale))
    return make_error(field, fmt::format("must be a finite number, got '{}'", text));
  return v * scale;
}

}  // namespace gpuplan
