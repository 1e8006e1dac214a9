// Checked arithmetic for sizes and counts that come from users (flags, config files, headers):
// an overflow or a non-finite value becomes an Error naming the input, never undefined behaviour
// or a silently wrapped number.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "util/status.h"

namespace gpuplan {

// a + b and a * b, or nullopt when the exact result does not fit in int64.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
// The product of all factors, or nullopt on overflow.
std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors);

// The product of `factors`, or "<field>: <what> overflows" when it does not fit.
Result<int64_t> product_of(std::initializer_list<int64_t> factors, const std::string& field,
                           const std::string& what);

// `v` converted to int64 when it is finite and an exact integer within [lo, hi]; else an error
// naming `field`.
Result<int64_t> to_int64(double v, const std::string& field, int64_t lo, int64_t hi);

// A value from the user that must be a finite number within [lo, hi] (NaN and inf are refused).
Status require_finite(double v, const std::string& field, double lo, double hi);
// A finite number > 0 and <= hi.
Status require_positive(double v, const std::string& field, double hi);
// An integer within [lo, hi].
Status require_range(int64_t v, const std::string& field, int64_t lo, int64_t hi);

}  // namespace gpuplan
