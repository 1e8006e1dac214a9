#include "validation/serving_rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "data/toml_document.h"
#include "memory/memory_model.h"
#include "perf/inference.h"
#include "serving/simulator.h"
#include "util/units.h"

namespace gpuplan {

namespace {

struct RowSetup {
  Workload w;
  Engine engine;
  InferenceRequest req;
  int64_t replicas = 1;  // data-parallel copies the published figure spans
  std::string percentile = "mean";
  std::string moe_backend;  // the MoE kernel backend the run selected, where it says
  bool total_tokens = false;  // throughput counts input and output tokens
};

Result<int64_t> optional_int(const TomlFields& f, const char* key, int64_t dflt) {
  auto r = f.optional_integer(key);
  if (!r) return r.error();
  return r->value_or(dflt);
}

Result<RowSetup> read_setup(const TomlFields& f, const ModelSpec& m) {
  RowSetup s;
  auto engine = f.string("engine");
  if (!engine) return engine.error();
  auto en = EngineCatalog::builtin().find(*engine, f.field("engine"));
  if (!en) return en.error();
  s.engine = *en;
  s.engine.time_scale = 1;  // the sourced figures; the fit sets its own
  // A benchmark that drives the engine from Python in its own process (vLLM's benchmark_throughput,
  // LLM.generate) has no API server streaming its tokens.
  auto client = f.optional_string("client");
  if (!client) return client.error();
  if (auto e = s.engine.use_client(client->value_or("server"), f.field("client"))) return *e;
  s.engine.quantized_matvec_sm_Bps = 0;
  s.engine.prefill_matmul_scale = 1;
  s.engine.per_query_head_kv_share = 1;
  s.engine.frontend_request_s = 0;
  auto tp = optional_int(f, "tp", 1), gpus = optional_int(f, "gpus", 1), pp = optional_int(f, "pp", 1);
  auto prompt = optional_int(f, "prompt", 1), output = optional_int(f, "output", 1), conc = optional_int(f, "concurrency", 1);
  for (auto* r : {&tp, &gpus, &pp, &prompt, &output, &conc})
    if (!*r) return r->error();
  // A layer split (llama.cpp --split-mode layer) runs the layers one GPU after another: for time it
  // is one GPU reading every weight, its prompt batches pipelined over the stages.
  s.w.task = Task::infer;
  s.w.par.tp = *tp;
  s.w.par.pp = *pp;
  s.replicas = std::max<int64_t>(1, *gpus / (*tp * *pp));
  s.req = {*prompt, *output, *conc};
  auto prec = f.optional_string("precision");
  auto quant = f.optional_string("quant");
  if (!prec) return prec.error();
  if (!quant) return quant.error();
  // A GGUF file type, where given, is the precise weight format.
  const std::string format = quant->has_value() && parse_precision(**quant) ? **quant : prec->value_or("bf16");
  auto p = parse_precision(format);
  if (!p) return make_error(f.field("precision"), "unknown precision '" + format + "'");
  s.w.precision = *p;
  auto kv = f.optional_string("kv_dtype");
  if (!kv) return kv.error();
  if (kv->has_value()) {
    auto k = parse_precision(**kv);
    if (!k || !is_kv_precision(*k)) return make_error(f.field("kv_dtype"), "unknown KV-cache precision");
    s.w.kv_precision = *k;
  }
  auto flash = f.optional_boolean("flash_attention");
  if (!flash) return flash.error();
  s.w.flash_attention = flash->value_or(true);
  // A build from before the engine's current prompt kernels (llama.cpp before MMQ by default).
  auto dequant = f.optional_boolean("prompt_dequantize");
  if (!dequant) return dequant.error();
  if (dequant->value_or(false)) s.engine.prompt_dequantize = true;
  // Builds from before the engine's grouped expert kernels (llama.cpp before mid-2025), before its
  // vectorised 16-bit mat-vec (llama.cpp before PR #9816, 2024-10) and before its grouped-query
  // decode kernel (TensorRT-LLM before XQA, v0.8): the engine as they ran.
  struct EarlierBuild {
    const char* key;
    bool (Engine::*recorded)() const;
    Engine (Engine::*as_built)() const;
    const char* what;
  };
  for (const EarlierBuild& b : {EarlierBuild{"moe_expert_loop", &Engine::has_expert_loop, &Engine::with_expert_loop, "expert-looping"},
                                EarlierBuild{"scalar_f16_matvec", &Engine::has_scalar_f16_matvec,
                                             &Engine::with_scalar_f16_matvec, "scalar-load 16-bit mat-vec"},
                                EarlierBuild{"per_query_head_decode", &Engine::has_per_query_head_decode,
                                             &Engine::with_per_query_head_decode, "per-query-head decode attention"}}) {
    auto on = f.optional_boolean(b.key);
    if (!on) return on.error();
    if (!on->value_or(false)) continue;
    if (!(s.engine.*b.recorded)())
      return make_error(f.field(b.key), "engine '" + s.engine.id + "' records no " + b.what + " build");
    s.engine = (s.engine.*b.as_built)();
  }
  // A version whose default share of the card predates the engine's current rule (SGLang before
  // its memory-reserve heuristic): that version's constant.
  auto fraction = f.optional_number_between("memory_fraction", 0.05, 1);
  if (!fraction) return fraction.error();
  if (*fraction) {
    s.engine.gpu_memory_utilization = **fraction;
    s.engine.memory_reserve = {};
  }
  s.w.seq = s.req.prompt_tokens + s.req.output_tokens;
  if (auto e = s.w.validate(m)) return make_error(f.field(e->field), e->message);
  // Batch limits the run set itself (TensorRT-LLM's --max_batch_size and --max_num_tokens).
  for (auto [key, out, small] : {std::tuple{"max_num_seqs", &s.engine.max_num_seqs, &s.engine.small_gpu_max_num_seqs},
                                 std::tuple{"max_batched_tokens", &s.engine.max_batched_tokens, &s.engine.small_gpu_max_batched_tokens}}) {
    auto v = f.optional_integer(key);
    if (!v) return v.error();
    if (!v->has_value()) continue;
    if (**v < 1 || **v > (int64_t{1} << 24)) return make_error(f.field(key), "must be between 1 and 16M");
    *out = **v;
    *small = 0;  // the run's own limit, on any card
  }
  // A run with attention data-parallel over its tp GPUs (TensorRT-LLM enable_attention_dp, SGLang
  // --enable-dp-attention).
  auto adp = f.optional_boolean("attention_dp");
  if (!adp) return adp.error();
  if (adp->value_or(false))
    if (auto e = s.engine.use_attention_dp(s.w, m, "attention_dp")) return make_error(f.field(e->field), e->message);
  auto moe = f.optional_string("moe_backend");
  if (!moe) return moe.error();
  s.moe_backend = moe->value_or("");
  if (moe->has_value() && s.moe_backend.empty()) return make_error(f.field("moe_backend"), "must name a backend");
  auto pct = f.optional_string("percentile");
  if (!pct) return pct.error();
  s.percentile = pct->value_or("mean");
  if (s.percentile != "mean" && s.percentile != "p50" && s.percentile != "p90" && s.percentile != "p99")
    return make_error(f.field("percentile"), "must be mean, p50, p90 or p99");
  auto kind = f.optional_string("throughput_kind");
  if (!kind) return kind.error();
  const std::string k = kind->value_or("output");
  s.total_tokens = k.rfind("total", 0) == 0 || k.find("input+output") != std::string::npos;
  return s;
}

double pick(const Percentiles& p, const std::string& which) {
  return which == "p50" ? p.p50 : which == "p90" ? p.p90 : which == "p99" ? p.p99 : p.mean;
}

// How the run loaded the engine: a concurrency without a rate (or with "inf") is a closed loop of
// clients, "inf" alone every request at once; `load` false, one batch or request.
std::string load_kind(const toml::table& t, bool load) {
  if (!load) return "batch";
  const toml::node* rate = t.get("request_rate");
  const bool burst = rate && rate->is_string();
  if (t.contains("concurrency") && (!rate || burst)) return "concurrency";
  return burst ? "burst" : "request_rate";
}

// Rows at a request rate ("inf": every request at once) or a client concurrency on a
// continuous-batching engine: the load simulated on one replica.
Result<double> simulated(const TomlFields& f, const RowSetup& s, const ModelSpec& m, const Gpu& gpu, const Efficiency& eff,
                         const std::string& metric) {
  const Cluster cluster = default_cluster(gpu);
  const InferenceMemory mem = inference_memory(m, s.w, s.req, gpu, eff, s.engine);
  ServingSetup setup = setup_for(s.engine, gpu, step_cost(m, s.w, gpu, eff, cluster, s.engine), mem.kv_capacity_tokens, m.max_position);
  auto n = optional_int(f, "num_prompts", 0);
  if (!n) return n.error();
  Load load;
  const toml::node* rate = f.table().get("request_rate");
  const bool burst = rate && rate->is_string();
  if (burst && rate->value<std::string>() != "inf") return make_error(f.field("request_rate"), "must be a number or \"inf\"");
  const double rps = rate && !burst ? rate->value<double>().value_or(0) : 0;
  if (rate && !burst && !(rps > 0)) return make_error(f.field("request_rate"), "must be positive");
  const bool closed = load_kind(f.table(), true) == "concurrency";
  const int64_t users = std::max<int64_t>(1, s.req.concurrency / s.replicas);
  const int64_t count = std::clamp<int64_t>(*n > 0 ? *n / s.replicas : closed ? std::max<int64_t>(100, 8 * users) : 1000, 1, 4000);
  if (closed) {
    load.users = users;
    load.ramp_s = estimate_inference(m, s.w, s.req, gpu, eff, cluster, s.engine).e2e_latency_s;
    load.requests.assign(static_cast<size_t>(count), SimRequest{0, s.req.prompt_tokens, s.req.output_tokens});
  } else {
    load.requests = poisson_arrivals(count, rps / static_cast<double>(s.replicas), s.req.prompt_tokens, s.req.output_tokens, 1);
  }
  // ShareGPT runs (vllm bench serve and its kin) send chat lengths, not the means every time.
  if (f.table()["dataset"].value_or(std::string()).rfind("ShareGPT", 0) == 0)
    draw_chat_lengths(load.requests, s.req.prompt_tokens, s.req.output_tokens, 1);
  auto steps = optional_int(f, "scheduler_steps", 1);
  if (!steps) return steps.error();
  if (*steps < 1 || *steps > 1024) return make_error(f.field("scheduler_steps"), "must be between 1 and 1024");
  setup.scheduler_steps = *steps;
  auto r = simulate_serving(setup, load);
  if (!r) return make_error(f.field("prompt"), r.error().message);
  if (metric == "ttft_s") return pick(r->ttft_s, s.percentile);
  if (metric == "tpot_s") return pick(r->tpot_s, s.percentile);
  if (metric == "e2e_latency_s") return pick(r->e2e_s, s.percentile);
  if (metric == "requests_per_s") return r->requests_per_s * static_cast<double>(s.replicas);
  if (metric == "throughput_tokens_per_s") {
    const double scale = s.total_tokens ? static_cast<double>(s.req.prompt_tokens + s.req.output_tokens) / static_cast<double>(s.req.output_tokens) : 1;
    return r->throughput_tokens_per_s * scale * static_cast<double>(s.replicas);
  }
  return make_error(f.field("metric"), "unknown serving metric '" + metric + "'");
}

// Single requests and static batches (benchmarks that send a batch and time it).
Result<double> estimated(const TomlFields& f, const RowSetup& s, const ModelSpec& m, const Gpu& gpu, const Efficiency& eff,
                         const std::string& metric) {
  const InferenceEstimate e = estimate_inference(m, s.w, s.req, gpu, eff, default_cluster(gpu), s.engine);
  if (metric == "tokens_per_s") return e.output_tokens_per_s;
  if (metric == "prefill_tokens_per_s") return e.prefill_tokens_per_s;
  if (metric == "ttft_s") return e.ttft_s;
  if (metric == "tpot_s") return e.tpot_s;
  if (metric == "e2e_latency_s") return e.e2e_latency_s;
  if (metric == "throughput_tokens_per_s") {
    const double c = static_cast<double>(s.req.concurrency), out = static_cast<double>(s.req.output_tokens);
    const double tokens = s.total_tokens ? c * static_cast<double>(s.req.prompt_tokens) + c * out : c * out;
    return tokens / e.e2e_latency_s * static_cast<double>(s.replicas);
  }
  return make_error(f.field("metric"), "unknown inference metric '" + metric + "'");
}

// What the engine allocates: the weights per GPU, and the KV cache (its budget, or llama.cpp's
// n_ctx cells).
Result<double> memory(const TomlFields& f, const RowSetup& s, const ModelSpec& m, const Gpu& gpu, const Efficiency& eff,
                      const std::string& metric) {
  const InferenceMemory mem = inference_memory(m, s.w, s.req, gpu, eff, s.engine);
  if (metric == "weight_memory_gib") return mem.weight_bytes_per_gpu / kGiB;
  auto n_ctx = optional_int(f, "n_ctx", 0);
  if (!n_ctx) return n_ctx.error();
  if (*n_ctx > 0) return mem.kv_bytes_per_token * static_cast<double>(*n_ctx) / kGiB;
  return mem.kv_budget_bytes / kGiB;
}

// A prompt cannot be prefilled faster than the GPUs' dense tensor rate in its compute precision
// allows for two FLOPs per active parameter per token (a static batch's prompts all before its first token; under
// load, at least the request's own): a published figure beyond that means the row does not describe
// the run (a shorter prompt, another unit), whatever the model.
std::string beats_peak(const RowSetup& s, const ModelSpec& m, const Gpu& gpu, const std::string& metric, double published,
                       bool under_load) {
  if (metric != "ttft_s" && metric != "prefill_tokens_per_s") return "";
  // The dense tensor rate of the precision the GEMMs run in (weight-only formats compute in 16 bits,
  // NVFP4 on Blackwell in FP4), at its fastest: 16-bit GEMMs may accumulate in 16 bits where the
  // card does that faster (GeForce; llama.cpp's cuBLAS path does).
  const Precision cp = gpu.gemm_precision(s.w.precision);
  double peak = gpu.peak_matmul_flops(cp);
  if (cp == Precision::fp16 || cp == Precision::bf16) peak = std::max({peak, gpu.fp16_flops, gpu.bf16_flops, gpu.fp16_acc16_flops});
  if (!(peak > 0)) return "";
  const double flops_per_s = peak * static_cast<double>(s.w.par.tp);
  const double per_token = 2 * static_cast<double>(m.active_parameters());
  const double tokens = static_cast<double>(s.req.prompt_tokens * (under_load ? 1 : s.req.concurrency));
  const double floor_s = tokens * per_token / flops_per_s;
  if (metric == "ttft_s" && published < floor_s)
    return fmt::format("the published time to first token ({:.4g} s) is below the {:.4g} s that {} prompt tokens take at {}'s peak "
                       "dense rate ({:.0f} TFLOP/s x {}), so the row's shape is not the run's",
                       published, floor_s, static_cast<int64_t>(tokens), gpu.id, peak / 1e12, s.w.par.tp);
  if (metric == "prefill_tokens_per_s" && published > flops_per_s / per_token)
    return fmt::format("the published prefill rate ({:.4g} tokens/s) exceeds the {:.4g} tokens/s of {}'s peak dense rate "
                       "({:.0f} TFLOP/s x {}), so the row's shape is not the run's",
                       published, flops_per_s / per_token, gpu.id, peak / 1e12, s.w.par.tp);
  return "";
}

}  // namespace

Result<ValidationRow> serving_row(const toml::table& t, const std::string& where, const ModelSpec& m, const Gpu& gpu,
                                  const Efficiency& eff, ValidationRow row) {
  TomlFields f(t, where);
  auto metric = f.string("metric");
  if (!metric) return metric.error();
  auto s = read_setup(f, m);
  if (!s) return s.error();
  row.engine = s->engine.id;
  row.metric = *metric + (t.contains("percentile") ? " " + s->percentile : "");
  for (const std::string& why : {s->engine.unsupported(gpu, s->w.precision),
                                 s->moe_backend.empty() || !m.is_moe() ? std::string() : s->engine.unmodelled_moe_backend(s->moe_backend, gpu, s->w.precision)})
    if (!why.empty()) {
      row.refused = "gpuplan refuses: " + why;
      return row;
    }
  // A load generator holding a fixed concurrency (genai-perf, AIPerf) is a closed loop of users.
  const bool fixed_concurrency = f.table()["load_tool"].value_or(std::string()).find("fixed concurrency") != std::string::npos;
  const bool load = t.contains("request_rate") ||
                    (t.contains("concurrency") && s->engine.continuous_batching && f.table()["batching"].value_or(std::string()) != "static" &&
                     (*metric == "throughput_tokens_per_s" || t.contains("percentile") || t.contains("num_prompts") || fixed_concurrency));
  if (std::string why = beats_peak(*s, m, gpu, *metric, row.published, load); !why.empty()) {
    row.refused = why;
    return row;
  }
  if (*metric == "weight_memory_gib" || *metric == "kv_cache_gib") {
    auto v = memory(f, *s, m, gpu, eff, *metric);
    if (!v) return v.error();
    row.predicted = *v;
    return row;
  }
  // Times and rates: predicted under the sourced engine (time scale 1), and again under any scale
  // the fit tries.
  auto at = [table = std::make_shared<const toml::table>(t), where, m, gpu, eff, setup = *s, metric = *metric,
             load](const ServingKnobs& k) -> Result<double> {
    const TomlFields tf(*table, where);
    RowSetup scaled = setup;
    scaled.engine.time_scale = k.time_scale;
    if (scaled.engine.quantized_matvec_latency_bound) scaled.engine.quantized_matvec_sm_Bps = k.matvec_sm_Bps;
    if (scaled.engine.prefill_matmul_fitted) scaled.engine.prefill_matmul_scale = k.prefill_matmul_scale;
    if (scaled.engine.per_query_head_decode) scaled.engine.per_query_head_kv_share = k.per_query_head_kv_share;
    scaled.engine.frontend_request_s = k.frontend_request_s;
    return load ? simulated(tf, scaled, m, gpu, eff, metric) : estimated(tf, scaled, m, gpu, eff, metric);
  };
  auto v = at(ServingKnobs{});
  if (!v) return v.error();
  row.predicted = *v;
  row.kind = "serving";
  row.serving_rate = metric->find("per_s") != std::string::npos;
  row.load = load_kind(t, load);
  row.serving_matvec_bound = s->engine.matvec_sm_bound_applies(gpu, s->w.precision);
  row.serving_prefill_fitted = s->engine.prefill_matmul_fitted;
  row.serving_per_query_head = s->engine.per_query_head_decode && !m.is_mla() && m.q_dim() > m.kv_dim();
  row.serving_frontend = load && s->engine.frontend_seq_step_s > 0;
  row.serving_at = [at](const ServingKnobs& k) {
    auto r = at(k);
    return r ? *r : std::nan("");
  };
  return row;
}

}  // namespace gpuplan
