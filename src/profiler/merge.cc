#include "profiler/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace gpuplan {

using nlohmann::json;

namespace {

std::optional<double> number_at(const json& j, const char* a, const char* b = nullptr) {
  if (!j.is_object() || !j.contains(a)) return std::nullopt;
  const json& x = b ? (j[a].is_object() && j[a].contains(b) ? j[a][b] : json()) : j[a];
  if (!x.is_number()) return std::nullopt;
  const double v = x.get<double>();
  return std::isfinite(v) ? std::optional(v) : std::nullopt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A step this much slower than the job's median node is a straggler (run-to-run noise between
// identical nodes is a few percent; ml-engineering reports ~5% spread between GPUs of one node).
constexpr double kStragglerRatio = 1.10;
// GPU busy shares further apart than this (percentage points) within a job are an imbalance.
constexpr double kUtilSpreadPct = 20;
constexpr double kMemorySpread = 0.20;

}  // namespace

Result<json> merge_profiles(const std::vector<std::pair<std::string, json>>& summaries) {
  if (summaries.size() < 2) return make_error("profile merge", "needs the summaries of at least two nodes");
  json nodes = json::array();
  std::vector<double> step_medians;
  struct Gpu {
    std::string node;
    int index;
    double util, mem;
  };
  std::vector<Gpu> gpus;
  std::map<std::string, std::vector<std::string>> findings;  // finding -> nodes
  json diagnosis = json::array();
  for (const auto& [origin, s] : summaries) {
    if (!s.is_object() || !s.contains("schema_version")) return make_error(origin, "is not a gpuplan profile summary");
    const std::string node = s.contains("hostname") && s["hostname"].is_string() ? s["hostname"].get<std::string>() : origin;
    const auto step = number_at(s, "steps", "median_s");
    const auto count = number_at(s, "steps", "count");
    const auto exit_code = number_at(s, "exit_code");
    json n = {{"node", node}, {"source", origin}, {"step_median_s", step ? json(*step) : json(nullptr)},
              {"steps", count ? json(static_cast<int64_t>(*count)) : json(nullptr)},
              {"exit_code", exit_code ? json(static_cast<int64_t>(*exit_code)) : json(nullptr)},
              {"wall_s", number_at(s, "wall_s") ? json(*number_at(s, "wall_s")) : json(nullptr)}};
    if (step) step_medians.push_back(*step);
    double util_sum = 0;
    int util_n = 0;
    if (s.contains("gpus") && s["gpus"].is_array()) {
      for (const auto& g : s["gpus"]) {
        const auto u = number_at(g, "util_mean");
        const auto m = number_at(g, "memory_peak_bytes");
        const auto i = number_at(g, "index");
        if (u) util_sum += *u, ++util_n;
        if (u || m) gpus.push_back({node, i ? static_cast<int>(*i) : 0, u.value_or(NAN), m.value_or(NAN)});
      }
    }
    n["gpu_util_mean"] = util_n ? json(util_sum / util_n) : json(nullptr);
    n["gpus"] = s.contains("gpus") && s["gpus"].is_array() ? s["gpus"].size() : 0;
    if (s.contains("diagnosis") && s["diagnosis"].is_array())
      for (const auto& d : s["diagnosis"])
        if (d.is_object() && d.contains("finding") && d["finding"].is_string()) findings[d["finding"].get<std::string>()].push_back(node);
    if (exit_code && *exit_code != 0)
      diagnosis.push_back({{"finding", "failed node"},
                           {"evidence", fmt::format("{} exited with status {}", node, static_cast<int64_t>(*exit_code))},
                           {"advice", "Read that node's log first: the other nodes' numbers describe a job that lost a member."}});
    nodes.push_back(n);
  }
  json job = {{"nodes", summaries.size()}};
  if (step_medians.size() >= 2) {
    const double mid = median(step_medians);
    const auto [lo, hi] = std::minmax_element(step_medians.begin(), step_medians.end());
    job["step_median_s"] = mid;
    job["step_spread"] = *lo > 0 ? json(*hi / *lo) : json(nullptr);
    for (auto& n : nodes) {
      if (!n["step_median_s"].is_number()) continue;
      const double ratio = n["step_median_s"].get<double>() / mid;
      n["step_over_job_median"] = ratio;
      if (ratio > kStragglerRatio)
        diagnosis.push_back({{"finding", "straggler"},
                             {"evidence", fmt::format("{} steps in {:.3g} s, {:.0f}% slower than the job's median node ({:.3g} s)",
                                                      n["node"].get<std::string>(), n["step_median_s"].get<double>(), (ratio - 1) * 100, mid)},
                             {"advice", "Every node waits for the slowest at each all-reduce: check that node's GPUs for throttling "
                                        "(its own summary), its network link, and its input pipeline; or drain it from the job."}});
    }
  } else {
    diagnosis.push_back({{"finding", "no step times"},
                         {"evidence", fmt::format("{} of {} nodes recognised steps", step_medians.size(), summaries.size())},
                         {"advice", "Pass --step-regex (or write step lines to $GPUPLAN_MARKER_FD) on every node to compare them."}});
  }
  std::vector<const Gpu*> with_util, with_mem;
  for (const auto& g : gpus) {
    if (!std::isnan(g.util)) with_util.push_back(&g);
    if (!std::isnan(g.mem)) with_mem.push_back(&g);
  }
  if (with_util.size() >= 2) {
    auto [lo, hi] = std::minmax_element(with_util.begin(), with_util.end(), [](auto* a, auto* b) { return a->util < b->util; });
    job["gpu_util_spread_pct"] = (*hi)->util - (*lo)->util;
    if ((*hi)->util - (*lo)->util > kUtilSpreadPct)
      diagnosis.push_back({{"finding", "imbalance"},
                           {"evidence", fmt::format("GPU busy time ranges from {:.0f}% ({} gpu {}) to {:.0f}% ({} gpu {})", (*lo)->util,
                                                    (*lo)->node, (*lo)->index, (*hi)->util, (*hi)->node, (*hi)->index)},
                           {"advice", "Uneven work per rank: check the data sharding (uneven sequence lengths), pipeline stage "
                                      "balance, or a GPU waiting on a slower peer."}});
  }
  if (with_mem.size() >= 2) {
    auto [lo, hi] = std::minmax_element(with_mem.begin(), with_mem.end(), [](auto* a, auto* b) { return a->mem < b->mem; });
    if ((*hi)->mem > 0 && ((*hi)->mem - (*lo)->mem) / (*hi)->mem > kMemorySpread)
      diagnosis.push_back({{"finding", "memory imbalance"},
                           {"evidence", fmt::format("peak GPU memory ranges from {:.1f} GiB ({} gpu {}) to {:.1f} GiB ({} gpu {})",
                                                    (*lo)->mem / 1073741824.0, (*lo)->node, (*lo)->index, (*hi)->mem / 1073741824.0,
                                                    (*hi)->node, (*hi)->index)},
                           {"advice", "The fullest GPU limits the batch for all: balance pipeline stages or the embedding/loss "
                                      "placement, or shard optimizer state (ZeRO/FSDP)."}});
  }
  for (const auto& [finding, where] : findings)
    if (where.size() < summaries.size())
      diagnosis.push_back({{"finding", "only on some nodes: " + finding},
                           {"evidence", fmt::format("{} of {} nodes: {}", where.size(), summaries.size(), fmt::join(where, ", "))},
                           {"advice", "A problem on some nodes only points at those machines (cooling, power cap, a slow disk), "
                                      "not at the training script."}});
    else
      diagnosis.push_back({{"finding", "every node: " + finding},
                           {"evidence", fmt::format("all {} nodes report it", summaries.size())},
                           {"advice", "It is the job's, not a machine's: see the per-node advice."}});
  return json{{"schema_version", 1}, {"job", job}, {"nodes", nodes}, {"diagnosis", diagnosis}};
}

}  // namespace gpuplan
