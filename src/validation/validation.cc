#include "validation/validation.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

#include "data/embedded.h"
#include "data/toml_document.h"
#include "model/presets.h"
#include "perf/inference.h"
#include "perf/offload.h"
#include "perf/operations.h"
#include "perf/training.h"
#include "memory/memory_model.h"
#include "calibrate/cross_gpu.h"
#include "validation/serving_rows.h"
#include "util/checked.h"

namespace gpuplan {

double ValidationReport::mape(const std::string& section) const {
  double sum = 0;
  int n = 0;
  for (const auto& r : rows)
    if (r.section == section) sum += std::fabs(r.error()), ++n;
  return n ? sum / n : 0;
}

double ValidationReport::mape(const std::string& section, const std::string& engine) const {
  double sum = 0;
  int n = 0;
  for (const auto& r : rows)
    if (r.section == section && r.engine == engine) sum += std::fabs(r.error()), ++n;
  return n ? sum / n : 0;
}

double ValidationReport::worst(const std::string& section) const {
  double w = 0;
  for (const auto& r : rows)
    if (r.section == section) w = std::max(w, std::fabs(r.error()));
  return w;
}

namespace {

struct Ctx {
  std::map<std::string, ModelSpec> shapes;
  const Catalog& catalog;
  const EfficiencyTable& eff;
};

Result<ModelSpec> model_of(const Ctx& c, const std::string& id, const std::string& where) {
  auto it = c.shapes.find(id);
  if (it != c.shapes.end()) return it->second;
  auto p = Presets::builtin().find(id);
  if (!p) return make_error(where + ".model", p.error().message);
  return p;
}

// The keys of fine-tuning and memory rows: optimizer, LoRA rank, accumulation, loss, context
// parallelism, hybrid sharding, offload.
Status read_training_keys(const TomlFields& f, Workload& w) {
  auto get_int = [&](const char* k, int64_t& out) -> Status {
    auto r = f.optional_integer(k);
    if (!r) return r.error();
    if (*r) out = **r;
    return std::nullopt;
  };
  for (auto [k, out] : {std::pair{"lora_rank", &w.lora_rank}, std::pair{"grad_accum", &w.grad_accum},
                        std::pair{"loss_chunk_tokens", &w.loss_chunk_tokens},
                        std::pair{"cp", &w.par.cp}, std::pair{"shard_group", &w.par.shard_group}})
    if (auto s = get_int(k, *out)) return s;
  auto targets = f.optional_string("lora_targets");
  if (!targets) return targets.error();
  if (*targets) {
    auto tg = parse_lora_targets(**targets, f.field("lora_targets"));
    if (!tg) return tg.error();
    w.lora_targets = *tg;
  }
  auto opt = f.optional_string("optimizer");
  if (!opt) return opt.error();
  if (*opt) {
    auto o = parse_optimizer(**opt);
    if (!o) return make_error(f.field("optimizer"), "unknown optimizer '" + **opt + "'");
    w.optimizer = *o;
  }
  auto recipe = f.optional_string("fp8_recipe");
  if (!recipe) return recipe.error();
  if (*recipe) w.fp8_recipe = **recipe;
  auto loss = f.optional_string("loss");
  if (!loss) return loss.error();
  if (*loss) {
    auto l = parse_loss(**loss);
    if (!l) return make_error(f.field("loss"), "must be " + loss_choices());
    w.loss = *l;
  }
  for (auto [k, out] : {std::pair{"offload_optimizer", &w.offload_optimizer},
                        std::pair{"reshard_after_forward", &w.par.reshard_after_forward},
                        std::pair{"optimizer_in_backward", &w.optimizer_in_backward},
                        std::pair{"paged_optimizer", &w.paged_optimizer},
                        std::pair{"double_quant", &w.double_quant}}) {
    auto b = f.optional_boolean(k);
    if (!b) return b.error();
    if (*b) *out = **b;
  }
  return std::nullopt;
}

// Reads the common workload keys of a row.
Result<Workload> row_workload(const TomlFields& f, const ModelSpec& m, Task task) {
  Workload w;
  w.task = task;
  auto get_int = [&](const char* k, int64_t dflt) -> Result<int64_t> {
    auto r = f.optional_integer(k);
    if (!r) return r.error();
    return r->value_or(dflt);
  };
  auto tp = get_int("tp", 1), pp = get_int("pp", 1), gpus = get_int("gpus", 0), zero = get_int("zero", 0),
       vs = get_int("virtual_stages", 1), mb = get_int("micro_batch", 1), seq = get_int("seq", 2048),
       ep = get_int("ep", 1);
  for (auto* r : {&tp, &pp, &gpus, &zero, &vs, &mb, &seq, &ep})
    if (!*r) return r->error();
  w.par.tp = *tp;
  w.par.pp = *pp;
  auto cp = get_int("cp", 1);
  if (!cp) return cp.error();
  if (*cp < 1 || *cp > 1024) return make_error(f.field("cp"), "must be between 1 and 1024");
  const int64_t n = *gpus > 0 ? *gpus : *tp * *pp * *cp;
  if (n % (*tp * *pp * *cp) != 0) return make_error(f.field("gpus"), "not a multiple of tp x pp x cp");
  w.par.dp = n / (*tp * *pp * *cp);
  w.par.zero = static_cast<int>(*zero);
  w.par.virtual_stages = *vs;
  w.par.ep = *ep;
  w.micro_batch = *mb;
  w.seq = *seq;
  auto prec = f.optional_string("precision");
  if (!prec) return prec.error();
  auto p = parse_precision(prec->value_or("bf16"));
  if (!p) return make_error(f.field("precision"), "unknown precision");
  w.precision = *p;
  auto rc = f.optional_string("recompute");
  if (!rc) return rc.error();
  auto r = parse_recompute(rc->value_or("none"));
  if (!r) return make_error(f.field("recompute"), "unknown recompute mode");
  w.set_recompute(*r);
  auto sp = f.optional_boolean("sequence_parallel");
  if (!sp) return sp.error();
  w.par.sequence_parallel = sp->value_or(true);
  auto flash = f.optional_boolean("flash_attention");
  if (!flash) return flash.error();
  w.flash_attention = flash->value_or(true);
  if (auto s = read_training_keys(f, w)) return *s;
  // A pipeline keeps up to pp micro-batches in flight: the step's micro-batches count, from the
  // global batch when the row gives it and not the accumulation.
  auto gb = f.optional_integer("global_batch");
  if (!gb) return gb.error();
  if (*gb && !f.table().contains("grad_accum") && **gb > 0)
    w.grad_accum = std::max<int64_t>(1, **gb / std::max<int64_t>(1, w.micro_batch * w.par.dp));
  if (auto s = w.validate(m)) return make_error(f.field(s->field), s->message);
  return w;
}

// The row's `stack` (else `fallback`), running the row's `attention_kernel` where the run set one,
// and the row's model code where it fuses or splits the projections unlike the stack's usual code
// (Megatron's GPT under DeepSpeed: `separate_projections = false`).
Result<Stack> row_stack(const TomlFields& f, const Gpu& gpu, const std::string& fallback = default_stack_id(Task::pretrain)) {
  auto id = f.optional_string("stack");
  if (!id) return id.error();
  auto kernel = f.optional_string("attention_kernel");
  if (!kernel) return kernel.error();
  auto overlap_tp = f.optional_boolean("overlap_tp");
  if (!overlap_tp) return overlap_tp.error();
  auto apart = f.optional_boolean("separate_projections");
  if (!apart) return apart.error();
  const StackCatalog& stacks = StackCatalog::builtin();
  auto stack = stacks.find(id->value_or(fallback), f.field("stack"));
  if (stack && *overlap_tp) stack->overlap_tp = **overlap_tp;
  if (stack && *apart) stack->separate_projections = **apart;
  if (!stack || !*kernel) return stack;
  stack = stacks.with_attention_kernel(*stack, **kernel, f.field("attention_kernel"));
  if (!stack) return stack;
  if (auto s = check_attention_runs_on(*stack, gpu.architecture, f.field("attention_kernel"), gpu.architecture + " GPUs")) return *s;
  return stack;
}

// The row's `engine`, else the default one (vLLM).
Result<Engine> row_engine(const TomlFields& f) {
  auto id = f.optional_string("engine");
  if (!id) return id.error();
  return EngineCatalog::builtin().find(id->value_or(kDefaultEngineId), f.field("engine"));
}

// Converts a published metric to the seconds the model predicts, and back.
struct MetricSeconds {
  std::function<double(double)> to_seconds, from_seconds;
};

// Fit on the source GPU's published figure, predict the target GPU's.
Result<ValidationRow> cross_gpu_row(const Ctx& c, const TomlFields& f, const ModelSpec& m, const Gpu& target,
                                    const Efficiency& target_eff, const Cluster& target_cluster, ValidationRow row) {
  auto src_id = f.string("source_gpu");
  auto src_pub = f.number("source_published");
  auto kind = f.string("kind");
  if (!src_id) return src_id.error();
  if (!src_pub) return src_pub.error();
  if (!kind) return kind.error();
  auto src = c.catalog.find(*src_id, f.field("source_gpu"));
  if (!src) return src.error();
  auto stack = row_stack(f, *src);
  if (!stack) return stack.error();
  const Efficiency src_eff = *kind == "train" ? c.eff.for_gpu(*src, *stack) : c.eff.for_gpu(*src);
  Cluster src_cluster = default_cluster(*src);
  auto net = f.optional_number_between("source_network_gbps", 1, 1e5);
  if (!net) return net.error();
  if (*net) src_cluster.network_Bps = **net * 1e9 / 8;
  std::function<double(const Gpu&, const Cluster&, const Efficiency&)> seconds;
  MetricSeconds conv;
  if (*kind == "train") {
    auto w = row_workload(f, m, Task::pretrain);
    if (!w) return w.error();
    TrainingRun run;
    auto gb = f.optional_integer("global_batch");
    if (!gb) return gb.error();
    run.global_batch = gb->value_or(0);
    const Workload wl = *w;
    const Stack st = *stack;
    seconds = [&m, wl, run, st](const Gpu& g, const Cluster& cl, const Efficiency& e) {
      return estimate_training(m, wl, g, e, st, cl, run).step_time_s;
    };
    if (row.metric != "tokens_per_s_per_gpu") return make_error(f.field("metric"), "training pairs use tokens_per_s_per_gpu");
    const double tokens = static_cast<double>((run.global_batch > 0 ? run.global_batch : wl.micro_batch * wl.par.dp) * wl.seq);
    const double gpus = static_cast<double>(wl.par.gpus());
    conv = {[=](double v) { return tokens / (v * gpus); }, [=](double s) { return tokens / (s * gpus); }};
  } else {
    auto w = row_workload(f, m, Task::infer);
    if (!w) return w.error();
    InferenceRequest req;
    for (auto [k, out] : {std::pair{"prompt", &req.prompt_tokens}, std::pair{"output", &req.output_tokens},
                          std::pair{"concurrency", &req.concurrency}}) {
      auto v = f.integer(k);
      if (!v) return v.error();
      *out = *v;
    }
    auto engine = row_engine(f);
    if (!engine) return engine.error();
    const Workload wl = *w;
    const std::string metric = row.metric;
    const Engine en = *engine;
    seconds = [&m, wl, req, metric, en](const Gpu& g, const Cluster& cl, const Efficiency& e) {
      const InferenceEstimate x = estimate_inference(m, wl, req, g, e, cl, en);
      if (metric == "e2e_latency_s") return x.e2e_latency_s;
      if (metric == "prefill_tokens_per_s") return x.ttft_s;
      return x.tpot_s;  // tokens_per_s
    };
    if (row.metric == "e2e_latency_s") conv = {[](double v) { return v; }, [](double s) { return s; }};
    else if (row.metric == "prefill_tokens_per_s") {
      const double tokens = static_cast<double>(req.prompt_tokens * req.concurrency);
      conv = {[=](double v) { return tokens / v; }, [=](double s) { return tokens / s; }};
    } else if (row.metric == "tokens_per_s") conv = {[](double v) { return 1 / v; }, [](double s) { return 1 / s; }};
    else return make_error(f.field("metric"), "unknown inference metric '" + row.metric + "'");
  }
  const Gpu src_gpu = *src;
  const Efficiency tgt_eff = *kind == "train" ? c.eff.for_gpu(target, *stack) : target_eff;
  const auto p = predict_across(
      src_eff, [&](const Efficiency& e) { return seconds(src_gpu, src_cluster, e); }, conv.to_seconds(*src_pub), tgt_eff,
      [&](const Efficiency& e) { return seconds(target, target_cluster, e); });
  row.predicted = conv.from_seconds(p.seconds);
  row.uncalibrated = conv.from_seconds(p.uncalibrated_s);
  row.what += fmt::format(" ({} -> {})", src_gpu.id, target.id);
  return row;
}

// A row that leaves recomputation or the loss unsaid runs as its stack does by default.
Status apply_stack_defaults(const TomlFields& f, const Stack& stack, Workload& w) {
  if (!f.table().contains("recompute")) w.set_recompute(stack.default_recompute);
  apply_stack_training(stack, w);
  auto fp32_grads = f.optional_boolean("grad_reduce_in_fp32");
  if (!fp32_grads) return fp32_grads.error();
  if (*fp32_grads) w.bf16_grads_in_fp32 = **fp32_grads;
  // A run that loads its model in 16 bits (torch_dtype=bfloat16) keeps no fp32 master copy.
  auto master = f.optional_boolean("master_weights");
  if (!master) return master.error();
  if (*master) w.fp32_master_weights = **master;
  if (!f.table().contains("loss")) w.loss = *parse_loss(stack.default_loss);
  if (!f.table().contains("reshard_after_forward")) apply_stack_layout(stack, w);
  return std::nullopt;
}

// Per-GPU memory of a training or inference run, in the measure the publication reports.
Result<ValidationRow> memory_row(const Ctx& c, const TomlFields& f, const ModelSpec& m, const Gpu& gpu, ValidationRow row) {
  auto task_name = f.optional_string("task");
  if (!task_name) return task_name.error();
  auto task = parse_task(task_name->value_or("full"));
  if (!task) return make_error(f.field("task"), "must be pretrain, full, lora, qlora or infer");
  auto w = row_workload(f, m, *task);
  if (!w) return w.error();
  std::optional<Stack> stack;
  if (w->training()) {
    auto st = row_stack(f, gpu, default_stack_id(*task));
    if (!st) return st.error();
    stack = *st;
    if (auto s = apply_stack_defaults(f, *stack, *w)) return *s;
    row.stack = stack->id;
  }
  // GiB (2^30) or MiB as PyTorch and nvidia-smi print them, or GB (1e9) as papers round them.
  double unit = 0;
  if (row.metric == "peak_memory_gib") unit = 1024.0 * 1024 * 1024;
  else if (row.metric == "peak_memory_mib") unit = 1024.0 * 1024;
  else if (row.metric == "peak_memory_gb") unit = 1e9;
  else return make_error(f.field("metric"), "memory rows use peak_memory_gib, peak_memory_mib or peak_memory_gb");
  auto measure = f.string("measure");
  if (!measure) return measure.error();
  const Efficiency eff = stack ? c.eff.for_gpu(gpu, *stack) : c.eff.for_gpu(gpu);
  const MemoryEstimate e = estimate_memory(m, *w, eff);
  double bytes = 0;
  FitInputs& in = row.fit;
  in.activation_bytes = w->training() ? e.activations : 0;
  in.workspace_bytes = e.workspace;
  if (*measure == "nvidia_smi") bytes = e.nvidia_smi(), in.counts_reserve = true;
  else if (*measure == "reserved") bytes = e.reserved(), in.counts_reserve = true;
  else if (*measure == "allocated") bytes = e.allocated();
  else if (*measure == "model_states") bytes = e.model_states(), in.activation_bytes = 0;
  else return make_error(f.field("measure"), "must be nvidia_smi, reserved, allocated or model_states");
  in.fixed_bytes = bytes - in.activation_bytes - (in.counts_reserve ? e.allocator_reserve : 0);
  if (!w->training()) in.fixed_bytes = bytes, in.counts_reserve = false;
  in.raw_quantity = bytes;
  in.raw_metric = bytes / unit;
  row.predicted = bytes / unit;
  row.metric += " (" + *measure + ")";
  if (w->training()) row.kind = "train_memory", row.task_class = memory_band_class(w->task);
  return row;
}

Result<ValidationRow> run_row(const Ctx& c, const std::string& table, const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  ValidationRow row;
  row.section = table;
  // Mixture-of-experts rows are scored apart but predicted like the others.
  const std::string section = table == "moe_training" ? "training" : table == "moe_serving" ? "inference" : table;
  auto publication = f.optional_string("publication");
  if (!publication) return publication.error();
  row.publication = publication->value_or("");
  for (auto [k, out] : {std::pair{"what", &row.what}, std::pair{"source", &row.source}}) {
    auto s = f.string(k);
    if (!s) return s.error();
    *out = *s;
  }
  auto assumed = f.optional_string("assumed");
  if (!assumed) return assumed.error();
  row.assumed = assumed->value_or("");
  auto published = f.number("published");
  if (!published) return published.error();
  if (*published <= 0) return make_error(f.field("published"), "must be positive");
  row.published = *published;
  auto model_id = f.string("model");
  auto gpu_id = f.string("gpu");
  if (!model_id) return model_id.error();
  if (!gpu_id) return gpu_id.error();
  auto m = model_of(c, *model_id, where);
  if (!m) return m.error();
  auto gpu = c.catalog.find(*gpu_id, where + ".gpu");
  if (!gpu) return gpu.error();
  const Efficiency eff = c.eff.for_gpu(*gpu);
  Cluster cluster = default_cluster(*gpu);
  auto net = f.optional_number("network_gbps");
  if (!net) return net.error();
  if (*net) cluster.network_Bps = **net * 1e9 / 8;
  auto per_node = f.optional_integer("gpus_per_node");
  if (!per_node) return per_node.error();
  if (*per_node) {
    if (auto s = require_range(**per_node, f.field("gpus_per_node"), 1, 1024)) return *s;
    cluster.gpus_per_node = **per_node;
  }
  auto nvlink = f.optional_boolean("nvlink");
  if (!nvlink) return nvlink.error();
  if (*nvlink) cluster.nvlink = **nvlink;
  // What the publication says its node's NVLink gives a GPU, where its board wires less than the part.
  auto nvlink_gbps = f.optional_number_between("nvlink_gbps", 1, 1e5);
  if (!nvlink_gbps) return nvlink_gbps.error();
  if (*nvlink_gbps) cluster.nvlink_Bps = **nvlink_gbps * 1e9;

  if (section == "serving") return serving_row(t, where, *m, *gpu, eff, row);
  if (section == "operation") {
    row.metric = "op_time_s";
    auto op_name = f.string("op");
    auto tokens = f.number("tokens");
    if (!op_name) return op_name.error();
    if (!tokens) return tokens.error();
    ForwardShape s;
    s.tokens = *tokens;
    s.kv_len = *tokens;
    for (const Op& op : block_forward_ops(*m, s))
      if (op.name == *op_name) row.predicted = time_op(op, *gpu, eff, Precision::bf16).total_s();
    if (row.predicted == 0) return make_error(f.field("op"), "no operation named '" + *op_name + "'");
    return row;
  }
  auto metric = f.string("metric");
  if (!metric) return metric.error();
  row.metric = *metric;
  if (section == "cross_gpu") return cross_gpu_row(c, f, *m, *gpu, eff, cluster, row);
  if (section == "memory") return memory_row(c, f, *m, *gpu, row);
  if (section == "training") {
    auto task_name = f.optional_string("task");
    if (!task_name) return task_name.error();
    auto task = parse_task(task_name->value_or("pretrain"));
    if (!task || *task == Task::infer) return make_error(f.field("task"), "must be pretrain, full, lora or qlora");
    auto w = row_workload(f, *m, *task);
    if (!w) return w.error();
    auto stack = row_stack(f, *gpu);
    if (!stack) return stack.error();
    if (auto s = apply_stack_defaults(f, *stack, *w)) return *s;
    if (!w->fp8_recipe.empty() && !stack->recipe(w->fp8_recipe))
      return make_error(f.field("fp8_recipe"), "stack '" + stack->id + "' does not offer '" + w->fp8_recipe + "'");
    if (w->precision == Precision::fp8 && stack->fp8_recipes.empty())
      return make_error(f.field("precision"), "stack '" + stack->id + "' has no FP8 recipe");
    TrainingRun run;
    auto gb = f.optional_integer("global_batch");
    if (!gb) return gb.error();
    run.global_batch = gb->value_or(0);
    auto tokens = f.optional_number("tokens");
    if (!tokens) return tokens.error();
    run.tokens = *tokens;
    auto overlap = f.optional_boolean("overlap_dp_comm");
    if (!overlap) return overlap.error();
    run.overlap_dp_grads = *overlap;
    // A DeepSpeed from before 0.5.5, whose ZeRO-3 gathered tensor by tensor (TrainingRun).
    auto each = f.optional_boolean("gather_each_tensor");
    if (!each) return each.error();
    run.gather_each_tensor = each->value_or(false);
    // A run whose DeepSpeed config sets (or leaves at DeepSpeed's default) its fetch-ahead window.
    auto prefetch = f.optional_number_between("zero3_prefetch_params", 0, 1e12);
    if (!prefetch) return prefetch.error();
    run.zero3_prefetch_params = *prefetch;
    // The run's own host where its source names the CPUs (GB/s, as platform.toml's nodes).
    auto host_bw = f.optional_number_between("host_memory_bw_gbps", 1, 1e5);
    if (!host_bw) return host_bw.error();
    if (w->offload_optimizer && !stack->offers_offload()) return make_error(f.field("offload_optimizer"), stack->no_offload_reason());
    TrainingEstimate e = estimate_training(*m, *w, *gpu, c.eff.for_gpu(*gpu, *stack), *stack, cluster, run);
    add_host_optimizer_step(e, *m, *w, *gpu, *stack, cluster.gpus_per_node, host_bw->value_or(0) * 1e9);
    if (row.metric == "tflops_per_gpu") row.predicted = e.hardware_flops_per_step / e.step_time_s / w->par.gpus() / 1e12;
    else if (row.metric == "step_time_s") row.predicted = e.step_time_s;
    else if (row.metric == "tokens_per_s_per_gpu") row.predicted = e.tokens_per_s / w->par.gpus();
    else if (row.metric == "mfu") row.predicted = e.mfu;
    else if (row.metric == "gpu_hours" && e.gpu_hours) row.predicted = *e.gpu_hours;
    else return make_error(f.field("metric"), "unknown training metric '" + row.metric + "' (gpu_hours needs tokens)");
    row.stack = stack->id;
    if (table == "training") row.kind = "train_throughput";
    row.fit.time = e.fit_terms;
    row.fit.raw_quantity = e.step_time_s;
    row.fit.raw_metric = row.predicted;
    row.fit.inverse = row.metric != "step_time_s" && row.metric != "gpu_hours";
    // A published figure that needs more than the GPU's dense peak, counting the recomputation the
    // row states, cannot come from the configuration the row describes: kept, not scored.
    const double implied_hfu = e.hfu * (row.fit.inverse ? row.published / row.predicted : row.predicted / row.published);
    if (row.metric != "mfu" && implied_hfu > 1) {
      row.refused = fmt::format("the published figure implies {:.0f}% of the {}'s dense peak counting the stated "
                                "recomputation: the run cannot have been as described",
                                100 * implied_hfu, gpu->id);
      row.not_as_described = true;
    }
    return row;
  }
  auto w = row_workload(f, *m, Task::infer);
  if (!w) return w.error();
  InferenceRequest req;
  auto get = [&](const char* k, int64_t& out) -> Status {
    auto r = f.integer(k);
    if (!r) return r.error();
    out = *r;
    return std::nullopt;
  };
  if (auto s = get("prompt", req.prompt_tokens)) return *s;
  if (auto s = get("output", req.output_tokens)) return *s;
  if (auto s = get("concurrency", req.concurrency)) return *s;
  auto engine = row_engine(f);
  if (!engine) return engine.error();
  row.engine = engine->id;
  const InferenceEstimate e = estimate_inference(*m, *w, req, *gpu, eff, cluster, *engine);
  if (row.metric == "tokens_per_s") row.predicted = e.output_tokens_per_s;
  else if (row.metric == "prefill_tokens_per_s") row.predicted = e.prefill_tokens_per_s;
  else if (row.metric == "ttft_s") row.predicted = e.ttft_s;
  else if (row.metric == "tpot_s") row.predicted = e.tpot_s;
  else if (row.metric == "e2e_latency_s") row.predicted = e.e2e_latency_s;
  else return make_error(f.field("metric"), "unknown inference metric '" + row.metric + "'");
  return row;
}

// A row marked `expressible = false` is kept with its `reason` and not scored.
Result<std::optional<UnscoredRow>> unscored_row(const std::string& section, const toml::table& t, const std::string& where) {
  TomlFields f(t, where);
  auto expressible = f.optional_boolean("expressible");
  if (!expressible) return expressible.error();
  if (expressible->value_or(true)) return std::optional<UnscoredRow>{};
  UnscoredRow u;
  u.section = section;
  auto reason = f.string("reason");
  if (!reason) return make_error(f.field("reason"), "is required when expressible = false");
  u.reason = *reason;
  for (auto [k, out] : {std::pair{"what", &u.what}, std::pair{"source", &u.source}, std::pair{"publication", &u.publication}}) {
    auto v = f.optional_string(k);
    if (!v) return v.error();
    *out = v->value_or("");
  }
  return std::optional<UnscoredRow>{u};
}

}  // namespace

Result<ValidationReport> run_validation(std::string_view text, const std::string& origin, const Catalog& catalog,
                                        const EfficiencyTable& eff) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  Ctx c{{}, catalog, eff};
  if (const toml::array* shapes = doc->get_as<toml::array>("shape")) {
    for (size_t i = 0; i < shapes->size(); ++i) {
      const toml::table* t = shapes->get(i)->as_table();
      const std::string where = fmt::format("{}: shape[{}]", origin, i);
      if (!t) return make_error(where, "must be a table");
      auto m = model_from_table(*t, where);
      if (!m) return m.error();
      c.shapes.emplace(m->id, *m);
    }
  }
  ValidationReport rep;
  // Runs (publication, what) whose throughput row shows they were not as described; training rows
  // come first, so the same run's memory row can be set aside with them.
  std::set<std::pair<std::string, std::string>> not_as_described;
  for (const char* section : {"training", "memory", "inference", "operation", "cross_gpu", "moe_training", "moe_serving", "serving"}) {
    const toml::array* rows = doc->get_as<toml::array>(section);
    if (!rows) continue;
    for (size_t i = 0; i < rows->size(); ++i) {
      const toml::table* t = rows->get(i)->as_table();
      const std::string where = fmt::format("{}: {}[{}]", origin, section, i);
      if (!t) return make_error(where, "must be a table");
      auto unscored = unscored_row(section, *t, where);
      if (!unscored) return unscored.error();
      if (*unscored) {
        rep.unscored.push_back(**unscored);
        if (std::string_view(section) == "serving") ++rep.unexpressible;
        continue;
      }
      auto row = run_row(c, section, *t, where);
      if (!row) return row.error();
      if (row->not_as_described) not_as_described.insert({row->publication, row->what});
      else if (row->refused.empty() && not_as_described.count({row->publication, row->what}))
        row->refused = "the same run's published throughput cannot come from the configuration the row describes "
                       "(see its training row): its memory is not that configuration's either";
      if (!row->refused.empty()) {
        rep.unscored.push_back({section, row->what, row->publication, row->source, row->refused});
        if (std::string_view(section) == "serving") ++rep.unexpressible;
        continue;
      }
      if (!row->kind.empty() && row->publication.empty())
        return make_error(where + ".publication", "is required: rows are scored leaving one publication out");
      rep.rows.push_back(*row);
    }
  }
  return rep;
}

Result<ValidationReport> run_builtin_validation(const Catalog& catalog, const EfficiencyTable& eff) {
  auto rep = run_validation(data::embedded_file("validation.toml"), "built-in validation.toml", catalog, eff);
  if (!rep) return rep;
  // The serving-engine rows live in their own file (same layout).
  auto serving = run_validation(data::embedded_file("validation_serving.toml"), "built-in validation_serving.toml", catalog, eff);
  if (!serving) return serving.error();
  rep->rows.insert(rep->rows.end(), serving->rows.begin(), serving->rows.end());
  rep->unexpressible += serving->unexpressible;
  rep->unscored.insert(rep->unscored.end(), serving->unscored.begin(), serving->unscored.end());
  return rep;
}

}  // namespace gpuplan
