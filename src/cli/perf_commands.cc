// `gpuplan train`, `gpuplan infer`, `gpuplan roofline` and `gpuplan predict`: how fast, on which
// hardware, and how far the model is from published measurements.
#include <fmt/format.h>

#include <cmath>

#include "cli/cluster_flags.h"
#include "cli/common.h"
#include "planner/autoscale.h"
#include "planner/serving_planner.h"
#include "cli/workload_flags.h"
#include <nlohmann/json.hpp>

#include "memory/fit.h"
#include "memory/memory_model.h"
#include "perf/inference.h"
#include "perf/offload.h"
#include "perf/phase_roofline.h"
#include "perf/training.h"
#include "serving/simulator.h"
#include "serving/trace.h"
#include "report/table.h"
#include "util/checked.h"
#include "util/limits.h"
#include "util/text_file.h"
#include "util/units.h"
#include "util/utf8.h"
#include "calibrate/profile_fit.h"
#include "hardware/prices.h"


namespace gpuplan::cli {

namespace {

using nlohmann::json;

// The GPU and its efficiencies; under a training stack, with the stack's kernels.
Result<std::pair<Gpu, Efficiency>> gpu_and_eff(Context& ctx, const std::string& id, const Stack* stack = nullptr) {
  if (id.empty()) return make_error("--gpu", "is required");
  auto catalog = ctx.catalog();
  if (!catalog) return catalog.error();
  auto g = (*catalog)->find(id);
  if (!g) return g.error();
  auto table = ctx.efficiency();
  if (!table) return table.error();
  if (stack)
    if (auto s = check_attention_kernel(*stack, *g)) return *s;
  return std::pair{*g, stack ? (*table)->for_gpu(*g, *stack) : (*table)->for_gpu(*g)};
}

// ---- train ---------------------------------------------------------------------------------
struct TrainFlags {
  WorkloadFlags w;
  ClusterFlags cluster;
  std::string gpu;
  int64_t global_batch = 0;
  double tokens = 0, epochs = 0, dataset_tokens = 0;
  double host_memory_gbps = 0;  // 0: the node class that houses the GPU (platform.toml)
  double zero3_prefetch = -1;   // unset: the stack's fetch-ahead window
  bool json = false;
};

// --global-batch, --tokens, --epochs and --dataset-tokens: in range, and consistent with the split.
Status check_run_flags(int64_t global_batch, const Workload& w, double tokens, double epochs, double dataset_tokens) {
  if (auto s = require_range(global_batch, "--global-batch", 0, limits::kMaxGlobalBatch)) return s;
  // micro-batch and dp are bounded by Workload::validate, so their product fits.
  if (global_batch > 0 && global_batch % (w.micro_batch * w.par.dp) != 0)
    return make_error("--global-batch", fmt::format("{} is not a multiple of micro-batch x dp = {}", global_batch, w.micro_batch * w.par.dp));
  if (auto s = require_finite(tokens, "--tokens", 0, limits::kMaxTokens)) return s;
  if (auto s = require_finite(epochs, "--epochs", 0, limits::kMaxEpochs)) return s;
  if (auto s = require_finite(dataset_tokens, "--dataset-tokens", 0, limits::kMaxTokens)) return s;
  if (epochs > 0 && dataset_tokens <= 0) return make_error("--dataset-tokens", "is required with --epochs");
  if (tokens > 0 && epochs > 0) return make_error("--tokens", "give --tokens or --epochs, not both");
  if (epochs * dataset_tokens > limits::kMaxTokens)
    return make_error("--epochs", fmt::format("{:g} epochs of {:g} tokens is more than {:g} tokens", epochs, dataset_tokens,
                                              limits::kMaxTokens));
  return std::nullopt;
}

int run_train(Context& ctx, const TrainFlags& f) {
  if (f.w.task == "infer") return fail(make_error("--task", "train models training; use `gpuplan infer` for inference"));
  auto built = build_workload(f.w);
  if (!built) return fail(built.error());
  auto& [m, w] = *built;
  auto stack = apply_stack(f.w, w);
  if (!stack) return fail(stack.error());
  auto ge = gpu_and_eff(ctx, f.gpu, &*stack);
  if (!ge) return fail(ge.error());
  const auto& [gpu, eff] = *ge;
  auto cluster = make_cluster(f.cluster, gpu);
  if (!cluster) return fail(cluster.error());
  if (auto s = check_run_flags(f.global_batch, w, f.tokens, f.epochs, f.dataset_tokens)) return fail(*s);
  TrainingRun run;
  run.global_batch = f.global_batch;
  if (f.tokens > 0) run.tokens = f.tokens;
  if (f.epochs > 0) run.tokens = f.epochs * f.dataset_tokens;
  if (w.offload_optimizer && !stack->offers_offload()) return fail(make_error("--offload-optimizer", stack->no_offload_reason()));
  if (auto s = require_finite(f.host_memory_gbps, "--host-memory-bw", 0, 1e5)) return fail(*s);
  if (f.host_memory_gbps > 0 && !w.offload_optimizer) return fail(make_error("--host-memory-bw", "needs --offload-optimizer"));
  const double host_Bps = f.host_memory_gbps > 0 ? f.host_memory_gbps * 1e9 : node_host_memory_Bps(gpu);
  if (f.zero3_prefetch != -1) {
    if (auto s = require_finite(f.zero3_prefetch, "--zero3-prefetch", 0, 1e12)) return fail(*s);
    if (w.par.zero < 3) return fail(make_error("--zero3-prefetch", "applies to ZeRO-3 (--zero 3)"));
    if (stack->zero3_prefetch_window(m.hidden) <= 0)
      return fail(make_error("--zero3-prefetch", "stack " + stack->id + " prefetches whole layers (FSDP); the window is DeepSpeed's, try --stack deepspeed"));
    run.zero3_prefetch_params = f.zero3_prefetch;
  }
  TrainingEstimate e = estimate_training(m, w, gpu, eff, *stack, *cluster, run);
  add_host_optimizer_step(e, m, w, gpu, *stack, cluster->gpus_per_node, host_Bps);
  const std::optional<double> prefetch_window = zero3_prefetch_window(m, *stack, run);
  const MemoryEstimate mem = estimate_memory(m, w, eff);
  const bool fits = mem.nvidia_smi() <= usable_memory_bytes(gpu);
  const StepBreakdown& b = e.breakdown;
  const double epoch_s = f.dataset_tokens > 0 ? f.dataset_tokens / e.tokens_per_s : 0;
  if (auto s = check_figures({{"step time", e.step_time_s, kMaxSeconds}, {"throughput", e.tokens_per_s},
                              {"time per epoch", epoch_s, kMaxSeconds},
                              {"time to train", e.time_to_train_s.value_or(0), kMaxSeconds},
                              {"memory per GPU", mem.nvidia_smi(), kMaxBytes}},
                             "--model"))
    return fail(*s);
  // Without flash attention the scores are materialised by separate kernels, whatever the stack's.
  const std::string attention = w.flash_attention ? stack->attention_kernel(gpu.architecture).id : "unfused";
  if (f.json) {
    nlohmann::json j = {
        {"schema_version", 1},
        {"model", m.id},
        {"gpu", gpu.id},
        {"gpus", w.par.gpus()},
        {"stack", e.stack},
        {"host_layer_pass_s", e.host_layer_pass_s},
        {"not_modelled", e.not_modelled},
        // ZeRO-3 under a stack with a fetch-ahead window: the window assumed, in elements.
        {"zero3_prefetch_params", w.par.zero >= 3 && prefetch_window ? nlohmann::json(*prefetch_window) : nlohmann::json(nullptr)},
        {"attention_kernel", attention},
        {"tp_overlap", stack->overlap_tp},
        {"recompute", to_string(w.recompute_spec())},
        {"tp", w.par.tp}, {"pp", w.par.pp}, {"dp", w.par.dp}, {"ep", w.par.ep}, {"zero", w.par.zero},
        {"parameters", m.total_parameters()},
        {"active_parameters", m.active_parameters()},
        {"assumed_dense", m.assumed_dense},
        {"notes", m.notes},
        {"micro_batch", w.micro_batch},
        {"global_batch", e.global_batch},
        {"micro_batches_per_step", e.micro_batches},
        {"seq", w.seq},
        {"step_time_s", e.step_time_s},
        {"step_time_s_band", e.step_time_s_band ? nlohmann::json::array({e.step_time_s_band->first, e.step_time_s_band->second})
                                                : nlohmann::json(nullptr)},
        {"tokens_per_s", e.tokens_per_s},
        {"tokens_per_s_band", e.tokens_per_s_band ? nlohmann::json::array({e.tokens_per_s_band->first, e.tokens_per_s_band->second})
                                                  : nlohmann::json(nullptr)},
        {"loss", to_string(w.loss)},
        {"lora_targets", w.task == Task::lora || w.task == Task::qlora ? nlohmann::json(to_string(w.lora_targets)) : nlohmann::json(nullptr)},
        {"double_quant", w.task == Task::qlora ? nlohmann::json(w.double_quant) : nlohmann::json(nullptr)},
        {"cp", w.par.cp},
        {"fp8_recipe", w.precision == Precision::fp8 && fp8_recipe_of(w, *stack) ? nlohmann::json(fp8_recipe_of(w, *stack)->id) : nlohmann::json(nullptr)},
        {"host_bytes", static_cast<int64_t>(mem.cpu_offload)},
        {"host_optimizer", w.offload_optimizer ? nlohmann::json{{"host_memory_bytes_per_s", host_Bps},
                                                                {"bandwidth_fraction", stack->host_optimizer_fraction}}
                                               : nlohmann::json(nullptr)},
        {"tokens_per_s_per_gpu", e.tokens_per_s / w.par.gpus()},
        {"mfu", e.mfu},
        {"hfu", e.hfu},
        {"model_flops_per_step", e.model_flops_per_step},
        {"time_per_epoch_s", epoch_s > 0 ? nlohmann::json(epoch_s) : nlohmann::json(nullptr)},
        {"time_to_train_s", e.time_to_train_s ? nlohmann::json(*e.time_to_train_s) : nlohmann::json(nullptr)},
        {"gpu_hours", e.gpu_hours ? nlohmann::json(*e.gpu_hours) : nlohmann::json(nullptr)},
        {"memory_per_gpu_bytes", static_cast<int64_t>(mem.nvidia_smi())},
        {"fits_memory", fits},
        {"links", {{"tp", e.tp_link}, {"pp", e.pp_link}, {"dp", e.dp_link}, {"ep", e.ep_link}, {"cp", e.cp_link}}},
        {"breakdown",
         {{"compute_s", b.compute_s}, {"memory_bound_s", b.memory_s}, {"kernel_overhead_s", b.overhead_s},
          {"tp_comm_s", b.tp_comm_s}, {"pp_comm_s", b.pp_comm_s}, {"ep_comm_s", b.ep_comm_s}, {"cp_comm_s", b.cp_comm_s},
          {"dp_comm_exposed_s", b.dp_comm_exposed_s},
          {"dp_comm_total_s", b.dp_comm_total_s}, {"bubble_s", b.bubble_s}, {"optimizer_s", b.optimizer_s}, {"offload_s", b.offload_s},
          {"host_bound_s", b.host_bound_s}}}};
    j.update(network_json(*cluster, f.cluster, gpu));
    return print_json(j, "--model");
  }
  fmt::print("{}", fit_width(fmt::format("{} on {} x {} (tp {} x pp {} x dp {}{}, ZeRO-{}), {} x {} tokens per micro-batch, {} a step",
                                         m.name, w.par.gpus(), gpu.id, w.par.tp, w.par.pp, w.par.dp,
                                         w.par.ep > 1 ? fmt::format(", ep {}", w.par.ep) : "", w.par.zero, w.micro_batch, w.seq,
                                         plural(e.micro_batches, "micro-batch", "micro-batches"))));
  const LowPrecisionRecipe* recipe = w.precision == Precision::fp8 ? fp8_recipe_of(w, *stack) : nullptr;
  fmt::print("{}", fit_width(fmt::format("stack {} ({}), recompute {}, attention {}{}{}", stack->id, stack->name,
                                         to_string(w.recompute_spec()), attention,
                                         w.par.tp > 1 ? fmt::format(", TP overlap {}", stack->overlap_tp ? "on" : "off") : "",
                                         recipe ? fmt::format(", FP8 recipe {}", recipe->id) : "")));
  print_model_caveats(m);
  fmt::print("\n");
  TextTable t({"step", "time", "share"});
  t.align_right({1, 2});
  auto row = [&](const char* name, double s) {
    if (s > 0) t.add_row({name, format_seconds(s), fmt::format("{:.1f}%", 100 * s / e.step_time_s)});
  };
  row("compute-bound work (matmuls)", b.compute_s);
  row("memory-bound work (norms, activations, softmax)", b.memory_s);
  row("kernel launch overhead", b.overhead_s);
  row(fmt::format("tensor-parallel comm ({})", e.tp_link).c_str(), b.tp_comm_s);
  row(fmt::format("pipeline sends ({})", e.pp_link).c_str(), b.pp_comm_s);
  row(fmt::format("expert all-to-all ({})", e.ep_link).c_str(), b.ep_comm_s);
  row(fmt::format("context-parallel ring attention ({})", e.cp_link).c_str(), b.cp_comm_s);
  row("pipeline bubble", b.bubble_s);
  row(fmt::format("data-parallel comm, exposed ({})", e.dp_link).c_str(), b.dp_comm_exposed_s);
  row("optimizer step", b.optimizer_s);
  row(fmt::format("GPU waiting for the host to issue kernels ({:.2f} ms a layer pass)", 1e3 * e.host_layer_pass_s).c_str(),
      b.host_bound_s);
  row(fmt::format("optimizer step on the host (PCIe both ways; CPU optimizer at {:.0f}% of {:.0f} GB/s)",
                  100 * stack->host_optimizer_fraction, host_Bps / 1e9).c_str(), b.offload_s);
  t.add_separator();
  t.add_row({"step time", format_seconds(e.step_time_s), "100%"});
  fmt::print("{}", t.render());
  for (const std::string* link : {&e.tp_link, &e.pp_link, &e.dp_link, &e.ep_link, &e.cp_link})
    if (*link == "network") {
      fmt::print("{}", fit_width("network: " + network_line(*cluster, f.cluster, gpu)));
      break;
    }
  if (e.step_time_s_band)
    fmt::print("\n{}", fit_width(fmt::format("step time   {}, 80% band {}–{} (published / predicted on runs the fit never saw)",
                                             format_seconds(e.step_time_s), format_seconds(e.step_time_s_band->first),
                                             format_seconds(e.step_time_s_band->second))));
  fmt::print("\nthroughput  {:.0f} tokens/s ({:.0f} per GPU)\nMFU {:.1f}%   HFU {:.1f}% (of {} dense peak)\n",
             e.tokens_per_s, e.tokens_per_s / w.par.gpus(), e.mfu * 100, e.hfu * 100, to_string(w.precision));
  if (epoch_s > 0) fmt::print("one epoch   {} ({:.0f} tokens)\n", format_seconds(epoch_s), f.dataset_tokens);
  if (e.time_to_train_s) fmt::print("whole run   {} ({:.0f} GPU-hours)\n", format_seconds(*e.time_to_train_s), *e.gpu_hours);
  fmt::print("memory      {} per GPU{}\n", format_bytes(mem.nvidia_smi()), fits ? "" : " -- does NOT fit; see `gpuplan memory` or `gpuplan plan`");
  for (const std::string& n : e.not_modelled) fmt::print("{}", fit_width("not modelled: " + n + "."));
  return 0;
}

// ---- infer ---------------------------------------------------------------------------------
// Load: a Poisson rate, a trace, or users in a closed loop; and what the workload does to the engine.
struct LoadFlags {
  double rps = 0, think_time_s = -1, prefix_hit_rate = 0, acceptance_rate = -1;
  double ttft_target_s = 1.0, tpot_target_s = 0.1;
  std::string trace, lengths = "fixed", client = "server";
  int64_t users = 0, requests = 1000, spec_tokens = 0, scheduler_steps = 1;
  int64_t seed = 1;  // signed, so that CLI11 refuses -1 and 2^64 instead of wrapping them
  bool given() const { return rps != 0 || !trace.empty() || users != 0 || think_time_s != -1; }
};

struct InferFlags {
  WorkloadFlags w;
  ClusterFlags cluster;
  LoadFlags load;
  std::string gpu, weight_precision, engine = kDefaultEngineId, emit;
  int64_t prompt = 512, output = 128, concurrency = 1;
  double average_rps = 0, scale_at = 0.8;
  bool json = false, attention_dp = false;
  bool lengths_given = false;  // --prompt or --output on the command line
};

// `infer --emit k8s`: the replica of this TP size planned for --rps as the peak (and --average-rps),
// within the p99 targets, written as its autoscaler.
int emit_infer_k8s(const InferFlags& f, const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff,
                   const Cluster& cluster, const Engine& engine) {
  if (f.load.rps == 0 || !f.load.trace.empty() || f.load.users != 0)
    return fail(make_error("--emit", "k8s needs the peak request rate as --rps (not --trace or --users)"));
  if (f.average_rps != 0 && !(f.average_rps >= 1e-6 && f.average_rps <= f.load.rps))
    return fail(make_error("--average-rps", "must be above 0 and at most --rps (the peak)"));
  if (!(f.scale_at > 0.05 && f.scale_at <= 1)) return fail(make_error("--scale-at", "must be above 0.05 and at most 1"));
  ServiceTarget t;
  t.prompt_tokens = f.prompt;
  t.output_tokens = f.output;
  t.peak_rps = f.load.rps;
  t.average_rps = f.average_rps > 0 ? f.average_rps : f.load.rps;
  t.ttft_s = f.load.ttft_target_s;
  t.tpot_s = f.load.tpot_target_s;
  t.chat_lengths = f.load.lengths == "chat";
  const ServingOption o = plan_replica(m, w, w.par.tp, gpu, eff, cluster, t, engine, w.par.attention_dp);
  if (!o.ok()) return fail(make_error("--emit", fmt::format("a replica of TP {} on {} cannot serve within the targets: {}", w.par.tp, gpu.id, o.why_not)));
  fmt::print("{}", autoscaler_document(m.id, gpu.id, o, t, engine, f.scale_at));
  return 0;
}

void add_load_flags(CLI::App& sub, LoadFlags& l) {
  sub.add_option("--rps", l.rps, "requests per second arriving as a Poisson process: simulates serving under load");
  sub.add_option("--trace", l.trace, "CSV (prompt_tokens,output_tokens[,arrival_s]) or JSON Lines of requests to simulate");
  sub.add_option("--users", l.users, "users in a closed loop, each sending its next request after the last answer and a think time");
  sub.add_option("--think-time", l.think_time_s, "mean think time of --users, seconds (exponential)");
  sub.add_option("--requests", l.requests, "requests to simulate with --rps or --users")->capture_default_str();
  sub.add_option("--lengths", l.lengths,
                 "fixed: every request --prompt and --output tokens; chat: drawn around them as ShareGPT-style chat traffic spreads")
      ->capture_default_str();
  sub.add_option("--seed", l.seed, "seed of the arrival and think-time draws")->capture_default_str();
  sub.add_option("--prefix-hit-rate", l.prefix_hit_rate, "share of each prompt found in the engine's prefix cache (0-1)");
  sub.add_option("--spec-tokens", l.spec_tokens, "speculative tokens proposed per decode step (0: none)");
  sub.add_option("--acceptance-rate", l.acceptance_rate, "chance each speculative token is accepted (0-1)");
  sub.add_option("--scheduler-steps", l.scheduler_steps,
                 "multi-step scheduling: steps the batch runs between admissions (vLLM V0 --num-scheduler-steps)")
      ->capture_default_str();
  sub.add_option("--client", l.client,
                 "server: requests and tokens pass through the engine's API server (vLLM's paces a heavy load); offline: "
                 "the engine driven from Python in its own process (vLLM benchmark_throughput, LLM.generate)")
      ->capture_default_str();
  sub.add_option("--ttft-target", l.ttft_target_s, "time-to-first-token target goodput counts against, seconds")->capture_default_str();
  sub.add_option("--tpot-target", l.tpot_target_s, "time-per-output-token target goodput counts against, seconds")->capture_default_str();
}

// The requests to simulate, from the flags; errors name the flag.
Result<Load> build_load(const LoadFlags& l, int64_t prompt, int64_t output) {
  // Below one request in about 12 days the arrival times overflow the simulated clock.
  if (!(l.rps == 0 || (l.rps >= 1e-6 && l.rps <= 1e6)))
    return make_error("--rps", "must be a rate from 0.000001 to 1,000,000 requests per second");
  if (l.seed < 0) return make_error("--seed", "must be at least 0");
  if (l.users < 0 || l.users > 100000) return make_error("--users", "must be between 1 and 100,000");
  if (l.users > 0 && l.rps > 0) return make_error("--users", "give --users (closed loop) or --rps (open loop), not both");
  if (l.think_time_s != -1 && l.users == 0) return make_error("--think-time", "needs --users");
  if (l.users > 0 && l.think_time_s == -1) return make_error("--think-time", "is required with --users (0 for none)");
  if (l.users > 0 && !(l.think_time_s >= 0 && l.think_time_s <= 86400)) return make_error("--think-time", "must be between 0 and 86400 seconds");
  if (l.requests < 1 || l.requests > 1000000) return make_error("--requests", "must be between 1 and 1,000,000");
  auto chat = parse_lengths(l.lengths, prompt, output, "--lengths", "--prompt", "--output");
  if (!chat) return chat.error();
  if (*chat && !l.trace.empty()) return make_error("--lengths", "the trace gives each request's lengths; drop --lengths");
  Load load;
  load.users = l.users;
  load.think_time_s = std::max(0.0, l.think_time_s);
  if (!l.trace.empty()) {
    auto text = read_text_file(l.trace, "trace");
    if (!text) return make_error("--trace", text.error().to_string());
    auto t = parse_trace(*text, "--trace: " + l.trace);
    if (!t) return t.error();
    if (t->has_arrivals && l.rps > 0) return make_error("--rps", "the trace gives arrival times; drop --rps or arrival_s");
    load.requests = t->requests;
    if (!t->has_arrivals) assign_arrivals(load.requests, l.rps, static_cast<uint64_t>(l.seed));
  } else if (l.users > 0) {
    load.requests.assign(static_cast<size_t>(l.requests), SimRequest{0, prompt, output});
  } else {
    load.requests = poisson_arrivals(l.requests, l.rps, prompt, output, static_cast<uint64_t>(l.seed));
  }
  if (*chat) draw_chat_lengths(load.requests, prompt, output, static_cast<uint64_t>(l.seed));
  return load;
}

Status check_workload_knobs(const LoadFlags& l) {
  if (!(l.prefix_hit_rate >= 0 && l.prefix_hit_rate < 1)) return make_error("--prefix-hit-rate", "must be at least 0 and below 1");
  if (l.spec_tokens < 0 || l.spec_tokens > 64) return make_error("--spec-tokens", "must be between 0 and 64");
  if (l.spec_tokens > 0 && !(l.acceptance_rate >= 0 && l.acceptance_rate <= 1))
    return make_error("--acceptance-rate", "is required with --spec-tokens, between 0 and 1");
  if (l.spec_tokens == 0 && l.acceptance_rate != -1) return make_error("--acceptance-rate", "needs --spec-tokens");
  if (l.scheduler_steps < 1 || l.scheduler_steps > 1024) return make_error("--scheduler-steps", "must be between 1 and 1024");
  if (!(l.ttft_target_s > 0 && l.ttft_target_s <= 3600)) return make_error("--ttft-target", "must be between 0 and 3600 seconds");
  if (!(l.tpot_target_s > 0 && l.tpot_target_s <= 60)) return make_error("--tpot-target", "must be between 0 and 60 seconds");
  return std::nullopt;
}

nlohmann::json percentiles_json(const Percentiles& p) { return {{"p50", p.p50}, {"p90", p.p90}, {"p99", p.p99}, {"mean", p.mean}}; }

int run_infer(Context& ctx, InferFlags f) {
  if (const std::string flag = training_only_flag(f.w); !flag.empty())
    return fail(make_error(flag, "applies to training; inference takes the model, its formats, the layout and the load"));
  f.w.task = "infer";
  if (!f.weight_precision.empty()) f.w.precision = f.weight_precision;
  if (f.prompt <= 0 || f.prompt > (1 << 24)) return fail(make_error("--prompt", "must be between 1 and 16M tokens"));
  if (f.output <= 0 || f.output > (1 << 24)) return fail(make_error("--output", "must be between 1 and 16M tokens"));
  if (f.concurrency <= 0 || f.concurrency > (1 << 20)) return fail(make_error("--concurrency", "must be between 1 and 1M"));
  // A trace gives every request's lengths: the single-request estimate, the engine's KV budget
  // (a sliding window's share of a token depends on the length) and the step costs take its means.
  std::optional<Load> traced;
  if (!f.load.trace.empty() && f.emit.empty()) {
    if (f.lengths_given) return fail(make_error("--prompt", "the trace gives each request's lengths; drop --prompt and --output"));
    auto l = build_load(f.load, f.prompt, f.output);
    if (!l) return fail(l.error());
    double prompt = 0, output = 0;
    for (const SimRequest& q : l->requests) prompt += static_cast<double>(q.prompt_tokens), output += static_cast<double>(q.output_tokens);
    const auto n = static_cast<double>(std::max<size_t>(1, l->requests.size()));
    f.prompt = std::max<int64_t>(1, std::llround(prompt / n));
    f.output = std::max<int64_t>(1, std::llround(output / n));
    traced = std::move(*l);
  }
  f.w.seq = f.prompt + f.output;
  f.w.batch = f.concurrency;
  auto built = build_generation_workload(f.w);
  if (!built) return fail(built.error());
  const ModelSpec& m = built->first;
  Workload w = built->second;
  auto ge = gpu_and_eff(ctx, f.gpu);
  if (!ge) return fail(ge.error());
  const auto& [gpu, eff] = *ge;
  auto cluster = make_cluster(f.cluster, gpu);
  if (!cluster) return fail(cluster.error());
  auto engine = EngineCatalog::builtin().find(f.engine);
  if (!engine) return fail(engine.error());
  if (f.attention_dp)
    if (auto s = engine->use_attention_dp(w, m, "--attention-dp")) return fail(*s);
  if (auto s = check_workload_knobs(f.load)) return fail(*s);
  if (auto s = engine->use_client(f.load.client, "--client")) return fail(*s);
  if (std::string why = engine->unsupported(gpu, w.precision); !why.empty()) return fail(make_error("--engine", why));
  if (!f.emit.empty() && f.emit != "k8s") return fail(make_error("--emit", "must be k8s, not '" + f.emit + "'"));
  if (f.emit.empty() && f.average_rps != 0) return fail(make_error("--average-rps", "needs --emit k8s"));
  if (f.emit == "k8s") {
    if (auto l = build_load(f.load, f.prompt, f.output); !l) return fail(l.error());
    return emit_infer_k8s(f, m, w, gpu, eff, *cluster, *engine);
  }
  InferenceRequest r{f.prompt, f.output, f.concurrency};
  // MoE kernel backends the engine could select here whose speed gpuplan has not measured: the
  // estimate is for the engine's recommended backend, and the output says so.
  std::vector<std::string> unmodelled_backends;
  if (m.is_moe())
    for (const auto& u : engine->unmodelled_moe_backends)
      if (u.applies(gpu, w.precision)) unmodelled_backends.push_back(u.backend);
  const InferenceEstimate e = estimate_inference(m, w, r, gpu, eff, *cluster, *engine);
  const InferenceMemory im = inference_memory(m, w, r, gpu, eff, *engine);
  std::optional<ServingResult> sim;
  if (f.load.given()) {
    auto load = traced ? Result<Load>(std::move(*traced)) : build_load(f.load, f.prompt, f.output);
    if (!load) return fail(load.error());
    load->ramp_s = e.e2e_latency_s;  // users start over one request's service time
    ServingSetup setup = setup_for(*engine, gpu, step_cost(m, w, gpu, eff, *cluster, *engine), im.kv_capacity_tokens, m.max_position);
    setup.prefix_hit_rate = engine->prefix_caching ? f.load.prefix_hit_rate : 0;
    setup.spec_tokens = f.load.spec_tokens;
    setup.scheduler_steps = f.load.scheduler_steps;
    setup.acceptance_rate = std::max(0.0, f.load.acceptance_rate);
    setup.ttft_target_s = f.load.ttft_target_s;
    setup.tpot_target_s = f.load.tpot_target_s;
    setup.seed = static_cast<uint64_t>(f.load.seed);
    auto res = simulate_serving(setup, *load);
    if (!res) return fail(make_error(f.load.trace.empty() ? "--prompt" : "--trace", res.error().message));
    sim = *res;
  }
  const MemoryEstimate mem = estimate_memory(m, w, eff);
  const bool fits = mem.nvidia_smi() <= usable_memory_bytes(gpu);
  if (auto s = check_figures({{"time to first token", e.ttft_s, kMaxSeconds}, {"time per output token", e.tpot_s, kMaxSeconds},
                              {"end-to-end latency", e.e2e_latency_s, kMaxSeconds}, {"throughput", e.total_output_tokens_per_s},
                              {"memory per GPU", mem.nvidia_smi(), kMaxBytes}},
                             "--model"))
    return fail(*s);
  // Where the engine's latency-bound quantised mat-vec, not the card's bandwidth, sets the weight
  // stream.
  const double matvec_Bps = engine->matvec_stream_limit_Bps(gpu, w.precision);
  const bool matvec_bound = engine->matvec_limit_binds(eff, gpu, w.precision);
  if (f.json) {
    nlohmann::json j = {{"schema_version", 1},
                        {"model", m.id},
                        {"gpu", gpu.id},
                        {"tp", w.par.tp},
                        {"ep", w.par.ep},
                        {"attention_dp", w.par.attention_dp},
                        {"parameters", m.total_parameters()},
                        {"active_parameters", m.active_parameters()},
                        {"assumed_dense", m.assumed_dense},
                        {"notes", m.notes},
                        {"weight_precision", to_string(w.precision)},
                        {"kv_precision", to_string(w.kv())},
                        {"prompt_tokens", f.prompt},
                        {"output_tokens", f.output},
                        {"lengths_from", traced ? "trace means" : "flags"},
                        {"concurrency", f.concurrency},
                        {"engine", engine->id},
                        {"unmodelled_moe_backends", unmodelled_backends},
                        {"engine_time_scale", engine->time_scale},
                        {"quantized_matvec_bytes_per_s", matvec_bound ? nlohmann::json(matvec_Bps) : nlohmann::json(nullptr)},
                        {"engine_prefill_matmul_scale", engine->prefill_matmul_scale},
                        {"client", f.load.client},
                        {"frontend_seq_step_s", engine->frontend_seq_step_s},
                        {"frontend_request_s", engine->frontend_request_s},
                        {"ttft_s", e.ttft_s},
                        {"tpot_s", e.tpot_s},
                        {"e2e_latency_s", e.e2e_latency_s},
                        {"output_tokens_per_s", e.output_tokens_per_s},
                        {"total_output_tokens_per_s", e.total_output_tokens_per_s},
                        {"prefill_tokens_per_s", e.prefill_tokens_per_s},
                        {"prompt_dequantize_s", e.prompt_dequantize_s},
                        {"decode_dequantize_s", e.decode_dequantize_s},
                        {"prefill_forwards", e.prefill_forwards},
                        {"prefill_chunk_tokens", e.prefill_chunk_tokens},
                        {"max_concurrency", im.max_concurrency ? nlohmann::json(*im.max_concurrency) : nlohmann::json(nullptr)},
                        {"fits_memory", fits},
                        {"memory_per_gpu_bytes", static_cast<int64_t>(mem.nvidia_smi())},
                        {"kv_bytes_per_token", im.kv_bytes_per_token},
                        {"decode_breakdown",
                         {{"weight_read_s", e.decode_weight_read_s}, {"kv_read_s", e.decode_kv_read_s},
                          {"compute_s", e.decode_compute_s}, {"tp_comm_s", e.decode_comm_s},
                          {"kernel_overhead_s", e.decode_overhead_s}}},
                        {"kv_cache_budget_bytes", im.kv_budget_bytes},
                        {"kv_cache_tokens", im.kv_capacity_tokens},
                        {"kv_cache_replication", im.kv_replication},
                        {"engine_memory_fraction", im.memory_fraction},
                        {"engine_weight_bytes", im.weight_bytes_per_gpu}};
    // The links the tensor-parallel collectives cross, as train and plan name them.
    j.update(network_json(*cluster, f.cluster, gpu));
    if (sim) {
      j["latency"] = {{"ttft_s", percentiles_json(sim->ttft_s)}, {"tpot_s", percentiles_json(sim->tpot_s)},
                      {"e2e_s", percentiles_json(sim->e2e_s)}};
      j["throughput_tokens_per_s"] = sim->throughput_tokens_per_s;
      j["goodput_rps"] = sim->goodput_rps;
      j["load"] = {{"requests", sim->completed}, {"requests_per_s", sim->requests_per_s}, {"span_s", sim->span_s},
                   {"mean_batch", sim->mean_batch}, {"steps", sim->steps}, {"preemptions", sim->preemptions},
                   {"frontend_busy_share", sim->frontend_busy_share},
                   {"ttft_target_s", f.load.ttft_target_s}, {"tpot_target_s", f.load.tpot_target_s},
                   {"seed", f.load.seed}};
    }
    return print_json(j, "--model");
  }
  fmt::print("{} on {} x {}{} under {}, {} weights, {} KV cache; {} prompt + {} output tokens{}, {} concurrent\n", m.name,
             w.par.tp, gpu.id,
             w.par.attention_dp ? fmt::format(" (attention data-parallel: each GPU its own requests with every KV head; experts ep {}, dense MLPs {})",
                                              w.par.ep, w.par.attention_dp_dense_tp ? "split over the group" : "replicated")
             : w.par.ep > 1     ? fmt::format(" (ep {})", w.par.ep)
                                : "",
             engine->name, to_string(w.precision),
             to_string(w.kv()), f.prompt, f.output, traced ? " (the trace's means)" : "", f.concurrency);
  if (m.is_moe())
    fmt::print("{} of {} parameters active per token\n", format_count(static_cast<double>(m.active_parameters())),
               format_count(static_cast<double>(m.total_parameters())));
  print_model_caveats(m);
  for (const std::string& b : unmodelled_backends)
    fmt::print("assumes {}'s recommended MoE backend: its {} backend for {} experts on {} has no measured speed ({})\n", engine->id, b,
               to_string(w.precision), gpu.architecture, engine->unmodelled_moe_backends_source);
  if (engine->time_scale != 1)
    fmt::print("{}'s times are x{:.2f}, its scale fitted on published serving runs (data/fitted.toml)\n", engine->id,
               engine->time_scale);
  if (engine->prefill_matmul_fitted && engine->prefill_matmul_scale != 1)
    fmt::print("its prompt GEMMs run at x{:.2f} of the GPU's GEMM efficiency curve, fitted on published runs\n",
               engine->prefill_matmul_scale);
  if (matvec_bound)
    fmt::print("its quantised mat-vec streams at most {:.3g} GB/s per SM ({:.3g} TB/s on {}'s {} SMs, {:.0f}% of its bandwidth), "
               "the rate fitted on published runs\n",
               engine->quantized_matvec_sm_Bps / 1e9, matvec_Bps / 1e12, gpu.id, gpu.sm_count, 100 * matvec_Bps / gpu.memory_bw_Bps);
  fmt::print("\n");
  fmt::print("time to first token   {}  (prefill {:.0f} tokens/s, compute-bound{}{})\n", format_seconds(e.ttft_s), e.prefill_tokens_per_s,
             e.prefill_forwards > 1 ? fmt::format("; {} forwards of up to {} tokens, each reading the weights", e.prefill_forwards,
                                                  e.prefill_chunk_tokens)
                                    : "",
             e.prompt_dequantize_s > 0 ? fmt::format("; {} of it expanding the quantised weights to FP16 for cuBLAS",
                                                     format_seconds(e.prompt_dequantize_s))
                                       : "");
  fmt::print("time per output token {}  (weights {:.0f}%, KV cache {:.0f}%, launches and kernel floors {:.0f}%, TP/EP comm {:.0f}%{})\n",
             format_seconds(e.tpot_s), 100 * e.decode_weight_read_s / e.tpot_s, 100 * e.decode_kv_read_s / e.tpot_s,
             100 * e.decode_overhead_s / e.tpot_s, 100 * e.decode_comm_s / e.tpot_s,
             e.decode_dequantize_s > 0
                 ? fmt::format(", expanding the quantised weights to 16 bits {:.0f}%: {} rows a step is past the engine's GEMV limit of {}",
                               100 * e.decode_dequantize_s / e.tpot_s, f.concurrency, engine->dequantize_min_rows - 1)
                 : "");
  fmt::print("end-to-end latency    {}\n", format_seconds(e.e2e_latency_s));
  fmt::print("throughput            {:.1f} tokens/s per request, {:.0f} tokens/s in total\n", e.output_tokens_per_s, e.total_output_tokens_per_s);
  if (im.max_concurrency)
    fmt::print("max concurrency       {} sequences of {} tokens fit in the engine's KV cache\n", *im.max_concurrency, f.prompt + f.output);
  else
    fmt::print("max concurrency       none: the model does not fit on {} x {}\n", w.par.tp, gpu.id);
  if (!fits) fmt::print("memory                {} per GPU -- does NOT fit this concurrency\n", format_bytes(mem.nvidia_smi()));
  fmt::print("KV cache              {} tokens in the engine's budget ({:.1f}% of the card{})\n", im.kv_capacity_tokens,
             im.memory_fraction * 100,
             im.weight_bytes_per_gpu != mem.weights
                 ? fmt::format(", weights held as {} for its kernels", format_bytes(im.weight_bytes_per_gpu))
                 : "");
  if (im.kv_replication > 1)
    fmt::print("                      each cached {} is held on {:g} of the {} GPUs (tensor-parallel attention{}); "
               "attention data parallelism (--attention-dp: vLLM --data-parallel-size with --enable-expert-parallel, "
               "SGLang --enable-dp-attention, TensorRT-LLM enable_attention_dp) caches each request once, up to {:g}x the tokens less the weights it copies\n",
               m.is_mla() ? "latent" : "key/value head", im.kv_replication, w.par.tp,
               m.is_mla() ? ": the MLA latent is not split by heads" : fmt::format(", {} KV heads", m.kv_heads),
               im.kv_replication);
  if (sim) {
    fmt::print("\nUnder load: {} requests over {} ({:.2f} requests/s), mean batch {:.1f}, {} preemptions\n", sim->completed,
               format_seconds(sim->span_s), sim->requests_per_s, sim->mean_batch, sim->preemptions);
    if (engine->frontend_seq_step_s > 0)
      fmt::print("Assumed: {}'s API server streams each sequence's token in {} a step and takes in a request in {} (fitted);\n"
                 "under heavy load it, not the GPU, sets the pace (a client at about {:.0f} tokens/s at most).\n",
                 engine->id, format_seconds(engine->frontend_seq_step_s), format_seconds(engine->frontend_request_s),
                 1 / engine->frontend_seq_step_s);
    if (sim->frontend_busy_share >= 0.9)
      fmt::print("The API server was busy {:.0f}% of the run: it, not the GPU, sets the pace; more API-server processes\n"
                 "(vLLM --api-server-count) or more replicas would serve this load faster than a faster GPU.\n",
                 100 * sim->frontend_busy_share);
    TextTable t({"latency", "p50", "p90", "p99"});
    t.align_right({1, 2, 3});
    for (auto [name, p] : {std::pair{"time to first token", &sim->ttft_s}, std::pair{"time per output token", &sim->tpot_s},
                           std::pair{"end to end", &sim->e2e_s}})
      t.add_row({name, format_seconds(p->p50), format_seconds(p->p90), format_seconds(p->p99)});
    fmt::print("{}", t.render());
    fmt::print("throughput {:.0f} output tokens/s; goodput {:.2f} requests/s within TTFT {} and TPOT {}\n",
               sim->throughput_tokens_per_s, sim->goodput_rps, format_seconds(f.load.ttft_target_s),
               format_seconds(f.load.tpot_target_s));
  }
  return 0;
}

// ---- roofline ------------------------------------------------------------------------------
struct RooflineFlags {
  WorkloadFlags w;
  std::string gpu, phase = "train";
  bool json = false;
};

int run_roofline(Context& ctx, RooflineFlags f) {
  Phase phase;
  if (f.phase == "train") phase = Phase::train;
  else if (f.phase == "prefill") phase = Phase::prefill;
  else if (f.phase == "decode") phase = Phase::decode;
  else return fail(make_error("--task", "must be train, prefill or decode, not '" + f.phase + "'"));
  f.w.task = phase == Phase::train ? "pretrain" : "infer";
  auto built = build_workload(f.w);
  if (!built) return fail(built.error());
  const auto& [m, w] = *built;
  auto ge = gpu_and_eff(ctx, f.gpu);
  if (!ge) return fail(ge.error());
  const RooflineReport r = roofline(m, w, ge->first, ge->second, phase);
  if (auto s = check_figures({{"step time", r.compute_bound_s + r.memory_bound_s, kMaxSeconds}}, "--model")) return fail(*s);
  const char* verdict = r.memory_bound() ? "memory-bound" : "compute-bound";
  if (f.json) {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& o : r.ops)
      ops.push_back({{"name", o.name}, {"flops", o.flops}, {"bytes", o.bytes}, {"intensity", o.intensity},
                     {"time_s", o.time_s}, {"bound", o.memory_bound ? "memory-bound" : "compute-bound"}});
    nlohmann::json j = {{"schema_version", 1}, {"model", m.id}, {"gpu", ge->first.id}, {"task", to_string(phase)},
                        {"verdict", verdict}, {"ridge_point", r.ridge_point}, {"achievable_ridge_point", r.achievable_ridge},
                        {"peak_flops", r.peak_flops}, {"bandwidth_bytes_per_s", r.bandwidth_Bps},
                        {"compute_bound_s", r.compute_bound_s}, {"memory_bound_s", r.memory_bound_s}, {"operations", ops}};
    return print_json(j, "--model");
  }
  fmt::print("{} {} on {}: ridge point {:.0f} FLOP/byte ({} / {:.0f} GB/s)\n\n", m.name, to_string(phase), ge->first.id,
             r.ridge_point, format_flops(r.peak_flops), r.bandwidth_Bps / 1e9);
  TextTable t({"operation", "GFLOP", "MB moved", "FLOP/byte", "bound", "time/step"});
  t.align_right({1, 2, 3, 5});
  for (const auto& o : r.ops)
    t.add_row({o.name, fmt::format("{:.2f}", o.flops / 1e9), fmt::format("{:.1f}", o.bytes / 1e6),
               fmt::format("{:.1f}", o.intensity), o.memory_bound ? "memory" : "compute", format_seconds(o.time_s)});
  fmt::print("{}", t.render());
  fmt::print("\nverdict: {} ({} of {} in memory-bound operations)\n", verdict,
             format_seconds(r.memory_bound_s), format_seconds(r.memory_bound_s + r.compute_bound_s));
  return 0;
}

// ---- predict -------------------------------------------------------------------------------
struct PredictFlags {
  std::string from, gpus_list;
  ProfileWorkloadOverrides o;
  int64_t target_gpus = 0;
  double dataset_tokens = 0;
  bool json = false;
};

int run_predict(Context& ctx, const PredictFlags& f) {
  auto text = read_text_file(f.from, "profile summary");
  if (!text) return fail(make_error("--from", text.error().to_string()));
  auto summary = json::parse(*text, nullptr, false);
  if (summary.is_discarded()) return fail(make_error("--from", valid_utf8(f.from) + " is not valid JSON"));
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto table = ctx.efficiency();
  if (!table) return fail(table.error());
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  // A measurement of the user's own run replaces the fit on published runs (data/fitted.toml).
  const EfficiencyTable raw = (*table)->without_fit();
  auto fit = fit_profile(summary, f.o, **catalog, raw);
  if (!fit) return fail(fit.error());
  if (auto s = require_range(f.target_gpus, "--gpus", 0, limits::kMaxGpus)) return fail(*s);
  if (auto s = require_finite(f.dataset_tokens, "--dataset-tokens", 0, limits::kMaxTokens)) return fail(*s);
  std::vector<std::string> targets;
  std::string cur;
  for (char c : f.gpus_list + ",") {
    if (c == ',') {
      if (!cur.empty()) targets.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (targets.empty()) return fail(make_error("--gpu", "name at least one target GPU"));
  const Efficiency src_eff = raw.for_gpu(fit->source, fit->stack);
  const Cluster src_cluster = default_cluster(fit->source);
  auto src_seconds = [&](const Efficiency& e) {
    return estimate_training(fit->model, fit->workload, fit->source, e, fit->stack, src_cluster, fit->run).step_time_s;
  };
  json out = json::array();
  TextTable t({"target", "GPUs", "step", "band", "tokens/s", "epoch", "$/hour", "$/epoch", "memory"});
  t.align_right({1, 2, 3, 4, 5, 6, 7});
  for (const std::string& id : targets) {
    auto g = (*catalog)->find(id);
    if (!g) return fail(g.error());
    Workload w = fit->workload;
    w.par.dp = f.target_gpus > 0 ? f.target_gpus : fit->workload.par.dp;
    w.par.zero = w.par.dp > 1 ? std::max(w.par.zero, 3) : 0;
    TrainingRun run = fit->run;  // the same global batch
    if (run.global_batch % (w.micro_batch * w.par.dp) != 0) run.global_batch = w.micro_batch * w.par.dp;
    if (run.global_batch > limits::kMaxGlobalBatch)
      return fail(make_error("--gpus", fmt::format("{} GPUs x micro-batch {} is more than {} sequences a step", w.par.dp,
                                                   w.micro_batch, limits::kMaxGlobalBatch)));
    const Efficiency eff = raw.for_gpu(*g, fit->stack);
    const Cluster cl = default_cluster(*g);
    auto tgt_seconds = [&](const Efficiency& e) { return estimate_training(fit->model, w, *g, e, fit->stack, cl, run).step_time_s; };
    const CrossGpuPrediction p = predict_across(src_eff, src_seconds, fit->measured_step_s, eff, tgt_seconds, fit->spread);
    const double tokens_per_step = static_cast<double>(run.global_batch * w.seq);
    const double tps = tokens_per_step / p.seconds;
    const double epoch = f.dataset_tokens > 0 ? f.dataset_tokens / tps : 0;
    const GpuPrice* price = (*prices)->find(g->id);
    const auto quote = price ? price->cheapest_cloud() : std::nullopt;
    const double per_hour = quote ? quote->usd_per_gpu_hour * w.par.gpus() : 0;
    const bool fits = estimate_memory(fit->model, w, eff).nvidia_smi() <= usable_memory_bytes(*g);
    if (auto s = check_figures({{"step time", p.seconds, kMaxSeconds}, {"step time band", p.high_s, kMaxSeconds},
                                {"step time band", p.low_s, kMaxSeconds},
                                {"step time", p.uncalibrated_s, kMaxSeconds}, {"throughput", tps},
                                {"time per epoch", epoch, kMaxSeconds}, {"cost per hour", per_hour}},
                               "--from"))
      return fail(*s);
    out.push_back({{"gpu", g->id}, {"gpus", w.par.gpus()}, {"step_time_s", p.seconds}, {"step_time_low_s", p.low_s},
                   {"step_time_high_s", p.high_s}, {"uncalibrated_step_time_s", p.uncalibrated_s}, {"tokens_per_s", tps},
                   {"time_per_epoch_s", epoch > 0 ? json(epoch) : json(nullptr)},
                   {"usd_per_hour", quote ? json(per_hour) : json(nullptr)},
                   {"usd_per_epoch", quote && epoch > 0 ? json(per_hour * epoch / 3600) : json(nullptr)}, {"fits_memory", fits}});
    t.add_row({g->id, std::to_string(w.par.gpus()), format_seconds(p.seconds),
               fmt::format("{} - {}", format_seconds(p.low_s), format_seconds(p.high_s)), fmt::format("{:.0f}", tps),
               epoch > 0 ? format_seconds(epoch) : "-", quote ? format_usd(per_hour) : "-",
               quote && epoch > 0 ? format_usd(per_hour * epoch / 3600) : "-", fits ? "fits" : "does NOT fit"});
  }
  if (f.json) {
    return print_json(json{{"schema_version", 1}, {"model", fit->model.id}, {"stack", fit->stack.id}, {"source_gpu", fit->source.id},
                            {"measured_step_s", fit->measured_step_s}, {"uncalibrated_source_step_s", fit->uncalibrated_step_s},
                            {"fit", {{"compute_scale", fit->scale.compute}, {"memory_scale", fit->scale.memory},
                                     {"capped", fit->scale.capped}}},
                            {"predictions", out}}, "--from");
  }
  fmt::print("Stack: {} ({}).\n", fit->stack.id, fit->stack.name);
  fmt::print("{} measured on {} x {}: {} a step (the model alone says {}); fitted efficiency x{:.2f}{}\n\n", fit->model.name,
             fit->workload.par.gpus(), fit->source.id, format_seconds(fit->measured_step_s), format_seconds(fit->uncalibrated_step_s),
             fit->scale.compute, fit->scale.capped ? " (capped at 100% of peak: the run beat the model)" : "");
  fmt::print("{}", t.render());
  fmt::print("\nThe band spans the fit made all on compute, all on memory, and the run's own step-time spread.\n");
  return 0;
}

}  // namespace

std::vector<Command> perf_commands() {
  return {
      {"train", "Training step time, throughput, MFU/HFU and run time",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<TrainFlags>();
         f->w.task = "pretrain";
         add_workload_flags(sub, f->w);
         add_stack_flag(sub, f->w);
         add_cluster_flags(sub, f->cluster);
         sub.add_option("--gpu", f->gpu, "catalog GPU id")->required();
         sub.add_option("--micro-batch", f->w.batch, "sequences per GPU per micro-batch (same as --batch)");
         sub.add_option("--global-batch", f->global_batch, "sequences per optimizer step (default: micro-batch x grad-accum x dp)");
         sub.add_option("--tokens", f->tokens, "tokens to train on: gives time to train and GPU-hours");
         sub.add_option("--epochs", f->epochs, "epochs over --dataset-tokens");
         sub.add_option("--dataset-tokens", f->dataset_tokens, "tokens in the dataset: gives time per epoch");
         sub.add_option("--host-memory-bw", f->host_memory_gbps,
                        "with --offload-optimizer: the host's memory bandwidth, GB/s (default: the node class that houses the GPU)");
         sub.add_option("--zero3-prefetch", f->zero3_prefetch,
                        "ZeRO-3 under DeepSpeed: parameter elements fetched ahead of use (stage3_prefetch_bucket_size; default: the stack's)");
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_train(ctx, *f); }; });
       }},
      {"infer", "Inference latency (TTFT, TPOT), throughput and max concurrency",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<InferFlags>();
         add_workload_flags(sub, f->w);
         add_cluster_flags(sub, f->cluster);
         sub.add_option("--gpu", f->gpu, "catalog GPU id")->required();
         sub.add_option("--weight-precision", f->weight_precision, "weight format: bf16, fp16, fp8, int8, int4 (same as --precision)");
         sub.add_option("--prompt", f->prompt, "prompt tokens per request")->capture_default_str();
         sub.add_option("--output", f->output, "output tokens per request")->capture_default_str();
         sub.add_option("--concurrency", f->concurrency, "requests decoded together")->capture_default_str();
         sub.add_flag("--attention-dp", f->attention_dp,
                      "MoE serving: attention data-parallel over the --tp GPUs, each with its own requests and every KV head, experts over ep = tp (vllm, sglang, tensorrt-llm)");
         sub.add_option("--engine", f->engine, "serving engine: vllm, sglang, tensorrt-llm, llama.cpp, transformers (`gpuplan engines`)")
             ->capture_default_str();
         add_load_flags(sub, f->load);
         sub.add_option("--emit", f->emit, "k8s: plan this replica for --rps as the peak and write its autoscaler (HorizontalPodAutoscaler YAML)");
         sub.add_option("--average-rps", f->average_rps, "with --emit k8s: average requests per second (default: --rps)");
         sub.add_option("--scale-at", f->scale_at, "with --emit k8s: share of a replica's capacity at which to add replicas")->capture_default_str();
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f, &sub] {
           f->lengths_given = sub.count("--prompt") + sub.count("--output") > 0;
           run = [&ctx, f] { return run_infer(ctx, *f); };
         });
       }},
      {"roofline", "Per-operation arithmetic intensity against the GPU's ridge point",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<RooflineFlags>();
         add_workload_flags(sub, f->w);
         sub.remove_option(sub.get_option("--task"));
         sub.add_option("--task", f->phase, "train, prefill or decode")->capture_default_str();
         sub.add_option("--gpu", f->gpu, "catalog GPU id")->required();
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_roofline(ctx, *f); }; });
       }},
      {"predict", "Predict other GPUs from a measured profile (fits the model to the run first)",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<PredictFlags>();
         sub.add_option("--from", f->from, "summary.json written by `gpuplan profile`")->required();
         sub.add_option("--gpu", f->gpus_list, "target GPU id(s), comma-separated")->required();
         sub.add_option("--gpus", f->target_gpus, "GPUs on the target (default: as profiled)");
         sub.add_option("--model", f->o.model, "what ran, if the profile does not record it");
         sub.add_option("--task", f->o.task, "pretrain, full, lora or qlora");
         sub.add_option("--precision", f->o.precision, "training precision of the run");
         sub.add_option("--batch", f->o.micro_batch, "micro-batch of the run");
         sub.add_option("--seq", f->o.seq, "sequence length of the run");
         sub.add_option("--grad-accum", f->o.grad_accum, "micro-batches per logged step");
         sub.add_option("--source-gpus", f->o.gpus, "GPUs the profiled run used");
         sub.add_option("--source-gpu", f->o.source_gpu, "catalog id of the profiled GPU, if not recognised");
         sub.add_option("--stack", f->o.stack, "software stack the run used (default: the profile's, else the task's usual one)");
         sub.add_option("--dataset-tokens", f->dataset_tokens, "tokens per epoch, for epoch time and cost");
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_predict(ctx, *f); }; });
       }},
  };
}

}  // namespace gpuplan::cli
