// Request traces: the prompt and output lengths (and, optionally, arrival times) of real or
// synthetic traffic, as CSV with a header or as JSON Lines. Parsing is strict: every line is
// checked, and an error names the line and the field.
//   CSV:   prompt_tokens,output_tokens[,arrival_s]      (header required, columns in any order)
//   JSONL: {"prompt_tokens": 812, "output_tokens": 190, "arrival_s": 0.35}
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "serving/simulator.h"
#include "util/status.h"

namespace gpuplan {

struct Trace {
  std::vector<SimRequest> requests;
  bool has_arrivals = false;  // every row gave arrival_s (non-decreasing)
};

inline constexpr size_t kMaxTraceRequests = 1'000'000;
inline constexpr int64_t kMaxTraceTokens = 1 << 24;

// `origin` names the text in errors ("--trace: requests.csv"). Format by content: a first
// non-blank character '{' means JSON Lines, anything else CSV.
Result<Trace> parse_trace(std::string_view text, const std::string& origin);

}  // namespace gpuplan
