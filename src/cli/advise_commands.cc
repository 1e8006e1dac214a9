// `gpuplan plan`, `gpuplan cost` and `gpuplan advise`: the layout search, rent-or-buy, and the
// ranked recommendation for a workload file.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <ctime>
#include <unistd.h>

#include "advise/advice_json.h"
#include "advise/advisor.h"
#include "cli/cluster_flags.h"
#include "cli/common.h"
#include "planner/autoscale.h"
#include "cli/workload_flags.h"
#include "cost/cost_model.h"
#include "data/embedded.h"
#include "memory/fit.h"
#include "perf/phase_roofline.h"
#include "report/html_report.h"
#include "report/table.h"
#include "stack/fitted.h"
#include "util/checked.h"
#include "util/escape.h"
#include "util/limits.h"
#include "util/output_file.h"
#include "util/text_file.h"
#include "util/version.h"
#include "util/units.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

// Shows progress on a terminal once a search has run for a second.
class Progress {
 public:
  explicit Progress(const char* what) : what_(what), start_(std::chrono::steady_clock::now()), tty_(isatty(2)) {}
  ~Progress() {
    if (shown_) fmt::print(stderr, "\r{:60}\r", "");
  }
  std::function<void(int64_t, int64_t)> callback() {
    return [this](int64_t done, int64_t total) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      if (!tty_ || s < 1.0) return;
      shown_ = true;
      fmt::print(stderr, "\r{}: {} of {} layouts ({:.0f}%)", what_, done, total, total ? 100.0 * done / total : 100.0);
    };
  }

 private:
  const char* what_;
  std::chrono::steady_clock::time_point start_;
  bool tty_, shown_ = false;
};

Result<std::pair<int64_t, int64_t>> parse_range(const std::string& s) {
  const auto dots = s.find("..");
  try {
    size_t used = 0;
    if (dots == std::string::npos) {
      const long long n = std::stoll(s, &used);
      if (used != s.size()) throw std::invalid_argument("");
      if (n <= 0 || n > (1 << 20)) return make_error("--gpus", "must be between 1 and 1048576");
      return std::pair<int64_t, int64_t>{n, n};
    }
    const long long a = std::stoll(s.substr(0, dots), &used);
    if (used != dots) throw std::invalid_argument("");
    const std::string rest = s.substr(dots + 2);
    const long long b = std::stoll(rest, &used);
    if (used != rest.size()) throw std::invalid_argument("");
    if (a <= 0 || b < a || b > (1 << 20)) return make_error("--gpus", "range must be A..B with 1 <= A <= B <= 1048576");
    return std::pair<int64_t, int64_t>{a, b};
  } catch (const std::exception&) {
    return make_error("--gpus", "must be a count or a range such as 8..16384, not '" + s + "'");
  }
}

// ---- plan ----------------------------------------------------------------------------------
// With --task infer, `plan` sizes a serving deployment instead: these flags say its load and engine.
struct ServingPlanFlags {
  std::string engine, emit, lengths = "fixed", attention_dp;
  double rps = 0, average_rps = 0, ttft_target_s = 1.0, tpot_target_s = 0.1, scale_at = 0.8;
  int64_t prompt = 0, output = 0;
  // The first serving-only flag given, for the error when the task is training.
  std::string given() const {
    if (!engine.empty()) return "--engine";
    if (!emit.empty()) return "--emit";
    if (rps != 0) return "--rps";
    if (average_rps != 0) return "--average-rps";
    if (prompt != 0) return "--prompt";
    if (output != 0) return "--output";
    if (lengths != "fixed") return "--lengths";
    if (!attention_dp.empty()) return "--attention-dp";
    return "";
  }
};

struct PlanFlags {
  WorkloadFlags w;
  ServingPlanFlags serve;
  std::string gpu, gpus = "8";
  ClusterFlags cluster;
  int64_t global_batch = 0;
  double tokens = 0, headroom = kUnset;
  bool json = false;
};

void add_serving_plan_flags(CLI::App& sub, ServingPlanFlags& s) {
  sub.add_option("--engine", s.engine, "with --task infer: serving engine (`gpuplan engines`; default vllm)");
  sub.add_option("--rps", s.rps, "with --task infer: peak requests per second to serve");
  sub.add_option("--average-rps", s.average_rps, "with --task infer: average requests per second (default: the peak)");
  sub.add_option("--prompt", s.prompt, "with --task infer: prompt tokens per request (default 1024)");
  sub.add_option("--output", s.output, "with --task infer: output tokens per request (default 256)");
  sub.add_option("--ttft-target", s.ttft_target_s, "with --task infer: p99 time-to-first-token target, seconds")->capture_default_str();
  sub.add_option("--tpot-target", s.tpot_target_s, "with --task infer: p99 time-per-output-token target, seconds")->capture_default_str();
  sub.add_option("--lengths", s.lengths, "with --task infer: fixed (every request --prompt/--output) or chat (spread around them)")
      ->capture_default_str();
  sub.add_option("--attention-dp", s.attention_dp,
                 "with --task infer: auto (plan each TP >= 2 of a MoE model with and without attention data parallelism), on or off (default auto)");
  sub.add_option("--emit", s.emit, "with --task infer: k8s writes the autoscaler (HorizontalPodAutoscaler YAML) of the best replica size");
  sub.add_option("--scale-at", s.scale_at, "with --emit k8s: share of a replica's capacity at which to add replicas")->capture_default_str();
}

// The first flag given that only a training plan reads, or "".
std::string training_only_flag(const PlanFlags& f) {
  if (std::string flag = training_only_flag(f.w); !flag.empty()) return flag;
  if (!f.cluster.fabric.empty()) return "--fabric";
  if (f.cluster.network_gbps != 0) return "--network-gbps";
  return "";
}

// `plan --task infer`: one replica of each tensor-parallel size up to --gpus (and the node), the
// highest rate it serves within the p99 targets under the engine's scheduling, and the replicas
// the peak and average rates need.
// A replica size as the table names it: "8", or "8 adp" with attention data-parallel.
std::string tp_label(const ServingOption& o) { return std::to_string(o.tp) + (o.attention_dp ? " adp" : ""); }

int run_plan_serving(Context& ctx, PlanFlags f, const std::pair<int64_t, int64_t>& range) {
  const ServingPlanFlags& s = f.serve;
  if (const std::string flag = training_only_flag(f); !flag.empty())
    return fail(make_error(flag, "applies to training plans; a serving replica is one tensor-parallel group in a node"));
  if (!std::isnan(f.headroom))
    return fail(make_error("--headroom", "applies to training; a serving replica's memory is the engine's gpu_memory_utilization budget"));
  if (f.global_batch != 0) return fail(make_error("--global-batch", "applies to training plans, not --task infer"));
  if (f.tokens != 0) return fail(make_error("--tokens", "applies to training plans, not --task infer"));
  if (!(s.rps >= 1e-6 && s.rps <= 1e6)) return fail(make_error("--rps", "plan --task infer needs the peak rate, 0.000001 to 1,000,000 requests per second"));
  if (s.average_rps != 0 && !(s.average_rps >= 1e-6 && s.average_rps <= s.rps))
    return fail(make_error("--average-rps", "must be above 0 and at most --rps (the peak)"));
  if (s.prompt < 0 || s.prompt > (1 << 24)) return fail(make_error("--prompt", "must be between 1 and 16M tokens"));
  if (s.output < 0 || s.output > (1 << 24)) return fail(make_error("--output", "must be between 1 and 16M tokens"));
  if (!(s.ttft_target_s > 0 && s.ttft_target_s <= 3600)) return fail(make_error("--ttft-target", "must be between 0 and 3600 seconds"));
  if (!(s.tpot_target_s > 0 && s.tpot_target_s <= 60)) return fail(make_error("--tpot-target", "must be between 0 and 60 seconds"));
  if (!s.emit.empty() && s.emit != "k8s") return fail(make_error("--emit", "must be k8s, not '" + s.emit + "'"));
  const std::string adp_word = s.attention_dp.empty() ? "auto" : s.attention_dp;
  const auto adp = parse_attention_dp_choice(adp_word);
  if (!adp) return fail(make_error("--attention-dp", "must be auto, on or off, not '" + adp_word + "'"));
  if (!(s.scale_at > 0.05 && s.scale_at <= 1)) return fail(make_error("--scale-at", "must be above 0.05 and at most 1"));
  ServiceTarget target;
  if (s.prompt > 0) target.prompt_tokens = s.prompt;
  if (s.output > 0) target.output_tokens = s.output;
  target.peak_rps = s.rps;
  target.average_rps = s.average_rps > 0 ? s.average_rps : s.rps;
  target.ttft_s = s.ttft_target_s;
  target.tpot_s = s.tpot_target_s;
  auto chat = parse_lengths(s.lengths, target.prompt_tokens, target.output_tokens, "--lengths", "--prompt", "--output");
  if (!chat) return fail(chat.error());
  target.chat_lengths = *chat;
  f.w.seq = target.prompt_tokens + target.output_tokens;
  auto built = build_generation_workload(f.w);
  if (!built) return fail(built.error());
  const auto& [m, base] = *built;
  auto engine = EngineCatalog::builtin().find(s.engine.empty() ? kDefaultEngineId : s.engine);
  if (!engine) return fail(engine.error());
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto g = (*catalog)->find(f.gpu);
  if (!g) return fail(g.error());
  if (std::string why = engine->unsupported(*g, base.precision); !why.empty()) return fail(make_error("--engine", why));
  if (std::string why = attention_dp_choice_refusal(*adp, m, *engine); !why.empty()) return fail(make_error("--attention-dp", why));
  auto table = ctx.efficiency();
  if (!table) return fail(table.error());
  auto planned = make_cluster(f.cluster, *g);
  if (!planned) return fail(planned.error());
  Cluster cluster = *planned;
  // A replica is one tensor-parallel group: no wider than --gpus allows, nor than the node.
  cluster.gpus_per_node = std::min(cluster.gpus_per_node, range.second);
  const Efficiency eff = (*table)->for_gpu(*g);
  const ServingPlan plan = plan_serving(m, base, *g, eff, cluster, target, *engine, *adp);
  for (const ServingOption& o : plan.options)
    if (auto st = check_figures({{"time to first token", o.ttft_s, kMaxSeconds}, {"time per output token", o.tpot_s, kMaxSeconds}},
                                "--model"))
      return fail(*st);
  if (s.emit == "k8s") {
    if (!plan.best)
      return fail(make_error("--emit", fmt::format("no replica of {} x {} meets the p99 targets, so there is nothing to scale", m.id, g->id)));
    fmt::print("{}", autoscaler_document(m.id, g->id, *plan.best, target, *engine, s.scale_at));
    return 0;
  }
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  const GpuPrice* price = (*prices)->find(g->id);
  const auto quote = price ? price->cheapest_cloud() : std::nullopt;
  // Output tokens served at the peak rate, priced at the peak's GPUs for an hour.
  auto usd_per_million = [&](const ServingOption& o) -> std::optional<double> {
    if (!quote || !o.ok()) return std::nullopt;
    return static_cast<double>(o.gpus_peak) * quote->usd_per_gpu_hour /
           (target.peak_rps * static_cast<double>(target.output_tokens) * 3600) * 1e6;
  };
  if (f.json) {
    json opts = json::array();
    for (const ServingOption& o : plan.options) {
      json j = serving_option_json(o);
      const auto usd = usd_per_million(o);
      j["usd_per_million_output_tokens"] = usd ? json(*usd) : json(nullptr);
      opts.push_back(std::move(j));
    }
    json best = nullptr;
    for (size_t i = 0; plan.best && i < plan.options.size(); ++i)
      if (plan.options[i].tp == plan.best->tp && plan.options[i].attention_dp == plan.best->attention_dp) best = opts[i];
    return print_json(json{{"schema_version", 2}, {"task", "infer"}, {"model", m.id}, {"gpu", g->id}, {"engine", engine->id},
                            {"weight_precision", to_string(base.precision)}, {"kv_precision", to_string(base.kv())},
                            {"target", {{"prompt_tokens", target.prompt_tokens}, {"output_tokens", target.output_tokens},
                                        {"lengths", target.chat_lengths ? "chat" : "fixed"},
                                        {"peak_rps", target.peak_rps}, {"average_rps", target.average_rps},
                                        {"ttft_p99_s", target.ttft_s}, {"tpot_p99_s", target.tpot_s}}},
                            {"attention_dp_choice", adp_word},
                            {"price_usd_per_gpu_hour", quote ? json(quote->usd_per_gpu_hour) : json(nullptr)},
                            {"price_provider", quote ? json(quote->provider) : json(nullptr)},
                            {"best", best}, {"options", opts}},
                      "--model");
  }
  fmt::print("{} on {} under {}, {} weights, {} KV cache: {} prompt + {} output tokens a request{},\n"
             "{:.3g} requests/s at peak and {:.3g} on average, p99 targets TTFT {} and TPOT {}.\n",
             m.name, g->id, engine->name, to_string(base.precision), to_string(base.kv()), target.prompt_tokens,
             target.output_tokens, target.chat_lengths ? " on average (chat lengths)" : "", target.peak_rps, target.average_rps, format_seconds(target.ttft_s), format_seconds(target.tpot_s));
  print_model_caveats(m);
  fmt::print("Each replica size is simulated under Poisson arrivals at the engine's batching rules (`gpuplan infer --rps`).\n");
  if (*adp != AttentionDpChoice::automatic)
    fmt::print("Attention data parallelism {} (--attention-dp {}).\n", *adp == AttentionDpChoice::on ? "on every TP >= 2 replica" : "off",
               adp_word);
  fmt::print("\n");
  TextTable t({"tp", "rate/replica", "replicas peak", "avg", "GPUs peak", "p99 TTFT", "p99 TPOT", "headroom", "tok/s/GPU",
               quote ? "$/M tokens" : ""});
  t.align_right({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  for (const ServingOption& o : plan.options) {
    if (!o.ok()) {
      t.add_row({tp_label(o), "-", "-", "-", "-", "-", "-", "-", "-", ""});
      continue;
    }
    const auto usd = usd_per_million(o);
    t.add_row({tp_label(o), fmt::format("{:.3g}/s", o.replica_rps), std::to_string(o.replicas_peak),
               std::to_string(o.replicas_min), std::to_string(o.gpus_peak), format_seconds(o.ttft_s), format_seconds(o.tpot_s),
               fmt::format("{:.0f}%", 100 * o.headroom), fmt::format("{:.0f}", o.tokens_per_s_per_gpu), usd ? format_usd(*usd) : ""});
  }
  fmt::print("{}", t.render());
  for (const ServingOption& o : plan.options)
    if (!o.ok()) fmt::print("tp {}: {}\n", tp_label(o), o.why_not);
  if (!plan.best) {
    fmt::print("\nNo replica size meets the targets on {}. Try a larger card, a lighter weight format, or looser targets.\n", g->id);
    return 0;
  }
  fmt::print("\nFewest GPUs: {} replica(s) of TP {}{} at peak ({} GPUs), {} on average; {:.0f}% of their capacity is left at peak.\n",
             plan.best->replicas_peak, plan.best->tp, plan.best->attention_dp ? " with attention data-parallel (--attention-dp)" : "",
             plan.best->gpus_peak, plan.best->replicas_min, 100 * plan.best->headroom);
  if (quote) fmt::print("$/M tokens: output tokens at the peak rate, {} {}/GPU-hour on demand ({}).\n", quote->provider,
                        format_usd(quote->usd_per_gpu_hour), quote->date);
  fmt::print("`--emit k8s` writes its autoscaler.\n");
  return 0;
}

int run_plan(Context& ctx, PlanFlags f) {
  auto range = parse_range(f.gpus);
  if (!range) return fail(range.error());
  if (f.w.task == "infer") return run_plan_serving(ctx, f, *range);
  if (const std::string flag = f.serve.given(); !flag.empty())
    return fail(make_error(flag, "sizes a serving deployment; it applies to --task infer"));
  f.w.gpus = 1;
  // --cp fixes context parallelism; without it long sequences (32k tokens and more) search 1 to 8.
  if (f.w.cp < 1 || f.w.cp > 1024) return fail(make_error("--cp", fmt::format("must be between 1 and 1024, got {}", f.w.cp)));
  const int64_t fixed_cp = f.w.cp;
  f.w.cp = 1;
  auto built = build_workload(f.w);
  if (!built) return fail(built.error());
  auto& [m, base] = *built;
  if (!base.training()) return fail(make_error("--task", "plan searches training layouts, or serving replicas with --task infer"));
  auto stack = apply_stack(f.w, base);
  if (!stack) return fail(stack.error());
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto g = (*catalog)->find(f.gpu);
  if (!g) return fail(g.error());
  if (auto s = check_attention_kernel(*stack, *g)) return fail(*s);
  auto table = ctx.efficiency();
  if (!table) return fail(table.error());
  if (auto s = require_range(f.global_batch, "--global-batch", 0, limits::kMaxGlobalBatch)) return fail(*s);
  if (auto s = require_finite(f.tokens, "--tokens", 0, limits::kMaxTokens)) return fail(*s);
  auto planned = make_cluster(f.cluster, *g);
  if (!planned) return fail(planned.error());
  const Cluster cluster = *planned;
  auto headroom = resolve_headroom(f.headroom, Platform::builtin());
  if (!headroom) return fail(headroom.error());
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  PlanSpace space;
  space.min_gpus = range->first;
  space.max_gpus = range->second;
  space.global_batch = f.global_batch;
  space.headroom = *headroom;
  space.platform = &Platform::builtin();
  if (fixed_cp > 1) space.context_parallel = {fixed_cp};
  else if (base.seq >= 32768) space.context_parallel = {1, 2, 4, 8};
  if (f.tokens > 0) space.tokens = f.tokens;
  if (f.w.ep == 0 && m.is_moe())
    for (int64_t ep = 1; ep <= std::min<int64_t>(range->second, m.experts); ep *= 2) space.expert_parallel.push_back(ep);
  Progress progress("planning");
  const Efficiency eff = (*table)->for_gpu(*g, *stack);
  const PlanResult r = plan_training(m, base, *g, eff, *stack, cluster, space, progress.callback());
  if (r.best)
    if (auto s = check_figures({{"step time", r.best->estimate.step_time_s, kMaxSeconds},
                                {"time to train", r.best->estimate.time_to_train_s.value_or(0), kMaxSeconds}},
                               "--model"))
      return fail(*s);
  const GpuPrice* price = (*prices)->find(g->id);
  const auto quote = price ? price->cheapest_cloud() : std::nullopt;
  auto priced = [&](const PlanCandidate& c) {
    json j = plan_json(c);
    j["usd_per_step"] = quote ? json(c.gpu_hours_per_step() * quote->usd_per_gpu_hour) : json(nullptr);
    j["gpu_hours_to_train"] = c.estimate.gpu_hours ? json(*c.estimate.gpu_hours) : json(nullptr);
    return j;
  };
  if (f.json) {
    json ru = json::array(), per = json::array();
    for (const auto& c : r.runners_up) ru.push_back(priced(c));
    for (const auto& c : r.best_per_count) per.push_back(priced(c));
    json j{{"schema_version", 2}, {"model", m.id}, {"gpu", g->id}, {"stack", stack->id},
           {"attention_kernel", stack->attention_kernel(g->architecture).id},
           {"parameters", m.total_parameters()}, {"active_parameters", m.active_parameters()},
           {"assumed_dense", m.assumed_dense}, {"notes", m.notes},
           {"global_batch", r.global_batch}, {"seq", base.seq},
           {"headroom", {{"fraction", headroom->fraction}, {"basis", headroom->basis}, {"keeps_error_band", headroom->keep_band}}},
           {"price_usd_per_gpu_hour", quote ? json(quote->usd_per_gpu_hour) : json(nullptr)},
           {"price_provider", quote ? json(quote->provider) : json(nullptr)},
           {"best", r.best ? priced(*r.best) : json(nullptr)},
           {"cheapest", r.cheapest ? priced(*r.cheapest) : json(nullptr)}, {"runners_up", ru},
           {"per_gpu_count", per}, {"configs_evaluated", r.configs_evaluated},
           {"configs_fitting", r.configs_fitting}, {"excluded_by_stack", r.excluded_by_stack},
           {"excluded_by_link", r.excluded_by_link}, {"excluded_by_memory", r.excluded_by_memory},
           {"refused", r.refused.empty() ? json(nullptr) : json(r.refused)}};
    j.update(network_json(cluster, f.cluster, *g));
    return print_json(j, "--model");
  }
  fmt::print("{} on {} under {} ({}): {} layouts evaluated, {} fit in memory\n", m.name, g->id, stack->id, stack->name,
             r.configs_evaluated, r.configs_fitting);
  print_model_caveats(m);
  fmt::print("Every plan trains at the same global batch: {} sequences of {} tokens ({} tokens a step).\n", r.global_batch,
             base.seq, format_count(static_cast<double>(r.global_batch * base.seq)));
  if (range->second > cluster.gpus_per_node)
    fmt::print("{}", fit_width("Network: " + network_line(cluster, f.cluster, *g) + "."));
  if (const FitBand& band = eff.fit.memory_band_for(memory_band_class(base.task));
      headroom->keep_band && band.rows > 0)
    fmt::print("Every plan keeps at least {:.0f}% of each card free, and room for its memory estimate to be {:.0f}% higher "
               "(the 90th percentile of its error on publications the fit never saw, {} rows); --headroom replaces both.\n",
               100 * headroom->fraction, 100 * (band.high - 1), band.rows);
  else
    fmt::print("Every plan keeps at least {:.0f}% of each card free ({}).\n", 100 * headroom->fraction, headroom->basis);
  if (r.excluded_by_stack || r.excluded_by_link)
    fmt::print("Left out: {} layouts the {} stack does not offer, {} with tensor parallelism over cards without NVLink or peer-to-peer.\n",
               r.excluded_by_stack, stack->id, r.excluded_by_link);
  fmt::print("\n");
  if (!r.refused.empty()) return fail(make_error("--stack", r.refused));
  if (!r.best) {
    fmt::print("No layout fits on {}..{} x {}. Try more GPUs, a larger card, LoRA/QLoRA or a shorter sequence.\n",
               range->first, range->second, g->id);
    return 0;
  }
  TextTable t({"rank", "GPUs", "tp", "pp", "dp", "ep", "mb x acc", "ZeRO", "recompute", "offload", "v", "step", "MFU", "memory/GPU", "free",
               "GPU-h/step", quote ? "$/step" : ""});
  t.align_right({0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16});
  auto row = [&](const std::string& rank, const PlanCandidate& c) {
    const Workload& w = c.workload;
    t.add_row({rank, std::to_string(w.par.gpus()), std::to_string(w.par.tp), std::to_string(w.par.pp), std::to_string(w.par.dp),
               std::to_string(w.par.ep), fmt::format("{} x {}", w.micro_batch, w.grad_accum), std::to_string(w.par.zero), to_string(w.recompute_spec()),
               w.offload_optimizer ? "optimizer" : "-", std::to_string(w.par.virtual_stages), format_seconds(c.estimate.step_time_s),
               fmt::format("{:.1f}%", 100 * c.estimate.mfu), format_bytes(c.memory_per_gpu_bytes),
               fmt::format("{:.0f}%", 100 * c.margin.free_fraction), fmt::format("{:.3g}", c.gpu_hours_per_step()),
               quote ? format_usd(c.gpu_hours_per_step() * quote->usd_per_gpu_hour) : ""});
  };
  row("fastest", *r.best);
  for (size_t i = 0; i < r.runners_up.size(); ++i) row(std::to_string(i + 2), r.runners_up[i]);
  if (r.cheapest) row("cheapest", *r.cheapest);
  if (r.best_per_count.size() > 1) {
    t.add_separator();
    for (const auto& c : r.best_per_count) row("@" + std::to_string(c.workload.par.gpus()), c);
  }
  fmt::print("{}", t.render());
  if (quote) fmt::print("$/step at {} {}/GPU-hour on demand ({}).\n", quote->provider, format_usd(quote->usd_per_gpu_hour), quote->date);
  return 0;
}

// ---- cost ----------------------------------------------------------------------------------
struct CostFlags {
  std::string gpu;
  int64_t gpus = 1;
  double hours = 730, years = 0, kwh = -1, pue = 0;
  bool json = false;
};

json option_json(const CostOption& o) {
  json j = {{"mode", o.mode}, {"provider", o.provider}, {"provider_class", o.provider_class}, {"total_usd", o.total_usd},
            {"usd_per_month", o.usd_per_month}};
  if (o.rental) {
    const RentalCost& r = *o.rental;
    j.update({{"usd_per_gpu_hour", r.quote.usd_per_gpu_hour}, {"billed_gpu_hours", r.billed_gpu_hours},
              {"max_gpus", r.max_gpus > 0 ? json(r.max_gpus) : json(nullptr)}, {"over_capacity", r.over_capacity},
              {"expected_interruptions", r.expected_interruptions}, {"lost_gpu_hours", r.lost_gpu_hours},
              {"basis", r.quote.basis}, {"date", r.quote.date}});
  }
  if (o.tco) {
    const OwnershipTco& t = *o.tco;
    j.update({{"condition", o.condition}, {"gpus_bought", t.housing.gpus}, {"node_class", t.housing.node->id},
              {"nodes", t.housing.nodes}, {"office", t.housing.office}, {"cards_usd", t.cards_usd},
              {"servers_usd", t.servers_usd}, {"network_usd", t.network_usd}, {"capex_usd", t.capex_usd},
              {"power_usd_per_month", t.power_usd_per_month}, {"colocation_usd_per_month", t.colocation_usd_per_month},
              {"support_usd_per_month", t.support_usd_per_month}, {"staff_usd_per_month", t.staff_usd_per_month},
              {"resale_usd", t.resale_usd}, {"card_usd", t.price.usd}, {"price_kind", t.price.kind},
              {"basis", t.price.source}, {"date", t.price.date}});
  }
  return j;
}

int run_cost(Context& ctx, const CostFlags& f) {
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto g = (*catalog)->find(f.gpu);
  if (!g) return fail(g.error());
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  if (f.gpus <= 0 || f.gpus > (1 << 20)) return fail(make_error("--gpus", "must be between 1 and 1048576"));
  if (!(f.hours > 0) || f.hours > 744) return fail(make_error("--hours-per-month", "must be between 0 and 744"));
  // Under a month, a monthly cost has no meaning (and divides capital by almost nothing).
  if (f.years != 0 && !(f.years >= 1.0 / 12 && f.years <= 30))
    return fail(make_error("--years", "must be between 1/12 (a month) and 30"));
  if (f.pue != 0 && !(f.pue >= 1 && f.pue <= 5)) return fail(make_error("--pue", "must be between 1 and 5"));
  if (f.kwh != -1 && !(f.kwh >= 0 && f.kwh <= 10)) return fail(make_error("--electricity", "must be between 0 and 10 USD/kWh"));
  CostInputs in;
  in.gpus = f.gpus;
  in.hours_per_month = f.hours;
  in.own = (*prices)->ownership();
  if (f.years > 0) in.own.lifetime_years = f.years;
  if (f.pue > 0) in.own.pue = f.pue;
  if (f.kwh >= 0) in.own.electricity_usd_per_kwh = f.kwh;
  const GpuPrice* p = (*prices)->find(g->id);
  const CostReport c = cost_options(*g, p, **prices, Platform::builtin(), in);
  if (c.options.empty()) return fail(make_error("--gpu", "no cloud or purchase price on file for " + g->id + " (add one with --prices)"));
  auto first = [&](const char* mode) -> const CostOption* {
    for (const auto& o : c.options)
      if (o.mode == mode) return &o;
    return nullptr;
  };
  const CostOption* od = first("on-demand");
  const CostOption* buy = first("buy");
  if (f.json) {
    json options = json::array();
    for (const auto& o : c.options) options.push_back(option_json(o));
    return print_json(json{{"schema_version", 2}, {"gpu", g->id}, {"gpus", f.gpus}, {"hours_per_month", f.hours},
                            {"years", in.own.lifetime_years}, {"cheaper", c.cheaper}, {"options", options},
                            {"break_even_months", c.break_even_months ? json(*c.break_even_months) : json(nullptr)},
                            {"break_even_utilisation", c.break_even_utilisation ? json(*c.break_even_utilisation) : json(nullptr)},
                            {"cloud_cost_usd", od ? json(od->total_usd) : json(nullptr)},
                            {"own_cost_usd", buy ? json(buy->total_usd) : json(nullptr)},
                            {"capex_usd", buy ? buy->tco->capex_usd : 0.0},
                            {"power_usd_per_month", buy ? buy->tco->power_usd_per_month : 0.0},
                            {"cloud_usd_per_month", od ? od->usd_per_month : 0.0},
                            {"cloud_provider", od ? od->provider : ""},
                            {"cloud_usd_per_gpu_hour", od ? json(od->rental->quote.usd_per_gpu_hour) : json(nullptr)},
                            {"purchase_usd_per_gpu", buy ? json(buy->tco->price.usd) : json(nullptr)}}, "--gpu");
  }
  fmt::print("{} x {}, busy {:.0f} hours a month each, over {:.0f} years\n\n", f.gpus, g->name, f.hours, in.own.lifetime_years);
  TextTable t({"option", "provider", "rate", "total", "a month", "notes"});
  t.align_right({2, 3, 4});
  for (const auto& o : c.options) {
    std::string notes;
    if (o.rental) {
      const RentalCost& r = *o.rental;
      if (r.over_capacity) notes = fmt::format("more than the {} GPUs offered without a contract", r.max_gpus);
      else if (o.mode == "spot") notes = fmt::format("{:.2g} interruptions expected, {:.0f} GPU-hours redone", r.expected_interruptions, r.lost_gpu_hours);
      else if (o.mode == "reserved-1y" || o.mode == "reserved-3y") notes = fmt::format("billed {:.0f} GPU-hours, busy or not", r.billed_gpu_hours);
      t.add_row({o.mode, fmt::format("{} ({})", o.provider, o.provider_class), format_usd(r.quote.usd_per_gpu_hour) + "/GPU-h",
                 format_usd(o.total_usd), format_usd(o.usd_per_month), notes});
    } else {
      const OwnershipTco& tc = *o.tco;
      notes = fmt::format("{} x {} in {} {}{}; capex {}, {} a month to run, {} back at resale", tc.housing.gpus, format_usd(tc.price.usd),
                          tc.housing.nodes, tc.housing.node->id, tc.housing.office ? " (office)" : " (colocation)",
                          format_usd(tc.capex_usd), format_usd(tc.opex_usd_per_month()), format_usd(tc.resale_usd));
      t.add_row({"buy " + o.condition, tc.price.kind, "", format_usd(o.total_usd), format_usd(o.usd_per_month), notes});
    }
  }
  fmt::print("{}", t.render());
  fmt::print("\ncheapest: {}\n", c.cheaper);
  if (c.break_even_months) fmt::print("against {} on demand, buying breaks even after {:.1f} months at this use\n", od ? od->provider : "", *c.break_even_months);
  if (c.break_even_utilisation)
    fmt::print("over {:.0f} years buying and renting on demand cost the same when the GPUs are busy {:.0f}% of the month\n",
               in.own.lifetime_years, 100 * *c.break_even_utilisation);
  return 0;
}

// ---- advise --------------------------------------------------------------------------------
struct AdviseFlags {
  std::string file, html, emit;
  double headroom = kUnset, scale_at = 0.8;
  bool json = false, markdown = false;
};

// `--emit k8s`: one HorizontalPodAutoscaler per service of the recommendation, as YAML documents.
int emit_k8s(const AdviseRequest& req, const Advice& a, double scale_at) {
  if (!a.recommendation) return fail(make_error("--emit", "no GPU option meets every constraint, so there is nothing to scale"));
  if (a.recommendation->services.empty()) return fail(make_error("--emit", "the workload has no [[inference]] service to autoscale"));
  std::string out;
  for (size_t k = 0; k < a.recommendation->services.size(); ++k) {
    const ServicePlan& sp = a.recommendation->services[k];
    out += autoscaler_document(sp.name, a.recommendation->gpu, sp.option, sp.target, req.inference[k].engine, scale_at);
  }
  fmt::print("{}", out);
  return 0;
}

int64_t today_days() {
  return static_cast<int64_t>(std::time(nullptr) / 86400);
}

// The model's error band on training time for the stack of the workload's first job: the 10th and
// 90th percentile of published over predicted step time, scored leave-one-publication-out.
std::optional<TimeBand> training_time_band(const AdviseRequest& req) {
  if (req.training.empty()) return std::nullopt;
  const std::string& stack = req.training.front().stack.id;
  const FitBand& b = FittedParameters::builtin().for_stack(stack).throughput_band;
  if (b.rows == 0) return std::nullopt;
  return TimeBand{std::min(1.0, b.low), std::max(1.0, b.high),
                  fmt::format("10th to 90th percentile of published over predicted step time, {} training runs scored "
                              "leave-one-publication-out, stack {}", b.rows, stack)};
}

std::string today_iso() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

int run_advise(Context& ctx, const AdviseFlags& f) {
  std::string text, origin;
  if (f.file.empty()) {
    text = std::string(data::embedded_file("qlora-7b-small-team.toml"));
    origin = "examples/qlora-7b-small-team.toml";
  } else {
    auto read = read_text_file(f.file, "workload file");
    if (!read) return fail(read.error());
    text = std::move(read).value();
    origin = f.file;
  }
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  auto req = parse_workload_file(text, origin, today_days(), (*prices)->ownership());
  if (!req) return fail(req.error());
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto table = ctx.efficiency();
  if (!table) return fail(table.error());
  auto headroom = resolve_headroom(f.headroom, Platform::builtin());
  if (!headroom) return fail(headroom.error());
  if (!f.emit.empty() && f.emit != "k8s") return fail(make_error("--emit", "must be k8s, not '" + f.emit + "'"));
  if (!(f.scale_at > 0.05 && f.scale_at <= 1)) return fail(make_error("--scale-at", "must be above 0.05 and at most 1"));
  Progress progress("advising");
  const Advice a = advise(*req, **catalog, **prices, **table, Platform::builtin(), AdviseOptions{*headroom}, progress.callback());
  if (!f.html.empty()) {
    ReportFigures fig;
    fig.generated_on = today_iso();
    fig.version = version_line();
    fig.time_band = training_time_band(*req);
    MemoryEstimate mem;
    RooflineReport roof;
    if (a.recommendation) {
      const Gpu g = *(*catalog)->find(a.recommendation->gpu);
      const Efficiency eff = (*table)->for_gpu(g);
      fig.capacity_bytes = usable_memory_bytes(g);
      if (!a.recommendation->jobs.empty()) {
        const TrainingJob& job = req->training.front();
        const Workload& w = a.recommendation->jobs.front().plan.workload;
        mem = estimate_memory(job.model, w, eff);
        roof = roofline(job.model, w, g, eff, Phase::train);
        fig.memory_title = fmt::format("{} ({} on {} x {})", job.name, job.model.name, w.par.gpus(), g.id);
        fig.roofline_title = fmt::format("{} training step on {}", job.model.name, g.name);
      } else {
        const InferenceService& s = req->inference.front();
        Workload w = s.workload;
        w.par.tp = a.recommendation->services.front().option.tp;
        w.micro_batch = a.recommendation->services.front().option.concurrency;
        w.seq = s.target.prompt_tokens + s.target.output_tokens;
        mem = estimate_memory(s.model, w, eff);
        roof = roofline(s.model, w, g, eff, Phase::decode);
        fig.memory_title = fmt::format("{} ({} replica on {} x {})", s.name, s.model.name, w.par.tp, g.id);
        fig.roofline_title = fmt::format("{} decode step on {}", s.model.name, g.name);
      }
      fig.memory = &mem;
      fig.roofline = &roof;
    }
    if (auto e = write_output_file(f.html, render_html(*req, a, fig), "--html")) return fail(*e);
  }
  if (f.emit == "k8s") return emit_k8s(*req, a, f.scale_at);
  if (f.json) return print_json(advice_json(*req, a), "workload");
  if (f.markdown) {
    fmt::print("{}", render_markdown(*req, a));
    return 0;
  }
  fmt::print("{}\n\n", printable(req->name));
  if (a.recommendation) {
    const Candidate& r = *a.recommendation;
    fmt::print("Recommendation: {} x {} ({}), {}\n", r.gpus, printable(r.gpu), to_string(r.tier), printable(r.how()));
    for (const auto& reason : a.reasons) fmt::print("{}", fit_width(reason.text, "  - ", "    "));
    if (!a.caveats.empty()) fmt::print("Caveats:\n");
    for (const auto& c : a.caveats) fmt::print("{}", fit_width(c.text, "  - ", "    "));
  } else {
    fmt::print("No GPU option meets every constraint; the reasons are below.\n");
  }
  TextTable t({"GPU", "tier", "how", "GPUs", "total cost", "training time", ""});
  t.align_right({3, 4, 5});
  for (size_t i = 0; i < a.candidates.size() && i < 12; ++i) {
    const Candidate& c = a.candidates[i];
    t.add_row({c.gpu, to_string(c.tier), c.how(), std::to_string(c.gpus), format_usd(c.total_cost_usd),
               c.training_time_s > 0 ? format_seconds(c.training_time_s) : "-", c.pareto ? "Pareto" : ""});
  }
  fmt::print("\nCandidates, cheapest first ({} of {}):\n{}", std::min<size_t>(12, a.candidates.size()), a.candidates.size(), t.render());
  fmt::print("\nRejected ({}):\n", a.rejected.size());
  for (const auto& c : a.rejected)
    fmt::print("{}", fit_width(fmt::format("{} ({}) [{}]: {}", c.gpu, c.how(), c.rule, c.why.text), "  ", "    "));
  if (!f.html.empty()) fmt::print("\nReport written to {}\n", printable(f.html));
  return 0;
}

}  // namespace

std::vector<Command> advise_commands() {
  return {
      {"plan", "The fastest training layout that fits, or (--task infer) the fewest serving replicas",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<PlanFlags>();
         f->w.task = "pretrain";
         add_workload_flags(sub, f->w);
         add_stack_flag(sub, f->w);
         sub.remove_option(sub.get_option("--gpus"));
         sub.remove_option(sub.get_option("--dp"));
         sub.add_option("--gpus", f->gpus, "GPU count or range of powers of two, e.g. 8..16384")->capture_default_str();
         sub.add_option("--gpu", f->gpu, "catalog GPU id")->required();
         sub.add_option("--global-batch", f->global_batch, "sequences per step, the same at every GPU count (default: about 1M tokens)");
         add_headroom_flag(sub, f->headroom);
         sub.add_option("--tokens", f->tokens, "tokens to train on, for time to train");
         add_cluster_flags(sub, f->cluster);
         add_serving_plan_flags(sub, f->serve);
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_plan(ctx, *f); }; });
       }},
      {"cost", "Rent or buy: cloud cost against owning, and the break-even point",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<CostFlags>();
         sub.add_option("--gpu", f->gpu, "catalog GPU id")->required();
         sub.add_option("--gpus", f->gpus, "how many")->capture_default_str();
         sub.add_option("--hours-per-month", f->hours, "hours a month the GPUs are busy (730 = always)")->capture_default_str();
         sub.add_option("--years", f->years, "comparison horizon and depreciation period (default from prices.toml)");
         sub.add_option("--electricity", f->kwh, "USD per kWh (default from prices.toml)");
         sub.add_option("--pue", f->pue, "power usage effectiveness (default from prices.toml)");
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_cost(ctx, *f); }; });
       }},
      {"advise", "Ranked, costed hardware recommendation for a workload file",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<AdviseFlags>();
         sub.add_option("workload", f->file, "workload TOML (default: examples/qlora-7b-small-team.toml)");
         sub.add_flag("--json", f->json, "JSON output");
         sub.add_flag("--markdown", f->markdown, "Markdown output");
         sub.add_option("--html", f->html, "also write a self-contained HTML report with charts")->option_text("FILE");
         sub.add_option("--emit", f->emit, "k8s: write each service's autoscaler (HorizontalPodAutoscaler YAML) to standard output");
         sub.add_option("--scale-at", f->scale_at, "with --emit k8s: share of a replica's capacity at which to add replicas")
             ->capture_default_str();
         add_headroom_flag(sub, f->headroom);
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_advise(ctx, *f); }; });
       }},
  };
}

}  // namespace gpuplan::cli
