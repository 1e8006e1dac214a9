// `gpuplan memory`: the per-GPU VRAM breakdown, and whether and how it fits on a given card.
#include <fmt/format.h>

#include "cli/common.h"
#include "cli/workload_flags.h"
#include "memory/fit.h"
#include "report/json_report.h"
#include "report/table.h"
#include "util/units.h"

namespace gpuplan::cli {

namespace {

struct MemoryFlags {
  WorkloadFlags w;
  std::string gpu;
  bool json = false;
};

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
  const Efficiency eff = gpu ? (*table)->for_gpu(*gpu) : (*table)->for_gpu(Gpu{});
  const MemoryEstimate e = estimate_memory(model, w, eff);
  std::optional<FitReport> fit;
  std::optional<Workload> split;
  if (gpu) {
    fit = check_fit(model, w, *gpu, eff);
    if (!fit->fits) split = smallest_fitting_split(model, w, *gpu, eff);
  }
  if (f.json) {
    nlohmann::json j = memory_json(model, w, e, gpu ? &*gpu : nullptr, fit, split);
    j["stack"] = stack ? nlohmann::json(stack->id) : nlohmann::json(nullptr);
    return print_json(j, "--model");
  }
  fmt::print("{}\n", describe(model, w));
  if (stack) fmt::print("Stack: {} ({}).\n", stack->id, stack->name);
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
  if (e.cpu_offload > 0) fmt::print("CPU memory for offloaded optimizer states: {}\n", format_bytes(e.cpu_offload));
  if (gpu) {
    fmt::print("\nOn {} ({}): ", gpu->name, format_bytes(fit->capacity_bytes));
    if (fit->fits)
      fmt::print("fits, with {} to spare.\n", format_bytes(fit->headroom_bytes));
    else
      fmt::print("does NOT fit: short by {}.\n", format_bytes(-fit->headroom_bytes));
    if (fit->max_batch)
      fmt::print("Largest {} that fits: {}.\n", w.training() ? "micro-batch" : "number of concurrent sequences", *fit->max_batch);
    else
      fmt::print("Not even one sequence of {} tokens fits.\n", w.seq);
    if (fit->max_seq)
      fmt::print("Longest sequence at batch {}: {} tokens{}.\n", w.micro_batch, *fit->max_seq,
                 fit->max_seq_capped ? " (the model's context limit)" : "");
    if (split)
      fmt::print("It fits on {} x {} with {} (per GPU {}).\n", split->par.gpus(), gpu->id,
                 w.training() ? "ZeRO-3 / FSDP full sharding" : fmt::format("tensor parallel {}", split->par.tp),
                 format_bytes(estimate_memory(model, *split, eff).nvidia_smi()));
    else if (!fit->fits)
      fmt::print("No power-of-two split up to 4096 GPUs makes it fit this card.\n");
  }
  return 0;
}

}  // namespace

std::vector<Command> memory_commands() {
  return {{"memory", "Per-GPU memory breakdown, and whether it fits a GPU",
           [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
             auto f = std::make_shared<MemoryFlags>();
             add_workload_flags(sub, f->w);
             add_stack_flag(sub, f->w);
             sub.add_option("--gpu", f->gpu, "catalog GPU id: say whether it fits, and the largest batch");
             sub.add_flag("--json", f->json, "JSON output");
             sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_memory(ctx, *f); }; });
           }}};
}

}  // namespace gpuplan::cli
