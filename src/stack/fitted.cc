#include "stack/fitted.h"

#include <fmt/format.h>

#include "data/embedded.h"
#include "data/toml_document.h"

namespace gpuplan {

namespace {

struct FitKey {
  const char* name;
  double TrainingFit::*member;
  double lo, hi;
};
constexpr FitKey kFitKeys[] = {
    {"compute_scale", &TrainingFit::compute_scale, 0.05, 20},
    {"memory_scale", &TrainingFit::memory_scale, 0.05, 20},
    {"comm_scale", &TrainingFit::comm_scale, 0.05, 20},
    {"comm_scale_pcie", &TrainingFit::comm_scale_pcie, 0.05, 20},
    {"comm_scale_network", &TrainingFit::comm_scale_network, 0.05, 20},
    {"tp_overlap_scale", &TrainingFit::tp_overlap_scale, 0, 20},
    {"activation_scale", &TrainingFit::activation_scale, 0.05, 20},
    {"allocator_fraction", &TrainingFit::allocator_fraction, 0, 2},
};

constexpr const char* kTaskClasses[] = {"qlora", "lora", "full"};

Status read_band(const TomlFields& f, const char* key, FitBand& out) {
  const toml::node* n = f.table().get(key);
  if (!n) return std::nullopt;
  const toml::array* a = n->as_array();
  if (!a || a->size() != 3 || !a->get(0)->value<double>() || !a->get(1)->value<double>() || !a->get(2)->value<int64_t>())
    return make_error(f.field(key), "must be [low, high, rows]");
  out.low = *a->get(0)->value<double>();
  out.high = *a->get(1)->value<double>();
  const int64_t rows = *a->get(2)->value<int64_t>();
  if (!(out.low > 0 && out.low <= out.high && out.high < 100) || rows < 0 || rows > 1'000'000)
    return make_error(f.field(key), "needs 0 < low <= high < 100 and rows >= 0");
  out.rows = static_cast<int>(rows);
  return std::nullopt;
}

Result<TrainingFit> read_fit(const toml::table& t, const std::string& where, const TrainingFit& base) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"compute_scale", "memory_scale", "comm_scale", "comm_scale_pcie", "comm_scale_network", "tp_overlap_scale", "activation_scale", "allocator_fraction",
                            "throughput_band", "memory_band", "memory_band_qlora", "memory_band_lora", "memory_band_full"}))
    return *s;
  TrainingFit fit = base;
  for (const FitKey& k : kFitKeys) {
    auto v = f.optional_number_between(k.name, k.lo, k.hi);
    if (!v) return v.error();
    if (*v) fit.*k.member = **v;
  }
  if (auto s = read_band(f, "throughput_band", fit.throughput_band)) return *s;
  if (auto s = read_band(f, "memory_band", fit.memory_band)) return *s;
  for (const char* task : kTaskClasses) {
    FitBand b;
    if (auto s = read_band(f, fmt::format("memory_band_{}", task).c_str(), b)) return *s;
    if (b.rows > 0) fit.memory_band_by_task[task] = b;
  }
  return fit;
}

std::string fit_toml(const TrainingFit& f) {
  std::string out;
  for (const FitKey& k : kFitKeys)
    if (f.*k.member >= 0) out += fmt::format("{} = {:.6g}\n", k.name, f.*k.member);
  auto band = [&](const char* key, const FitBand& b) {
    if (b.rows > 0) out += fmt::format("{} = [{:.6g}, {:.6g}, {}]\n", key, b.low, b.high, b.rows);
  };
  band("throughput_band", f.throughput_band);
  band("memory_band", f.memory_band);
  for (const char* task : kTaskClasses)
    if (auto it = f.memory_band_by_task.find(task); it != f.memory_band_by_task.end())
      band(fmt::format("memory_band_{}", task).c_str(), it->second);
  return out;
}

}  // namespace

Result<FittedParameters> FittedParameters::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  TomlFields top(*doc, origin);
  if (auto s = top.only_keys({"global", "stack", "serving"})) return *s;
  FittedParameters p;
  if (const toml::node* g = doc->get("global")) {
    if (!g->as_table()) return make_error(origin + ": global", "must be a table");
    auto fit = read_fit(*g->as_table(), origin + ": global", TrainingFit{});
    if (!fit) return fit.error();
    p.global = *fit;
  }
  if (const toml::node* s = doc->get("stack")) {
    if (!s->as_table()) return make_error(origin + ": stack", "must be a table of stack ids");
    for (const auto& [id, sub] : *s->as_table()) {
      const std::string where = fmt::format("{}: stack.{}", origin, id.str());
      if (!sub.as_table()) return make_error(where, "must be a table");
      // A stack's section overrides the global one key by key.
      auto fit = read_fit(*sub.as_table(), where, p.global);
      if (!fit) return fit.error();
      p.stacks.emplace(std::string(id.str()), *fit);
    }
  }
  if (const toml::node* s = doc->get("serving")) {
    const std::string where = origin + ": serving";
    if (!s->as_table()) return make_error(where, "must be a table");
    TomlFields f(*s->as_table(), where);
    if (auto st = f.only_keys({"time_scale", "engine", "quantized_matvec_gbps_per_sm", "prefill_matmul_scale", "per_query_head_kv_share",
                               "frontend_request_ms"}))
      return *st;
    auto scale = f.optional_number_between("time_scale", 0.05, 20);
    if (!scale) return scale.error();
    if (*scale) p.serving_time_scale = **scale;
    // A table of engine id = number within [lo, hi], stored times `unit`.
    auto engine_table = [&](const char* key, const char* what, double lo, double hi, double unit,
                            std::map<std::string, double>& out) -> Status {
      const toml::node* e = s->as_table()->get(key);
      if (!e) return std::nullopt;
      const std::string at = where + "." + key;
      if (!e->as_table()) return make_error(at, std::string("must be a table of engine id = ") + what);
      for (const auto& [id, v] : *e->as_table()) {
        const auto x = v.value<double>();
        if (!x || !(*x >= lo && *x <= hi))
          return make_error(at + "." + std::string(id.str()), fmt::format("must be a number between {:g} and {:g}", lo, hi));
        out.emplace(std::string(id.str()), *x * unit);
      }
      return std::nullopt;
    };
    if (auto st = engine_table("engine", "time scale", 0.05, 20, 1, p.serving_engine_time_scale)) return *st;
    if (auto st = engine_table("quantized_matvec_gbps_per_sm", "GB/s per SM", 0.1, 1000, 1e9, p.serving_matvec_sm_Bps)) return *st;
    if (auto st = engine_table("prefill_matmul_scale", "multiplier", 0.1, 10, 1, p.serving_prefill_matmul_scale)) return *st;
    if (auto st = engine_table("per_query_head_kv_share", "share", 0, 1, 1, p.serving_per_query_head_kv_share)) return *st;
    if (auto st = engine_table("frontend_request_ms", "milliseconds", 0, 100, 1e-3, p.serving_frontend_request_s)) return *st;
  }
  return p;
}

const FittedParameters& FittedParameters::builtin() {
  static const FittedParameters p =
      data::builtin_or_abort(from_toml(data::embedded_file("fitted.toml"), "built-in fitted.toml"));
  return p;
}

const TrainingFit& FittedParameters::for_stack(const std::string& stack_id) const {
  auto it = stacks.find(stack_id);
  return it != stacks.end() ? it->second : global;
}

std::string FittedParameters::to_toml(const std::string& header) const {
  std::string out = header + "\n[global]\n" + fit_toml(global);
  for (const auto& [id, fit] : stacks) out += fmt::format("\n[stack.{}]\n{}", id, fit_toml(fit));
  out += fmt::format("\n[serving]\ntime_scale = {:.6g}\n", serving_time_scale);
  if (!serving_engine_time_scale.empty()) {
    out += "\n[serving.engine]\n";
    for (const auto& [id, x] : serving_engine_time_scale) out += fmt::format("\"{}\" = {:.6g}\n", id, x);
  }
  if (!serving_matvec_sm_Bps.empty()) {
    out += "\n[serving.quantized_matvec_gbps_per_sm]\n";
    for (const auto& [id, x] : serving_matvec_sm_Bps) out += fmt::format("\"{}\" = {:.6g}\n", id, x / 1e9);
  }
  if (!serving_prefill_matmul_scale.empty()) {
    out += "\n[serving.prefill_matmul_scale]\n";
    for (const auto& [id, x] : serving_prefill_matmul_scale) out += fmt::format("\"{}\" = {:.6g}\n", id, x);
  }
  if (!serving_per_query_head_kv_share.empty()) {
    out += "\n[serving.per_query_head_kv_share]\n";
    for (const auto& [id, x] : serving_per_query_head_kv_share) out += fmt::format("\"{}\" = {:.6g}\n", id, x);
  }
  if (!serving_frontend_request_s.empty()) {
    out += "\n[serving.frontend_request_ms]\n";
    for (const auto& [id, x] : serving_frontend_request_s) out += fmt::format("\"{}\" = {:.6g}\n", id, x * 1e3);
  }
  return out;
}

}  // namespace gpuplan
