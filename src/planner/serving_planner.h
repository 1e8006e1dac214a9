// The serving planner: for each tensor-parallel degree, the highest request rate one replica serves
// with its p99 time to first token and time per output token within the targets (found by
// bisection over the rate, each point a seeded run of the serving simulator under the engine's
// scheduling rules), hence the fewest replicas at peak and at average load, and the headroom left.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "engine/engine.h"
#include "perf/inference.h"
#include "serving/simulator.h"
#include "workload/workload.h"

namespace gpuplan {

struct ServiceTarget {
  int64_t prompt_tokens = 1024, output_tokens = 256;  // each request's, or the means with chat_lengths
  bool chat_lengths = false;  // lengths spread as chat traffic's (draw_chat_lengths), not all equal
  double peak_rps = 1, average_rps = 1;  // requests per second
  double ttft_s = 1.0, tpot_s = 0.1;     // latency targets
};

// Whether the planner tries attention data parallelism (MoE models on engines that offer it):
// automatic plans each TP >= 2 both ways, on only with it, off only without.
enum class AttentionDpChoice { automatic, on, off };
// "auto", "on" or "off"; nullopt for anything else.
std::optional<AttentionDpChoice> parse_attention_dp_choice(const std::string& s);
// Why `choice` cannot apply to `m` on `engine` ("on" needs a MoE model and an engine that offers
// attention DP), or empty.
std::string attention_dp_choice_refusal(AttentionDpChoice choice, const ModelSpec& m, const Engine& engine);

struct ServingOption {
  int64_t tp = 1;
  bool attention_dp = false;      // attention data-parallel over the tp GPUs (Engine::use_attention_dp)
  int64_t concurrency = 0;        // requests in flight per replica at the peak rate (mean batch)
  double ttft_s = 0, tpot_s = 0;  // p99 at the peak rate per replica
  double replica_rps = 0;         // the highest rate one replica serves within the p99 targets
  double headroom = 0;            // share of the replicas' capacity left unused at peak
  double in_flight_at_capacity = 0;  // requests running on a replica at replica_rps
  int64_t replicas_peak = 0, replicas_min = 0;
  int64_t gpus_peak = 0, gpus_min = 0;
  double tokens_per_s_per_gpu = 0;
  std::string why_not;            // empty when the option meets the targets
  bool ok() const { return why_not.empty(); }
};

struct ServingPlan {
  std::optional<ServingOption> best;  // fewest GPUs at peak
  std::vector<ServingOption> options;
  std::string refused;  // why the engine cannot be modelled serving these weights on this GPU
};

// Each point of the search simulates a minute of arrivals (at least kPlannerMinRequests, at most
// kPlannerMaxRequests): long enough that a rate above capacity shows as a growing queue rather than
// hiding in the warm-up. The arrivals are the same seeded Poisson sequence scaled to each rate, so
// the p99s rise with the rate and the bisection converges.
inline constexpr double kPlannerWindowS = 60;
inline constexpr int64_t kPlannerMinRequests = 300, kPlannerMaxRequests = 4000;

// One replica of `tp` GPUs: the highest rate it serves within the p99 targets, the replicas the
// target's peak and average rates need, and the p99s at peak (why_not says why it cannot serve).
ServingOption plan_replica(const ModelSpec& m, const Workload& base, int64_t tp, const Gpu& gpu, const Efficiency& eff,
                           const Cluster& cluster, const ServiceTarget& target, const Engine& engine,
                           bool attention_dp = false);

// plan_replica at every tensor-parallel degree that divides the heads, up to the node, and for a
// mixture-of-experts model on an engine that offers it, with attention data-parallel too (or only
// with it, or never, as `adp` says).
ServingPlan plan_serving(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff,
                         const Cluster& cluster, const ServiceTarget& target, const Engine& engine,
                         AttentionDpChoice adp = AttentionDpChoice::automatic);

// Whether one replica meets the p99 targets at `rps` (the planner's predicate, exposed for tests).
struct ReplicaLoad {
  bool meets = false;
  double ttft_p99_s = 0, tpot_p99_s = 0, mean_batch = 0;
};
ReplicaLoad replica_at_rate(const ServingSetup& setup, const ServiceTarget& t, double rps);

}  // namespace gpuplan
