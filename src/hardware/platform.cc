#include "hardware/platform.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "data/embedded.h"
#include "data/toml_document.h"

namespace gpuplan {

int compute_capability_number(const std::string& cc) {
  int major = 0, minor = 0;
  if (cc.empty() || std::sscanf(cc.c_str(), "%d.%d", &major, &minor) < 1) return 0;
  return major * 10 + minor;
}

bool ArchitectureFacts::has(const std::string& dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

bool ArchitectureFacts::has(Precision p) const {
  const Precision c = compute_precision(p);
  if (c == Precision::int8 || c == Precision::fp32) return true;  // int8 falls back to dp4a; fp32 runs anywhere
  return has(to_string(c));
}

std::string to_string(SoftwareStatus s) {
  switch (s) {
    case SoftwareStatus::supported: return "supported";
    case SoftwareStatus::experimental: return "experimental";
    case SoftwareStatus::unsupported: return "unsupported";
    case SoftwareStatus::unknown: return "unknown";
  }
  return "unknown";
}

std::string StackSupport::why_not(const Workload& w) const {
  const Parallelism& p = w.par;
  if (p.tp > 1 && !tp) return fmt::format("the {} stack has no tensor parallelism", stack);
  if (p.pp > 1 && !pp) return fmt::format("the {} stack has no pipeline parallelism", stack);
  if (std::find(zero.begin(), zero.end(), p.zero) == zero.end())
    return fmt::format("the {} stack does not offer ZeRO stage {}", stack, p.zero);
  if (p.pp > 1 && p.zero > pp_max_zero)
    return fmt::format("the {} stack does not combine pipeline parallelism with ZeRO stage {}", stack, p.zero);
  if (w.offload_optimizer && !offload_optimizer)
    return fmt::format("the {} stack does not offload optimizer states to CPU memory", stack);
  if (max_gpus > 0 && p.gpus() > max_gpus) return fmt::format("the {} stack trains on at most {} GPU(s)", stack, max_gpus);
  return "";
}

namespace {

Result<Tier> parse_tier_field(const TomlFields& f, const char* key) {
  auto s = f.string(key);
  if (!s) return s.error();
  if (*s == "datacenter") return Tier::datacenter;
  if (*s == "workstation") return Tier::workstation;
  if (*s == "consumer") return Tier::consumer;
  return make_error(f.field(key), "must be datacenter, workstation or consumer, not '" + *s + "'");
}

Status read_strings(const TomlFields& f, const char* key, std::vector<std::string>& out) {
  const toml::node* n = f.table().get(key);
  if (!n) return make_error(f.field(key), "is required");
  const toml::array* a = n->as_array();
  if (!a || a->empty()) return make_error(f.field(key), "must be a non-empty array of strings");
  for (const auto& v : *a) {
    if (!v.is_string()) return make_error(f.field(key), "must be an array of strings");
    out.push_back(*v.value<std::string>());
  }
  return std::nullopt;
}

Result<std::string> optional_text(const TomlFields& f, const char* key) {
  auto s = f.optional_string(key);
  if (!s) return s.error();
  return s->value_or("");
}

Result<ArchitectureFacts> parse_architecture(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "vendor", "platform", "compute_capability", "dtypes", "status", "cuda_last",
                            "note", "source", "date"}))
    return *s;
  ArchitectureFacts a;
  for (auto [key, out] : {std::pair{"id", &a.id}, std::pair{"vendor", &a.vendor}, std::pair{"platform", &a.platform},
                          std::pair{"source", &a.source}, std::pair{"date", &a.date}}) {
    auto v = f.string(key);
    if (!v) return v.error();
    *out = *v;
  }
  if (a.platform != "cuda" && a.platform != "rocm" && a.platform != "gaudi")
    return make_error(f.field("platform"), "must be cuda, rocm or gaudi, not '" + a.platform + "'");
  for (auto [key, out] : {std::pair{"compute_capability", &a.compute_capability}, std::pair{"cuda_last", &a.cuda_last},
                          std::pair{"note", &a.note}}) {
    auto v = optional_text(f, key);
    if (!v) return v.error();
    *out = *v;
  }
  if (auto s = read_strings(f, "dtypes", a.dtypes)) return *s;
  for (const auto& d : a.dtypes)
    if (d != "fp32" && d != "tf32" && d != "fp16" && d != "bf16" && d != "fp8" && d != "fp4" && d != "int8")
      return make_error(f.field("dtypes"), "unknown data type '" + d + "'");
  auto status = f.string("status");
  if (!status) return status.error();
  if (*status != "current" && *status != "legacy") return make_error(f.field("status"), "must be current or legacy");
  a.legacy = *status == "legacy";
  return a;
}

Result<SoftwareRun> parse_run(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"platform", "status", "min_compute_capability", "max_compute_capability", "since", "date",
                            "source"}))
    return *s;
  SoftwareRun r;
  auto platform = f.string("platform");
  if (!platform) return platform.error();
  r.platform = *platform;
  if (r.platform != "cuda" && r.platform != "rocm" && r.platform != "gaudi")
    return make_error(f.field("platform"), "must be cuda, rocm or gaudi");
  auto status = f.string("status");
  if (!status) return status.error();
  if (*status == "supported") r.status = SoftwareStatus::supported;
  else if (*status == "experimental") r.status = SoftwareStatus::experimental;
  else if (*status == "unsupported") r.status = SoftwareStatus::unsupported;
  else return make_error(f.field("status"), "must be supported, experimental or unsupported");
  for (auto [key, out] : {std::pair{"min_compute_capability", &r.min_compute_capability},
                          std::pair{"max_compute_capability", &r.max_compute_capability}}) {
    auto v = optional_text(f, key);
    if (!v) return v.error();
    *out = *v;
    if (!out->empty() && compute_capability_number(*out) == 0) return make_error(f.field(key), "must be like \"8.0\"");
  }
  for (auto [key, out] : {std::pair{"since", &r.since}, std::pair{"date", &r.date}, std::pair{"source", &r.source}}) {
    auto v = f.string(key);
    if (!v) return v.error();
    *out = *v;
  }
  return r;
}

Result<Software> parse_software(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "runs"})) return *s;
  Software sw;
  auto id = f.string("id");
  auto name = f.string("name");
  if (!id) return id.error();
  if (!name) return name.error();
  sw.id = *id;
  sw.name = *name;
  const toml::node* runs = t.get("runs");
  const toml::array* a = runs ? runs->as_array() : nullptr;
  if (!a || a->empty()) return make_error(f.field("runs"), "must be a non-empty array of tables");
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::table* rt = a->get(i)->as_table();
    const std::string w = fmt::format("{}.runs[{}]", where, i);
    if (!rt) return make_error(w, "must be a table");
    auto r = parse_run(*rt, w);
    if (!r) return r.error();
    sw.runs.push_back(*r);
  }
  return sw;
}

Result<StackSupport> parse_stack_support(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"stack", "tp", "pp", "zero", "pp_max_zero", "offload_optimizer", "max_gpus", "source"}))
    return *s;
  StackSupport s;
  auto stack = f.string("stack");
  auto source = f.string("source");
  if (!stack) return stack.error();
  if (!source) return source.error();
  s.stack = *stack;
  s.source = *source;
  for (auto [key, out] : {std::pair{"tp", &s.tp}, std::pair{"pp", &s.pp}, std::pair{"offload_optimizer", &s.offload_optimizer}}) {
    auto v = f.boolean(key);
    if (!v) return v.error();
    *out = *v;
  }
  const toml::node* zn = t.get("zero");
  const toml::array* za = zn ? zn->as_array() : nullptr;
  if (!za || za->empty()) return make_error(f.field("zero"), "must be a non-empty array of ZeRO stages");
  s.zero.clear();
  for (const auto& v : *za) {
    auto z = v.value<int64_t>();
    if (!v.is_integer() || !z || *z < 0 || *z > 3) return make_error(f.field("zero"), "stages must be integers 0 to 3");
    s.zero.push_back(static_cast<int>(*z));
  }
  auto ppz = f.integer("pp_max_zero");
  if (!ppz) return ppz.error();
  if (*ppz < 0 || *ppz > 3) return make_error(f.field("pp_max_zero"), "must be 0 to 3");
  s.pp_max_zero = static_cast<int>(*ppz);
  auto mg = f.optional_integer("max_gpus");
  if (!mg) return mg.error();
  s.max_gpus = mg->value_or(0);
  if (s.max_gpus < 0) return make_error(f.field("max_gpus"), "must be 0 (no limit) or positive");
  return s;
}

Result<NodeClass> parse_node(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "matches", "tiers", "gpus_per_node", "purchase_unit_gpus", "needs",
                            "host_memory_gb", "host_memory_bw_gbps", "host_watts", "source"}))
    return *s;
  NodeClass n;
  for (auto [key, out] : {std::pair{"id", &n.id}, std::pair{"name", &n.name}, std::pair{"needs", &n.needs},
                          std::pair{"source", &n.source}}) {
    auto v = f.string(key);
    if (!v) return v.error();
    *out = *v;
  }
  if (auto s = read_strings(f, "matches", n.matches)) return *s;
  std::vector<std::string> tiers;
  if (auto s = read_strings(f, "tiers", tiers)) return *s;
  for (const auto& s : tiers) {
    if (s == "datacenter") n.tiers.push_back(Tier::datacenter);
    else if (s == "workstation") n.tiers.push_back(Tier::workstation);
    else if (s == "consumer") n.tiers.push_back(Tier::consumer);
    else return make_error(f.field("tiers"), "unknown tier '" + s + "'");
  }
  for (auto [key, out] : {std::pair{"gpus_per_node", &n.gpus_per_node}, std::pair{"purchase_unit_gpus", &n.purchase_unit_gpus}}) {
    auto v = f.integer(key);
    if (!v) return v.error();
    if (*v < 1 || *v > 1024) return make_error(f.field(key), "must be between 1 and 1024");
    *out = *v;
  }
  if (n.purchase_unit_gpus > n.gpus_per_node) return make_error(f.field("purchase_unit_gpus"), "exceeds gpus_per_node");
  for (auto [key, out, scale] : {std::tuple{"host_memory_gb", &n.host_memory_bytes, 1e9}, std::tuple{"host_memory_bw_gbps", &n.host_memory_Bps, 1e9},
                                      std::tuple{"host_watts", &n.host_watts, 1.0}}) {
    auto v = f.number(key);
    if (!v) return v.error();
    if (!(*v > 0) || *v > 1e6) return make_error(f.field(key), "must be positive");
    *out = *v * scale;
  }
  return n;
}

template <class T, class Parse>
Status read_rows(const toml::table& doc, const char* key, const std::string& origin, bool required, std::vector<T>& out,
                 Parse parse) {
  const toml::node* n = doc.get(key);
  if (!n) return required ? Status(make_error(origin, std::string("no [[") + key + "]] entries")) : std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) return make_error(origin + ": " + key, "must be an array of tables");
  for (size_t i = 0; i < a->size(); ++i) {
    const std::string where = fmt::format("{}: {}[{}]", origin, key, i);
    const toml::table* t = a->get(i)->as_table();
    if (!t) return make_error(where, "must be a table");
    auto r = parse(*t, where);
    if (!r) return r.error();
    out.push_back(*r);
  }
  return std::nullopt;
}

}  // namespace

Result<Platform> Platform::from_table(const toml::table& doc, const std::string& origin) {
  TomlFields top(doc, origin);
  if (auto s = top.only_keys({"architecture", "software", "stack_support", "node", "licence", "peer_to_peer", "office",
                              "memory_headroom", "planning"}))
    return *s;
  Platform p;
  if (auto s = read_rows(doc, "architecture", origin, true, p.architectures_, parse_architecture)) return *s;
  if (auto s = read_rows(doc, "software", origin, true, p.software_, parse_software)) return *s;
  if (auto s = read_rows(doc, "stack_support", origin, true, p.stacks_, parse_stack_support)) return *s;
  if (auto s = read_rows(doc, "node", origin, true, p.nodes_, parse_node)) return *s;
  if (auto s = read_rows(doc, "licence", origin, false, p.licences_, [](const toml::table& t, const std::string& where) -> Result<Licence> {
        TomlFields f(t, where);
        if (auto s = f.only_keys({"id", "vendor", "tier", "forbids", "text", "source", "date"})) return *s;
        Licence l;
        for (auto [key, out] : {std::pair{"id", &l.id}, std::pair{"vendor", &l.vendor}, std::pair{"forbids", &l.forbids},
                                std::pair{"text", &l.text}, std::pair{"source", &l.source}, std::pair{"date", &l.date}}) {
          auto v = f.string(key);
          if (!v) return v.error();
          *out = *v;
        }
        if (l.forbids != "datacenter") return make_error(f.field("forbids"), "must be datacenter");
        auto tier = parse_tier_field(f, "tier");
        if (!tier) return tier.error();
        l.tier = *tier;
        return l;
      }))
    return *s;
  if (auto s = read_rows(doc, "peer_to_peer", origin, false, p.p2p_, [](const toml::table& t, const std::string& where) -> Result<P2p> {
        TomlFields f(t, where);
        if (auto s = f.only_keys({"vendor", "tier", "p2p_over_pcie", "source", "date"})) return *s;
        P2p r;
        auto vendor = f.string("vendor");
        auto p2p = f.boolean("p2p_over_pcie");
        auto source = f.string("source");
        if (!vendor) return vendor.error();
        if (!p2p) return p2p.error();
        if (!source) return source.error();
        auto tier = parse_tier_field(f, "tier");
        if (!tier) return tier.error();
        r.vendor = *vendor;
        r.tier = *tier;
        r.p2p = *p2p;
        return r;
      }))
    return *s;
  if (const toml::node* o = doc.get("office")) {
    const toml::table* t = o->as_table();
    if (!t) return make_error(origin + ": office", "must be a table");
    TomlFields f(*t, origin + ": office");
    if (auto s = f.only_keys({"max_boxes", "max_boxes_source", "circuit_w", "circuit_source"})) return *s;
    auto boxes = f.integer("max_boxes");
    auto watts = f.number("circuit_w");
    auto bs = f.string("max_boxes_source");
    auto cs = f.string("circuit_source");
    if (!boxes) return boxes.error();
    if (!watts) return watts.error();
    if (!bs) return bs.error();
    if (!cs) return cs.error();
    if (*boxes < 1 || *boxes > 100) return make_error(f.field("max_boxes"), "must be between 1 and 100");
    if (!(*watts > 0) || *watts > 1e5) return make_error(f.field("circuit_w"), "must be positive");
    p.office_ = {*boxes, *watts, *bs, *cs};
  }
  if (const toml::node* h = doc.get("memory_headroom")) {
    const toml::table* t = h->as_table();
    if (!t) return make_error(origin + ": memory_headroom", "must be a table");
    TomlFields f(*t, origin + ": memory_headroom");
    if (auto s = f.only_keys({"default_fraction", "source"})) return *s;
    auto frac = f.number("default_fraction");
    auto src = f.string("source");
    if (!frac) return frac.error();
    if (!src) return src.error();
    if (!(*frac >= 0) || *frac >= 0.9) return make_error(f.field("default_fraction"), "must be at least 0 and below 0.9");
    p.headroom_fraction_ = *frac;
    p.headroom_source_ = *src;
  }
  if (const toml::node* pl = doc.get("planning")) {
    const toml::table* t = pl->as_table();
    if (!t) return make_error(origin + ": planning", "must be a table");
    TomlFields f(*t, origin + ": planning");
    if (auto s = f.only_keys({"cost_tie_fraction", "source"})) return *s;
    auto frac = f.number("cost_tie_fraction");
    auto src = f.string("source");
    if (!frac) return frac.error();
    if (!src) return src.error();
    if (!(*frac >= 0) || *frac > 1) return make_error(f.field("cost_tie_fraction"), "must be between 0 and 1");
    p.cost_tie_fraction_ = *frac;
    p.cost_tie_source_ = *src;
  }
  // Ids must be unique: a second record would silently shadow the first.
  auto unique = [&](auto& rows, auto id_of, const char* what) -> Status {
    for (size_t i = 0; i < rows.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (id_of(rows[i]) == id_of(rows[j])) return make_error(origin, fmt::format("{} '{}' appears twice", what, id_of(rows[i])));
    return std::nullopt;
  };
  if (auto s = unique(p.architectures_, [](const ArchitectureFacts& a) { return a.id; }, "architecture")) return *s;
  if (auto s = unique(p.software_, [](const Software& a) { return a.id; }, "software")) return *s;
  if (auto s = unique(p.stacks_, [](const StackSupport& a) { return a.stack; }, "stack_support")) return *s;
  if (auto s = unique(p.nodes_, [](const NodeClass& a) { return a.id; }, "node")) return *s;
  return p;
}

Result<Platform> Platform::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  return from_table(*doc, origin);
}

const Platform& Platform::builtin() {
  static const Platform p =
      data::builtin_or_abort(from_toml(data::embedded_file("platform.toml"), "built-in platform.toml"));
  return p;
}

const ArchitectureFacts* Platform::architecture(const std::string& id) const {
  for (const auto& a : architectures_)
    if (a.id == id) return &a;
  return nullptr;
}

const Software* Platform::software(const std::string& id) const {
  for (const auto& s : software_)
    if (s.id == id) return &s;
  return nullptr;
}

SoftwareVerdict Platform::software_on(const std::string& software_id, const Gpu& gpu) const {
  SoftwareVerdict v;
  const ArchitectureFacts* arch = architecture(gpu.architecture);
  const Software* sw = software(software_id);
  const std::string name = sw ? sw->name : software_id;
  if (!arch) {
    v.reason = fmt::format("gpuplan has no platform record for the {} architecture of {}", gpu.architecture, gpu.name);
    return v;
  }
  const std::string platform_name = arch->platform == "cuda" ? "NVIDIA CUDA" : arch->platform == "rocm" ? "AMD ROCm" : "Intel Gaudi";
  if (!sw) {
    v.reason = fmt::format("gpuplan has no record of where {} runs", software_id);
    return v;
  }
  for (const SoftwareRun& r : sw->runs) {
    if (r.platform != arch->platform) continue;
    v.source = r.source;
    const int cc = compute_capability_number(gpu.compute_capability);
    const int lo = compute_capability_number(r.min_compute_capability);
    const int hi = compute_capability_number(r.max_compute_capability);
    if (r.status == SoftwareStatus::unsupported) {
      v.status = SoftwareStatus::unsupported;
      v.reason = fmt::format("{} does not run on {} ({}, {})", name, platform_name, r.source, r.date);
    } else if (cc > 0 && ((lo > 0 && cc < lo) || (hi > 0 && cc > hi))) {
      v.status = SoftwareStatus::unsupported;
      v.reason = hi > 0 && cc > hi
          ? fmt::format("{} runs only on compute capability {} to {}; {} is {} ({})", name, r.min_compute_capability,
                        r.max_compute_capability, gpu.name, gpu.compute_capability, r.source)
          : fmt::format("{} needs compute capability {} or newer; {} is {} ({})", name, r.min_compute_capability,
                        gpu.name, gpu.compute_capability, r.source);
    } else {
      v.status = r.status;
      v.reason = fmt::format("{} {} on {}: {} ({}, {})", name, r.status == SoftwareStatus::supported ? "runs" : "runs experimentally",
                             platform_name, r.since, r.date, r.source);
    }
    return v;
  }
  v.reason = fmt::format("no record that {} runs on {} ({} uses {})", name, platform_name, gpu.name, platform_name);
  return v;
}

const StackSupport* Platform::stack_support(const std::string& stack_id) const {
  for (const auto& s : stacks_)
    if (s.stack == stack_id) return &s;
  return nullptr;
}

std::vector<const NodeClass*> Platform::nodes_for(const Gpu& gpu) const {
  std::vector<const NodeClass*> out;
  for (const auto& n : nodes_) {
    if (std::find(n.tiers.begin(), n.tiers.end(), gpu.tier) == n.tiers.end()) continue;
    const bool match = std::any_of(n.matches.begin(), n.matches.end(),
                                   [&](const std::string& m) { return gpu.form_factor.find(m) != std::string::npos; });
    if (!match) continue;
    // Modules (SXM, OAM) have one housing, the first class that matches; PCIe cards fit several.
    auto is_pcie = [](const NodeClass* c) {
      return std::find(c->matches.begin(), c->matches.end(), "PCIe") != c->matches.end();
    };
    if (!is_pcie(&n) && std::any_of(out.begin(), out.end(), [&](const NodeClass* o) { return !is_pcie(o); })) continue;
    out.push_back(&n);
  }
  // An office box first, where one can hold the card.
  std::stable_sort(out.begin(), out.end(), [](const NodeClass* a, const NodeClass* b) {
    return a->id == "workstation" && b->id != "workstation";
  });
  return out;
}

const Licence* Platform::licence_for(const Gpu& gpu) const {
  for (const auto& l : licences_)
    if (l.vendor == gpu.vendor && l.tier == gpu.tier) return &l;
  return nullptr;
}

bool Platform::peer_to_peer(const Gpu& gpu) const {
  for (const auto& p : p2p_)
    if (p.vendor == gpu.vendor && p.tier == gpu.tier) return p.p2p;
  return false;
}

int64_t Platform::nvlink_domain(const Gpu& gpu, int64_t gpus_per_node) {
  if (!gpu.has_nvlink()) return 1;
  if (gpu.interconnect.find("bridge") != std::string::npos) return 2;
  return gpus_per_node;
}

bool Platform::direct_link_for_tp(const Gpu& gpu, int64_t tp, int64_t gpus_per_node) const {
  if (tp <= 1) return true;
  return tp <= nvlink_domain(gpu, gpus_per_node) || peer_to_peer(gpu);
}

}  // namespace gpuplan
