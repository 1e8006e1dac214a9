// `gpuplan profile merge DIR...`: one diagnosis across the nodes of a job, from each node's
// summary.json. In synchronous data parallel every node waits for the slowest, so a straggler or an
// imbalance between GPUs costs the whole job; this names which node and by how much.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "util/status.h"

namespace gpuplan {

// `summaries` pairs where each came from (a folder) with its parsed summary.json. Fails naming the
// source and field when a summary lacks what the diagnosis needs.
Result<nlohmann::json> merge_profiles(const std::vector<std::pair<std::string, nlohmann::json>>& summaries);

}  // namespace gpuplan
