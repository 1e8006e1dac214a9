#include "hardware/catalog.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "data/embedded.h"
#include "data/toml_document.h"
#include "util/suggest.h"

namespace gpuplan {

std::string to_string(Tier t) {
  switch (t) {
    case Tier::datacenter: return "datacenter";
    case Tier::workstation: return "workstation";
    case Tier::consumer: return "consumer";
  }
  return "?";
}

double Gpu::peak_matmul_flops(Precision p) const {
  switch (p) {
    case Precision::fp32: return fp32_flops;
    case Precision::tf32: return tf32_flops > 0 ? tf32_flops : fp32_flops;
    case Precision::fp16: return fp16_flops;
    case Precision::bf16: return bf16_flops;
    case Precision::fp8: return fp8_flops;
    case Precision::int8: return int8_ops;
    default: break;
  }
  // 4-bit floats run on the FP4 tensor cores where there are some (Blackwell); elsewhere, like the
  // other weight-only formats, they are dequantised and multiplied in 16-bit.
  if (is_fp4(p) && fp4_flops > 0) return fp4_flops;
  return peak_matmul_flops(compute_precision(p));
}

Precision Gpu::gemm_precision(Precision p) const {
  if ((p == Precision::nvfp4 || p == Precision::fp4) && fp4_flops > 0) return p;
  return compute_precision(p);
}

double Gpu::pcie_Bps() const {
  // Per-direction x16 bandwidth by generation, after 128b/130b encoding (PCI-SIG specifications).
  switch (pcie_gen) {
    case 3: return 15.75e9;
    case 4: return 31.5e9;
    case 5: return 63.0e9;
    case 6: return 121.0e9;
    default: return 15.75e9;
  }
}

namespace {

Result<Gpu> parse_gpu(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "vendor", "name", "tier", "architecture", "compute_capability",
                            "form_factor", "memory_gb", "memory_type", "memory_bandwidth_gbps",
                            "fp64_tflops", "fp32_tflops", "tf32_tflops", "fp16_tflops",
                            "bf16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops",
                            "fp16_acc16_tflops", "tdp_w", "interconnect", "interconnect_gbps",
                            "pcie_gen", "launch_year", "confidence", "source", "source_date",
                            "notes", "nvlink_domain_gpus", "sm_count", "sm_count_source", "node_network_gbps",
                            "node_network_source"}))
    return *s;
  Gpu g;
  for (auto [key, out] : {std::pair{"id", &g.id}, std::pair{"vendor", &g.vendor}, std::pair{"name", &g.name},
                          std::pair{"architecture", &g.architecture}, std::pair{"source", &g.source},
                          std::pair{"source_date", &g.source_date}}) {
    auto r = f.string(key);
    if (!r) return r.error();
    *out = *r;
  }
  for (auto [key, out] : {std::pair{"compute_capability", &g.compute_capability}, std::pair{"form_factor", &g.form_factor},
                          std::pair{"memory_type", &g.memory_type}, std::pair{"interconnect", &g.interconnect},
                          std::pair{"confidence", &g.confidence}, std::pair{"notes", &g.notes}}) {
    auto r = f.optional_string(key);
    if (!r) return r.error();
    *out = r->value_or("");
  }
  auto tier = f.string("tier");
  if (!tier) return tier.error();
  if (*tier == "datacenter") g.tier = Tier::datacenter;
  else if (*tier == "workstation") g.tier = Tier::workstation;
  else if (*tier == "consumer") g.tier = Tier::consumer;
  else return make_error(f.field("tier"), "must be datacenter, workstation or consumer, not '" + *tier + "'");

  struct Num {
    const char* key;
    double* out;
    double scale;
    bool required;
  };
  double memory_gb = 0, bw_gbps = 0, ic_gbps = 0, pcie = 0, year = 0, domain = 0, sms = 0, nic_gbps = 0;
  const Num nums[] = {
      {"memory_gb", &memory_gb, 1, true},
      {"memory_bandwidth_gbps", &bw_gbps, 1, true},
      {"fp64_tflops", &g.fp64_flops, 1e12, false},
      {"fp32_tflops", &g.fp32_flops, 1e12, false},
      {"tf32_tflops", &g.tf32_flops, 1e12, false},
      {"fp16_tflops", &g.fp16_flops, 1e12, false},
      {"bf16_tflops", &g.bf16_flops, 1e12, false},
      {"fp8_tflops", &g.fp8_flops, 1e12, false},
      {"int8_tops", &g.int8_ops, 1e12, false},
      {"fp4_tflops", &g.fp4_flops, 1e12, false},
      {"fp16_acc16_tflops", &g.fp16_acc16_flops, 1e12, false},
      {"tdp_w", &g.tdp_w, 1, true},
      {"interconnect_gbps", &ic_gbps, 1, false},
      {"pcie_gen", &pcie, 1, false},
      {"launch_year", &year, 1, false},
      {"nvlink_domain_gpus", &domain, 1, false},
      {"sm_count", &sms, 1, false},
      {"node_network_gbps", &nic_gbps, 1, false},
  };
  for (const auto& n : nums) {
    auto r = f.optional_number(n.key);
    if (!r) return r.error();
    if (!r->has_value()) {
      if (n.required) return make_error(f.field(n.key), "is required");
      continue;
    }
    if (**r < 0) return make_error(f.field(n.key), "must not be negative");
    *n.out = **r * n.scale;
  }
  if (memory_gb <= 0) return make_error(f.field("memory_gb"), "must be positive");
  if (bw_gbps <= 0) return make_error(f.field("memory_bandwidth_gbps"), "must be positive");
  g.memory_bytes = memory_gb * 1e9;
  g.memory_bw_Bps = bw_gbps * 1e9;
  g.interconnect_Bps = ic_gbps * 1e9;
  g.pcie_gen = static_cast<int>(pcie);
  g.launch_year = static_cast<int>(year);
  if (domain > 100000 || domain != std::floor(domain))
    return make_error(f.field("nvlink_domain_gpus"), "must be a whole number of GPUs up to 100000");
  g.nvlink_domain_gpus = static_cast<int>(domain);
  if (sms > 1000 || sms != std::floor(sms)) return make_error(f.field("sm_count"), "must be a whole number of SMs up to 1000");
  g.sm_count = static_cast<int>(sms);
  auto sm_source = f.optional_string("sm_count_source");
  if (!sm_source) return sm_source.error();
  if (g.sm_count > 0 && !*sm_source) return make_error(f.field("sm_count_source"), "must cite where the SM count comes from");
  if (nic_gbps > 10000) return make_error(f.field("node_network_gbps"), "must be at most 10000 Gb/s a GPU");
  g.node_network_bps = nic_gbps * 1e9;
  auto nic_source = f.optional_string("node_network_source");
  if (!nic_source) return nic_source.error();
  if (g.node_network_bps > 0 && !*nic_source)
    return make_error(f.field("node_network_source"), "must cite the reference node's NICs");
  if (g.fp16_flops <= 0 && g.bf16_flops <= 0)
    return make_error(f.field("fp16_tflops"), "a GPU needs at least an fp16 or bf16 tensor rate");
  return g;
}

}  // namespace

Result<Catalog> Catalog::from_table(const toml::table& doc, const std::string& origin) {
  const toml::array* rows = doc.get_as<toml::array>("gpu");
  if (!rows || rows->empty()) return make_error(origin, "no [[gpu]] entries");
  Catalog c;
  for (size_t i = 0; i < rows->size(); ++i) {
    const toml::table* t = rows->get(i)->as_table();
    const std::string where = fmt::format("{}: gpu[{}]", origin, i);
    if (!t) return make_error(where, "must be a table");
    auto g = parse_gpu(*t, where);
    if (!g) return g.error();
    for (const auto& other : c.gpus_)
      if (other.id == g->id) return make_error(where + ".id", "duplicate id '" + g->id + "'");
    c.gpus_.push_back(std::move(g).value());
  }
  return c;
}

Result<Catalog> Catalog::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  return from_table(*doc, origin);
}

Result<Catalog> Catalog::from_file(const std::string& path) {
  auto doc = parse_toml_file(path);
  if (!doc) return doc.error();
  return from_table(*doc, path);
}

const Catalog& Catalog::builtin() {
  static const Catalog c = data::builtin_or_abort(from_toml(data::embedded_file("gpus.toml"), "built-in gpus.toml"));
  return c;
}

Result<Gpu> Catalog::find(const std::string& id, const std::string& field) const {
  for (const auto& g : gpus_)
    if (g.id == id) return g;
  return make_error(field, "unknown GPU '" + id + "'" + did_you_mean(id, ids()) +
                               "; `gpuplan gpus` lists them");
}

std::optional<std::string> Catalog::match_device(const std::string& driver_name, double memory_bytes) const {
  std::string n;
  for (char c : driver_name) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  const double gib = memory_bytes / (1024.0 * 1024 * 1024);
  // Order matters: the more specific names first (driver names as nvidia-smi prints them).
  struct Rule {
    bool match;
    const char* id;
  };
  const Rule rules[] = {
      {has("gb300"), "gb300"},
      {has("gb200"), "gb200"},
      {has("b300"), "b300"},
      {has("b200"), "b200"},
      {has("gh200") && gib < 110, "gh200-96gb"},
      {has("h20") && !has("h200"), "h20"},
      {has("h200"), "h200-sxm"},
      {has("h100") && has("nvl"), "h100-nvl"},
      {has("h100") && has("pcie"), "h100-pcie"},
      {has("h100"), "h100-sxm"},
      {has("a100") && gib > 60 && has("pcie"), "a100-80gb-pcie"},
      {has("a100") && gib > 60, "a100-80gb-sxm"},
      {has("a100"), "a100-40gb-sxm"},
      {has("l40s"), "l40s"},
      {has(" l4") && !has("l40"), "l4"},
      {has(" a10") && !has("a100") && !has("a10g"), "a10"},
      {has("v100") && gib > 20, "v100-32gb"},
      {has("t4") && !has("rtx"), "t4"},
      {has("rtx pro 6000"), "rtx-pro-6000"},
      {has("rtx 6000 ada"), "rtx-6000-ada"},
      {has("rtx a6000"), "rtx-a6000"},
      {has("5090"), "rtx-5090"},
      {has("4090"), "rtx-4090"},
      {has("3090"), "rtx-3090"},
      {has("3060") && gib > 10, "rtx-3060-12gb"},
      {has("mi355x"), "mi355x"},
      {has("mi325x"), "mi325x"},
      {has("mi300x"), "mi300x"},
      {has("gaudi"), "gaudi3"},
  };
  for (const Rule& r : rules)
    if (r.match && find(r.id).ok()) return std::string(r.id);
  return std::nullopt;
}

std::vector<std::string> Catalog::ids() const {
  std::vector<std::string> out;
  for (const auto& g : gpus_) out.push_back(g.id);
  return out;
}

}  // namespace gpuplan
