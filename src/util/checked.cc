#include "util/checked.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuplan {

std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    auto next = checked_mul(r, f);
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

Result<int64_t> product_of(std::initializer_list<int64_t> factors, const std::string& field,
                           const std::string& what) {
  auto p = checked_product(factors);
  if (!p) return make_error(field, what + " overflows a 64-bit integer");
  return *p;
}

Result<int64_t> to_int64(double v, const std::string& field, int64_t lo, int64_t hi) {
  if (!std::isfinite(v))
    return make_error(field, fmt::format("must be a finite number, got {}", v));
  if (v != std::floor(v)) return make_error(field, fmt::format("must be an integer, got {}", v));
  // Compare as doubles before converting: a double beyond the int64 range has no defined
  // conversion.
  if (v < -0x1p63 || v >= 0x1p63 || v < static_cast<double>(lo) || v > static_cast<double>(hi))
    return make_error(field, fmt::format("must be between {} and {}, got {}", lo, hi, v));
  const auto r = static_cast<int64_t>(v);
  if (r < lo || r > hi)
    return make_error(field, fmt::format("must be between {} and {}, got {}", lo, hi, v));
  return r;
}

Status require_finite(double v, const std::string& field, double lo, double hi) {
  if (!std::isfinite(v))
    return make_error(field, fmt::format("must be a finite number, got {}", v));
  if (v < lo || v > hi)
    return make_error(field, fmt::format("must be between {} and {}, got {}", lo, hi, v));
  return std::nullopt;
}

Status require_positive(double v, const std::string& field, double hi) {
  if (!std::isfinite(v))
    return make_error(field, fmt::format("must be a finite number, got {}", v));
  if (!(v > 0)) return make_error(field, fmt::format("must be positive, got {}", v));
  if (v > hi) return make_error(field, fmt::format("{} is absurd (the limit is {})", v, hi));
  return std::nullopt;
}

Status require_range(int64_t v, const std::string& field, int64_t lo, int64_t hi) {
  if (v < lo || v > hi)
    return make_error(field, fmt::format("must be between {} and {}, got {}", lo, hi, v));
  return std::nullopt;
}

}  // namespace gpuplan
