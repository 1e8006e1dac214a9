// `gpuplan memory`: the per-GPU VRAM breakdown, and whether and how it fits on a given card.
#include <fmt/format.h>

#include "cli/common.h"
#include "cli/workload_flags.h"
#include "memory/fit.h"
#include "perf/comm.h"
#include "perf/inference.h"
#include "planner/fit_search.h"
#include "report/json_report.h"
#include "report/table.h"
#include "util/units.h"

namespace gpuplan::cli {

namespace {

struct MemoryFlags {
  WorkloadFlags w;
  std::string gpu, engine;
  double headroom = kUnset;
  bool json = false, attention_dp = false;
};

nlohmann::json fit_step_json(const FitStep& s) {
  return {{"gpus", s.workload.par.gpus()}, {"workload", to_json(s.workload)},
          {"memory_per_gpu_bytes", static_cast<int64_t>(s.memory_per_gpu_bytes)},
          {"host_bytes_per_node", static_cast<int64_t>(s.host_bytes_per_node)}, {"changes", s.changes}};
}

std::string changes_text(const FitStep& s) {
  std::string out;
  for (size_t i = 0; i < s.changes.size(); ++i) out += (i == 0 ? "" : i + 1 == s.changes.size() ? " and " : ", ") + s.changes[i];
  return out.empty() ? "as given" : out;
}

std::string describe(const ModelSpec& m, const Workload& w) {
  std::string what = w.task == Task::infer
      ? fmt::format("inference, {} weights, {} KV cache, {} sequences x {} tokens", to_string(w.precision),
                    to_string(w.kv()), w.micro_batch, w.seq)
      : fmt::format("{} {}, {}, {}, micro-batch {} x {} tokens, recompute {}", to_string(w.task),
                    w.task == Task::pretrain ? "training" : "fine-tune", to_string(w.precision),
                    to_string(w.optimizer), w.micro_batch, w.seq, to_string(w.recompute_spec()));
  const std::string active = m.is_moe()
      ? fmt::format(", {} active", format_count(static_cast<double>(m.active_parameters()))) : "";
  return fmt::format("{} ({} parameters{}): {}", m.name, format_count(static_cast<double>(m.total_parameters())), active, what);
}

int run_memory(Context& ctx, const MemoryFlags& f) {
  auto built = build_workload(f.w);
  if (!built) return fail(built.error());
  auto& [model, w] = *built;
  std::optional<Stack> stack;
  if (w.training()) {
    auto s = apply_stack(f.w, w);
    if (!s) return fail(s.error());
    stack = *s;
  } else if (!f.w.stack.empty()) {
    return fail(make_error("--stack", "names a training stack; inference memory does not depend on one"));
  } else if (const std::string flag = training_only_flag(f.w); !flag.empty()) {
    return fail(make_error(flag, "applies to training; inference memory does not depend on it"));
  }
  std::optional<Engine> engine;
  if (w.task == Task::infer) {
    auto e = EngineCatalog::builtin().find(f.engine.empty() ? kDefaultEngineId : f.engine);
    if (!e) return fail(e.error());
    engine = *e;
    if (f.attention_dp)
      if (auto st = engine->use_attention_dp(w, model, "--attention-dp")) return fail(*st);
  } else if (!f.engine.empty()) {
    return fail(make_error("--engine", "names a serving engine; it applies to --task infer"));
  } else if (f.attention_dp) {
    return fail(make_error("--attention-dp", "is a serving layout; it applies to --task infer"));
  }
  auto table = ctx.efficiency();
  if (!table) return fail(table.error());
  std::optional<Gpu> gpu;
  if (!f.gpu.empty()) {
    auto catalog = ctx.catalog();
    if (!catalog) return fail(catalog.error());
    auto g = (*catalog)->find(f.gpu);
    if (!g) return fail(g.error());
    gpu = *g;
  }
  auto headroom = resolve_headroom(f.headroom, Platform::builtin());
  if (!headroom) return fail(headroom.error());
  // Training memory carries the stack's fitted activation and allocator terms (data/fitted.toml).
  const Gpu resolved = gpu ? *gpu : Gpu{};
  const Efficiency eff = stack ? (*table)->for_gpu(resolved, *stack) : (*table)->for_gpu(resolved);
  const MemoryEstimate e = estimate_memory(model, w, eff);
  if (auto s = check_figures({{"memory per GPU", e.nvidia_smi(), kMaxBytes}, {"CPU offload", e.cpu_offload, kMaxBytes}}, "--model"))
    return fail(*s);
  std::optional<FitReport> fit;
  std::optional<Workload> split;
  FitSearch search;
  if (gpu) {
    fit = check_fit(model, w, *gpu, eff, *headroom);
    if (!fit->fits) {
      if (w.training()) {
        // What engineers try before adding GPUs: micro-batch, recompute, ZeRO, CPU offload.
        search = find_fit(model, w, *gpu, eff, *stack, &Platform::builtin(), *headroom, default_cluster(*gpu).gpus_per_node);
        if (search.first) split = search.first->workload;
      } else {
        split = smallest_fitting_split(model, w, *gpu, eff, 4096, *headroom);
      }
    }
  }
  // The engine's own KV-cache budget on this card: what it allocates, whatever the batch asked for.
  std::optional<InferenceMemory> kv;
  if (engine && gpu && w.seq > 0) kv = inference_memory(model, w, {w.seq, 0, 1}, *gpu, eff, *engine);
  if (f.json) {
    nlohmann::json j = memory_json(model, w, e, gpu ? &*gpu : nullptr, fit, split);
    j["stack"] = stack ? nlohmann::json(stack->id) : nlohmann::json(nullptr);
    j["engine"] = engine ? nlohmann::json(engine->id) : nlohmann::json(nullptr);
    j["attention_dp"] = w.par.attention_dp;  // then the per-GPU figures are one GPU's own requests
    if (kv)
      j["engine_kv_cache"] = {{"budget_bytes", kv->kv_budget_bytes}, {"tokens", kv->kv_capacity_tokens},
                              {"profile_peak_bytes", kv->profile_peak_bytes},
                              {"profile_sampler_bytes", kv->profile_sampler_bytes},
                              {"gpu_memory_utilization", kv->memory_fraction},
                              {"weight_bytes", kv->weight_bytes_per_gpu},
                              {"sequences", w.seq > 0 ? kv->kv_capacity_tokens / w.seq : 0}};
    j["memory_per_gpu_bytes"] = static_cast<int64_t>(e.nvidia_smi());
    j["per_gpu_bytes_band"] = e.per_gpu_bytes_band
        ? nlohmann::json::array({static_cast<int64_t>(e.per_gpu_bytes_band->first), static_cast<int64_t>(e.per_gpu_bytes_band->second)})
        : nlohmann::json(nullptr);
    j["host_bytes"] = static_cast<int64_t>(e.cpu_offload);
    if (stack) j["loss"] = to_string(w.loss), j["cp"] = w.par.cp;
    j["headroom"] = {{"fraction", headroom->fraction}, {"basis", headroom->basis}, {"keeps_error_band", headroom->keep_band}};
    if (fit) {
      j["free_fraction"] = fit->margin.free_fraction;
      j["required_headroom_fraction"] = fit->margin.required_fraction;
      j["required_headroom_bytes"] = static_cast<int64_t>(fit->margin.required_bytes);
      j["fits_without_headroom"] = fit->margin.fits_without_headroom;
    }
    j["fit_search"] = {{"first", search.first ? fit_step_json(*search.first) : nlohmann::json(nullptr)},
                       {"without_offload", search.without_offload ? fit_step_json(*search.without_offload) : nlohmann::json(nullptr)}};
    return print_json(j, "--model");
  }
  fmt::print("{}", fit_width(describe(model, w)));
  if (stack) fmt::print("Stack: {} ({}), {} loss.\n", stack->id, stack->name, to_string(w.loss));
  if (engine) fmt::print("Engine: {} ({}).\n", engine->id, engine->name);
  print_model_caveats(model);
  if (w.par.gpus() > 1)
    fmt::print("Split over {} GPUs: tp {} x pp {} x dp {}{}, ZeRO-{}. Figures are per GPU.\n", w.par.gpus(),
               w.par.tp, w.par.pp, w.par.dp, w.par.ep > 1 ? fmt::format(" (experts over ep {})", w.par.ep) : "",
               w.par.zero);
  fmt::print("\n");
  TextTable t({"group", "term", "per GPU", "how"});
  t.align_right({2});
  std::string last;
  for (const auto& term : e.terms) {
    t.add_row({term.group == last ? "" : term.group, term.name, format_bytes(term.bytes), term.formula});
    last = term.group;
  }
  t.add_separator();
  t.add_row({"total", "as nvidia-smi shows", format_bytes(e.nvidia_smi()), "what must fit on the card"});
  t.add_row({"", "reserved by PyTorch", format_bytes(e.reserved()), "torch.cuda.max_memory_reserved()"});
  t.add_row({"", "allocated by tensors", format_bytes(e.allocated()), "torch.cuda.max_memory_allocated()"});
  fmt::print("{}", t.render());
  if (e.per_gpu_bytes_band)
    fmt::print("{}", fit_width(fmt::format("Per GPU {}, 80% band {}–{} (published / predicted on runs the fit never saw).",
                                           format_bytes(e.nvidia_smi()), format_bytes(e.per_gpu_bytes_band->first),
                                           format_bytes(e.per_gpu_bytes_band->second))));
  if (e.cpu_offload > 0) fmt::print("Host RAM for offloaded or paged optimizer states: {} per GPU process (at most)\n", format_bytes(e.cpu_offload));
  if (gpu) {
    const std::string on = fmt::format("On {} ({}): ", gpu->name, format_bytes(fit->capacity_bytes));
    fmt::print("\n");
    const MemoryMargin& mg = fit->margin;
    if (fit->fits)
      fmt::print("{}", fit_width(on + fmt::format("fits, with {} ({:.0f}%) free; plans keep at least {:.0f}% free.",
                                                  format_bytes(mg.free_bytes), 100 * mg.free_fraction, 100 * mg.required_fraction)));
    else if (mg.fits_without_headroom)
      fmt::print("{}", fit_width(on + fmt::format("too close: {} ({:.0f}%) free, less than the {:.0f}% ({}) every plan keeps ({}).",
                                             format_bytes(mg.free_bytes), 100 * mg.free_fraction, 100 * mg.required_fraction,
                                             format_bytes(mg.required_bytes), headroom->basis)));
    else
      fmt::print("{}", fit_width(on + fmt::format("does NOT fit: short by {}, and plans keep {} more free beyond that.",
                                                  format_bytes(-fit->headroom_bytes), format_bytes(mg.required_bytes))));
    if (fit->max_batch && w.par.attention_dp)
      fmt::print("Largest number of concurrent sequences that fits: {} on each GPU, {} over the {} with attention data-parallel.\n",
                 *fit->max_batch, *fit->max_batch * w.par.tp, w.par.tp);
    else if (fit->max_batch)
      fmt::print("Largest {} that fits: {}.\n", w.training() ? "micro-batch" : "number of concurrent sequences", *fit->max_batch);
    else
      fmt::print("Not even one sequence of {} tokens fits.\n", w.seq);
    if (fit->max_seq)
      fmt::print("Longest sequence at batch {}: {} tokens{}.\n", w.micro_batch, *fit->max_seq,
                 fit->max_seq_capped ? " (the model's context limit)" : "");
    if (search.first) {
      const FitStep& s1 = *search.first;
      fmt::print("It fits on {} x {} with {} (per GPU {}{}).\n", s1.workload.par.gpus(), gpu->id, changes_text(s1),
                 format_bytes(s1.memory_per_gpu_bytes),
                 s1.host_bytes_per_node > 0 ? fmt::format("; {} of CPU memory per node", format_bytes(s1.host_bytes_per_node)) : "");
      if (search.without_offload && search.without_offload->workload.par.gpus() != s1.workload.par.gpus())
        fmt::print("Keeping everything on the GPUs: {} x {} with {} (per GPU {}).\n", search.without_offload->workload.par.gpus(),
                   gpu->id, changes_text(*search.without_offload), format_bytes(search.without_offload->memory_per_gpu_bytes));
    } else if (split) {
      fmt::print("It fits on {} x {} with tensor parallel {} (per GPU {}).\n", split->par.gpus(), gpu->id, split->par.tp,
                 format_bytes(estimate_memory(model, *split, eff).nvidia_smi()));
    } else if (!fit->fits) {
      fmt::print("No power-of-two split up to 4096 GPUs makes it fit this card with the headroom kept.\n");
    }
  }
  if (kv)
    fmt::print("{} budgets {:.1f}% of the card: after the weights{}{} its KV cache holds {} tokens ({}), {} sequences of {} tokens.\n",
               engine->id, kv->memory_fraction * 100,
               kv->weight_bytes_per_gpu != e.weights ? fmt::format(" (held as {} for its kernels)", format_bytes(kv->weight_bytes_per_gpu)) : "",
               kv->profile_peak_bytes > 0
                   ? fmt::format(" and a {} profiling peak{}", format_bytes(kv->profile_peak_bytes),
                                 kv->profile_sampler_bytes >= kv->profile_peak_bytes ? " (its sampler's, over the vocabulary)" : "")
                   : "",
               kv->kv_capacity_tokens, format_bytes(kv->kv_budget_bytes), w.seq > 0 ? kv->kv_capacity_tokens / w.seq : 0, w.seq);
  return 0;
}

}  // namespace

std::vector<Command> memory_commands() {
  return {{"memory", "Per-GPU memory breakdown, and whether it fits a GPU",
           [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
             auto f = std::make_shared<MemoryFlags>();
             add_workload_flags(sub, f->w);
             add_stack_flag(sub, f->w);
             sub.add_option("--engine", f->engine, "with --task infer: the serving engine whose KV-cache budget to show (default vllm)");
             sub.add_flag("--attention-dp", f->attention_dp,
                          "with --task infer: a mixture-of-experts model attention data-parallel over the --tp GPUs (each its own requests with every KV head)");
             sub.add_option("--gpu", f->gpu, "catalog GPU id: say whether it fits, and the largest batch");
             add_headroom_flag(sub, f->headroom);
             sub.add_flag("--json", f->json, "JSON output");
             sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_memory(ctx, *f); }; });
           }}};
}

}  // namespace gpuplan::cli
