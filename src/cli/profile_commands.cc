// `gpuplan profile`, `gpuplan doctor` and `gpuplan bench`: measuring the real thing.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>

#include "cli/common.h"
#include "cli/workload_flags.h"
#include "measure/gpu_bench.h"
#include "measure/stack_check.h"
#include "perf/training.h"
#include "profiler/merge.h"
#include "profiler/metrics_endpoint.h"
#include "profiler/profile_session.h"
#include "util/text_file.h"
#include "report/table.h"
#include "util/terminal.h"
#include "util/escape.h"
#include "util/output_file.h"
#include "util/units.h"
#include "util/utf8.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

struct ProfileFlags {
  std::string interval = "100ms", out, step_regex, epoch_regex, nvml_lib = "libnvidia-ml.so.1";
  std::string model, gpu, task = "full", precision = "bf16";
  int64_t batch = 0, seq = 0, gpus = 1;
  bool json = false;
  std::string json_out, metrics_host = "0.0.0.0";
  int metrics_port = -1;
  std::vector<std::string> command;
};

// `gpuplan profile merge DIR...`: each DIR holds a node's summary.json (or is one).
int run_merge(const std::vector<std::string>& dirs, bool json_out) {
  std::vector<std::pair<std::string, json>> summaries;
  for (const auto& d : dirs) {
    const std::string path = is_directory(d) ? d + "/summary.json" : d;
    auto text = read_text_file(path, "profile summary");
    if (!text) return fail(text.error());
    auto j = json::parse(*text, nullptr, false);
    if (j.is_discarded()) return fail(make_error(valid_utf8(path), "is not valid JSON"));
    summaries.emplace_back(valid_utf8(d), std::move(j));
  }
  auto merged = merge_profiles(summaries);
  if (!merged) return fail(merged.error());
  if (json_out) return print_json(*merged, "profile merge");
  const json& m = *merged;
  fmt::print("== gpuplan profile merge: {} ==\n", plural(m["job"]["nodes"].get<int64_t>(), "node"));
  TextTable t({"node", "steps", "median step", "vs job", "GPUs", "GPU busy", "exit"});
  t.align_right({1, 2, 3, 4, 5, 6});
  for (const auto& n : m["nodes"])
    t.add_row({n["node"].get<std::string>(), n["steps"].is_null() ? "-" : std::to_string(n["steps"].get<int64_t>()),
               n["step_median_s"].is_null() ? "-" : format_seconds(n["step_median_s"].get<double>()),
               n.contains("step_over_job_median") ? fmt::format("{:+.0f}%", (n["step_over_job_median"].get<double>() - 1) * 100) : "-",
               std::to_string(n["gpus"].get<int64_t>()),
               n["gpu_util_mean"].is_null() ? "-" : fmt::format("{:.0f}%", n["gpu_util_mean"].get<double>()),
               n["exit_code"].is_null() ? "-" : std::to_string(n["exit_code"].get<int64_t>())});
  fmt::print("{}", t.render());
  if (m["diagnosis"].empty()) fmt::print("\nNo straggler or imbalance across the nodes.\n");
  for (const auto& d : m["diagnosis"])
    fmt::print("\n* {}: {}\n  -> {}\n", d["finding"].get<std::string>(), d["evidence"].get<std::string>(), d["advice"].get<std::string>());
  return 0;
}

int run_profile_cmd(Context& ctx, const ProfileFlags& f) {
  auto interval = parse_interval(f.interval);
  if (!interval) return fail(interval.error());
  ProfileOptions o;
  o.argv = f.command;
  o.interval_s = *interval;
  o.out_dir = f.out;
  o.step_regex = f.step_regex;
  o.epoch_regex = f.epoch_regex;
  o.nvml_library = f.nvml_lib;
  if (!f.model.empty()) {
    // Record what the run is, so `gpuplan predict` can fit the model to it; predict it here too.
    WorkloadFlags wf;
    wf.model = f.model;
    wf.task = f.task;
    wf.precision = f.precision;
    wf.batch = f.batch > 0 ? f.batch : 1;
    wf.seq = f.seq;
    wf.gpus = f.gpus;
    auto built = build_workload(wf);
    if (!built) return fail(built.error());
    const auto& [m, w] = *built;
    o.workload = {{"model", f.model}, {"task", to_string(w.task)}, {"precision", to_string(w.precision)},
                  {"micro_batch", w.micro_batch}, {"seq", w.seq}, {"gpus", w.par.gpus()}};
    if (!f.gpu.empty()) {
      auto catalog = ctx.catalog();
      if (!catalog) return fail(catalog.error());
      auto g = (*catalog)->find(f.gpu);
      if (!g) return fail(g.error());
      auto table = ctx.efficiency();
      if (!table) return fail(table.error());
      o.workload["gpu"] = g->id;
      o.workload["stack"] = default_stack_id(w.task);
      TrainingRun run;
      const Stack stack = *StackCatalog::builtin().find(default_stack_id(w.task));
      o.predicted_step_s = estimate_training(m, w, *g, (*table)->for_gpu(*g, stack), stack, default_cluster(*g), run).step_time_s;
    }
  }
  if (f.command.empty()) return fail(make_error("command", "profile needs the command to run: gpuplan profile [FLAGS] -- COMMAND ARGS..."));
  // --json: gpuplan's stdout carries only the JSON, so the child's stdout goes to stderr.
  if (f.json) o.child_stdout_fd = 2;
  std::unique_ptr<MetricsEndpoint> metrics;
  if (f.metrics_port >= 0) {
    auto m = MetricsEndpoint::start(f.metrics_host, f.metrics_port);
    if (!m) return fail(m.error());
    metrics = std::move(m).value();
    fmt::print(stderr, "gpuplan profile: Prometheus metrics at http://{}:{}/metrics\n", f.metrics_host, metrics->port());
    o.on_sample = [&metrics](const LiveSample& s) { metrics->publish(s); };
  }
  auto r = run_profile(o);
  if (!r) return fail(r.error());
  const json& s = r->summary;
  // The command's exit code is returned; a profile that could not be written (a full disk) turns
  // a success into 1, with the reason on stderr.
  std::vector<Error> errors = r->write_errors;
  if (!f.json_out.empty())
    if (auto e = write_output_file(f.json_out, json_text(s, 2) + "\n", "--json-out")) errors.push_back(*e);
  auto finish = [&] {
    for (const auto& e : errors) fmt::print(stderr, "gpuplan: error: {}\n", printable(e.to_string()));
    return errors.empty() || r->exit_code != 0 ? r->exit_code : 1;
  };
  if (f.json) {
    const std::string text = json_text(s, 2) + "\n";
    if (const int e = write_fully(1, text.data(), text.size())) errors.push_back(make_error("stdout", std::strerror(e)));
    return finish();
  }
  // The child owns stdout; gpuplan reports on stderr.
  fmt::print(stderr, "\n== gpuplan profile: {} (exit {}), {:.1f} s ==\n", printable(s["command"].get<std::string>()), r->exit_code,
             s["wall_s"].get<double>());
  const json& st = s["steps"];
  if (st["count"].get<int64_t>() > 0 && !st["median_s"].is_null())
    fmt::print(stderr, "steps: {} seen, median {}, p90 {}\n", st["count"].get<int64_t>(), format_seconds(st["median_s"].get<double>()),
               format_seconds(st["p90_s"].get<double>()));
  else
    fmt::print(stderr, "steps: none recognised in the output (use --step-regex, or write 'step' lines to $GPUPLAN_MARKER_FD)\n");
  for (const auto& e : s["epochs"]) fmt::print(stderr, "epoch {}: {}\n", e["index"].get<int>(), format_seconds(e["duration_s"].get<double>()));
  fmt::print(stderr, "host: process tree used {:.0f}% CPU on average (100% = one core), peak RSS {}\n",
             s["host"]["cpu_percent_mean"].get<double>(), format_bytes(s["host"]["rss_peak_bytes"].get<double>()));
  if (!s["gpu_unavailable"].is_null()) fmt::print(stderr, "gpu: {}\n", printable(s["gpu_unavailable"].get<std::string>()));
  for (const auto& g : s["gpus"])
    fmt::print(stderr, "gpu {} {}: busy {}% of the time (kernel-active, not SM occupancy), peak memory {}, {} W mean, {:.0f} J, max {} C\n",
               g["index"].get<int>(), printable(g["name"].get<std::string>()),
               g["util_mean"].is_null() ? "?" : fmt::format("{:.0f}", g["util_mean"].get<double>()),
               format_bytes(g["memory_peak_bytes"].get<double>()),
               g["power_mean_w"].is_null() ? "?" : fmt::format("{:.0f}", g["power_mean_w"].get<double>()), g["energy_j"].get<double>(),
               g["temperature_max_c"].get<double>());
  if (s.contains("predicted"))
    fmt::print(stderr, "predicted step {} vs measured {}: measured/predicted = {:.2f}\n", format_seconds(s["predicted"]["step_time_s"].get<double>()),
               format_seconds(st["median_s"].get<double>()), s["predicted"]["measured_over_predicted"].get<double>());
  for (const auto& d : s["diagnosis"])
    fmt::print(stderr, "* {}: {}\n  -> {}\n", d["finding"].get<std::string>(), printable(d["evidence"].get<std::string>()),
               d["advice"].get<std::string>());
  fmt::print(stderr, "trace: {}, summary: {}/summary.json\n", printable(s["trace"].get<std::string>()), printable(r->out_dir));
  return finish();
}

int run_doctor(Context& ctx, const std::string& nvml_lib, bool json_out) {
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  // The PyTorch probe starts a Python interpreter (about 2 s): say what is happening meanwhile.
  fmt::print(stderr, "gpuplan doctor: checking the NVIDIA driver, CUDA and PyTorch...\n");
  std::fflush(stderr);
  const StackReport r = check_stack(nvml_lib, **catalog);
  // A problem found is a failed check for scripts: exit 1 (2 stays "bad usage").
  const bool problem = std::any_of(r.findings.begin(), r.findings.end(), [](const auto& f) { return f.level == "error"; });
  if (json_out) {
    json gpus = json::array(), findings = json::array();
    for (const auto& g : r.gpus)
      gpus.push_back({{"name", g.name}, {"compute_capability", g.compute_capability}, {"memory_bytes", g.memory_bytes},
                      {"catalog_id", g.catalog_id.empty() ? json(nullptr) : json(g.catalog_id)}, {"precisions", g.precisions}});
    for (const auto& f : r.findings) findings.push_back({{"level", f.level}, {"finding", f.text}});
    return print_json(json{{"schema_version", 1}, {"driver_version", r.driver_version}, {"cuda_driver_version", r.cuda_driver},
                            {"cuda_toolkit_version", r.cuda_toolkit}, {"torch", r.torch}, {"gpus", gpus}, {"findings", findings}, {"ok", !problem}}, "doctor") == 0 ? (problem ? 1 : 0) : kExitUsage;
  }
  fmt::print("NVIDIA driver: {}\n", r.driver_version.empty() ? "not found" : r.driver_version);
  fmt::print("CUDA (driver supports): {}\n", r.cuda_driver.empty() ? "-" : r.cuda_driver);
  fmt::print("CUDA toolkit (nvcc): {}\n", r.cuda_toolkit.empty() ? "not found" : r.cuda_toolkit);
  fmt::print("PyTorch: {}\n", r.torch.empty() ? "not found" : r.torch);
  for (const auto& g : r.gpus)
    fmt::print("GPU: {} (compute capability {}, {}){}; precisions: {}\n", g.name, g.compute_capability, format_bytes(g.memory_bytes),
               g.catalog_id.empty() ? "" : ", catalog id " + g.catalog_id, fmt::join(g.precisions, ", "));
  fmt::print("\n");
  for (const auto& f : r.findings) fmt::print("[{}] {}\n", f.level == "error" ? alarm(f.level) : f.level, f.text);
  if (problem) fmt::print("\ndoctor found a problem (exit status 1).\n");
  return problem ? 1 : 0;
}

int run_bench(Context& ctx, const std::string& calibration_out, bool json_out) {
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto r = run_gpu_bench(**catalog);
  if (!r) {
    fmt::print(stderr, "gpuplan: {}\n", r.error().message);
    return 1;
  }
  if (!calibration_out.empty())
    if (auto e = write_output_file(calibration_out, calibration_toml(*r), "--write-calibration")) return fail(*e);
  if (json_out) {
    return print_json(bench_json(*r), "bench");
  }
  fmt::print("{}", bench_text(*r));
  if (!calibration_out.empty()) fmt::print("calibration written to {} (use it with --calibration)\n", calibration_out);
  return 0;
}

}  // namespace

std::vector<Command> profile_commands() {
  return {
      {"profile", "Run a command, sample GPU and host, find its steps and its bottleneck",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<ProfileFlags>();
         sub.add_option("--interval", f->interval, "sampling interval, e.g. 100ms or 1s")->capture_default_str();
         sub.add_option("--out", f->out, "new or empty folder for trace.jsonl and summary.json (default: a new gpuplan-profile/DATE-TIME)");
         sub.add_option("--step-regex", f->step_regex, "regex matching a step line (first group: step number)");
         sub.add_option("--epoch-regex", f->epoch_regex, "regex matching an epoch line (first group: epoch number)");
         sub.add_option("--nvml-lib", f->nvml_lib, "NVML library to load")->capture_default_str();
         sub.add_option("--model", f->model, "what the run trains (records it for `gpuplan predict`)");
         sub.add_option("--gpu", f->gpu, "catalog id of the local GPU, to show the predicted step time");
         sub.add_option("--task", f->task, "pretrain, full, lora or qlora")->capture_default_str();
         sub.add_option("--precision", f->precision, "training precision")->capture_default_str();
         sub.add_option("--batch", f->batch, "micro-batch of the run");
         sub.add_option("--seq", f->seq, "sequence length of the run");
         sub.add_option("--gpus", f->gpus, "GPUs the run uses")->capture_default_str();
         sub.add_flag("--json", f->json, "print summary.json on stdout instead of the report (the command's stdout goes to stderr)");
         sub.add_option("--json-out", f->json_out, "also write summary.json to FILE")->option_text("FILE");
         sub.add_option("--metrics-port", f->metrics_port, "serve live samples for Prometheus at :PORT/metrics (DCGM exporter names)")
             ->option_text("PORT");
         sub.add_option("--metrics-host", f->metrics_host, "address the metrics endpoint listens on")->capture_default_str();
         sub.add_option("command", f->command, "the command to run, after --");
         sub.prefix_command();
         auto merge_dirs = std::make_shared<std::vector<std::string>>();
         auto merge_json = std::make_shared<bool>(false);
         CLI::App* merge = sub.add_subcommand("merge", "Combine per-node profile summaries into one cross-node diagnosis");
         merge->add_option("dirs", *merge_dirs, "each node's --out folder (or its summary.json)")->required();
         merge->add_flag("--json", *merge_json, "JSON output");
         merge->callback([&run, merge_dirs, merge_json] { run = [merge_dirs, merge_json] { return run_merge(*merge_dirs, *merge_json); }; });
         sub.callback([&ctx, &run, f, merge] {
           if (merge->parsed()) return;
           run = [&ctx, f] { return run_profile_cmd(ctx, *f); };
         });
       }},
      {"doctor", "Check the local GPU stack: driver, CUDA, compute capability, PyTorch",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto lib = std::make_shared<std::string>("libnvidia-ml.so.1");
         auto json_out = std::make_shared<bool>(false);
         sub.add_option("--nvml-lib", *lib, "NVML library to load")->capture_default_str();
         sub.add_flag("--json", *json_out, "JSON output");
         sub.callback([&ctx, &run, lib, json_out] { run = [&ctx, lib, json_out] { return run_doctor(ctx, *lib, *json_out); }; });
       }},
      {"bench", "Measure GEMM TFLOP/s and memory bandwidth of the local GPU against its datasheet",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto out = std::make_shared<std::string>("gpuplan-calibration.toml");
         auto json_out = std::make_shared<bool>(false);
         sub.add_option("--write-calibration", *out, "where to write the measured efficiencies (use them with --calibration)")->capture_default_str();
         sub.add_flag("--json", *json_out, "JSON output");
         sub.callback([&ctx, &run, out, json_out] { run = [&ctx, out, json_out] { return run_bench(ctx, *out, *json_out); }; });
       }},
  };
}

}  // namespace gpuplan::cli
