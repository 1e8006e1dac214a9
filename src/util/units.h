// Unit constants and human formatting of bytes, seconds, FLOP/s and dollars.
// Quantities carry their unit in the name (`_bytes`, `_s`, `_flops`); these helpers only print them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/status.h"

namespace gpuplan {

inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kGB = 1e9;
inline constexpr double kTera = 1e12;

std::string format_bytes(double bytes);      // "14.60 GiB", binary units
std::string format_seconds(double seconds);  // "1.2 ms", "3.4 s", "2.1 h", "5.3 days"
std::string format_flops(double flops_per_s);  // "312.0 TFLOP/s"
std::string format_usd(double usd);          // "$1,234", "$0.42"
// For chart ticks and labels, at most 3 significant digits: "$604M", "$1.25k", "$950", "$0.42".
std::string format_usd_short(double usd);
std::string format_count(double n);          // "8.03B", "124.4M"

// "1 GPU", "8 GPUs"; `many` defaults to `one` + "s".
std::string plural(int64_t n, std::string_view one, std::string_view many = {});

// A count as people write it: "2B", "1.5T", "128k", "32M", "4Ki" (binary), or a plain number.
// Decimal suffixes k/K, M, B/G, T; binary Ki, Mi, Gi. Non-finite values are refused.
Result<double> parse_count(std::string_view text, const std::string& field);

}  // namespace gpuplan
