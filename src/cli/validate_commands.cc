// `gpuplan validate` and `gpuplan fit`: the model against published measurements. The headline is
// the leave-one-publication-out error (fit on the other publications, score the held-out one);
// in-sample figures are printed apart. `fit` writes the parameters data/fitted.toml holds.
#include <fmt/format.h>

#include <cmath>
#include <fstream>

#include "cli/common.h"
#include "engine/engine.h"
#include "report/table.h"
#include "util/text_file.h"
#include "validation/cross_validation.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

// Sections printed as they stand, and the fitted kinds scored leave-one-publication-out.
constexpr const char* kSections[] = {"training", "memory", "inference", "operation", "cross_gpu", "moe_training", "moe_serving",
                                     "serving"};
constexpr std::pair<const char*, const char*> kKinds[] = {{"train_throughput", "training throughput"},
                                                          {"train_memory", "training memory"},
                                                          {"serving", "serving (TTFT, TPOT, tokens/s)"}};

json score_json(const Score& s) { return {{"mape", s.mape}, {"rows", s.rows}, {"publications", s.publications}}; }

// The built-in table, or `path` (the same layout) when given.
Result<ValidatedTable> validated(Context& ctx, const std::string& path) {
  auto catalog = ctx.catalog();
  if (!catalog) return catalog.error();
  auto table = ctx.efficiency();
  if (!table) return table.error();
  if (path.empty()) return run_builtin_cross_validation(**catalog, **table);
  auto text = read_text_file(path, "validation table");
  if (!text) return make_error("--table", text.error().to_string());
  return run_cross_validation(*text, path, **catalog, **table);
}

int print_validate_json(const ValidatedTable& v) {
  const ValidationReport& rep = v.report;
  json rows = json::array();
  for (const auto& r : rep.rows) {
    rows.push_back({{"section", r.section}, {"kind", r.kind.empty() ? json(nullptr) : json(r.kind)}, {"what", r.what},
                    {"engine", r.engine.empty() ? json(nullptr) : json(r.engine)},
                    {"load", r.load.empty() ? json(nullptr) : json(r.load)},
                    {"metric", r.metric}, {"publication", r.publication}, {"stack", r.stack.empty() ? json(nullptr) : json(r.stack)},
                    {"published", r.published}, {"predicted", r.predicted}, {"error", r.error()},
                    {"cross_validated", r.kind.empty() ? json(nullptr) : json(r.cross_validated)},
                    {"cross_validated_error", r.kind.empty() ? json(nullptr) : json(r.cv_error())},
                    {"source", r.source}, {"assumed", r.assumed},
                    {"uncalibrated", r.section == "cross_gpu" ? json(r.uncalibrated) : json(nullptr)}});
    // The unfitted step time's terms, as the fit sees them.
    if (r.kind == "train_throughput") {
      const FitTerms& t = r.fit.time;
      rows.back()["unfitted_terms_s"] = {{"compute", t.compute_s}, {"memory", t.memory_s},
                                         {"comm_nvlink", t.comm_s - t.comm_pcie_s - t.comm_network_s},
                                         {"comm_pcie", t.comm_pcie_s}, {"comm_network", t.comm_network_s}, {"host_busy", t.host_busy_s}};
    }
  }
  json kept = json::array();
  for (const auto& u : rep.unscored)
    kept.push_back({{"section", u.section}, {"what", u.what}, {"publication", u.publication}, {"source", u.source}, {"reason", u.reason}});
  json j = {{"schema_version", 1}, {"rows", rows}, {"kept_not_scored", kept}};
  for (const char* s : kSections) j["mape"][s] = rep.mape(s);
  // Per engine, leave one publication out (the engine's time scale is fitted on the others).
  const auto by_engine = v.cv.cross_validated_by_stack.find("serving");
  for (const std::string& e : EngineCatalog::builtin().ids()) {
    const Score* s = nullptr;
    if (by_engine != v.cv.cross_validated_by_stack.end())
      if (auto it = by_engine->second.find(e); it != by_engine->second.end()) s = &it->second;
    j["serving_mape_by_engine"][e] = s ? json(s->mape) : json(nullptr);
  }
  j["serving_unexpressible"] = rep.unexpressible;
  j["serving_mape_by_load"] = json::object();
  for (const auto& [load, s] : v.cv.serving_by_load) j["serving_mape_by_load"][load] = score_json(s);
  for (const auto& [kind, label] : kKinds) {
    const auto cv = v.cv.cross_validated.find(kind);
    if (cv == v.cv.cross_validated.end()) continue;
    j["cross_validated"][kind] = score_json(cv->second);
    j["in_sample"][kind] = score_json(v.cv.in_sample.at(kind));
    j["cross_validated_by_stack"][kind] = json::object();
    if (auto it = v.cv.cross_validated_by_stack.find(kind); it != v.cv.cross_validated_by_stack.end())
      for (const auto& [stack, s] : it->second) j["cross_validated_by_stack"][kind][stack] = score_json(s);
  }
  return print_json(j, "validate");
}

int run_validate(Context& ctx, bool json_out, const std::string& path) {
  auto v = validated(ctx, path);
  if (!v) return fail(v.error());
  if (json_out) return print_validate_json(*v);
  const ValidationReport& rep = v->report;
  for (const char* section : kSections) {
    const bool cross = std::string_view(section) == "cross_gpu";
    const bool fitted = std::string_view(section) == "training" || std::string_view(section) == "memory" ||
                        std::string_view(section) == "serving";
    TextTable t({cross ? "cross-GPU (fit on the source, predict the target)" : section, "metric", "published",
                 fitted ? "in sample" : "predicted", "error", cross ? "model alone" : fitted ? "held out" : "", "source"});
    t.align_right({2, 3, 4, 5});
    double uncal = 0;
    int n = 0;
    for (const auto& r : rep.rows)
      if (r.section == section) {
        std::string extra;
        if (cross) extra = fmt::format("{:+.1f}%", 100 * (r.uncalibrated / r.published - 1));
        else if (!r.kind.empty()) extra = fmt::format("{:+.1f}%", 100 * r.cv_error());
        t.add_row({r.what, r.metric, fmt::format("{:.4g}", r.published), fmt::format("{:.4g}", r.predicted),
                   fmt::format("{:+.1f}%", r.error() * 100), extra,
                   (r.engine.empty() ? "" : r.engine + ": ") + r.source + (r.assumed.empty() ? "" : " [assumed: " + r.assumed + "]")});
        if (cross) uncal += std::fabs(r.uncalibrated / r.published - 1), ++n;
      }
    fmt::print("{}MAPE {:.1f}% (worst {:.1f}%){}{}\n\n", t.render(), rep.mape(section) * 100, rep.worst(section) * 100,
               fitted ? ", in sample" : "",
               cross && n ? fmt::format("; the model alone, without the source measurement: {:.1f}%", 100 * uncal / n) : "");
  }
  if (!rep.unscored.empty()) {
    TextTable t({"kept, not scored", "publication", "reason"});
    for (const auto& u : rep.unscored) t.add_row({u.what, u.publication, u.reason});
    fmt::print("{}\n", t.render());
  }
  fmt::print("Serving rows: {} kept unscored with the reason the model cannot express them.\n\n", rep.unexpressible);
  // The headline last, where a terminal leaves it in view.
  fmt::print("Leave-one-publication-out (fit on the other publications, score the held-out one):\n");
  for (const auto& [kind, label] : kKinds) {
    const auto cv = v->cv.cross_validated.find(kind);
    if (cv == v->cv.cross_validated.end()) continue;
    const Score& s = cv->second;
    fmt::print("  {:<32} MAPE {:5.1f}% over {} rows from {} publications\n", label, 100 * s.mape, s.rows, s.publications);
    if (auto it = v->cv.cross_validated_by_stack.find(kind); it != v->cv.cross_validated_by_stack.end())
      for (const auto& [stack, ss] : it->second)
        fmt::print("    {} {:<18} MAPE {:5.1f}% over {} rows from {} publications\n", kind == std::string("serving") ? "engine" : "stack ",
                   stack, 100 * ss.mape, ss.rows, ss.publications);
    if (kind == std::string("serving"))
      for (const auto& [load, ss] : v->cv.serving_by_load)
        fmt::print("    load   {:<18} MAPE {:5.1f}% over {} rows from {} publications\n", load, 100 * ss.mape, ss.rows, ss.publications);
  }
  std::string in_sample = "In sample (fit on every row, so not a test of new runs): ";
  bool first = true;
  for (const auto& [kind, label] : kKinds) {
    const auto it = v->cv.in_sample.find(kind);
    if (it == v->cv.in_sample.end()) continue;
    in_sample += fmt::format("{}{} {:.1f}%", first ? "" : ", ", label, 100 * it->second.mape);
    first = false;
  }
  fmt::print("{}", fit_width(in_sample + "."));
  fmt::print("{} published runs kept, not scored (listed above with the reason).\n", rep.unscored.size());
  return 0;
}

int run_fit(Context& ctx, const std::string& out_path) {
  auto v = validated(ctx, "");
  if (!v) return fail(v.error());
  const Score& t = v->cv.in_sample.at("train_throughput");
  const Score& m = v->cv.in_sample.at("train_memory");
  const std::string header = fmt::format(
      "# Parameters fitted on the published runs of data/validation.toml, written by `gpuplan fit`.\n"
      "# Deterministic (least absolute error by reweighted ridge least squares toward the sourced model);\n"
      "# do not edit by hand:\n"
      "# rerun `gpuplan fit --out data/fitted.toml` after changing the validation table or the model.\n"
      "# `gpuplan validate` prints the error these give on publications the fit never saw.\n"
      "#\n"
      "# compute_scale, memory_scale, comm_scale multiply the compute-bound, memory-bound and exposed\n"
      "# communication terms of a training step; activation_scale multiplies saved activations;\n"
      "# allocator_fraction is the caching allocator's reserve over activations and workspaces;\n"
      "# comm_scale_pcie and comm_scale_network scale communication over PCIe and the network apart;\n"
      "# tp_overlap_scale is the share of the tensor-parallel time a stack's overlap could hide under its\n"
      "# GEMMs that it does hide.\n"
      "# [serving] time_scale multiplies a serving engine's step and request times ([serving.engine]:\n"
      "# an engine's own, where it has rows enough); fitted by least absolute log time ratio (the\n"
      "# median of the rows' log ratios). [serving.quantized_matvec_gbps_per_sm]: the rate per SM at\n"
      "# which an engine's latency-bound quantised mat-vec streams weights, the value of a fixed grid\n"
      "# that, with the engine's time scale refitted at it, gives the least absolute log error.\n"
      "# [serving.prefill_matmul_scale]: the same for the efficiency of an engine's prompt GEMMs\n"
      "# relative to the GPU's GEMM curve, where engines.toml leaves it to the fit.\n"
      "# [serving.per_query_head_kv_share]: the same for the share of a per-query-head decode\n"
      "# kernel's repeated KV-cache reads that reaches DRAM (rows of builds that say\n"
      "# per_query_head_decode: TensorRT-LLM before XQA). [serving.frontend_request_ms]: the same for\n"
      "# the time an engine's serving frontend takes to take in a request, where engines.toml gives\n"
      "# the frontend's streaming time (vLLM's API server), in milliseconds.\n"
      "# *_band = [low, high, rows]: 10th and 90th percentile of published / predicted (step time or\n"
      "# per-GPU memory) over the rows scored leave-one-publication-out. A [stack.<id>] section holds a\n"
      "# stack with at least {} rows from two publications; memory_band_<task> (qlora, lora, full) the\n"
      "# band of one task class, where it has as many.\n"
      "# Fitted on {} throughput rows ({} publications) and {} memory rows ({} publications).\n",
      kMinStackRows, t.rows, t.publications, m.rows, m.publications);
  const std::string text = v->cv.fitted.to_toml(header);
  if (out_path.empty() || out_path == "-") {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream out(out_path, std::ios::binary);
  out << text;
  if (!out) return fail(make_error("--out", "cannot write " + out_path));
  fmt::print("wrote {}\n", out_path);
  return 0;
}

}  // namespace

std::vector<Command> validate_commands() {
  return {
      {"validate", "Run the model over published measurements and print its error (leave-one-publication-out)",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto json = std::make_shared<bool>(false);
         auto table = std::make_shared<std::string>();
         sub.add_flag("--json", *json, "JSON output");
         sub.add_option("--table", *table, "a validation table of your own, in data/validation.toml's layout (default: the built-in one)");
         sub.callback([&ctx, &run, json, table] { run = [&ctx, json, table] { return run_validate(ctx, *json, *table); }; });
       }},
      {"fit", "Fit data/fitted.toml's parameters on the validation table (deterministic)",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto out = std::make_shared<std::string>();
         sub.add_option("--out", *out, "file to write (default: standard output)");
         sub.callback([&ctx, &run, out] { run = [&ctx, out] { return run_fit(ctx, *out); }; });
       }},
  };
}

}  // namespace gpuplan::cli
