#include "stack/stack.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/embedded.h"
#include "data/toml_document.h"
#include "util/suggest.h"

namespace gpuplan {

double AttentionKernel::fraction_on(const std::string& architecture) const {
  for (const auto& [arch, f] : fraction)
    if (arch == architecture) return f;
  for (const auto& [arch, f] : fraction)
    if (arch == "default") return f;
  return 0;
}

bool AttentionKernel::measured_on(const std::string& architecture) const {
  return std::any_of(fraction.begin(), fraction.end(), [&](const auto& p) { return p.first == architecture; });
}

bool LowPrecisionRecipe::runs_on(const std::string& architecture) const {
  return std::find(architectures.begin(), architectures.end(), architecture) != architectures.end();
}

const AttentionKernel& Stack::attention_kernel(const std::string& architecture) const {
  for (const auto& [arch, k] : attention)
    if (arch == architecture) return k;
  for (const auto& [arch, k] : attention)
    if (arch == "default") return k;
  return attention.front().second;  // the reader requires a "default" entry
}

double Stack::attention_fraction(const std::string& architecture) const {
  return attention_kernel(architecture).fraction_on(architecture);
}

const LowPrecisionRecipe* Stack::recipe(const std::string& id) const {
  for (const auto& r : fp8_recipes)
    if (r.id == id) return &r;
  return nullptr;
}

void apply_stack_layout(const Stack& stack, Workload& w) {
  if (stack.keep_gathered_under_pp && w.par.pp > 1 && w.par.zero >= 3) w.par.reshard_after_forward = false;
  if (stack.pp_defers_grad_reduce && w.par.pp > 1 && w.par.zero >= 3) w.par.defer_grad_reduce = true;
}

void apply_stack_training(const Stack& stack, Workload& w) {
  w.fp32_master_weights = stack.master_weights;
  w.accumulation_defers_grad_reduce = stack.accumulation_defers_grad_reduce;
  w.frozen_weights_get_grads = stack.frozen_weights_get_grads;
  w.quantized_base_keeps_input = stack.quantized_base_keeps_input;
  w.qlora_quantizes_lm_head = stack.qlora_quantizes_lm_head;
  w.qlora_dequantized_copies = stack.qlora_dequantized_copies;
  w.bf16_grads_in_fp32 = stack.bf16_grads_in_fp32;
}

std::string default_stack_id(Task task) { return task == Task::pretrain ? "megatron" : "hf"; }

namespace {

Status read_strings(const TomlFields& f, const char* key, std::vector<std::string>& out, bool required) {
  const toml::node* n = f.table().get(key);
  if (!n) return required ? Status(make_error(f.field(key), "is required")) : std::nullopt;
  const toml::array* a = n->as_array();
  if (!a) return make_error(f.field(key), "must be an array of strings");
  for (const auto& v : *a) {
    auto s = v.value<std::string>();
    if (!s || !v.is_string()) return make_error(f.field(key), "must be an array of strings");
    out.push_back(*s);
  }
  return std::nullopt;
}

Status read_text(const TomlFields& f, std::initializer_list<std::pair<const char*, std::string*>> required,
                 std::initializer_list<std::pair<const char*, std::string*>> optional) {
  for (auto [key, out] : required) {
    auto r = f.string(key);
    if (!r) return r.error();
    *out = *r;
  }
  for (auto [key, out] : optional) {
    auto r = f.optional_string(key);
    if (!r) return r.error();
    *out = r->value_or("");
  }
  return std::nullopt;
}

Result<double> fraction(const TomlFields& f, const char* key, double dflt, double lo, double hi) {
  auto r = f.optional_number_between(key, lo, hi);
  if (!r) return r.error();
  return r->value_or(dflt);
}

Result<AttentionKernel> parse_kernel(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "fraction", "source", "source_date", "notes"})) return *s;
  AttentionKernel k;
  std::string notes;
  if (auto s = read_text(f, {{"id", &k.id}, {"name", &k.name}, {"source", &k.source}, {"source_date", &k.source_date}},
                         {{"notes", &notes}}))
    return *s;
  const toml::table* fr = t["fraction"].as_table();
  if (!fr || fr->empty()) return make_error(f.field("fraction"), "must be a table of architecture = fraction of the bf16 peak");
  TomlFields ff(*fr, f.field("fraction"));
  for (const auto& [arch, v] : *fr) {
    auto x = fraction(ff, std::string(arch.str()).c_str(), 0, 0.01, 1.0);
    if (!x) return x.error();
    k.fraction.emplace_back(std::string(arch.str()), *x);
  }
  return k;
}

Result<LowPrecisionRecipe> parse_recipe(const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "precision", "architectures", "cast_bytes_per_element",
                            "fused_cast_bytes_per_element", "backward_input_bytes_per_element", "gemm_relative_throughput",
                            "source", "source_date", "notes"}))
    return *s;
  LowPrecisionRecipe r;
  std::string notes, precision;
  if (auto s = read_text(f, {{"id", &r.id}, {"name", &r.name}, {"precision", &precision}, {"source", &r.source},
                             {"source_date", &r.source_date}},
                         {{"notes", &notes}}))
    return *s;
  auto p = parse_precision(precision);
  if (!p || (*p != Precision::fp8 && *p != Precision::int4))
    return make_error(f.field("precision"), "must be fp8 (FP4 recipes are not modelled yet), not '" + precision + "'");
  r.gemm_precision = *p;
  if (auto s = read_strings(f, "architectures", r.architectures, true)) return *s;
  auto cast = fraction(f, "cast_bytes_per_element", 0, 0, 64);
  auto fused = fraction(f, "fused_cast_bytes_per_element", 0, 0, 64);
  auto backward_input = fraction(f, "backward_input_bytes_per_element", 0, 0, 64);
  auto rel = fraction(f, "gemm_relative_throughput", 1, 0.05, 1.0);
  for (auto* x : {&cast, &fused, &backward_input, &rel})
    if (!*x) return x->error();
  r.cast_bytes_per_element = *cast;
  r.fused_cast_bytes_per_element = *fused;
  r.backward_input_bytes_per_element = *backward_input;
  r.gemm_relative_throughput = *rel;
  return r;
}

Result<Stack> parse_stack(const toml::table& t, const std::string& where, const StackCatalog& known) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"id", "name", "covers", "attention", "fused_elementwise", "separate_projections", "default_recompute", "default_loss", "master_weights",
                            "op_recompute_matmul_share", "overlap_dp_grads", "overlap_param_gather", "overlap_tp", "keep_gathered_under_pp",
                            "pp_defers_grad_reduce", "accumulation_defers_grad_reduce", "partitioned_grads_reduce_each_micro_batch", "frozen_weights_get_grads", "quantized_base_keeps_input", "qlora_quantizes_lm_head", "qlora_dequantized_copies", "bf16_grads_in_fp32", "fused_optimizer", "autocast_fp32_weights", "eager_attention_bytes_per_score", "fp8_recipes", "fp8_param_all_gather", "host_optimizer_fraction", "host_layer_pass_s", "host_adapter_pass_s", "zero3_persistence_threshold", "zero3_module_hooks", "zero3_prefetch_params", "zero3_prefetch_hidden_squares", "source", "source_date", "notes"}))
    return *s;
  Stack s;
  if (auto e = read_text(f, {{"id", &s.id}, {"name", &s.name}, {"source", &s.source}, {"source_date", &s.source_date}},
                         {{"covers", &s.covers}, {"notes", &s.notes}}))
    return *e;
  const toml::table* att = t["attention"].as_table();
  if (!att || !att->contains("default"))
    return make_error(f.field("attention"), "must be a table of architecture = kernel id, with a \"default\" entry");
  for (const auto& [arch, v] : *att) {
    auto k = v.value<std::string>();
    const std::string field = f.field("attention") + "." + std::string(arch.str());
    if (!k || !v.is_string()) return make_error(field, "must be a kernel id");
    const AttentionKernel* kernel = known.kernel(*k);
    if (!kernel) return make_error(field, "unknown attention kernel '" + *k + "'");
    if (arch.str() != "default" && kernel->fraction_on(std::string(arch.str())) <= 0)
      return make_error(field, fmt::format("kernel '{}' has no figure for {}", *k, arch.str()));
    s.attention.emplace_back(std::string(arch.str()), *kernel);
  }
  for (auto [key, out, dflt] : {std::tuple{"fused_elementwise", &s.fused_elementwise, false},
                                std::tuple{"separate_projections", &s.separate_projections, false},
                                std::tuple{"overlap_dp_grads", &s.overlap_dp_grads, true},
                                std::tuple{"overlap_param_gather", &s.overlap_param_gather, true},
                                std::tuple{"overlap_tp", &s.overlap_tp, false},
                                std::tuple{"fp8_param_all_gather", &s.fp8_param_all_gather, false},
                                std::tuple{"keep_gathered_under_pp", &s.keep_gathered_under_pp, false},
                                std::tuple{"pp_defers_grad_reduce", &s.pp_defers_grad_reduce, false},
                                std::tuple{"accumulation_defers_grad_reduce", &s.accumulation_defers_grad_reduce, false},
                                std::tuple{"partitioned_grads_reduce_each_micro_batch", &s.partitioned_grads_reduce_each_micro_batch, false},
                                std::tuple{"frozen_weights_get_grads", &s.frozen_weights_get_grads, false},
                                std::tuple{"quantized_base_keeps_input", &s.quantized_base_keeps_input, false},
                                std::tuple{"qlora_quantizes_lm_head", &s.qlora_quantizes_lm_head, false},
                                std::tuple{"master_weights", &s.master_weights, true},
                                std::tuple{"bf16_grads_in_fp32", &s.bf16_grads_in_fp32, false},
                                std::tuple{"fused_optimizer", &s.fused_optimizer, true},
                                std::tuple{"zero3_module_hooks", &s.zero3_module_hooks, false},
                                std::tuple{"autocast_fp32_weights", &s.autocast_fp32_weights, false}}) {
    auto b = f.optional_boolean(key);
    if (!b) return b.error();
    *out = b->value_or(dflt);
  }
  auto rc = f.optional_string("default_recompute");
  if (!rc) return rc.error();
  auto spec = parse_recompute(rc->value_or("none"));
  if (!spec) return make_error(f.field("default_recompute"), "must be none, selective, op, full or every:N");
  s.default_recompute = *spec;
  auto loss = f.optional_string("default_loss");
  if (!loss) return loss.error();
  s.default_loss = loss->value_or("standard");
  if (!parse_loss(s.default_loss))
    return make_error(f.field("default_loss"), "must be " + loss_choices());
  auto share = fraction(f, "op_recompute_matmul_share", 0, 0, 1);
  auto host = fraction(f, "host_optimizer_fraction", 0, 0, 1);
  if (!share) return share.error();
  if (!host) return host.error();
  s.op_recompute_matmul_share = *share;
  s.host_optimizer_fraction = *host;
  // Optional non-negative figures, 0 where the stack records none.
  for (auto [key, out, hi] : {std::tuple{"host_layer_pass_s", &s.host_layer_pass_s, 0.1},
                              std::tuple{"host_adapter_pass_s", &s.host_adapter_pass_s, 0.01},
                              std::tuple{"zero3_prefetch_params", &s.zero3_prefetch_params, 1e12},
                              std::tuple{"zero3_prefetch_hidden_squares", &s.zero3_prefetch_hidden_squares, 100.0}}) {
    auto v = f.optional_number_between(key, 0, hi);
    if (!v) return v.error();
    *out = v->value_or(0);
  }
  auto persist = f.optional_integer("zero3_persistence_threshold");
  if (!persist) return persist.error();
  if (*persist && (**persist < 0 || **persist > (1LL << 40)))
    return make_error(f.field("zero3_persistence_threshold"), "must be between 0 and 2^40 elements");
  s.zero3_persistence_threshold = persist->value_or(0);
  auto copies = f.optional_integer("qlora_dequantized_copies");
  if (!copies) return copies.error();
  if (*copies && (**copies < 1 || **copies > 4)) return make_error(f.field("qlora_dequantized_copies"), "must be between 1 and 4");
  s.qlora_dequantized_copies = static_cast<double>(copies->value_or(1));
  if (const toml::node* n = t.get("eager_attention_bytes_per_score")) {
    const toml::table* e = n->as_table();
    if (!e) return make_error(f.field("eager_attention_bytes_per_score"), "must be a table { forward = B, backward = B }");
    TomlFields ef(*e, f.field("eager_attention_bytes_per_score"));
    if (auto bad = ef.only_keys({"forward", "backward"})) return *bad;
    for (auto [key, out] : {std::pair{"forward", &s.eager_score_forward_bytes}, std::pair{"backward", &s.eager_score_backward_bytes}}) {
      auto v = ef.optional_number_between(key, 1, 256);
      if (!v) return v.error();
      if (!*v) return make_error(ef.field(key), "is required");
      *out = **v;
    }
  }
  std::vector<std::string> recipes;
  if (auto e = read_strings(f, "fp8_recipes", recipes, false)) return *e;
  for (const auto& id : recipes) {
    const LowPrecisionRecipe* r = known.recipe(id);
    if (!r) return make_error(f.field("fp8_recipes"), "unknown recipe '" + id + "'");
    s.fp8_recipes.push_back(*r);
  }
  return s;
}

template <class T, class Parse>
Status read_array(const toml::table& doc, const char* key, const std::string& origin, std::vector<T>& out, Parse parse) {
  const toml::node* n = doc.get(key);
  if (!n) return make_error(origin + ": " + key, "is required");
  const toml::array* a = n->as_array();
  if (!a) return make_error(origin + ": " + key, "must be an array of tables ([[" + std::string(key) + "]])");
  for (size_t i = 0; i < a->size(); ++i) {
    const std::string where = fmt::format("{}: {}[{}]", origin, key, i);
    const toml::table* t = a->get(i)->as_table();
    if (!t) return make_error(where, "must be a table");
    auto r = parse(*t, where);
    if (!r) return r.error();
    for (const auto& prior : out)
      if (prior.id == r->id) return make_error(where + ".id", "duplicate id '" + r->id + "'");
    out.push_back(std::move(r).value());
  }
  return std::nullopt;
}

}  // namespace

Result<StackCatalog> StackCatalog::from_table(const toml::table& doc, const std::string& origin) {
  for (const auto& [k, v] : doc)
    if (k.str() != "attention_kernel" && k.str() != "fp8_recipe" && k.str() != "stack")
      return make_error(origin + ": " + std::string(k.str()), "unknown section (expected attention_kernel, fp8_recipe or stack)");
  StackCatalog c;
  if (auto s = read_array(doc, "attention_kernel", origin, c.kernels_, parse_kernel)) return *s;
  if (auto s = read_array(doc, "fp8_recipe", origin, c.recipes_, parse_recipe)) return *s;
  if (auto s = read_array(doc, "stack", origin, c.stacks_,
                          [&c](const toml::table& t, const std::string& where) { return parse_stack(t, where, c); }))
    return *s;
  if (c.stacks_.empty()) return make_error(origin, "has no [[stack]]");
  return c;
}

Result<StackCatalog> StackCatalog::from_toml(std::string_view text, const std::string& origin) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  return from_table(*doc, origin);
}

const StackCatalog& StackCatalog::builtin() {
  static const StackCatalog c =
      data::builtin_or_abort(from_toml(data::embedded_file("stacks.toml"), "built-in stacks.toml"));
  return c;
}

Result<Stack> StackCatalog::find(const std::string& id, const std::string& field) const {
  for (const auto& s : stacks_)
    if (s.id == id) return s;
  return make_error(field, "unknown stack '" + id + "'" + did_you_mean(id, ids()) + "; `gpuplan stacks` lists them");
}

std::vector<std::string> StackCatalog::ids() const {
  std::vector<std::string> out;
  for (const auto& s : stacks_) out.push_back(s.id);
  return out;
}

const AttentionKernel* StackCatalog::kernel(const std::string& id) const {
  for (const auto& k : kernels_)
    if (k.id == id) return &k;
  return nullptr;
}

std::vector<std::string> StackCatalog::kernel_ids() const {
  std::vector<std::string> out;
  for (const auto& k : kernels_) out.push_back(k.id);
  return out;
}

Result<Stack> StackCatalog::with_attention_kernel(Stack stack, const std::string& id, const std::string& field) const {
  const AttentionKernel* k = kernel(id);
  if (!k) return make_error(field, "unknown attention kernel '" + id + "'" + did_you_mean(id, kernel_ids()) + "; `gpuplan stacks` lists them");
  stack.attention = {{"default", *k}};
  return stack;
}

Status check_attention_runs_on(const Stack& stack, const std::string& architecture, const std::string& field,
                               const std::string& gpu) {
  if (stack.attention_fraction(architecture) > 0) return std::nullopt;
  return make_error(field, "attention kernel '" + stack.attention_kernel(architecture).id + "' does not run on " + gpu);
}

const LowPrecisionRecipe* StackCatalog::recipe(const std::string& id) const {
  for (const auto& r : recipes_)
    if (r.id == id) return &r;
  return nullptr;
}

}  // namespace gpuplan
