#include "serving/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>

namespace gpuplan {

namespace {

// splitmix64: a small generator whose sequence is the same on every platform and library.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  double uniform() {  // [0, 1)
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }

 private:
  uint64_t state_;
};

// A request as the scheduler sees it.
struct Live {
  size_t id = 0;
  int64_t prefill_left = 0;  // prompt (and, after preemption, generated) tokens still to prefill
  int64_t cached = 0;        // tokens whose KV is in the cache
  int64_t blocks = 0;        // KV blocks held
  double generated = 0;      // output tokens so far (fractional under speculative decoding)
  bool decoding = false;
};

struct Outcome {
  double first_s = -1, finish_s = -1;
};

int64_t blocks_for(int64_t tokens, int64_t block) { return (tokens + block - 1) / block; }

// Tokens of a prompt served from the prefix cache; at least the last one is always computed.
int64_t prefix_hit(const ServingSetup& s, int64_t prompt) {
  return std::min<int64_t>(static_cast<int64_t>(std::floor(s.prefix_hit_rate * static_cast<double>(prompt))), prompt - 1);
}

// Expected tokens a decode step emits per sequence: 1 without speculation; with k proposals each
// accepted with probability a, (1 - a^(k+1)) / (1 - a) (Leviathan et al. 2023, eq. 1).
double tokens_per_step(const ServingSetup& s) {
  if (s.spec_tokens <= 0) return 1;
  const double a = s.acceptance_rate, k = static_cast<double>(s.spec_tokens);
  return a >= 1 ? k + 1 : (1 - std::pow(a, k + 1)) / (1 - a);
}

class Simulation {
 public:
  Simulation(const ServingSetup& s, const Load& load)
      : s_(s), load_(load), rng_(s.seed), out_(load.requests.size()), emit_(tokens_per_step(s)),
        capacity_blocks_(s.kv_capacity_tokens / s.kv_block_tokens) {}

  Result<ServingResult> run();

 private:
  void release_arrivals();
  bool can_admit_next() const;
  int64_t blocks_to_admit(const Live& r, int64_t cached, int64_t want) const;
  void take_in(size_t id);
  void through_frontend();
  void admit_next_of_user(double at);
  bool ensure_blocks(size_t i, int64_t tokens, bool& self_preempted);
  void take_free_blocks(int64_t n);
  int64_t cached_if_admitted(const Live& r) const;
  void reclaim_retained(Live& r, int64_t cached);
  void preempt_last();
  void finish(const Live& r);
  Status continuous_step();
  void static_batch();
  ServingResult summarise() const;

  const ServingSetup& s_;
  const Load& load_;
  Rng rng_;
  std::vector<Outcome> out_;
  const double emit_;
  const int64_t capacity_blocks_;
  int64_t used_blocks_ = 0;
  // Free blocks that still hold preempted requests' tokens, and those requests, oldest first.
  int64_t retained_blocks_ = 0;
  std::deque<std::pair<size_t, int64_t>> retained_order_;  // (request, its preemption count then)
  std::vector<int64_t> retained_of_, preempted_;              // by request id
  double now_ = 0, batch_sum_ = 0;
  int64_t steps_ = 0, preemptions_ = 0;
  double frontend_busy_s_ = 0;
  int64_t steps_until_admit_ = 0;  // multi-step scheduling: steps left before the next admission
  size_t next_request_ = 0;  // closed loop: the next request a user sends
  std::priority_queue<std::pair<double, size_t>, std::vector<std::pair<double, size_t>>, std::greater<>> arrivals_;
  std::vector<double> arrival_s_;
  std::deque<Live> waiting_;
  std::deque<size_t> frontend_q_;  // arrived, not yet through the frontend
  double frontend_credit_s_ = 0;   // frontend time left over from streaming, for taking in requests
  std::vector<Live> running_;
  // Per-step scratch, kept across steps: the advisor runs millions of steps and an allocation
  // per step was a third of its time.
  std::vector<std::pair<size_t, int64_t>> chunks_;  // (index in running_, prefill tokens; 0 = decode)
  std::vector<char> done_;
};

void Simulation::admit_next_of_user(double at) {
  if (next_request_ >= load_.requests.size()) return;
  arrival_s_[next_request_] = at;
  arrivals_.push({at, next_request_++});
}

void Simulation::take_in(size_t id) {
  const SimRequest& q = load_.requests[id];
  const int64_t hit = prefix_hit(s_, q.prompt_tokens);
  Live r;
  r.id = id;
  r.prefill_left = q.prompt_tokens - hit;
  r.cached = hit;
  waiting_.push_back(r);
}

void Simulation::release_arrivals() {
  while (!arrivals_.empty() && arrivals_.top().first <= now_) {
    const size_t id = arrivals_.top().second;
    arrivals_.pop();
    if (s_.frontend_request_s > 0) frontend_q_.push_back(id);
    else take_in(id);
  }
}

// Requests the frontend has had the time to take in reach the scheduler; time it had with nothing
// to take in is gone.
void Simulation::through_frontend() {
  while (!frontend_q_.empty() && frontend_credit_s_ >= s_.frontend_request_s) {
    take_in(frontend_q_.front());
    frontend_q_.pop_front();
    frontend_credit_s_ -= s_.frontend_request_s;
    frontend_busy_s_ += s_.frontend_request_s;
  }
  if (frontend_q_.empty()) frontend_credit_s_ = 0;
}

// Recompute preemption, as vLLM does by default: the most recently admitted request gives up its
// blocks and goes back to the head of the queue, to prefill its prompt and output so far again.
// Under a prefix cache its blocks are freed but keep their contents (vLLM's KVCacheManager frees
// them to the tail of the free queue and finds them again by hash on re-admission), so it loses
// only what other requests allocate over them meanwhile.
void Simulation::preempt_last() {
  Live r = running_.back();
  running_.pop_back();
  used_blocks_ -= r.blocks;
  const SimRequest& q = load_.requests[r.id];
  const int64_t hit = prefix_hit(s_, q.prompt_tokens);
  if (s_.retain_preempted_kv && r.blocks > 0) {
    retained_blocks_ += r.blocks;
    retained_of_[r.id] = r.blocks;
    retained_order_.emplace_back(r.id, ++preempted_[r.id]);
  }
  r.cached = hit;
  r.blocks = 0;
  r.prefill_left = q.prompt_tokens - hit + static_cast<int64_t>(r.generated);
  r.decoding = false;
  waiting_.push_front(r);
  ++preemptions_;
}

// Allocates n free blocks: never-used and finished requests' blocks first, then, least recently
// freed first, those still holding preempted requests' tokens. (vLLM's free queue is one LRU list,
// where blocks a later finish freed would go after a preempted request's; taking them first keeps
// a preempted request's tokens a little longer than vLLM does.)
void Simulation::take_free_blocks(int64_t n) {
  used_blocks_ += n;
  int64_t evict = used_blocks_ + retained_blocks_ - capacity_blocks_;
  while (evict > 0 && !retained_order_.empty()) {
    const auto [id, count] = retained_order_.front();
    int64_t& kept = retained_of_[id];
    if (count != preempted_[id] || kept == 0) {  // admitted again since
      retained_order_.pop_front();
      continue;
    }
    const int64_t take = std::min(kept, evict);
    kept -= take;
    retained_blocks_ -= take;
    evict -= take;
  }
}

int64_t Simulation::cached_if_admitted(const Live& r) const {
  const int64_t kept = retained_of_[r.id];
  if (kept <= 0) return r.cached;
  const int64_t total = load_.requests[r.id].prompt_tokens + static_cast<int64_t>(r.generated);
  return std::max(r.cached, std::min(kept * s_.kv_block_tokens, total - 1));
}

// A preempted request admitted again takes back what is left of its blocks: those tokens are
// cached (`cached`, from cached_if_admitted: all but the last, a forward computes at least one).
void Simulation::reclaim_retained(Live& r, int64_t cached) {
  int64_t& kept = retained_of_[r.id];
  if (kept <= 0) return;
  retained_blocks_ -= kept;
  used_blocks_ += kept;
  r.blocks = kept;
  kept = 0;
  r.prefill_left -= cached - r.cached;
  r.cached = cached;
}

// Makes room for running_[i] to hold `tokens` cached tokens, preempting from the back.
bool Simulation::ensure_blocks(size_t i, int64_t tokens, bool& self_preempted) {
  // Under reserve_output_kv the request holds its whole reservation already: nothing to add. Most
  // steps stay within the blocks a request holds; the division below is only for those that do not.
  if (tokens <= running_[i].blocks * s_.kv_block_tokens) return true;
  const int64_t need = std::max<int64_t>(0, blocks_for(tokens, s_.kv_block_tokens) - running_[i].blocks);
  while (used_blocks_ + need > capacity_blocks_) {
    if (running_.size() - 1 == i) {
      preempt_last();
      self_preempted = true;
      return false;
    }
    preempt_last();
  }
  take_free_blocks(need);
  running_[i].blocks += need;
  return true;
}

void Simulation::finish(const Live& r) {
  out_[r.id].finish_s = now_;
  used_blocks_ -= r.blocks;
  if (load_.users > 0) admit_next_of_user(now_ + rng_.exponential(load_.think_time_s));
}

// The KV blocks a waiting request holds once admitted with `cached` tokens found and `want` more
// prefilled: those, or, reserving outputs, its whole request's.
int64_t Simulation::blocks_to_admit(const Live& r, int64_t cached, int64_t want) const {
  const SimRequest& q = load_.requests[r.id];
  return blocks_for(s_.reserve_output_kv ? q.prompt_tokens + q.output_tokens : cached + want, s_.kv_block_tokens);
}

// Whether the head of the queue could be admitted now: a sequence slot and the KV blocks its first
// chunk (or, reserving outputs, its whole request) needs.
bool Simulation::can_admit_next() const {
  if (waiting_.empty() || static_cast<int64_t>(running_.size()) >= s_.max_num_seqs) return false;
  const Live& r = waiting_.front();
  const int64_t cached = cached_if_admitted(r), left = r.prefill_left - (cached - r.cached);
  const int64_t want = s_.chunked_prefill ? std::min(left, s_.max_batched_tokens) : left;
  return used_blocks_ + blocks_to_admit(r, cached, want) <= capacity_blocks_;
}

// One iteration of a continuous-batching scheduler under a token budget: running requests first
// (one decode token each, or their next prefill chunk), then waiting ones while the budget, the
// sequence limit and the KV cache allow; no admissions in a step that had to preempt. A
// prefill-first scheduler (SGLang's) instead runs prompts alone while any can run, and decodes in
// the steps between.
Status Simulation::continuous_step() {
  int64_t budget = s_.max_batched_tokens;
  const int64_t per_seq = 1 + std::max<int64_t>(0, s_.spec_tokens);
  double decode_seqs = 0, context = 0, prefill = 0, pairs = 0;
  auto& chunks = chunks_;
  chunks.clear();
  bool preempted = false;
  const bool may_admit = steps_until_admit_ <= 0 || running_.empty();
  bool prefill_turn = false;
  if (s_.prefill_first) {
    prefill_turn = may_admit && can_admit_next();
    for (const Live& r : running_) prefill_turn = prefill_turn || !r.decoding;
  }
  // The running requests' part of the step: all of them, or under prefill-first only the decoding
  // ones or only the prefilling ones.
  auto schedule_running = [&]() {
    for (size_t i = 0; i < running_.size(); ++i) {
      Live& r = running_[i];
      if (s_.prefill_first && r.decoding == prefill_turn) continue;
      const int64_t want = r.decoding ? per_seq : std::min(r.prefill_left, budget);
      if (budget < (r.decoding ? per_seq : 1) || (!r.decoding && !s_.chunked_prefill && want < r.prefill_left)) break;
      bool self = false;
      const int64_t before = preemptions_;
      if (!ensure_blocks(i, r.cached + want, self)) {
        preempted = true;
        break;
      }
      preempted = preempted || preemptions_ != before;
      Live& rr = running_[i];
      budget -= want;
      if (rr.decoding) {
        decode_seqs += 1;
        context += static_cast<double>(rr.cached);
        chunks.emplace_back(i, 0);
      } else {
        prefill += static_cast<double>(want);
        pairs += static_cast<double>(want) * (static_cast<double>(rr.cached) + static_cast<double>(want) / 2);
        chunks.emplace_back(i, want);
      }
    }
  };
  schedule_running();
  if (prefill_turn && chunks.empty() && preempted) {
    // A prompt's next chunk found no room: the step decodes instead.
    prefill_turn = false;
    budget = s_.max_batched_tokens;
    schedule_running();
  }
  if (may_admit) steps_until_admit_ = s_.scheduler_steps;
  if (used_blocks_ < capacity_blocks_ && !preempted && may_admit && (!s_.prefill_first || prefill_turn)) {
    while (!waiting_.empty() && static_cast<int64_t>(running_.size()) < s_.max_num_seqs && budget > 0) {
      Live r = waiting_.front();
      const int64_t cached = cached_if_admitted(r), left = r.prefill_left - (cached - r.cached);
      int64_t want = std::min(left, budget);
      if (!s_.chunked_prefill && want < left) {
        if (!chunks.empty()) break;
        want = left;  // an unchunked prompt longer than the budget runs alone
      }
      const int64_t need = blocks_to_admit(r, cached, want);
      // Blocks still holding this request's tokens are among the free ones: they count once.
      if (used_blocks_ + need > capacity_blocks_) break;
      waiting_.pop_front();
      reclaim_retained(r, cached);
      take_free_blocks(std::max<int64_t>(0, need - r.blocks));
      r.blocks = std::max(need, r.blocks);  // what it took back may cover one token more than it needs now
      budget -= want;
      prefill += static_cast<double>(want);
      pairs += static_cast<double>(want) * (static_cast<double>(r.cached) + static_cast<double>(want) / 2);
      running_.push_back(r);
      chunks.emplace_back(running_.size() - 1, want);
    }
  }
  if (chunks.empty()) {
    if (arrivals_.empty()) return make_error("simulation", "the scheduler stalled with requests waiting");
    now_ = std::max(now_, arrivals_.top().first);
    return std::nullopt;
  }
  double step = s_.cost.step_s(decode_seqs, static_cast<double>(per_seq), context, prefill, pairs);
  if (s_.frontend_seq_step_s > 0) {
    // The frontend turns out each emitted token beside the engine; where it is the slower, the
    // client sees the steps at its pace.
    double emitting = 0;
    for (auto [i, tokens] : chunks) emitting += tokens == 0 || tokens >= running_[i].prefill_left ? 1 : 0;
    const double streaming = s_.frontend_seq_step_s * emitting;
    frontend_credit_s_ += std::max(0.0, step - streaming);
    frontend_busy_s_ += streaming;
    step = std::max(step, streaming);
  } else {
    frontend_credit_s_ += step;
  }
  now_ += step;
  ++steps_;
  --steps_until_admit_;
  batch_sum_ += static_cast<double>(chunks.size());
  done_.assign(running_.size(), 0);
  bool any_done = false;
  for (auto [i, tokens] : chunks) {
    Live& r = running_[i];
    const SimRequest& q = load_.requests[r.id];
    if (tokens == 0) {
      r.generated += emit_;
      r.cached = q.prompt_tokens + static_cast<int64_t>(r.generated);
    } else {
      r.prefill_left -= tokens;
      r.cached += tokens;
      if (r.prefill_left == 0) {
        r.decoding = true;
        if (out_[r.id].first_s < 0) {
          out_[r.id].first_s = now_;
          r.generated = 1;
        }
      }
    }
    if (r.decoding && r.generated >= static_cast<double>(q.output_tokens)) {
      done_[i] = 1;
      any_done = true;
      finish(r);
    }
  }
  if (!any_done) return std::nullopt;
  size_t kept = 0;
  for (size_t i = 0; i < running_.size(); ++i)
    if (!done_[i]) {
      if (kept != i) running_[kept] = running_[i];
      ++kept;
    }
  running_.resize(kept);
  return std::nullopt;
}

// Static batching (Hugging Face generate): the arrived requests, up to the sequence limit and what
// the cache holds padded to the longest, prefill together and decode until the longest is done;
// the batch returns together.
void Simulation::static_batch() {
  std::vector<Live> batch;
  int64_t longest_prompt = 0, longest_output = 0;
  while (!waiting_.empty() && static_cast<int64_t>(batch.size()) < s_.max_num_seqs) {
    const SimRequest& q = load_.requests[waiting_.front().id];
    const int64_t p = std::max(longest_prompt, q.prompt_tokens), o = std::max(longest_output, q.output_tokens);
    const auto n = static_cast<int64_t>(batch.size()) + 1;
    if (!batch.empty() && blocks_for(n * (p + o), s_.kv_block_tokens) > capacity_blocks_) break;
    longest_prompt = p, longest_output = o;
    batch.push_back(waiting_.front());
    waiting_.pop_front();
  }
  const auto n = static_cast<double>(batch.size());
  const auto lp = static_cast<double>(longest_prompt);
  now_ += s_.cost.step_s(0, 1, 0, n * lp, n * lp * lp / 2);
  const double first = now_;
  for (int64_t j = 1; j < longest_output; ++j) now_ += s_.cost.step_s(n, 1, n * (lp + static_cast<double>(j)), 0, 0);
  steps_ += longest_output;
  batch_sum_ += n * static_cast<double>(longest_output);
  for (const Live& r : batch) {
    out_[r.id].first_s = first;
    out_[r.id].finish_s = now_;
    if (load_.users > 0) admit_next_of_user(now_ + rng_.exponential(load_.think_time_s));
  }
}

Result<ServingResult> Simulation::run() {
  const auto& reqs = load_.requests;
  for (size_t i = 0; i < reqs.size(); ++i) {
    const int64_t need = blocks_for(reqs[i].prompt_tokens + reqs[i].output_tokens, s_.kv_block_tokens);
    if (need > capacity_blocks_)
      return make_error("request", fmt::format("request {} needs {} tokens of KV cache; the engine's cache holds {}", i + 1,
                                               reqs[i].prompt_tokens + reqs[i].output_tokens, capacity_blocks_ * s_.kv_block_tokens));
  }
  arrival_s_.assign(reqs.size(), 0);
  retained_of_.assign(reqs.size(), 0);
  preempted_.assign(reqs.size(), 0);
  if (load_.users > 0) {
    for (int64_t u = 0; u < load_.users; ++u)
      admit_next_of_user(load_.ramp_s * static_cast<double>(u) / static_cast<double>(load_.users) + rng_.exponential(load_.think_time_s));
  } else {
    for (size_t i = 0; i < reqs.size(); ++i) arrivals_.push({reqs[i].arrival_s, i}), arrival_s_[i] = reqs[i].arrival_s;
  }
  while (!arrivals_.empty() || !frontend_q_.empty() || !waiting_.empty() || !running_.empty()) {
    release_arrivals();
    through_frontend();
    if (waiting_.empty() && running_.empty()) {
      if (!frontend_q_.empty()) {
        // An idle engine: the frontend's whole time goes to taking in the next request.
        now_ += s_.frontend_request_s - frontend_credit_s_;
        frontend_credit_s_ = s_.frontend_request_s;
      } else {
        now_ = arrivals_.top().first;
      }
      continue;
    }
    if (s_.continuous_batching) {
      if (auto e = continuous_step()) return *e;
    } else {
      static_batch();
    }
  }
  return summarise();
}

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {  // nearest rank
    const auto k = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  p.p50 = at(0.50), p.p90 = at(0.90), p.p99 = at(0.99);
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

ServingResult Simulation::summarise() const {
  ServingResult r;
  std::vector<double> ttft, tpot, e2e;
  double start = 1e300, end = 0, tokens = 0;
  int64_t good = 0;
  const double fixed = s_.cost.request_overhead_s;
  for (size_t i = 0; i < out_.size(); ++i) {
    const SimRequest& q = load_.requests[i];
    const double t1 = out_[i].first_s - arrival_s_[i] + fixed, total = out_[i].finish_s - arrival_s_[i] + fixed;
    ttft.push_back(t1);
    e2e.push_back(total);
    const double per_token = q.output_tokens > 1 ? (total - t1) / static_cast<double>(q.output_tokens - 1) : 0;
    if (q.output_tokens > 1) tpot.push_back(per_token);
    if (t1 <= s_.ttft_target_s && per_token <= s_.tpot_target_s) ++good;
    start = std::min(start, arrival_s_[i]);
    end = std::max(end, out_[i].finish_s + fixed);
    tokens += static_cast<double>(q.output_tokens);
  }
  r.ttft_s = percentiles(ttft);
  r.tpot_s = percentiles(tpot);
  r.e2e_s = percentiles(e2e);
  r.completed = static_cast<int64_t>(out_.size());
  r.steps = steps_;
  r.preemptions = preemptions_;
  r.span_s = out_.empty() ? 0 : end - start;
  if (r.span_s > 0) {
    r.throughput_tokens_per_s = tokens / r.span_s;
    r.requests_per_s = static_cast<double>(r.completed) / r.span_s;
    r.frontend_busy_share = std::min(1.0, frontend_busy_s_ / r.span_s);
    r.goodput_rps = static_cast<double>(good) / r.span_s;
  }
  r.mean_batch = steps_ ? batch_sum_ / static_cast<double>(steps_) : 0;
  return r;
}

}  // namespace

ServingSetup setup_for(const Engine& engine, const Gpu& gpu, const StepCost& cost, int64_t kv_capacity_tokens,
                       int64_t context_tokens) {
  ServingSetup s;
  s.cost = cost;
  s.kv_capacity_tokens = kv_capacity_tokens;
  s.kv_block_tokens = engine.kv_block_tokens;
  const Engine::BatchLimits limits = engine.limits_on(gpu);
  // Under attention data parallelism an engine whose limits are per GPU admits that many on each.
  const int64_t per_gpu = engine.attention_dp_limits_per_gpu && cost.attention_dp > 1 ? static_cast<int64_t>(cost.attention_dp) : 1;
  // A step of the simulation is one forward: llama.cpp runs its logical batch as forwards of its
  // physical batch (n_ubatch), each reading the weights.
  const int64_t chunk = engine.prefill_chunk_tokens(gpu);
  const int64_t budget = chunk > 0 ? std::min(limits.max_batched_tokens, chunk) : limits.max_batched_tokens;
  s.max_batched_tokens = budget * per_gpu;
  int64_t seqs = limits.max_num_seqs;
  if (engine.seqs_per_context_of_kv > 0 && context_tokens > 0) {
    // The cache's tokens per GPU, in model contexts, times the engine's sequences per context.
    const double per_rank = static_cast<double>(kv_capacity_tokens) / static_cast<double>(per_gpu);
    const auto sized = static_cast<int64_t>(per_rank / static_cast<double>(context_tokens) * engine.seqs_per_context_of_kv);
    seqs = std::min({std::clamp(sized, std::min(engine.max_num_seqs_floor, seqs), seqs), static_cast<int64_t>(per_rank / 2)});
    seqs = std::max<int64_t>(1, seqs);
  }
  s.max_num_seqs = seqs * per_gpu;
  s.chunked_prefill = engine.chunked_prefill;
  s.continuous_batching = engine.continuous_batching;
  s.reserve_output_kv = engine.reserve_output_kv;
  s.frontend_seq_step_s = engine.frontend_seq_step_s;
  s.prefill_first = engine.prefill_first;
  s.frontend_request_s = engine.frontend_seq_step_s > 0 ? engine.frontend_request_s : 0;
  s.retain_preempted_kv = engine.prefix_caching;
  return s;
}

Result<ServingResult> simulate_serving(const ServingSetup& s, const Load& load) {
  if (s.kv_block_tokens <= 0 || s.max_batched_tokens <= 0 || s.max_num_seqs <= 0)
    return make_error("engine", "block size, token budget and sequence limit must be positive");
  if (s.spec_tokens + 1 > s.max_batched_tokens) return make_error("--spec-tokens", "exceeds the engine's token budget per step");
  if (s.scheduler_steps < 1) return make_error("--scheduler-steps", "must be at least 1");
  for (const SimRequest& q : load.requests)
    if (q.prompt_tokens <= 0 || q.output_tokens <= 0) return make_error("request", "prompt and output must be at least 1 token");
  if (load.users < 0 || !(load.think_time_s >= 0) || !(load.ramp_s >= 0)) return make_error("--users", "must not be negative");
  Simulation sim(s, load);
  return sim.run();
}

std::vector<SimRequest> poisson_arrivals(int64_t count, double rps, int64_t prompt_tokens, int64_t output_tokens,
                                         uint64_t seed) {
  std::vector<SimRequest> out(static_cast<size_t>(std::max<int64_t>(0, count)), SimRequest{0, prompt_tokens, output_tokens});
  assign_arrivals(out, rps, seed);
  return out;
}

Result<bool> parse_lengths(const std::string& lengths, int64_t mean_prompt, int64_t mean_output, const std::string& field,
                           const std::string& prompt, const std::string& output) {
  if (lengths != "fixed" && lengths != "chat") return make_error(field, "must be fixed or chat, not '" + lengths + "'");
  if (lengths == "chat" && !chat_means_reachable(mean_prompt, mean_output))
    return make_error(field, fmt::format("chat lengths are capped as ShareGPT's in vllm bench (prompt {}, prompt + output {}): "
                                         "{} must be at most {} and {} + {} at most {}",
                                         kChatMaxPrompt, kChatMaxTotal, prompt, kChatMaxPrompt / 2, prompt, output, kChatMaxTotal / 2));
  return lengths == "chat";
}

void draw_chat_lengths(std::vector<SimRequest>& requests, int64_t mean_prompt, int64_t mean_output, uint64_t seed) {
  if (requests.empty()) return;
  // The caps cut the exponentials' tails, so their means start at the targets and are raised
  // until the kept draws average the targets (a few rounds; stopped where the caps forbid more).
  double mu_p = static_cast<double>(std::clamp<int64_t>(mean_prompt, kChatMinTokens, kChatMaxPrompt));
  double mu_o = static_cast<double>(std::clamp<int64_t>(mean_output, kChatMinTokens, kChatMaxTotal - kChatMinTokens));
  const double target_p = mu_p, target_o = mu_o;
  for (int round = 0; round < 12; ++round) {
    Rng rng(seed ^ 0x6C656E67746873ULL);  // not the arrival times' stream
    double sum_p = 0, sum_o = 0;
    for (SimRequest& q : requests) {
      int64_t p = 0, o = 0;
      for (int tries = 0; tries < 1000; ++tries) {
        p = static_cast<int64_t>(std::llround(rng.exponential(mu_p)));
        o = static_cast<int64_t>(std::llround(rng.exponential(mu_o)));
        if (p >= kChatMinTokens && o >= kChatMinTokens && p <= kChatMaxPrompt && p + o <= kChatMaxTotal) break;
        p = std::clamp<int64_t>(p, kChatMinTokens, kChatMaxPrompt);
        o = std::clamp<int64_t>(o, kChatMinTokens, kChatMaxTotal - p);
      }
      q.prompt_tokens = p;
      q.output_tokens = o;
      sum_p += static_cast<double>(p), sum_o += static_cast<double>(o);
    }
    const double n = static_cast<double>(requests.size());
    const double gp = target_p / (sum_p / n), go = target_o / (sum_o / n);
    if (std::fabs(gp - 1) < 0.005 && std::fabs(go - 1) < 0.005) break;
    mu_p = std::min(mu_p * gp, 4.0 * kChatMaxPrompt);
    mu_o = std::min(mu_o * go, 4.0 * kChatMaxTotal);
  }
}

void assign_arrivals(std::vector<SimRequest>& requests, double rps, uint64_t seed) {
  Rng rng(seed);
  double t = 0;
  for (SimRequest& q : requests) {
    if (rps > 0) t += rng.exponential(1 / rps);
    q.arrival_s = t;
  }
}

}  // namespace gpuplan
