#include "calibrate/profile_fit.h"

#include <fmt/format.h>

#include "model/resolve.h"
#include "util/checked.h"
#include "util/limits.h"

namespace gpuplan {

using nlohmann::json;

namespace {
std::string str(const json& w, const char* k) { return w.contains(k) && w[k].is_string() ? w[k].get<std::string>() : ""; }
int64_t num(const json& w, const char* k) { return w.contains(k) && w[k].is_number_integer() ? w[k].get<int64_t>() : 0; }
double real(const json& w, const char* k) { return w.is_object() && w.contains(k) && w[k].is_number() ? w[k].get<double>() : 0; }

// The flag's value when given (non-zero), else the summary's workload.<key>, else `fallback`;
// within [1, hi] either way, the error naming where the value came from.
Result<int64_t> pick(int64_t flag_value, const char* flag, const json& w, const char* key, int64_t fallback, int64_t hi) {
  const bool from_flag = flag_value != 0;
  const int64_t v = from_flag ? flag_value : (num(w, key) ? num(w, key) : fallback);
  if (auto e = require_range(v, from_flag ? flag : std::string("--from: workload.") + key, 1, hi)) return *e;
  return v;
}
}  // namespace

Result<ProfileFit> fit_profile(const json& s, const ProfileWorkloadOverrides& o, const Catalog& catalog,
                               const EfficiencyTable& table) {
  if (!s.is_object() || !s.contains("steps")) return make_error("--from", "is not a gpuplan profile summary (no \"steps\")");
  const json& st = s["steps"];
  if (!st.is_object() || !st.contains("median_s") || !st["median_s"].is_number() || st["median_s"].get<double>() <= 0)
    return make_error("--from", "the profile recognised no steps, so there is no step time to fit");
  const json w = s.contains("workload") && s["workload"].is_object() ? s["workload"] : json::object();
  ProfileFit f;
  f.measured_step_s = st["median_s"].get<double>();
  // No training step takes under a microsecond or over ~30,000 years; the bounds keep the spread
  // (p90 / median) finite too.
  if (auto e = require_finite(f.measured_step_s, "--from: steps.median_s", 1e-6, 1e12)) return *e;
  const double p90 = real(st, "p90_s");
  if (auto e = require_finite(p90, "--from: steps.p90_s", 0, 1e12)) return *e;
  f.spread = std::max(0.0, p90 / f.measured_step_s - 1);
  const std::string model = o.model.empty() ? str(w, "model") : o.model;
  if (model.empty()) return make_error("--model", "the profile does not record what ran; give --model (and --batch, --seq)");
  auto m = resolve_model(model);
  if (!m) return m.error();
  f.model = *m;
  Workload& wl = f.workload;
  const std::string task = o.task.empty() ? (str(w, "task").empty() ? "full" : str(w, "task")) : o.task;
  auto t = parse_task(task);
  if (!t || *t == Task::infer) return make_error("--task", "must be pretrain, full, lora or qlora");
  wl.task = *t;
  const std::string prec = o.precision.empty() ? (str(w, "precision").empty() ? "bf16" : str(w, "precision")) : o.precision;
  auto p = parse_precision(prec);
  if (!p) return make_error("--precision", "unknown precision '" + prec + "'");
  wl.precision = *p;
  const std::string stack = o.stack.empty() ? (str(w, "stack").empty() ? default_stack_id(wl.task) : str(w, "stack")) : o.stack;
  auto found = StackCatalog::builtin().find(stack);
  if (!found) return found.error();
  f.stack = *found;
  wl.set_recompute(f.stack.default_recompute);
  auto micro = pick(o.micro_batch, "--batch", w, "micro_batch", 1, limits::kMaxBatch);
  if (!micro) return micro.error();
  auto seq = pick(o.seq, "--seq", w, "seq", 2048, limits::kMaxSeq);
  if (!seq) return seq.error();
  auto gpus = pick(o.gpus, "--source-gpus", w, "gpus", 1, limits::kMaxGpus);
  if (!gpus) return gpus.error();
  auto accum = pick(o.grad_accum, "--grad-accum", w, "grad_accum", 1, limits::kMaxGradAccum);
  if (!accum) return accum.error();
  wl.micro_batch = *micro;
  wl.seq = *seq;
  wl.par.dp = *gpus;
  if (wl.par.dp > 1) wl.par.zero = 3;
  wl.grad_accum = *accum;
  if (w.contains("recompute") && w["recompute"].is_string())
    if (auto r = parse_recompute(w["recompute"].get<std::string>())) wl.set_recompute(*r);
  if (auto e = wl.validate(f.model)) return *e;
  // The GPU it ran on: named, recorded, or recognised from the driver's device name.
  std::string gpu_id = o.source_gpu.empty() ? str(w, "gpu") : o.source_gpu;
  if (gpu_id.empty() && s.contains("gpus") && s["gpus"].is_array() && !s["gpus"].empty()) {
    const json& g = s["gpus"][0];
    if (auto id = catalog.match_device(str(g, "name"), real(g, "memory_total_bytes"))) gpu_id = *id;
  }
  if (gpu_id.empty()) return make_error("--source-gpu", "the profile's GPU is not recognised; name it with --source-gpu");
  auto g = catalog.find(gpu_id, "--source-gpu");
  if (!g) return g.error();
  f.source = *g;
  f.run.global_batch = wl.micro_batch * wl.grad_accum * wl.par.dp;
  const Efficiency base = table.for_gpu(f.source, f.stack);
  const Cluster cluster = default_cluster(f.source);
  auto seconds = [&](const Efficiency& e) {
    return estimate_training(f.model, wl, f.source, e, f.stack, cluster, f.run).step_time_s;
  };
  f.uncalibrated_step_s = seconds(base);
  f.scale = fit_efficiency(base, seconds, f.measured_step_s, Attribution::joint);
  return f;
}

EfficiencyTable calibrated_table(const EfficiencyTable& table, const Catalog& catalog, const EfficiencyScale& s) {
  std::string text = "# calibrated from a profile\n";
  for (const Gpu& g : catalog.gpus()) {
    const Efficiency e = scaled(table.for_gpu(g), s);
    text += fmt::format("[gpu.{}]\nmatmul_max_fraction = {}\nattention_fraction = {}\nmemory_max_fraction = {}\nvector_memory_fraction = {}\n",
                        g.id, e.matmul_max_fraction, e.attention_fraction, e.memory_max_fraction, e.vector_memory_fraction);
    for (const GemmCeiling& c : kPrecisionGemmCeilings)
      if (e.*c.fraction > 0) text += fmt::format("{} = {}\n", c.key, e.*c.fraction);
  }
  auto over = EfficiencyTable::from_toml(text, "profile calibration");
  return over ? table.with_overrides(*over) : table;
}

}  // namespace gpuplan
