// `gpuplan plan`, `gpuplan cost` and `gpuplan advise`: the layout search, rent-or-buy, and the
// ranked recommendation for a workload file.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <fstream>
#include <unistd.h>

#include "advise/advisor.h"
#include "cli/common.h"
#include "cli/workload_flags.h"
#include "cost/cost_model.h"
#include "data/embedded.h"
#include "memory/fit.h"
#include "perf/phase_roofline.h"
#include "report/html_report.h"
#include "report/table.h"
#include "util/text_file.h"
#include "util/units.h"

namespace gpuplan::cli {

namespace {

using nlohmann::json;

// Shows progress on a terminal once a search has run for a second.
class Progress {
 public:
  explicit Progress(const char* what) : what_(what), start_(std::chrono::steady_clock::now()), tty_(isatty(2)) {}
  ~Progress() {
    if (shown_) fmt::print(stderr, "\r{:60}\r", "");
  }
  std::function<void(int64_t, int64_t)> callback() {
    return [this](int64_t done, int64_t total) {
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      if (!tty_ || s < 1.0) return;
      shown_ = true;
      fmt::print(stderr, "\r{}: {} of {} layouts ({:.0f}%)", what_, done, total, total ? 100.0 * done / total : 100.0);
    };
  }

 private:
  const char* what_;
  std::chrono::steady_clock::time_point start_;
  bool tty_, shown_ = false;
};

json plan_json(const PlanCandidate& c) {
  const Workload& w = c.workload;
  return {{"gpus", w.par.gpus()}, {"tp", w.par.tp}, {"pp", w.par.pp}, {"dp", w.par.dp}, {"ep", w.par.ep}, {"micro_batch", w.micro_batch},
          {"grad_accum", w.grad_accum}, {"zero", w.par.zero}, {"recompute", to_string(w.recompute_spec())},
          {"virtual_stages", w.par.virtual_stages}, {"stack", c.estimate.stack}, {"step_time_s", c.estimate.step_time_s}, {"mfu", c.estimate.mfu},
          {"tokens_per_s", c.estimate.tokens_per_s}, {"memory_per_gpu_bytes", static_cast<int64_t>(c.memory_per_gpu_bytes)},
          {"time_to_train_s", c.estimate.time_to_train_s ? json(*c.estimate.time_to_train_s) : json(nullptr)}};
}

Result<std::pair<int64_t, int64_t>> parse_range(const std::string& s) {
  const auto dots = s.find("..");
  try {
    size_t used = 0;
    if (dots == std::string::npos) {
      const long long n = std::stoll(s, &used);
      if (used != s.size()) throw std::invalid_argument("");
      if (n <= 0 || n > (1 << 20)) return make_error("--gpus", "must be between 1 and 1048576");
      return std::pair<int64_t, int64_t>{n, n};
    }
    const long long a = std::stoll(s.substr(0, dots), &used);
    if (used != dots) throw std::invalid_argument("");
    const std::string rest = s.substr(dots + 2);
    const long long b = std::stoll(rest, &used);
    if (used != rest.size()) throw std::invalid_argument("");
    if (a <= 0 || b < a || b > (1 << 20)) return make_error("--gpus", "range must be A..B with 1 <= A <= B <= 1048576");
    return std::pair<int64_t, int64_t>{a, b};
  } catch (const std::exception&) {
    return make_error("--gpus", "must be a count or a range such as 8..16384, not '" + s + "'");
  }
}

// ---- plan ----------------------------------------------------------------------------------
struct PlanFlags {
  WorkloadFlags w;
  std::string gpu, gpus = "8";
  int64_t global_batch = 0, gpus_per_node = 0;
  double network_gbps = 0, tokens = 0;
  bool json = false;
};

int run_plan(Context& ctx, PlanFlags f) {
  auto range = parse_range(f.gpus);
  if (!range) return fail(range.error());
  f.w.gpus = 1;
  auto built = build_workload(f.w);
  if (!built) return fail(built.error());
  auto& [m, base] = *built;
  if (!base.training()) return fail(make_error("--task", "plan searches training layouts; for serving use `gpuplan advise`"));
  auto stack = apply_stack(f.w, base);
  if (!stack) return fail(stack.error());
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto g = (*catalog)->find(f.gpu);
  if (!g) return fail(g.error());
  auto table = ctx.efficiency();
  if (!table) return fail(table.error());
  if (f.global_batch < 0) return fail(make_error("--global-batch", "must be positive"));
  Cluster cluster = default_cluster(*g);
  if (f.gpus_per_node > 0) cluster.gpus_per_node = f.gpus_per_node;
  if (f.network_gbps > 0) cluster.network_Bps = f.network_gbps * 1e9 / 8;
  PlanSpace space;
  space.min_gpus = range->first;
  space.max_gpus = range->second;
  space.global_batch = f.global_batch;
  if (f.tokens > 0) space.tokens = f.tokens;
  if (f.w.ep == 0 && m.is_moe())
    for (int64_t ep = 1; ep <= std::min<int64_t>(range->second, m.experts); ep *= 2) space.expert_parallel.push_back(ep);
  Progress progress("planning");
  const PlanResult r = plan_training(m, base, *g, (*table)->for_gpu(*g, *stack), *stack, cluster, space, progress.callback());
  if (f.json) {
    json ru = json::array(), per = json::array();
    for (const auto& c : r.runners_up) ru.push_back(plan_json(c));
    for (const auto& c : r.best_per_count) per.push_back(plan_json(c));
    return print_json(json{{"schema_version", 1}, {"model", m.id}, {"gpu", g->id}, {"stack", stack->id},
                            {"parameters", m.total_parameters()}, {"active_parameters", m.active_parameters()},
                            {"assumed_dense", m.assumed_dense}, {"notes", m.notes},
                            {"best", r.best ? plan_json(*r.best) : json(nullptr)}, {"runners_up", ru},
                            {"per_gpu_count", per}, {"configs_evaluated", r.configs_evaluated},
                            {"configs_fitting", r.configs_fitting}}, "--model");
  }
  fmt::print("{} on {} under {} ({}): {} layouts evaluated, {} fit in memory\n", m.name, g->id, stack->id, stack->name,
             r.configs_evaluated, r.configs_fitting);
  print_model_caveats(m);
  fmt::print("\n");
  if (!r.best) {
    fmt::print("No layout fits on {}..{} x {}. Try more GPUs, a larger card, LoRA/QLoRA or a shorter sequence.\n",
               range->first, range->second, g->id);
    return 0;
  }
  TextTable t({"rank", "GPUs", "tp", "pp", "dp", "ep", "micro-batch", "ZeRO", "recompute", "v", "step", "MFU", "memory/GPU"});
  t.align_right({0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12});
  auto row = [&](const std::string& rank, const PlanCandidate& c) {
    const Workload& w = c.workload;
    t.add_row({rank, std::to_string(w.par.gpus()), std::to_string(w.par.tp), std::to_string(w.par.pp), std::to_string(w.par.dp),
               std::to_string(w.par.ep), std::to_string(w.micro_batch), std::to_string(w.par.zero), to_string(w.recompute_spec()), std::to_string(w.par.virtual_stages),
               format_seconds(c.estimate.step_time_s), fmt::format("{:.1f}%", 100 * c.estimate.mfu), format_bytes(c.memory_per_gpu_bytes)});
  };
  row("best", *r.best);
  for (size_t i = 0; i < r.runners_up.size(); ++i) row(std::to_string(i + 2), r.runners_up[i]);
  if (r.best_per_count.size() > 1) {
    t.add_separator();
    for (const auto& c : r.best_per_count) row("@" + std::to_string(c.workload.par.gpus()), c);
  }
  fmt::print("{}", t.render());
  return 0;
}

// ---- cost ----------------------------------------------------------------------------------
struct CostFlags {
  std::string gpu;
  int64_t gpus = 1;
  double hours = 730, years = 0, kwh = -1, pue = 0;
  bool json = false;
};

int run_cost(Context& ctx, const CostFlags& f) {
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto g = (*catalog)->find(f.gpu);
  if (!g) return fail(g.error());
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  if (f.gpus <= 0 || f.gpus > (1 << 20)) return fail(make_error("--gpus", "must be between 1 and 1048576"));
  if (!(f.hours > 0) || f.hours > 744) return fail(make_error("--hours-per-month", "must be between 0 and 744"));
  if (f.years < 0 || f.years > 30) return fail(make_error("--years", "must be between 0 and 30"));
  if (f.pue != 0 && (f.pue < 1 || f.pue > 5)) return fail(make_error("--pue", "must be between 1 and 5"));
  if (f.kwh != -1 && (f.kwh < 0 || f.kwh > 10)) return fail(make_error("--electricity", "must be between 0 and 10 USD/kWh"));
  CostInputs in;
  in.gpus = f.gpus;
  in.hours_per_month = f.hours;
  in.own = (*prices)->ownership();
  if (f.years > 0) in.own.lifetime_years = f.years;
  if (f.pue > 0) in.own.pue = f.pue;
  if (f.kwh >= 0) in.own.electricity_usd_per_kwh = f.kwh;
  const GpuPrice* p = (*prices)->find(g->id);
  const CostComparison c = compare_rent_buy(*g, p, in);
  if (c.cheaper.empty()) return fail(make_error("--gpu", "no cloud or purchase price on file for " + g->id + " (add one with --prices)"));
  if (f.json) {
    return print_json(json{{"schema_version", 1}, {"gpu", g->id}, {"gpus", f.gpus}, {"hours_per_month", f.hours},
                            {"years", in.own.lifetime_years}, {"cheaper", c.cheaper},
                            {"break_even_months", c.break_even_months ? json(*c.break_even_months) : json(nullptr)},
                            {"break_even_utilisation", c.break_even_utilisation ? json(*c.break_even_utilisation) : json(nullptr)},
                            {"cloud_cost_usd", c.cloud_usd_per_gpu_hour ? json(c.cloud_cost_usd) : json(nullptr)},
                            {"own_cost_usd", c.purchase_usd_per_gpu ? json(c.own_cost_usd) : json(nullptr)},
                            {"capex_usd", c.capex_usd}, {"power_usd_per_month", c.power_usd_per_month},
                            {"cloud_usd_per_month", c.cloud_usd_per_month}, {"cloud_provider", c.cloud_provider},
                            {"cloud_usd_per_gpu_hour", c.cloud_usd_per_gpu_hour ? json(*c.cloud_usd_per_gpu_hour) : json(nullptr)},
                            {"purchase_usd_per_gpu", c.purchase_usd_per_gpu ? json(*c.purchase_usd_per_gpu) : json(nullptr)}}, "--gpu");
  }
  fmt::print("{} x {}, busy {:.0f} hours a month, over {:.0f} years\n\n", f.gpus, g->name, f.hours, in.own.lifetime_years);
  if (c.cloud_usd_per_gpu_hour)
    fmt::print("rent  {} ({} at {}/GPU-hour; {} a month)\n", format_usd(c.cloud_cost_usd), c.cloud_provider,
               format_usd(*c.cloud_usd_per_gpu_hour), format_usd(c.cloud_usd_per_month));
  else
    fmt::print("rent  no cloud price on file\n");
  if (c.purchase_usd_per_gpu)
    fmt::print("buy   {} (cards and servers {}, power and cooling {} a month at PUE {:.2f}, {}/kWh)\n", format_usd(c.own_cost_usd),
               format_usd(c.capex_usd), format_usd(c.power_usd_per_month), in.own.pue, format_usd(in.own.electricity_usd_per_kwh));
  else
    fmt::print("buy   no purchase price on file\n");
  fmt::print("\ncheaper: {}\n", c.cheaper == "buy" ? "buy" : "rent in the cloud");
  if (c.break_even_months) fmt::print("buying breaks even after {:.1f} months at this use\n", *c.break_even_months);
  if (c.break_even_utilisation)
    fmt::print("break-even utilisation over {:.0f} years: {:.0f}% of the month busy\n", in.own.lifetime_years, 100 * *c.break_even_utilisation);
  return 0;
}

// ---- advise --------------------------------------------------------------------------------
struct AdviseFlags {
  std::string file, html;
  bool json = false, markdown = false;
};

json candidate_json(const Candidate& c) {
  json jobs = json::array(), services = json::array();
  for (const auto& j : c.jobs)
    jobs.push_back({{"name", j.name}, {"plan", plan_json(j.plan)}, {"time_s", j.time_s}, {"cost_usd", j.cost_usd}, {"bottleneck", j.bottleneck}});
  for (const auto& s : c.services)
    services.push_back({{"name", s.name}, {"tp", s.option.tp}, {"concurrency_per_replica", s.option.concurrency},
                        {"replicas_peak", s.option.replicas_peak}, {"replicas_min", s.option.replicas_min},
                        {"gpus_peak", s.option.gpus_peak}, {"gpus_min", s.option.gpus_min}, {"ttft_s", s.option.ttft_s},
                        {"tpot_s", s.option.tpot_s}, {"usd_per_month", s.usd_per_month},
                        {"usd_per_million_tokens", s.usd_per_million_tokens}});
  json j = {{"gpu", c.gpu}, {"tier", to_string(c.tier)}, {"mode", c.mode}};
  if (!c.why.empty()) {
    j["why"] = c.why;
    return j;
  }
  j.update({{"gpus", c.gpus}, {"total_cost_usd", c.total_cost_usd}, {"capex_usd", c.capex_usd}, {"usd_per_month", c.usd_per_month},
            {"training_time_s", c.training_time_s}, {"pareto", c.pareto},
            {"break_even_months", c.break_even_months ? json(*c.break_even_months) : json(nullptr)},
            {"jobs", jobs}, {"services", services}});
  return j;
}

int64_t today_days() {
  return static_cast<int64_t>(std::time(nullptr) / 86400);
}

int run_advise(Context& ctx, const AdviseFlags& f) {
  std::string text, origin;
  if (f.file.empty()) {
    text = std::string(data::embedded_file("qlora-7b-small-team.toml"));
    origin = "examples/qlora-7b-small-team.toml";
  } else {
    auto read = read_text_file(f.file, "workload file");
    if (!read) return fail(read.error());
    text = std::move(read).value();
    origin = f.file;
  }
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  auto req = parse_workload_file(text, origin, today_days(), (*prices)->ownership());
  if (!req) return fail(req.error());
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto table = ctx.efficiency();
  if (!table) return fail(table.error());
  Progress progress("advising");
  const Advice a = advise(*req, **catalog, **prices, **table, progress.callback());
  if (!f.html.empty()) {
    ReportFigures fig;
    MemoryEstimate mem;
    RooflineReport roof;
    if (a.recommendation) {
      const Gpu g = *(*catalog)->find(a.recommendation->gpu);
      const Efficiency eff = (*table)->for_gpu(g);
      fig.capacity_bytes = usable_memory_bytes(g);
      if (!a.recommendation->jobs.empty()) {
        const TrainingJob& job = req->training.front();
        const Workload& w = a.recommendation->jobs.front().plan.workload;
        mem = estimate_memory(job.model, w, eff);
        roof = roofline(job.model, w, g, eff, Phase::train);
        fig.memory_title = fmt::format("{} ({} on {} x {})", job.name, job.model.name, w.par.gpus(), g.id);
        fig.roofline_title = fmt::format("{} training step on {}", job.model.name, g.name);
      } else {
        const InferenceService& s = req->inference.front();
        Workload w = s.workload;
        w.par.tp = a.recommendation->services.front().option.tp;
        w.micro_batch = a.recommendation->services.front().option.concurrency;
        w.seq = s.target.prompt_tokens + s.target.output_tokens;
        mem = estimate_memory(s.model, w, eff);
        roof = roofline(s.model, w, g, eff, Phase::decode);
        fig.memory_title = fmt::format("{} ({} replica on {} x {})", s.name, s.model.name, w.par.tp, g.id);
        fig.roofline_title = fmt::format("{} decode step on {}", s.model.name, g.name);
      }
      fig.memory = &mem;
      fig.roofline = &roof;
    }
    std::ofstream out(f.html, std::ios::binary);
    if (!out) return fail(make_error("--html", "cannot write " + f.html));
    out << render_html(*req, a, fig);
    if (!out) return fail(make_error("--html", "write to " + f.html + " failed"));
  }
  if (f.json) {
    json cands = json::array(), rej = json::array();
    for (const auto& c : a.candidates) cands.push_back(candidate_json(c));
    for (const auto& c : a.rejected) rej.push_back(candidate_json(c));
    json rec = nullptr;
    if (a.recommendation) {
      rec = candidate_json(*a.recommendation);
      rec["reasons"] = a.reasons;
    }
    return print_json(json{{"schema_version", 1}, {"workload", req->name}, {"horizon_years", a.horizon_years},
                            {"recommendation", rec}, {"candidates", cands}, {"rejected", rej},
                            {"configs_evaluated", a.configs_evaluated}}, "workload");
  }
  if (f.markdown) {
    fmt::print("{}", render_markdown(*req, a));
    return 0;
  }
  fmt::print("{}\n\n", req->name);
  if (a.recommendation) {
    const Candidate& r = *a.recommendation;
    fmt::print("Recommendation: {} x {} ({}), {}\n", r.gpus, r.gpu, to_string(r.tier), r.mode == "buy" ? "buy" : "rent");
    for (const auto& reason : a.reasons) fmt::print("  - {}\n", reason);
  } else {
    fmt::print("No GPU option meets every constraint; the reasons are below.\n");
  }
  TextTable t({"GPU", "tier", "mode", "GPUs", "total cost", "training time", ""});
  t.align_right({3, 4, 5});
  for (size_t i = 0; i < a.candidates.size() && i < 12; ++i) {
    const Candidate& c = a.candidates[i];
    t.add_row({c.gpu, to_string(c.tier), c.mode, std::to_string(c.gpus), format_usd(c.total_cost_usd),
               c.training_time_s > 0 ? format_seconds(c.training_time_s) : "-", c.pareto ? "Pareto" : ""});
  }
  fmt::print("\nCandidates, cheapest first ({} of {}):\n{}", std::min<size_t>(12, a.candidates.size()), a.candidates.size(), t.render());
  fmt::print("\nRejected ({}):\n", a.rejected.size());
  for (const auto& c : a.rejected) fmt::print("  {} ({}): {}\n", c.gpu, c.mode, c.why);
  if (!f.html.empty()) fmt::print("\nReport written to {}\n", f.html);
  return 0;
}

}  // namespace

std::vector<Command> advise_commands() {
  return {
      {"plan", "Search every parallel layout for the fastest training plan that fits",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<PlanFlags>();
         f->w.task = "pretrain";
         add_workload_flags(sub, f->w);
         add_stack_flag(sub, f->w);
         sub.remove_option(sub.get_option("--gpus"));
         sub.remove_option(sub.get_option("--dp"));
         sub.add_option("--gpus", f->gpus, "GPU count or range of powers of two, e.g. 8..16384")->capture_default_str();
         sub.add_option("--gpu", f->gpu, "catalog GPU id")->required();
         sub.add_option("--global-batch", f->global_batch, "sequences per step (default 4 x GPUs)");
         sub.add_option("--tokens", f->tokens, "tokens to train on, for time to train");
         sub.add_option("--gpus-per-node", f->gpus_per_node, "GPUs per node");
         sub.add_option("--network-gbps", f->network_gbps, "network per GPU, Gb/s");
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_plan(ctx, *f); }; });
       }},
      {"cost", "Rent or buy: cloud cost against owning, and the break-even point",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<CostFlags>();
         sub.add_option("--gpu", f->gpu, "catalog GPU id")->required();
         sub.add_option("--gpus", f->gpus, "how many")->capture_default_str();
         sub.add_option("--hours-per-month", f->hours, "hours a month the GPUs are busy (730 = always)")->capture_default_str();
         sub.add_option("--years", f->years, "comparison horizon and depreciation period (default from prices.toml)");
         sub.add_option("--electricity", f->kwh, "USD per kWh (default from prices.toml)");
         sub.add_option("--pue", f->pue, "power usage effectiveness (default from prices.toml)");
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_cost(ctx, *f); }; });
       }},
      {"advise", "Ranked, costed hardware recommendation for a workload file",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<AdviseFlags>();
         sub.add_option("workload", f->file, "workload TOML (default: examples/qlora-7b-small-team.toml)");
         sub.add_flag("--json", f->json, "JSON output");
         sub.add_flag("--markdown", f->markdown, "Markdown output");
         sub.add_option("--html", f->html, "also write a self-contained HTML report with charts")->option_text("FILE");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_advise(ctx, *f); }; });
       }},
  };
}

}  // namespace gpuplan::cli
