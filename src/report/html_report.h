// The advisor's report as one self-contained HTML file (inline CSS and SVG, no scripts, nothing
// fetched) that a manager can sign off: the inputs restated, the date, version and price dates, the
// recommendation and its reasons, the candidates with error bands on time and cost, the memory
// breakdown, cost against time with the deadline, budget and Pareto front, and the roofline.
#pragma once

#include <optional>
#include <string>

#include "advise/advisor.h"
#include "memory/memory_model.h"
#include "perf/phase_roofline.h"

namespace gpuplan {

// The spread of the model's error on training time: the measured time lies between low x and
// high x the estimate for 80% of comparable published runs (`basis` says which).
struct ErrorBand {
  double low = 1, high = 1;
  std::string basis;
};

struct ReportFigures {
  std::string generated_on;  // "2026-12-03"
  std::string version;       // version_line()
  std::optional<ErrorBand> time_band;
  const MemoryEstimate* memory = nullptr;    // of the recommendation's first job or service
  std::string memory_title;
  const RooflineReport* roofline = nullptr;  // on the recommended GPU
  std::string roofline_title;
  double capacity_bytes = 0;
};

std::string render_html(const AdviseRequest& req, const Advice& advice, const ReportFigures& figures);
std::string render_markdown(const AdviseRequest& req, const Advice& advice);

}  // namespace gpuplan
