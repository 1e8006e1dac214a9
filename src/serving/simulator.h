// Serving under load: requests arrive (a Poisson rate, a trace, or users who wait and think), and
// the engine's scheduler runs them iteration by iteration the way vLLM-class engines do (continuous
// batching under a token budget, chunked prefill, KV-cache blocks with preemption when they run
// out, prefix-cache hits, speculative decoding), or as static batches for engines that have none.
// The event loop is explicit and the random source seeded, so a run is reproducible.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/engine.h"
#include "serving/step_cost.h"
#include "util/status.h"

namespace gpuplan {

struct SimRequest {
  double arrival_s = 0;
  int64_t prompt_tokens = 0, output_tokens = 0;
};

// Where requests come from. Open loop: `requests` with their arrival times. Closed loop: `users`
// each sending the next of `requests` (arrival times ignored) after the previous one finished and
// an exponentially distributed think time.
struct Load {
  std::vector<SimRequest> requests;
  int64_t users = 0;       // > 0: closed loop
  double think_time_s = 0;
  // Users start spread evenly over this span (load generators ramp up); started together with no
  // think time they would stay in lockstep, every request arriving with all the others.
  double ramp_s = 0;
};

struct ServingSetup {
  StepCost cost;
  int64_t kv_capacity_tokens = 0;  // the engine's KV-cache budget (inference_memory)
  int64_t kv_block_tokens = 16;
  int64_t max_batched_tokens = 8192, max_num_seqs = 256;
  bool chunked_prefill = true, continuous_batching = true;
  bool reserve_output_kv = false;  // admit only with the whole request's KV reserved (Engine::reserve_output_kv)
  // Prompts run in steps of their own, ahead of decoding, while any can (Engine::prefill_first).
  bool prefill_first = false;
  // A step lasts at least this times the sequences it emits a token for: the serving frontend's
  // output processing beside the engine (Engine::frontend_seq_step_s).
  double frontend_seq_step_s = 0;
  // The frontend's time to take in one request (parse, tokenise, hand to the engine): requests
  // reach the scheduler as fast as the frontend's time left over from streaming allows.
  double frontend_request_s = 0;
  // Multi-step scheduling (vLLM's --num-scheduler-steps): after a step that admits, the batch runs
  // this many steps in all before the scheduler admits waiting requests again.
  int64_t scheduler_steps = 1;
  double prefix_hit_rate = 0;     // share of each prompt found in the prefix cache
  // A preempted request's blocks stay in the prefix cache, free but still holding its tokens, until
  // other allocations take them; admitted again, it recomputes only what was taken (engines with a
  // prefix cache: Engine::prefix_caching).
  bool retain_preempted_kv = false;
  int64_t spec_tokens = 0;        // speculative tokens proposed per step (0: none)
  double acceptance_rate = 0;     // chance each proposed token is accepted
  double ttft_target_s = 1, tpot_target_s = 0.1;  // the SLO goodput counts against
  uint64_t seed = 1;
};

struct Percentiles {
  double p50 = 0, p90 = 0, p99 = 0, mean = 0;
};

struct ServingResult {
  Percentiles ttft_s, tpot_s, e2e_s;
  double throughput_tokens_per_s = 0;  // output tokens over the span from first arrival to last finish
  double requests_per_s = 0, goodput_rps = 0;  // goodput: requests meeting both latency targets
  double span_s = 0, mean_batch = 0;
  int64_t completed = 0, steps = 0, preemptions = 0;
  // Share of the span the serving frontend was busy streaming tokens and taking in requests
  // (Engine::frontend_seq_step_s, frontend_request_s); near 1 it, not the GPU, sets the pace.
  double frontend_busy_share = 0;
};

// The engine's scheduling rules and KV budget as a setup (the caller adds the cost and workload knobs).
// `context_tokens` is the model's context length, for an engine that sizes its sequence limit from
// the cache by it (0: the engine's fixed limit).
ServingSetup setup_for(const Engine& engine, const Gpu& gpu, const StepCost& cost, int64_t kv_capacity_tokens,
                       int64_t context_tokens = 0);

// Fails (naming `field`) when a request can never fit the KV cache.
Result<ServingResult> simulate_serving(const ServingSetup& s, const Load& load);

// `count` requests of fixed lengths arriving as a Poisson process at `rps` (seeded).
std::vector<SimRequest> poisson_arrivals(int64_t count, double rps, int64_t prompt_tokens, int64_t output_tokens,
                                         uint64_t seed);
// Gives trace requests without arrival times Poisson arrivals at `rps` (all at 0 when rps is 0).
void assign_arrivals(std::vector<SimRequest>& requests, double rps, uint64_t seed);

// Chat traffic's spread of lengths in place of equal ones: prompt and output tokens drawn
// exponentially, kept only where vllm bench keeps a ShareGPT conversation (both at least 4 tokens,
// the prompt at most 1,024, the two at most 2,048: vllm/benchmarks/datasets.py is_valid_sequence),
// with the exponentials' means set so that the kept lengths average `mean_prompt` and
// `mean_output` (as far as the caps allow). The exponential shape is an assumption: no published
// fit of ShareGPT's length distribution was found. Arrival times are kept.
inline constexpr int64_t kChatMaxPrompt = 1024, kChatMaxTotal = 2048, kChatMinTokens = 4;
void draw_chat_lengths(std::vector<SimRequest>& requests, int64_t mean_prompt, int64_t mean_output, uint64_t seed);
// Capped at 1,024 and 2,048 tokens, exponential draws cannot average more than about half the
// caps: the means chat lengths accept.
inline bool chat_means_reachable(int64_t mean_prompt, int64_t mean_output) {
  return mean_prompt <= kChatMaxPrompt / 2 && mean_prompt + mean_output <= kChatMaxTotal / 2;
}
// Reads a `lengths` setting: "fixed" (false) or "chat" (true), the latter only for means chat
// lengths reach. Errors name `field`, and `prompt` and `output` as the caller's input calls them.
Result<bool> parse_lengths(const std::string& lengths, int64_t mean_prompt, int64_t mean_output, const std::string& field,
                           const std::string& prompt, const std::string& output);

}  // namespace gpuplan
