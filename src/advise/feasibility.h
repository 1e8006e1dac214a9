// The platform rules a GPU must pass for a workload before any plan is priced: the data types its
// architecture really has, where the software the jobs need runs, and how long its toolchain lasts.
// Each failure is a rule and a reason; each concern short of failure, a caveat. From the facts of
// data/platform.toml, quoted with their sources.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advise/sentence.h"
#include "advise/workload_file.h"
#include "hardware/gpu.h"
#include "hardware/platform.h"

namespace gpuplan {

struct PlatformVerdict {
  std::string rule;  // empty when the GPU passes
  Sentence why;
  std::vector<Sentence> caveats;
  // Texts the sentences quote (software verdicts, architecture notes), printed under "notes" in the
  // candidate's JSON entry; the sentences' facts point at "notes/<key>".
  std::map<std::string, std::string> notes;
};

PlatformVerdict check_platform(const AdviseRequest& req, const Gpu& gpu, const Platform& platform);

}  // namespace gpuplan
