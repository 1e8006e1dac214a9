#include "hardware/efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "data/embedded.h"
#include "data/toml_document.h"

namespace gpuplan {

namespace {

struct EfficiencyKey {
  const char* name;
  double Efficiency::*member;
  double scale;  // file unit to the struct's unit
  double lo, hi;  // accepted range in file units
};
constexpr EfficiencyKey kEfficiencyKeys[] = {
    {"matmul_max_fraction", &Efficiency::matmul_max_fraction, 1, 0.01, 1.0},
    {"matmul_max_fraction_fp8", &Efficiency::matmul_max_fraction_fp8, 1, 0.01, 1.0},
    {"matmul_max_fraction_fp4", &Efficiency::matmul_max_fraction_fp4, 1, 0.01, 1.0},
    {"matmul_max_fraction_fp32", &Efficiency::matmul_max_fraction_fp32, 1, 0.01, 1.0},
    {"memory_max_fraction", &Efficiency::memory_max_fraction, 1, 0.01, 1.0},
    {"vector_memory_fraction", &Efficiency::vector_memory_fraction, 1, 0.01, 1.0},
    {"attention_fraction", &Efficiency::attention_fraction, 1, 0.01, 1.0},
    {"kernel_overhead_s", &Efficiency::kernel_overhead_s, 1, 0, 1e-2},
    {"cuda_context_mib", &Efficiency::cuda_context_bytes, 1024.0 * 1024.0, 0, 65536},
    {"workspace_mib", &Efficiency::workspace_bytes, 1024.0 * 1024.0, 0, 65536},
    {"allocator_fraction", &Efficiency::allocator_fraction, 1, 0, 2},
    {"comm_buffers_mib", &Efficiency::comm_buffers_bytes, 1024.0 * 1024.0, 0, 65536},
    {"nvlink_fraction", &Efficiency::nvlink_fraction, 1, 0.01, 1.0},
    {"pcie_fraction", &Efficiency::pcie_fraction, 1, 0.01, 1.0},
    {"network_fraction", &Efficiency::network_fraction, 1, 0.01, 1.0},
    {"collective_latency_s", &Efficiency::collective_latency_s, 1, 0, 1e-1},
    {"ring_base_latency_s", &Efficiency::ring_base_latency_s, 1, 0, 1e-1},
    {"ring_step_latency_nvlink_s", &Efficiency::ring_step_latency_nvlink_s, 1, 0, 1e-1},
    {"ring_step_latency_pcie_s", &Efficiency::ring_step_latency_pcie_s, 1, 0, 1e-1},
    {"ring_step_latency_network_s", &Efficiency::ring_step_latency_network_s, 1, 0, 1e-1},
    {"moe_load_imbalance", &Efficiency::moe_load_imbalance, 1, 1, 16},
    {"alltoall_fraction", &Efficiency::alltoall_fraction, 1, 0.01, 1.0},
    {"matmul_size_curve_reference_tflops", &Efficiency::matmul_size_curve_reference_flops, 1e12, 0, 1e5},
};

Status check_section(const toml::table& t, const std::string& where) {
  for (const auto& [k, v] : t) {
    const std::string field = where + "." + std::string(k.str());
    if (k.str() == "matmul_size_curve") {
      const toml::array* a = v.as_array();
      if (!a || a->empty()) return make_error(field, "must be a non-empty array of [gflop, fraction]");
      double last = -1;
      for (const auto& p : *a) {
        const toml::array* pair = p.as_array();
        if (!pair || pair->size() != 2 || !pair->get(0)->value<double>() ||
            !pair->get(1)->value<double>())
          return make_error(field, "each point must be [gflop, fraction]");
        const double g = *pair->get(0)->value<double>(), e = *pair->get(1)->value<double>();
        if (g <= last) return make_error(field, "points must be in ascending gflop order");
        if (g <= 0 || e <= 0 || e > 1) return make_error(field, "gflop must be > 0 and fraction in (0, 1]");
        last = g;
      }
      continue;
    }
    const EfficiencyKey* key = nullptr;
    for (const auto& kk : kEfficiencyKeys)
      if (k.str() == kk.name) key = &kk;
    if (!key) return make_error(field, "unknown efficiency key");
    auto x = v.value<double>();
    if (!x || !(v.is_integer() || v.is_floating_point())) return make_error(field, "must be a number");
    if (*x < key->lo || *x > key->hi)
      return make_error(field, fmt::format("must be between {} and {}", key->lo, key->hi));
  }
  return std::nullopt;
}

void apply(const toml::table& t, Efficiency& e) {
  for (const auto& k : kEfficiencyKeys)
    if (auto x = t[k.name].value<double>()) e.*(k.member) = *x * k.scale;
  if (const toml::array* a = t["matmul_size_curve"].as_array()) {
    e.matmul_size_curve.clear();
    for (const auto& p : *a) {
      const toml::array& pair = *p.as_array();
      e.matmul_size_curve.emplace_back(*pair.get(0)->value<double>(), *pair.get(1)->value<double>());
    }
  }
}

}  // namespace

double Efficiency::matmul_fraction(double flops) const {
  double rel = 1.0;
  const auto& c = matmul_size_curve;
  if (!c.empty()) {
    const double g = std::max(flops / 1e9, 1e-12);
    if (g <= c.front().first) {
      rel = c.front().second * g / c.front().first;  // tiny GEMMs: launch-bound, linear in size
    } else if (g >= c.back().first) {
      rel = c.back().second;
    } else {
      for (size_t i = 1; i < c.size(); ++i) {
        if (g <= c[i].first) {
          const double t = (std::log10(g) - std::log10(c[i - 1].first)) /
                           (std::log10(c[i].first) - std::log10(c[i - 1].first));
          rel = c[i - 1].second + t * (c[i].second - c[i - 1].second);
          break;
        }
      }
    }
  }
  return matmul_max_fraction * rel;
}

double Efficiency::matmul_fraction(double flops, Precision compute) const {
  const double f = matmul_fraction(flops);
  if (compute == Precision::fp8 && matmul_max_fraction_fp8 > 0) return f * matmul_max_fraction_fp8 / matmul_max_fraction;
  if (is_fp4(compute) && matmul_max_fraction_fp4 > 0) return f * matmul_max_fraction_fp4 / matmul_max_fraction;
  if (compute == Precision::fp32 && matmul_max_fraction_fp32 > 0) return f * matmul_max_fraction_fp32 / matmul_max_fraction;
  return f;
}

Result<EfficiencyTable> EfficiencyTable::from_table(toml::table doc, const std::string& origin) {
  for (const auto& [k, v] : doc) {
    const std::string where = origin + ": " + std::string(k.str());
    if (k.str() == "default") {
      if (!v.is_table()) return make_error(where, "must be a table");
      if (auto s = check_section(*v.as_table(), where)) return *s;
    } else if (k.str() == "architecture" || k.str() == "gpu") {
      if (!v.is_table()) return make_error(where, "must be a table of tables");
      for (const auto& [name, sub] : *v.as_table()) {
        if (!sub.is_table()) return make_error(where + "." + std::string(name.str()), "must be a table");
        if (auto s = check_section(*sub.as_table(), where + "." + std::string(name.str()))) return *s;
      }
    } else {
      return make_error(where, "unknown section (expected default, architecture or gpu)");
    }
  }
  EfficiencyTable t;
  t.doc_ = std::move(doc);
  return t;
}

Result<EfficiencyTable> EfficiencyTable::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  return from_table(std::move(doc).value(), origin);
}

Result<EfficiencyTable> EfficiencyTable::from_file(const std::string& path) {
  auto doc = parse_toml_file(path);
  if (!doc) return doc.error();
  return from_table(std::move(doc).value(), path);
}

const EfficiencyTable& EfficiencyTable::builtin() {
  static const EfficiencyTable t = [] {
    EfficiencyTable e = data::builtin_or_abort(from_toml(data::embedded_file("efficiency.toml"), "built-in efficiency.toml"));
    e.fit_ = FittedParameters::builtin();
    return e;
  }();
  return t;
}

EfficiencyTable EfficiencyTable::with_overrides(const EfficiencyTable& o) const {
  EfficiencyTable out = *this;
  for (const char* section : {"default", "architecture", "gpu"}) {
    const toml::table* src = o.doc_[section].as_table();
    if (!src) continue;
    if (!out.doc_[section].as_table()) out.doc_.insert_or_assign(section, toml::table{});
    toml::table& dst = *out.doc_[section].as_table();
    if (std::string_view(section) == "default") {
      for (const auto& [k, v] : *src) dst.insert_or_assign(k, v);
      continue;
    }
    for (const auto& [name, sub] : *src) {
      if (!dst[name].as_table()) dst.insert_or_assign(name, toml::table{});
      for (const auto& [k, v] : *sub.as_table()) dst[name].as_table()->insert_or_assign(k, v);
    }
  }
  return out;
}

Efficiency EfficiencyTable::for_gpu(const Gpu& gpu) const {
  Efficiency e;
  if (const toml::table* d = doc_["default"].as_table()) apply(*d, e);
  if (const toml::table* a = doc_["architecture"][gpu.architecture].as_table()) apply(*a, e);
  if (const toml::table* g = doc_["gpu"][gpu.id].as_table()) apply(*g, e);
  e.fit = fit_.global;
  return e;
}

Efficiency EfficiencyTable::for_gpu(const Gpu& gpu, const Stack& stack) const {
  Efficiency e = for_gpu(gpu);
  if (!doc_["gpu"][gpu.id]["attention_fraction"].is_value()) e.attention_fraction = stack.attention_fraction(gpu.architecture);
  e.fit = fit_.for_stack(stack.id);
  return e;
}

EfficiencyTable EfficiencyTable::without_fit() const {
  EfficiencyTable t = *this;
  t.fit_ = FittedParameters{};
  return t;
}

}  // namespace gpuplan
