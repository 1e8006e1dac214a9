// The advisor's report as one self-contained HTML file (inline CSS and SVG, no scripts, nothing
// fetched): the recommendation and its reasons, the candidates, the memory breakdown, cost against
// time with the Pareto front, and the roofline of the chosen GPU.
#pragma once

#include <string>

#include "advise/advisor.h"
#include "memory/memory_model.h"
#include "perf/phase_roofline.h"

namespace gpuplan {

struct ReportFigures {
  const MemoryEstimate* memory = nullptr;    // of the recommendation's first job or service
  std::string memory_title;
  const RooflineReport* roofline = nullptr;  // on the recommended GPU
  std::string roofline_title;
  double capacity_bytes = 0;
};

std::string render_html(const AdviseRequest& req, const Advice& advice, const ReportFigures& figures);
std::string render_markdown(const AdviseRequest& req, const Advice& advice);

}  // namespace gpuplan
