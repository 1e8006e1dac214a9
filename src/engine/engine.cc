#include "engine/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/embedded.h"
#include "data/toml_document.h"
#include "stack/fitted.h"
#include "util/suggest.h"
#include "util/units.h"

namespace gpuplan {

namespace {

// Sub-8-bit formats (4-, 5- and 6-bit GGUF mixes too) share the "4bit" class: they all dequantise.
std::string format_class(Precision p) {
  const double b = bytes_per_value(p);
  return b >= 1.5 ? "16bit" : b >= 0.9 ? "8bit" : "4bit";
}

}  // namespace

double FormatTable::lookup(const std::string& architecture, Precision p, double fallback) const {
  const std::string keys[] = {to_string(p), format_class(p), "default"};
  for (const std::string& arch : {architecture, std::string("default")})
    for (const auto& [a, formats] : by_architecture) {
      if (a != arch) continue;
      for (const std::string& k : keys)
        for (const auto& [f, v] : formats)
          if (f == k) return v;
    }
  return fallback;
}

bool Engine::matvec_sm_bound_applies(const Gpu& gpu, Precision p) const {
  return quantized_matvec_latency_bound && gpu.sm_count > 0 && format_class(p) != "16bit";
}

double Engine::matvec_stream_limit_Bps(const Gpu& gpu, Precision p) const {
  return quantized_matvec_sm_Bps > 0 && matvec_sm_bound_applies(gpu, p) ? gpu.sm_count * quantized_matvec_sm_Bps : 0;
}

double Engine::decode_stream_share(const Efficiency& gpu_eff, const Gpu& gpu, Precision p) const {
  double share = gpu_eff.memory_max_fraction * decode_bandwidth.lookup(gpu.architecture, p, 1.0);
  if (scalar_f16_matvec && format_class(p) == "16bit" && gpu.memory_type.find("HBM") != std::string::npos)
    share /= scalar_f16_matvec_hbm_slowdown;
  return share;
}

bool Engine::matvec_limit_binds(const Efficiency& gpu_eff, const Gpu& gpu, Precision p) const {
  const double limit = matvec_stream_limit_Bps(gpu, p);
  return limit > 0 && limit / gpu.memory_bw_Bps <= decode_stream_share(gpu_eff, gpu, p);
}

Efficiency Engine::decode_efficiency(const Efficiency& gpu_eff, const Gpu& gpu, Precision p, bool moe) const {
  Efficiency e = gpu_eff;
  e.memory_max_fraction = decode_stream_share(gpu_eff, gpu, p);
  if (const double limit = matvec_stream_limit_Bps(gpu, p); limit > 0)
    e.memory_max_fraction = std::min(e.memory_max_fraction, limit / gpu.memory_bw_Bps);
  e.attention_fraction = gpu_eff.attention_fraction * attention_relative;
  if (cuda_graphs && (moe_cuda_graphs || !moe)) e.kernel_overhead_s = graph_kernel_overhead_s;
  return e;
}

std::string Engine::attention_dp_refusal(const ModelSpec& m) const {
  if (!attention_dp) return name + " records no attention data parallelism (vllm, sglang and tensorrt-llm do)";
  if (!m.is_moe()) return "is modelled for mixture-of-experts models; " + m.name + " is dense";
  return "";
}

Status Engine::use_attention_dp(Workload& w, const ModelSpec& m, const std::string& field) const {
  if (std::string why = attention_dp_refusal(m); !why.empty()) return make_error(field, why);
  w.par.attention_dp = true;
  w.par.attention_dp_dense_tp = attention_dp_dense_tp;
  if (w.par.ep <= 1) w.par.ep = w.par.tp;
  if (auto e = w.validate(m)) return make_error(e->field == "--attention-dp" ? field : e->field, e->message);
  return std::nullopt;
}

Status Engine::use_client(const std::string& client, const std::string& field) {
  if (client != "server" && client != "offline") return make_error(field, "must be server or offline");
  if (client == "offline") frontend_seq_step_s = frontend_request_s = 0;
  return std::nullopt;
}

Engine Engine::with_expert_loop() const {
  Engine e = *this;
  e.moe_cuda_graphs = false;
  e.moe_expert_launches_one_token = looped_expert_launches_one_token;
  e.moe_expert_launches_batch = looped_expert_launches_batch;
  return e;
}

Engine Engine::with_scalar_f16_matvec() const {
  Engine e = *this;
  e.scalar_f16_matvec = true;
  return e;
}

Engine Engine::with_per_query_head_decode() const {
  Engine e = *this;
  e.per_query_head_decode = true;
  return e;
}

Gpu Engine::prefill_gpu(const Gpu& gpu) const {
  Gpu g = gpu;
  if (gemm_fp16_accumulate && gpu.fp16_acc16_flops > gpu.fp16_flops) g.fp16_flops = g.bf16_flops = gpu.fp16_acc16_flops;
  return g;
}

Efficiency Engine::prefill_efficiency(const Efficiency& gpu_eff, const Gpu& gpu, Precision p) const {
  Efficiency e = gpu_eff;
  const double k = prefill_matmul.lookup(gpu.architecture, p, 1.0) * prefill_matmul_scale;
  e.matmul_max_fraction = gpu_eff.matmul_max_fraction * k;
  for (const GemmCeiling& c : kPrecisionGemmCeilings) e.*c.fraction = gpu_eff.*c.fraction * k;
  e.attention_fraction = gpu_eff.attention_fraction * attention_relative;
  return e;
}

namespace {

Result<FormatTable> read_format_table(const TomlFields& f, const char* key) {
  FormatTable t;
  const toml::node* n = f.table().get(key);
  if (!n) return t;
  const toml::table* archs = n->as_table();
  if (!archs) return make_error(f.field(key), "must be a table of architecture = { format = fraction }");
  for (const auto& [arch, v] : *archs) {
    const std::string where = f.field(key) + "." + std::string(arch.str());
    const toml::table* formats = v.as_table();
    if (!formats) return make_error(where, "must be a table of format = fraction");
    std::vector<std::pair<std::string, double>> row;
    for (const auto& [fmt_name, x] : *formats) {
      const std::string name(fmt_name.str());
      if (name != "16bit" && name != "8bit" && name != "4bit" && name != "default" && !parse_precision(name))
        return make_error(where + "." + name, "is not a weight format or class (16bit, 8bit, 4bit, default)");
      auto d = x.value<double>();
      if (!d || !(*d >= 0.01 && *d <= 1.5)) return make_error(where + "." + name, "must be a number between 0.01 and 1.5");
      row.emplace_back(name, *d);
    }
    t.by_architecture.emplace_back(std::string(arch.str()), std::move(row));
  }
  return t;
}

Status read_number(const TomlFields& f, const char* key, double& out, double lo, double hi) {
  auto r = f.optional_number_between(key, lo, hi);
  if (!r) return r.error();
  if (*r) out = **r;
  return std::nullopt;
}

Status read_count(const TomlFields& f, const char* key, int64_t& out, int64_t lo, int64_t hi) {
  auto r = f.optional_integer(key);
  if (!r) return r.error();
  if (!*r) return std::nullopt;
  if (**r < lo || **r > hi) return make_error(f.field(key), fmt::format("must be between {} and {}, got {}", lo, hi, **r));
  out = **r;
  return std::nullopt;
}

// A table of weight format = [architecture names] (format_architectures, and each backend of
// unmodelled_moe_backends).
Result<std::vector<std::pair<std::string, std::vector<std::string>>>> read_format_architectures(const toml::node& n,
                                                                                                const std::string& where) {
  const toml::table* ft = n.as_table();
  if (!ft) return make_error(where, "must be a table of format = [architectures]");
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const auto& [fmt_name, archs] : *ft) {
    const std::string at = where + "." + std::string(fmt_name.str());
    if (!parse_precision(fmt_name.str())) return make_error(at, "is not a weight format gpuplan knows");
    const toml::array* a = archs.as_array();
    if (!a || a->empty()) return make_error(at, "must be a non-empty list of architectures");
    std::vector<std::string> list;
    for (const auto& v : *a) {
      auto s = v.value<std::string>();
      if (!s || s->empty()) return make_error(at, "must be a list of architecture names");
      list.push_back(*s);
    }
    out.emplace_back(std::string(fmt_name.str()), list);
  }
  return out;
}

Result<Engine::MemoryReserve> read_memory_reserve(const toml::node& n, const std::string& where) {
  const toml::table* t = n.as_table();
  if (!t) return make_error(where, "must be a table");
  TomlFields f(*t, where);
  if (auto s = f.only_keys({"base_mib", "per_prefill_token_mib", "per_graph_seq_mib", "per_gpu_mib", "floor_mib",
                            "floor_above_gib", "buckets"}))
    return *s;
  Engine::MemoryReserve r;
  for (auto [key, out] : {std::pair{"base_mib", &r.base_mib}, std::pair{"per_prefill_token_mib", &r.per_prefill_token_mib},
                          std::pair{"per_graph_seq_mib", &r.per_graph_seq_mib}, std::pair{"per_gpu_mib", &r.per_gpu_mib},
                          std::pair{"floor_mib", &r.floor_mib}, std::pair{"floor_above_gib", &r.floor_above_gib}})
    if (auto s = read_number(f, key, *out, 0.0, 1e6)) return *s;
  const toml::array* a = t->get_as<toml::array>("buckets");
  if (!a || a->empty())
    return make_error(f.field("buckets"), "is required: [[below GiB, prefill tokens, graph sequences, at tp >= 4], ...]");
  for (size_t i = 0; i < a->size(); ++i) {
    const std::string at = fmt::format("{}[{}]", f.field("buckets"), i);
    const toml::array* b = a->get(i)->as_array();
    if (!b || b->size() != 4) return make_error(at, "must be [below GiB, prefill tokens, graph sequences, at tp >= 4]");
    Engine::MemoryReserve::Bucket k;
    const auto below = b->get(0)->value<double>();
    const auto pt = b->get(1)->value<int64_t>(), g = b->get(2)->value<int64_t>(), g4 = b->get(3)->value<int64_t>();
    if (!below || !(*below > 0) || !pt || !g || !g4 || *pt < 0 || *pt > (int64_t{1} << 24) || *g < 0 || *g > 65536 || *g4 < 0 ||
        *g4 > 65536)
      return make_error(at, "needs a positive memory bound and counts between 0 and their limits");
    if (!r.buckets.empty() && *below <= r.buckets.back().below_gib) return make_error(at, "buckets must ascend in memory");
    k.below_gib = *below;
    k.prefill_tokens = *pt;
    k.graph_seqs = *g;
    k.graph_seqs_tp4 = *g4;
    r.buckets.push_back(k);
  }
  return r;
}

Result<Engine> parse_engine(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "source", "source_date", "notes", "decode_bandwidth", "prefill_matmul",
                            "attention_relative", "step_overhead_s", "request_overhead_s", "frontend_seq_step_s", "cuda_graphs",
                            "graph_kernel_overhead_s", "continuous_batching", "chunked_prefill", "max_batched_tokens",
                            "max_num_seqs", "prefix_caching", "gpu_memory_utilization", "kv_block_tokens",
                            "profile_run_peak", "autoscale_metric", "large_gpu_min_gib", "large_gpu_exclude",
                            "small_gpu_max_batched_tokens", "small_gpu_max_num_seqs", "format_architectures",
                            "format_architectures_source", "reserve_output_kv", "prefill_first", "seqs_per_context_of_kv", "max_num_seqs_floor", "gemm_fp16_accumulate", "moe_cuda_graphs",
                            "moe_expert_launches_one_token", "moe_expert_launches_batch", "looped_expert_launches_one_token",
                            "looped_expert_launches_batch", "scalar_f16_matvec_hbm_slowdown", "earlier_per_query_head_decode", "quantized_matvec_latency_bound", "prefill_matmul_fitted", "moe_call_overhead_s", "mla_decode_overhead_s", "prompt_dequantize", "attention_dp", "attention_dp_dense_tp",
                            "attention_dp_gather", "attention_dp_limits_per_gpu",
                            "prompt_dequantize_architectures", "dequantize_min_rows", "ubatch_tokens", "eager_attention_bytes_per_score", "memory_reserve",
                            "weight_memory_relative", "full_kv_families", "unmodelled_moe_backends",
                            "unmodelled_moe_backends_source",
                            "profile_sampler_bytes_per_logit"}))
    return *s;
  Engine e;
  for (auto [key, out] : {std::pair{"id", &e.id}, std::pair{"name", &e.name}, std::pair{"source", &e.source},
                          std::pair{"source_date", &e.source_date}, std::pair{"autoscale_metric", &e.autoscale_metric}}) {
    auto s = f.string(key);
    if (!s) return s.error();
    *out = *s;
  }
  auto notes = f.optional_string("notes");
  if (!notes) return notes.error();
  e.notes = notes->value_or("");
  auto dec = read_format_table(f, "decode_bandwidth");
  if (!dec) return dec.error();
  e.decode_bandwidth = *dec;
  auto pre = read_format_table(f, "prefill_matmul");
  if (!pre) return pre.error();
  e.prefill_matmul = *pre;
  auto wm = read_format_table(f, "weight_memory_relative");
  if (!wm) return wm.error();
  e.weight_memory_relative = *wm;
  if (const toml::node* r = t.get("memory_reserve")) {
    auto mr = read_memory_reserve(*r, f.field("memory_reserve"));
    if (!mr) return mr.error();
    e.memory_reserve = *mr;
  }
  for (auto [key, out, lo, hi] : {std::tuple{"attention_relative", &e.attention_relative, 0.01, 1.5},
                                  std::tuple{"profile_sampler_bytes_per_logit", &e.profile_sampler_bytes_per_logit, 0.0, 64.0},
                                  std::tuple{"step_overhead_s", &e.step_overhead_s, 0.0, 1.0},
                                  std::tuple{"request_overhead_s", &e.request_overhead_s, 0.0, 10.0},
                                  std::tuple{"frontend_seq_step_s", &e.frontend_seq_step_s, 0.0, 1e-2},
                                  std::tuple{"seqs_per_context_of_kv", &e.seqs_per_context_of_kv, 0.0, 1e6},
                                  std::tuple{"graph_kernel_overhead_s", &e.graph_kernel_overhead_s, 0.0, 1e-3},
                                  std::tuple{"gpu_memory_utilization", &e.gpu_memory_utilization, 0.05, 1.0},
                                  std::tuple{"large_gpu_min_gib", &e.large_gpu_min_gib, 0.0, 1e4},
                                  std::tuple{"moe_expert_launches_one_token", &e.moe_expert_launches_one_token, 0.0, 100.0},
                                  std::tuple{"moe_expert_launches_batch", &e.moe_expert_launches_batch, 0.0, 100.0},
                                  std::tuple{"looped_expert_launches_one_token", &e.looped_expert_launches_one_token, 0.0, 100.0},
                                  std::tuple{"looped_expert_launches_batch", &e.looped_expert_launches_batch, 0.0, 100.0},
                                  std::tuple{"scalar_f16_matvec_hbm_slowdown", &e.scalar_f16_matvec_hbm_slowdown, 1.0, 10.0},
                                  std::tuple{"eager_attention_bytes_per_score", &e.eager_score_bytes, 0.0, 256.0},
                                  std::tuple{"moe_call_overhead_s", &e.moe_call_overhead_s, 0.0, 1e-2},
                                  std::tuple{"mla_decode_overhead_s", &e.mla_decode_overhead_s, 0.0, 1e-2}})
    if (auto s = read_number(f, key, *out, lo, hi)) return *s;
  for (auto [key, out, lo, hi] : {std::tuple{"max_batched_tokens", &e.max_batched_tokens, int64_t{1}, int64_t{1} << 24},
                                  std::tuple{"max_num_seqs", &e.max_num_seqs, int64_t{1}, int64_t{1} << 20},
                                  std::tuple{"max_num_seqs_floor", &e.max_num_seqs_floor, int64_t{1}, int64_t{1} << 20},
                                  std::tuple{"kv_block_tokens", &e.kv_block_tokens, int64_t{1}, int64_t{4096}},
                                  std::tuple{"small_gpu_max_batched_tokens", &e.small_gpu_max_batched_tokens, int64_t{1}, int64_t{1} << 24},
                                  std::tuple{"small_gpu_max_num_seqs", &e.small_gpu_max_num_seqs, int64_t{1}, int64_t{1} << 20},
                                  std::tuple{"ubatch_tokens", &e.ubatch_tokens, int64_t{1}, int64_t{1} << 24},
                                  std::tuple{"dequantize_min_rows", &e.dequantize_min_rows, int64_t{1}, int64_t{1} << 24}})
    if (auto s = read_count(f, key, *out, lo, hi)) return *s;
  for (auto [key, out] : {std::pair{"cuda_graphs", &e.cuda_graphs}, std::pair{"continuous_batching", &e.continuous_batching},
                          std::pair{"chunked_prefill", &e.chunked_prefill}, std::pair{"prefix_caching", &e.prefix_caching},
                          std::pair{"profile_run_peak", &e.profile_run_peak}, std::pair{"reserve_output_kv", &e.reserve_output_kv},
                          std::pair{"prefill_first", &e.prefill_first},
                          std::pair{"gemm_fp16_accumulate", &e.gemm_fp16_accumulate},
                          std::pair{"moe_cuda_graphs", &e.moe_cuda_graphs}, std::pair{"prompt_dequantize", &e.prompt_dequantize},
                          std::pair{"attention_dp", &e.attention_dp}, std::pair{"attention_dp_dense_tp", &e.attention_dp_dense_tp},
                          std::pair{"attention_dp_gather", &e.attention_dp_gather},
                          std::pair{"attention_dp_limits_per_gpu", &e.attention_dp_limits_per_gpu},
                          std::pair{"quantized_matvec_latency_bound", &e.quantized_matvec_latency_bound},
                          std::pair{"earlier_per_query_head_decode", &e.earlier_per_query_head_decode},
                          std::pair{"prefill_matmul_fitted", &e.prefill_matmul_fitted}}) {
    auto b = f.optional_boolean(key);
    if (!b) return b.error();
    if (*b) *out = **b;
  }
  if ((e.attention_dp_dense_tp || e.attention_dp_gather || e.attention_dp_limits_per_gpu) && !e.attention_dp)
    return make_error(f.field(e.attention_dp_dense_tp ? "attention_dp_dense_tp"
                              : e.attention_dp_gather ? "attention_dp_gather"
                                                      : "attention_dp_limits_per_gpu"),
                      "describes attention data parallelism, which needs attention_dp = true");
  if (const toml::node* x = t.get("format_architectures")) {
    auto fa = read_format_architectures(*x, f.field("format_architectures"));
    if (!fa) return fa.error();
    e.format_architectures = *fa;
    auto src = f.string("format_architectures_source");
    if (!src) return make_error(f.field("format_architectures_source"), "is required with format_architectures");
    e.format_architectures_source = *src;
  }
  if (const toml::node* x = t.get("unmodelled_moe_backends")) {
    const std::string where = f.field("unmodelled_moe_backends");
    const toml::table* bt = x->as_table();
    if (!bt) return make_error(where, "must be a table of backend = { format = [architectures] }");
    for (const auto& [backend, formats] : *bt) {
      auto fa = read_format_architectures(formats, where + "." + std::string(backend.str()));
      if (!fa) return fa.error();
      for (auto& [format, archs] : *fa) e.unmodelled_moe_backends.push_back({std::string(backend.str()), format, archs});
    }
    auto src = f.string("unmodelled_moe_backends_source");
    if (!src) return make_error(f.field("unmodelled_moe_backends_source"), "is required with unmodelled_moe_backends");
    e.unmodelled_moe_backends_source = *src;
  }
  for (auto [key, out] : {std::pair{"large_gpu_exclude", &e.large_gpu_exclude},
                          std::pair{"prompt_dequantize_architectures", &e.prompt_dequantize_architectures},
                          std::pair{"full_kv_families", &e.full_kv_families}}) {
    const toml::node* x = t.get(key);
    if (!x) continue;
    const toml::array* a = x->as_array();
    if (!a) return make_error(f.field(key), "must be a list of strings");
    for (const auto& v : *a) {
      auto s = v.value<std::string>();
      if (!s || s->empty()) return make_error(f.field(key), "must be a list of non-empty strings");
      out->push_back(*s);
    }
  }
  return e;
}

}  // namespace

double Engine::memory_fraction(const Gpu& gpu, int64_t tp, int64_t pp) const {
  const MemoryReserve& r = memory_reserve;
  if (r.buckets.empty()) return gpu_memory_utilization;
  const double gib = gpu.memory_bytes / kGB;  // the card's memory as usable_memory_bytes counts it
  const MemoryReserve::Bucket* b = &r.buckets.back();
  for (const auto& k : r.buckets)
    if (gib < k.below_gib) {
      b = &k;
      break;
    }
  double reserve = r.base_mib + r.per_prefill_token_mib * static_cast<double>(b->prefill_tokens) +
                   r.per_graph_seq_mib * static_cast<double>(tp >= 4 ? b->graph_seqs_tp4 : b->graph_seqs) +
                   r.per_gpu_mib * static_cast<double>(tp * pp);
  if (gib > r.floor_above_gib) reserve = std::max(reserve, r.floor_mib);
  return std::clamp((gib * 1024 - reserve) / (gib * 1024), 0.0, 1.0);
}

bool Engine::dequantizes_prompt(const Gpu& gpu) const {
  return prompt_dequantize || std::find(prompt_dequantize_architectures.begin(), prompt_dequantize_architectures.end(),
                                        gpu.architecture) != prompt_dequantize_architectures.end();
}

std::string Engine::unsupported(const Gpu& gpu, Precision p) const {
  for (const auto& [format, archs] : format_architectures) {
    if (parse_precision(format) != p) continue;
    if (std::find(archs.begin(), archs.end(), gpu.architecture) != archs.end()) return "";
    std::string list;
    for (const std::string& a : archs) list += (list.empty() ? "" : ", ") + a;
    return fmt::format("{} has {} kernels for {} only, not {} ({}); gpuplan does not guess the speed of its fallback",
                       name, format, list, gpu.architecture, format_architectures_source);
  }
  return "";
}

bool Engine::UnmodelledMoeBackend::applies(const Gpu& gpu, Precision p) const {
  return parse_precision(format) == p && std::find(architectures.begin(), architectures.end(), gpu.architecture) != architectures.end();
}

std::string Engine::unmodelled_moe_backend(const std::string& backend, const Gpu& gpu, Precision p) const {
  for (const UnmodelledMoeBackend& u : unmodelled_moe_backends)
    if (u.backend == backend && u.applies(gpu, p))
      return fmt::format("{}'s {} MoE backend for {} experts on {} has no measured speed ({}); gpuplan's figures are its recommended "
                         "backend's",
                         name, backend, u.format, gpu.architecture, unmodelled_moe_backends_source);
  return "";
}

int64_t Engine::prefill_chunk_tokens(const Gpu& gpu) const {
  if (ubatch_tokens > 0) return ubatch_tokens;
  return chunked_prefill ? limits_on(gpu).max_batched_tokens : 0;
}

Engine::BatchLimits Engine::limits_on(const Gpu& gpu) const {
  bool large = gpu.memory_bytes >= large_gpu_min_gib * kGiB;
  for (const std::string& x : large_gpu_exclude) large = large && gpu.id.find(x) == std::string::npos;
  if (large) return {max_batched_tokens, max_num_seqs};
  return {small_gpu_max_batched_tokens > 0 ? small_gpu_max_batched_tokens : max_batched_tokens,
          small_gpu_max_num_seqs > 0 ? small_gpu_max_num_seqs : max_num_seqs};
}

Result<EngineCatalog> EngineCatalog::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  for (const auto& [k, v] : *doc)
    if (k.str() != "engine") return make_error(origin + ": " + std::string(k.str()), "unknown section (expected [[engine]])");
  const toml::array* a = doc->get_as<toml::array>("engine");
  if (!a || a->empty()) return make_error(origin + ": engine", "is required ([[engine]] tables)");
  EngineCatalog c;
  for (size_t i = 0; i < a->size(); ++i) {
    const std::string where = fmt::format("{}: engine[{}]", origin, i);
    const toml::table* t = a->get(i)->as_table();
    if (!t) return make_error(where, "must be a table");
    auto e = parse_engine(*t, where);
    if (!e) return e.error();
    for (const auto& prior : c.engines_)
      if (prior.id == e->id) return make_error(where + ".id", "duplicate id '" + e->id + "'");
    c.engines_.push_back(std::move(e).value());
  }
  return c;
}

const EngineCatalog& EngineCatalog::builtin() {
  static const EngineCatalog c = [] {
    EngineCatalog cat = data::builtin_or_abort(from_toml(data::embedded_file("engines.toml"), "built-in engines.toml"));
    for (Engine& e : cat.engines_) {
      e.time_scale = FittedParameters::builtin().serving_time_scale_for(e.id);
      if (e.quantized_matvec_latency_bound) e.quantized_matvec_sm_Bps = FittedParameters::builtin().serving_matvec_sm_Bps_for(e.id);
      if (e.prefill_matmul_fitted) e.prefill_matmul_scale = FittedParameters::builtin().serving_prefill_matmul_scale_for(e.id);
      if (e.earlier_per_query_head_decode)
        e.per_query_head_kv_share = FittedParameters::builtin().serving_per_query_head_kv_share_for(e.id);
      if (e.frontend_seq_step_s > 0) e.frontend_request_s = FittedParameters::builtin().serving_frontend_request_s_for(e.id);
    }
    return cat;
  }();
  return c;
}

Result<Engine> EngineCatalog::find(const std::string& id, const std::string& field) const {
  for (const auto& e : engines_)
    if (e.id == id) return e;
  return make_error(field, "unknown engine '" + id + "'" + did_you_mean(id, ids()) + "; `gpuplan engines` lists them");
}

std::vector<std::string> EngineCatalog::ids() const {
  std::vector<std::string> out;
  for (const auto& e : engines_) out.push_back(e.id);
  return out;
}

}  // namespace gpuplan
