#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/engine.h"
#include "hardware/catalog.h"
#include "model/presets.h"
#include "perf/inference.h"
#include "perf/operations.h"
#include "perf/roofline.h"
#include "util/builtin_lookup_for_tests.h"

namespace gpuplan {

namespace {
Engine engine(const char* id) { return *EngineCatalog::builtin().find(id); }
using testing_support::gpu;

// One request's prompt on one card, timed under an engine's sourced figures (time scale 1).
struct Prompt {
  ModelSpec m;
  Gpu g;
  Efficiency eff;
  Workload w;
  Prompt(const char* model, const char* gpu_id, Precision p)
      : m(*Presets::builtin().find(model)), g(gpu(gpu_id)), eff(EfficiencyTable::builtin().for_gpu(g)) {
    w.task = Task::infer;
    w.precision = p;
  }
  InferenceEstimate run(int64_t prompt, Engine e) const {
    e.time_scale = 1;
    return estimate_inference(m, w, {prompt, 1, 1}, g, eff, default_cluster(g), e);
  }
  double ttft(int64_t prompt, const Engine& e) const { return run(prompt, e).ttft_s; }
};
}  // namespace

TEST(Engines, TheFiveNamedInTheIssueAreBuiltInWithSourceAndDate) {
  for (const char* id : {"vllm", "sglang", "tensorrt-llm", "llama.cpp", "transformers"}) {
    auto e = EngineCatalog::builtin().find(id);
    ASSERT_TRUE(e) << id;
    EXPECT_FALSE(e->source.empty()) << id;
    EXPECT_EQ(e->source_date.size(), 7u) << id;  // YYYY-MM
    EXPECT_FALSE(e->autoscale_metric.empty()) << id;
  }
}

TEST(Engines, AnUnknownIdIsAnErrorNamingTheFlagWithASuggestion) {
  auto e = EngineCatalog::builtin().find("vlm");
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().field, "--engine");
  EXPECT_NE(e.error().message.find("vllm"), std::string::npos);
}

TEST(Engines, FormatLookupFallsFromArchitectureToDefaultAndFromFormatToItsClass) {
  FormatTable t;
  t.by_architecture = {{"default", {{"16bit", 1.0}, {"4bit", 0.7}}}, {"hopper", {{"q4_0", 0.5}}}};
  EXPECT_DOUBLE_EQ(t.lookup("hopper", Precision::q4_0, 9), 0.5);
  EXPECT_DOUBLE_EQ(t.lookup("hopper", Precision::q4_k_m, 9), 0.7);  // a 4-bit mix, from the default row
  EXPECT_DOUBLE_EQ(t.lookup("ampere", Precision::bf16, 9), 1.0);
  EXPECT_DOUBLE_EQ(t.lookup("ampere", Precision::fp8, 9), 9);  // nothing for 8-bit: the fallback
}

TEST(Engines, ReaderRejectsUnknownKeysAndOutOfRangeFigures) {
  const std::string base = "[[engine]]\nid='x'\nname='x'\nsource='s'\nsource_date='2025-01'\nautoscale_metric='m'\n";
  EXPECT_TRUE(EngineCatalog::from_toml(base, "t"));
  auto typo = EngineCatalog::from_toml(base + "max_batch_tokens = 10\n", "t");
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().field.find("max_batch_tokens"), std::string::npos);
  EXPECT_FALSE(EngineCatalog::from_toml(base + "gpu_memory_utilization = 1.5\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "eager_attention_bytes_per_score = -4\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "moe_call_overhead_s = 0.5\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "mla_decode_overhead_s = -1\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "dequantize_min_rows = 0\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "dequantize_min_rows = 2.5\n", "t"));
  EXPECT_TRUE(EngineCatalog::from_toml(base + "dequantize_min_rows = 2\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "decode_bandwidth = { default = { q9_9 = 0.5 } }\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + base, "t"));  // duplicate id
}

// llama.cpp's 4-bit mat-vec kernels read 0.71x as many bytes a second as its F16 ones (PR #3776,
// see engines.toml), so its Q4_0 decode gains less over F16 than the byte count alone says.
// ggml-org/llama.cpp PR #3776 (llama-bench tg128, Llama 7B, one GPU): F16 61.76 t/s over 12.55 GiB,
// Q8_0 100.22 t/s over 6.67 GiB, Q4_0 154.33 t/s over 3.56 GiB. One bandwidth and one fixed cost per
// token, fitted on F16 and Q4_0, give Q8_0 within 1.5%: engines.toml reads the formats as streaming
// alike (decode_bandwidth 1 for every class), the gap being the per-token cost.
TEST(Engines, LlamaCppStreamsEveryWeightFormatAtOneBandwidthInItsOwnBenchmark) {
  const double gib = 1024.0 * 1024 * 1024;
  const double f16_b = 12.55 * gib, q8_b = 6.67 * gib, q4_b = 3.56 * gib;
  const double f16_t = 1 / 61.76, q8_t = 1 / 100.22, q4_t = 1 / 154.33;
  const double bw = (f16_b - q4_b) / (f16_t - q4_t);
  const double fixed = f16_t - f16_b / bw;
  EXPECT_NEAR(bw / 1e9, 994, 5);
  EXPECT_NEAR(fixed * 1e3, 2.63, 0.05);
  EXPECT_NEAR((q8_b / bw + fixed) / q8_t, 1.0, 0.015);
  const Engine e = engine("llama.cpp");
  for (Precision p : {Precision::q8_0, Precision::q4_0, Precision::q4_k_m})
    EXPECT_EQ(e.decode_bandwidth.lookup("ada", p, 1.0), e.decode_bandwidth.lookup("ada", Precision::fp16, 1.0));
}

// Its host time per token: issue #7456 (NVIDIA) puts CPU activities at 10-15% of a token of llama2
// 7B Q4_K_M on A100/H100, and PR #6766 gives that model 163.83 tokens/s on an H100 PCIe.
TEST(Engines, LlamaCppHostTimePerTokenComesFromItsProfile) {
  EXPECT_NEAR(engine("llama.cpp").step_overhead_s, 0.125 / 163.83, 0.01e-3);
}

// Its prompt GEMMs (its own MMQ kernels) are left to the fit: the fitted multiplier scales their
// share of the GPU's GEMM curve; engines whose GEMMs are cuBLAS's keep the curve.
TEST(Engines, LlamaCppPromptGemmsRunAtTheirFittedShareOfTheCurve) {
  Engine e = engine("llama.cpp");
  ASSERT_TRUE(e.prefill_matmul_fitted);
  EXPECT_FALSE(engine("vllm").prefill_matmul_fitted);
  const Gpu g = gpu("rtx-4090");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g);
  e.prefill_matmul_scale = 1;
  const double curve = e.prefill_efficiency(eff, g, Precision::q4_0).matmul_max_fraction;
  e.prefill_matmul_scale = 0.7;
  EXPECT_NEAR(e.prefill_efficiency(eff, g, Precision::q4_0).matmul_max_fraction, 0.7 * curve, 1e-12);
  EXPECT_EQ(engine("vllm").prefill_matmul_scale, 1);
}

// Its quantised mat-vec is latency-bound: on a card with bandwidth to spare per SM (HBM) the weights
// stream at the fitted rate per SM; on a GeForce card the bandwidth share binds first; 16-bit
// weights and cards without an SM count keep the share.
TEST(Engines, LlamaCppQuantisedMatVecStreamsAtARatePerSmWhereThatIsSlower) {
  Engine e = engine("llama.cpp");
  ASSERT_TRUE(e.quantized_matvec_latency_bound);
  e.quantized_matvec_sm_Bps = 11e9;
  const Gpu a100 = gpu("a100-80gb-sxm"), rtx = gpu("rtx-4090"), mi300 = gpu("mi300x");
  ASSERT_EQ(a100.sm_count, 108);
  auto share = [&](const Gpu& g, Precision p) {
    return e.decode_efficiency(EfficiencyTable::builtin().for_gpu(g), g, p).memory_max_fraction;
  };
  const double a100_stream = EfficiencyTable::builtin().for_gpu(a100).memory_max_fraction;
  EXPECT_NEAR(share(a100, Precision::q4_k_m), 108 * 11e9 / a100.memory_bw_Bps, 1e-9);
  EXPECT_LT(share(a100, Precision::q4_k_m), a100_stream * 0.7);
  EXPECT_DOUBLE_EQ(share(a100, Precision::fp16), a100_stream);
  EXPECT_DOUBLE_EQ(share(rtx, Precision::q4_k_m), EfficiencyTable::builtin().for_gpu(rtx).memory_max_fraction);
  EXPECT_EQ(mi300.sm_count, 0);
  EXPECT_DOUBLE_EQ(share(mi300, Precision::q4_k_m), EfficiencyTable::builtin().for_gpu(mi300).memory_max_fraction);
  EXPECT_FALSE(engine("vllm").matvec_sm_bound_applies(a100, Precision::q4_k_m));
  // The bound is said to set the stream exactly where it does.
  auto binds = [&](const Gpu& g, Precision p) { return e.matvec_limit_binds(EfficiencyTable::builtin().for_gpu(g), g, p); };
  EXPECT_TRUE(binds(a100, Precision::q4_k_m));
  EXPECT_FALSE(binds(a100, Precision::fp16));
  EXPECT_FALSE(binds(rtx, Precision::q4_k_m));
  EXPECT_FALSE(binds(mi300, Precision::q4_k_m));
}

// llama.cpp's prompt GEMMs on quantised weights run its MMQ kernels where the GPU has int8 MMA;
// on a V100, or in a build from before MMQ became the default, they expand the weights to FP16 for
// cuBLAS first: one read of the stored weights and one FP16 write per 512-token physical batch.
TEST(Engines, LlamaCppExpandsQuantisedWeightsForCublasOnlyWhereItHasNoMmq) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::q4_k_m;
  auto dequant = [&](const char* gpu_id, const Engine& e, int64_t prompt) {
    const Gpu g = gpu(gpu_id);
    return estimate_inference(m, w, {prompt, 16, 1}, g, EfficiencyTable::builtin().for_gpu(g), default_cluster(g), e)
        .prompt_dequantize_s;
  };
  Engine cpp = engine("llama.cpp");
  cpp.time_scale = 1;
  EXPECT_EQ(dequant("a100-80gb-sxm", cpp, 512), 0);
  const double v100 = dequant("v100-32gb", cpp, 512);
  const Gpu v = gpu("v100-32gb");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(v);
  const ParameterCounts pc = m.parameters();
  const double bytes = static_cast<double>(pc.linear) * (bytes_per_value(Precision::q4_k_m) + 2);
  EXPECT_NEAR(v100, bytes / (v.memory_bw_Bps * eff.memory_max_fraction * eff.vector_memory_fraction), v100 * 1e-9);
  EXPECT_NEAR(dequant("v100-32gb", cpp, 2048), 4 * v100, v100 * 1e-9);  // four physical batches
  Engine old = cpp;
  old.prompt_dequantize = true;  // a build before llama.cpp PR #8075
  EXPECT_GT(dequant("a100-80gb-sxm", old, 512), 0);
  w.precision = Precision::fp16;
  EXPECT_EQ(dequant("v100-32gb", cpp, 512), 0);  // nothing to expand
}

// transformers' 4-bit weights (bitsandbytes' matmul_4bit) run a fused GEMV for one row only: a
// decode step of 16 sequences expands every weight to 16 bits and its GEMMs read the copy, so it
// is slower than the same step on 16-bit weights (the HF quantisation blog's A100 table: 113.98
// against 69.94 ms a token at batch 16, 52.00 against 36.96 at batch 1), where one sequence
// streams the 4-bit weights.
TEST(Engines, TransformersExpandsFourBitWeightsForABatchOfRows) {
  const ModelSpec m = *Presets::builtin().find("llama-2-13b");
  const Gpu g = gpu("a100-80gb-sxm");
  Engine hf = engine("transformers");
  hf.time_scale = 1;
  ASSERT_EQ(hf.dequantize_min_rows, 2);
  auto step = [&](Precision p, int64_t batch) {
    Workload w;
    w.task = Task::infer;
    w.precision = p;
    return estimate_inference(m, w, {512, 512, batch}, g, EfficiencyTable::builtin().for_gpu(g), default_cluster(g), hf);
  };
  const InferenceEstimate one = step(Precision::int4, 1), batch = step(Precision::int4, 16), fp16 = step(Precision::fp16, 16);
  EXPECT_EQ(one.decode_dequantize_s, 0);
  EXPECT_GT(one.prompt_dequantize_s, 0);  // the prompt is 512 rows
  EXPECT_GT(batch.decode_dequantize_s, 0);
  EXPECT_GT(batch.tpot_s, fp16.tpot_s);
  EXPECT_LT(one.tpot_s, step(Precision::fp16, 1).tpot_s);
  EXPECT_EQ(step(Precision::fp16, 16).decode_dequantize_s, 0);  // nothing to expand
  EXPECT_EQ(engine("vllm").dequantize_min_rows, 0);
}

// llama.cpp splits a prompt into physical batches of n_ubatch = 512 tokens: a 2,048-token prompt
// is four forwards, each reading every weight, the later ones attending to the cached context.
// Over a layer split (PR #6017) the batches flow through the stages: four batches over eight
// stages take (4 + 7) / 8 of one batch's time, not four.
TEST(Engines, LlamaCppRunsALongPromptAsPhysicalBatchesPipelinedOverALayerSplit) {
  Prompt p("llama-2-7b", "a100-80gb-pcie", Precision::fp16);
  const Engine cpp = engine("llama.cpp");
  Engine whole = cpp;
  whole.ubatch_tokens = 0;
  EXPECT_DOUBLE_EQ(p.ttft(512, cpp), p.ttft(512, whole));  // one batch: nothing changes
  EXPECT_EQ(p.run(2048, cpp).prefill_forwards, 4);
  const double weights_once = static_cast<double>(p.m.parameters().linear) * 2 / (p.g.memory_bw_Bps * p.eff.memory_max_fraction);
  EXPECT_GT(p.ttft(2048, cpp), p.ttft(2048, whole) + 2 * weights_once);  // at least three more weight reads, less the GEMMs' gain
  const double four_batches = p.ttft(2048, cpp);
  p.w.par.pp = 8;
  const double pipelined = p.ttft(2048, cpp);
  EXPECT_LT(pipelined, four_batches / 2);
  EXPECT_GT(pipelined, four_batches * 11.0 / 32.0);  // (4 + 7) / 8 of the longest batch, which attends the furthest
}

// Engines that chunk prefills (vLLM V1, SGLang, TensorRT-LLM's chunked context) run a prompt
// longer than their step budget as several forwards, each reading the weights; the budget is the
// one the engine starts with on the card (vLLM: 8,192 tokens on an H100, 2,048 on an A100).
TEST(Engines, ChunkingEnginesRunALongPromptInStepBudgets) {
  EXPECT_EQ(engine("vllm").prefill_chunk_tokens(gpu("h100-sxm")), 8192);
  EXPECT_EQ(engine("vllm").prefill_chunk_tokens(gpu("a100-80gb-sxm")), 2048);
  EXPECT_EQ(engine("llama.cpp").prefill_chunk_tokens(gpu("h100-sxm")), 512);
  EXPECT_EQ(engine("transformers").prefill_chunk_tokens(gpu("h100-sxm")), 0);
  const Prompt p("llama-3.1-8b", "h100-sxm", Precision::bf16);
  Engine chunked = engine("vllm"), whole = chunked;
  whole.chunked_prefill = false;
  EXPECT_DOUBLE_EQ(p.ttft(8192, chunked), p.ttft(8192, whole));
  EXPECT_GT(p.ttft(20000, chunked), p.ttft(20000, whole));
}

// A fused-MoE call at one token costs more than its experts' weights: benchmark kernel times
// (engines.toml) less what gpuplan gives the same call (the chosen experts' bytes at the card's
// streaming share and three graph launches). vLLM's figure is the median of three, SGLang's (its
// port of the same Triton kernel) its one measurement.
namespace {
double fused_moe_floor_us(const Engine& e, const char* gpu_id, double measured_us, double experts, double params_per_expert,
                          double bytes_per_param) {
  const Gpu g = gpu(gpu_id);
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g);
  const double bytes_s = experts * params_per_expert * bytes_per_param / (g.memory_bw_Bps * eff.memory_max_fraction);
  return measured_us - 1e6 * (bytes_s + 3 * e.graph_kernel_overhead_s);
}
}  // namespace

TEST(Engines, FusedMoeCallCostsComeFromKernelMeasurements) {
  const Engine vllm = engine("vllm"), sglang = engine("sglang");
  const double mixtral_tp2 = 4096.0 * 14336 + 7168.0 * 4096, qwen3_30b = 2048.0 * 1536 + 768.0 * 2048;
  std::vector<double> floors = {fused_moe_floor_us(vllm, "h100-sxm", 144.03, 2, mixtral_tp2, 2),  // PR #24700, BF16, TP 2, tuned
                                fused_moe_floor_us(vllm, "h100-sxm", 44.54, 8, qwen3_30b, 1),     // PR #24700, FP8 w8a8, main
                                fused_moe_floor_us(vllm, "b200", 39.61, 8, qwen3_30b, 2)};        // PR #31448, BF16, default
  std::sort(floors.begin(), floors.end());
  EXPECT_NEAR(vllm.moe_call_overhead_s * 1e6, floors[1], 0.05);
  const double qwen3_235b_tp8 = 4096.0 * 384 + 192.0 * 4096;  // SGLang PR #11730, FP8 w8a8, TP 8, untuned
  EXPECT_NEAR(sglang.moe_call_overhead_s * 1e6, fused_moe_floor_us(sglang, "h200-sxm", 31.70, 8, qwen3_235b_tp8, 1), 0.05);
  EXPECT_EQ(engine("tensorrt-llm").moe_call_overhead_s, 0);  // no measurement of its kernels
}

// vLLM's latent-attention decode (FlashAttention-MLA, its default on Hopper since PR #27363) takes
// 30 us for 16 one-token requests over 1k-token latent caches at 16 heads (DeepSeek-V3 at TP 8),
// PR #27363's table "on Hopper" (read as an H100); less what gpuplan gives that call, its floor.
TEST(Engines, VllmMlaDecodeFloorComesFromItsKernelTime) {
  const Engine vllm = engine("vllm");
  const ModelSpec m = *Presets::builtin().find("deepseek-v3");
  const Gpu g = gpu("h100-sxm");
  const Efficiency eff = vllm.decode_efficiency(EfficiencyTable::builtin().for_gpu(g), g, Precision::bf16, true);
  ForwardShape s;
  s.tp = 8;
  s.sequences = s.tokens = 16;
  s.kv_len = 1024;
  s.kv_cache_read = true;
  s.causal_halving = false;
  double modelled = -1;
  for (const Op& op : block_forward_ops(m, s))
    if (op.name == "MLA attention over the latent cache") modelled = time_op(op, g, eff, Precision::bf16).total_s();
  ASSERT_GT(modelled, 0);
  EXPECT_NEAR(vllm.mla_decode_overhead_s * 1e6, 30.0 - modelled * 1e6, 0.05);
  EXPECT_EQ(engine("sglang").mla_decode_overhead_s, 0);  // no measurement of its kernels
}

// The call's floor is paid once per MoE layer and step; a dense model pays nothing.
TEST(Engines, VllmPaysItsFusedMoeFloorOnEveryMoeLayer) {
  Prompt moe("qwen3-30b-a3b", "h100-sxm", Precision::fp8), dense("llama-3.1-8b", "h100-sxm", Precision::fp8);
  const Engine vllm = engine("vllm");
  Engine none = vllm;
  none.moe_call_overhead_s = 0;
  const double extra = moe.run(1, vllm).tpot_s - moe.run(1, none).tpot_s;
  EXPECT_NEAR(extra, static_cast<double>(moe.m.moe_layers) * vllm.moe_call_overhead_s, 1e-9);
  EXPECT_DOUBLE_EQ(dense.run(1, vllm).tpot_s, dense.run(1, none).tpot_s);
}

// Without flash attention llama.cpp materialises the scores and converts them twice around an F32
// softmax (engines.toml: 20 bytes a score); the score GEMMs compute the masked half too.
TEST(Engines, LlamaCppWithoutFlashAttentionMovesEveryScoreSeveralTimes) {
  Prompt p("llama-3.1-8b", "rtx-4090", Precision::fp16);
  const Engine cpp = engine("llama.cpp");
  ASSERT_EQ(cpp.eager_score_bytes, 20);
  Engine plain = cpp;
  plain.eager_score_bytes = 0;
  auto ttft = [&](bool flash, const Engine& e) {
    p.w.flash_attention = flash;
    return p.ttft(512, e);
  };
  const double scores = 512.0 * 512 * p.m.heads * p.m.layers;
  const double extra = ttft(false, cpp) - ttft(false, plain);
  // 20 bytes replace the plain softmax's read and write of 2 bytes each.
  EXPECT_NEAR(extra, scores * 16 / (p.g.memory_bw_Bps * p.eff.memory_max_fraction * p.eff.vector_memory_fraction), extra * 0.05);
  EXPECT_DOUBLE_EQ(ttft(true, cpp), ttft(true, plain));  // a fused kernel keeps the scores on chip
}

// The eager generate loop pays its host time every token (31 ms, from the gpt-fast eager baseline).
TEST(Engines, EagerTransformersDecodeCarriesItsPerStepHostTime) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu g = gpu("h100-sxm");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g);
  Workload w;
  w.task = Task::infer;
  // As sourced, before data/fitted.toml's serving time scales (refitted whenever rows change).
  Engine hf_engine = engine("transformers"), vllm_engine = engine("vllm");
  hf_engine.time_scale = vllm_engine.time_scale = 1;
  const auto hf = estimate_inference(m, w, {128, 128, 1}, g, eff, default_cluster(g), hf_engine);
  const auto vllm = estimate_inference(m, w, {128, 128, 1}, g, eff, default_cluster(g), vllm_engine);
  EXPECT_NEAR(hf.tpot_s - vllm.tpot_s, 0.031, 0.01);
  EXPECT_EQ(hf.engine, "transformers");
}

// ggml-cuda's MUL_MAT_ID loops over the chosen experts (2 kernels each for one token) and is never
// captured in a CUDA graph, where vLLM runs a layer's experts as one grouped GEMM under graphs:
// a DeepSeek-V3 decode step launches thousands more kernels on llama.cpp. A dense model is spared.
// llama.cpp's builds before mid-2025 looped over the experts outside CUDA graphs; today's run one
// grouped kernel inside them, as vLLM does.
TEST(Engines, LlamaCppLoopedMoeExpertsWithoutCudaGraphsInEarlierBuildsOnly) {
  const Gpu g = gpu("h100-sxm");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g);
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::int4;
  w.par.pp = 8;
  auto overhead = [&](const char* model, Engine e) {
    e.time_scale = 1;
    return estimate_inference(*Presets::builtin().find(model), w, {1, 16, 1}, g, eff, default_cluster(g), e).decode_overhead_s;
  };
  Engine now = engine("llama.cpp");
  now.step_overhead_s = 0;  // its launches alone, without its host time per token
  ASSERT_TRUE(now.has_expert_loop());
  Engine vllm = engine("vllm");
  vllm.moe_call_overhead_s = vllm.mla_decode_overhead_s = 0;  // its launches alone, without its kernel floors
  EXPECT_GT(overhead("deepseek-v3", now.with_expert_loop()), 10 * overhead("deepseek-v3", vllm));
  EXPECT_LT(overhead("deepseek-v3", now), 2 * overhead("deepseek-v3", vllm));
  EXPECT_FALSE(vllm.has_expert_loop());
  w.par.pp = 1;
  EXPECT_LT(overhead("llama-3.1-8b", now.with_expert_loop()), 2 * overhead("llama-3.1-8b", vllm));
}

TEST(Engines, VllmBudgetsNinetyPercentOfTheCardForWeightsPeakAndKv) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu g = gpu("h100-sxm");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g);
  Workload w;
  w.task = Task::infer;
  const InferenceMemory mem = inference_memory(m, w, {1024, 256, 1}, g, eff, engine("vllm"));
  // 80 GB x 0.9 less 16 GB of weights, the profile run's peak and the context: about 50 GB of KV
  // at 128 KiB a token (bf16, 32 layers x 8 KV heads x 128 x 2 x 2 bytes).
  EXPECT_GT(mem.kv_capacity_tokens, 300000);
  EXPECT_LT(mem.kv_capacity_tokens, 480000);
  EXPECT_EQ(mem.kv_capacity_tokens % 16, 0);
  EXPECT_GT(mem.profile_peak_bytes, 0);
}

}  // namespace gpuplan

namespace gpuplan {

// vLLM's batch defaults depend on the card (get_batch_defaults): 8,192 tokens and 1,024 sequences
// on a GPU of 70 GiB or more that is not an A100, else 2,048 and 256.
TEST(Engines, VllmStartsWithSmallerBatchesOnAnA100AndOnSmallCards) {
  const Engine vllm = *EngineCatalog::builtin().find("vllm");
  auto limits = [&](const char* id) { return vllm.limits_on(*Catalog::builtin().find(id)); };
  EXPECT_EQ(limits("h100-sxm").max_batched_tokens, 8192);
  EXPECT_EQ(limits("h100-sxm").max_num_seqs, 1024);
  EXPECT_EQ(limits("h200-sxm").max_num_seqs, 1024);
  EXPECT_EQ(limits("a100-80gb-sxm").max_batched_tokens, 2048);
  EXPECT_EQ(limits("a100-80gb-sxm").max_num_seqs, 256);
  EXPECT_EQ(limits("l40s").max_batched_tokens, 2048);
  EXPECT_EQ(limits("rtx-4090").max_num_seqs, 256);
  // An engine without the rule keeps one set of limits everywhere.
  const Engine trt = *EngineCatalog::builtin().find("tensorrt-llm");
  EXPECT_EQ(trt.limits_on(*Catalog::builtin().find("l40s")).max_batched_tokens, trt.max_batched_tokens);
}

// SGLang announced gpt-oss's MXFP4 kernels for Hopper, Blackwell and AMD's MI300/MI350 parts:
// elsewhere gpuplan refuses instead of guessing a fallback's speed; other formats and engines pass.
TEST(Engines, AFormatWithoutKernelsOnTheArchitectureIsRefusedWithTheSource) {
  const Engine sglang = *EngineCatalog::builtin().find("sglang");
  const Engine vllm = *EngineCatalog::builtin().find("vllm");
  const Gpu a100 = *Catalog::builtin().find("a100-80gb-sxm"), h100 = *Catalog::builtin().find("h100-sxm");
  const std::string why = sglang.unsupported(a100, Precision::mxfp4);
  EXPECT_NE(why.find("not ampere"), std::string::npos) << why;
  EXPECT_NE(why.find("lmsys.org"), std::string::npos) << why;
  EXPECT_EQ(sglang.unsupported(h100, Precision::mxfp4), "");
  EXPECT_EQ(sglang.unsupported(a100, Precision::bf16), "");
  EXPECT_EQ(vllm.unsupported(a100, Precision::mxfp4), "");
}

// SGLang's mem_fraction_static (server_args.py _handle_gpu_memory_settings, PR #10975): on an 80 GB
// card at TP 1 it reserves 512 + 1.5 x 8192 + 2 x 256 + 128 = 13,440 MB of 81,920: 0.836; at TP 4
// the CUDA-graph limit is 512 and the parallel share 512, 14,336 MB: 0.825. A 24 GB card's reserve
// (512 + 1.5 x 2048 + 2 x 24 + 128 = 3,760 MB) stays under the 10 GB floor, which applies above 60 GB only.
TEST(Engines, SglangSizesItsShareOfTheCardFromItsReserve) {
  const Engine e = engine("sglang");
  EXPECT_NEAR(e.memory_fraction(gpu("h100-sxm"), 1, 1), (81920 - 13440) / 81920.0, 1e-9);
  EXPECT_NEAR(e.memory_fraction(gpu("h100-sxm"), 4, 1), (81920 - 14336) / 81920.0, 1e-9);
  EXPECT_NEAR(e.memory_fraction(gpu("rtx-4090"), 1, 1), (24576 - 3760) / 24576.0, 1e-9);
  // vLLM keeps its constant gpu_memory_utilization.
  EXPECT_DOUBLE_EQ(engine("vllm").memory_fraction(gpu("h100-sxm"), 4, 1), 0.9);
}

// gpt-oss on one H100: vLLM holds its MXFP4 experts in triton_kernels' layout (64.38 GiB logged,
// 1.06 x the checkpoint; 65.97 GiB under Marlin), and SGLang caches the sliding-window layers at full length
// (disable_hybrid_swa_memory), so a token costs it all 36 layers where vLLM pays for 18.
TEST(Engines, EnginesHoldGptOssWeightsAndSlidingWindowsTheirOwnWay) {
  const ModelSpec m = *Presets::builtin().find("gpt-oss-120b");
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::mxfp4;
  Engine plain = engine("vllm");
  plain.weight_memory_relative = {};
  auto held = [&](const char* gpu_id, const Engine& e) {
    const Gpu g = gpu(gpu_id);
    return inference_memory(m, w, {4096, 0, 1}, g, EfficiencyTable::builtin().for_gpu(g), e);
  };
  EXPECT_NEAR(held("h100-sxm", engine("vllm")).weight_bytes_per_gpu / held("h100-sxm", plain).weight_bytes_per_gpu, 1.06, 1e-9);
  const double sglang_token = held("h100-sxm", engine("sglang")).kv_bytes_per_token;
  EXPECT_NEAR(sglang_token, 2.0 * 36 * 8 * 64 * 2, 1.0);  // K and V, 36 layers, 8 heads of 64, bf16
  EXPECT_LT(held("h100-sxm", engine("vllm")).kv_bytes_per_token, 0.6 * sglang_token);
  // Ampere takes the Marlin fallback (65.97 GiB logged, 1.087); on Blackwell the table is silent:
  // the checkpoint's bytes.
  EXPECT_NEAR(held("a100-80gb-sxm", engine("vllm")).weight_bytes_per_gpu / held("a100-80gb-sxm", plain).weight_bytes_per_gpu, 1.087, 1e-9);
  EXPECT_DOUBLE_EQ(held("b200", engine("vllm")).weight_bytes_per_gpu, held("b200", plain).weight_bytes_per_gpu);
}

// vLLM's memory profile samples a token for each of min(max_num_seqs, max_num_batched_tokens) dummy
// requests: 14 B a logit over the vocabulary (bf16 logits, their fp32 copy, FlashInfer's top-k-masked
// logits and softmax). gpt-oss's 201,088-token vocabulary at 1,024 rows on an H100 is 2.88 GB, more
// than the forward's own peak, so that is what the engine reserves; an A100 starts with 256 rows.
TEST(Engines, VllmReservesItsProfileSamplersPeakOverTheVocabulary) {
  const ModelSpec m = *Presets::builtin().find("gpt-oss-120b");
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::mxfp4;
  auto held = [&](const char* gpu_id) {
    const Gpu g = gpu(gpu_id);
    return inference_memory(m, w, {4096, 0, 1}, g, EfficiencyTable::builtin().for_gpu(g), engine("vllm"));
  };
  const InferenceMemory h = held("h100-sxm");
  EXPECT_DOUBLE_EQ(h.profile_sampler_bytes, 14.0 * 1024 * 201088);
  EXPECT_DOUBLE_EQ(h.profile_peak_bytes, h.profile_sampler_bytes);
  EXPECT_DOUBLE_EQ(held("a100-80gb-sxm").profile_sampler_bytes, 14.0 * 256 * 201088);
  // SGLang reserves by its rule instead; no sampler term.
  const Gpu g = gpu("h100-sxm");
  EXPECT_DOUBLE_EQ(inference_memory(m, w, {4096, 0, 1}, g, EfficiencyTable::builtin().for_gpu(g), engine("sglang")).profile_sampler_bytes, 0);
}

TEST(Engines, ReaderRejectsAMalformedMemoryReserve) {
  const std::string base = "[[engine]]\nid='x'\nname='x'\nsource='s'\nsource_date='2025-01'\nautoscale_metric='m'\n";
  EXPECT_TRUE(EngineCatalog::from_toml(base + "memory_reserve = { base_mib = 512, buckets = [[80, 8192, 256, 512]] }\n", "t"));
  auto missing = EngineCatalog::from_toml(base + "memory_reserve = { base_mib = 512 }\n", "t");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().field.find("buckets"), std::string::npos);
  EXPECT_FALSE(EngineCatalog::from_toml(base + "memory_reserve = { buckets = [[80, 8192, 256]] }\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "memory_reserve = { buckets = [[80, 1, 1, 1], [40, 1, 1, 1]] }\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "memory_reserve = { base_mib = -1, buckets = [[80, 1, 1, 1]] }\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "memory_reserve = { bass_mib = 1, buckets = [[80, 1, 1, 1]] }\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "full_kv_families = 'gpt_oss'\n", "t"));
  EXPECT_FALSE(EngineCatalog::from_toml(base + "weight_memory_relative = { hopper = { mxfp4 = 9 } }\n", "t"));
}

// An unmeasured MoE backend names a format gpuplan knows, a list of architectures and its source;
// anything else is a named error, not an empty list.
TEST(Engines, ReaderRejectsAMalformedUnmodelledMoeBackend) {
  const std::string base = "[[engine]]\nid='x'\nname='x'\nsource='s'\nsource_date='2025-01'\nautoscale_metric='m'\n";
  auto ok = EngineCatalog::from_toml(base + "unmodelled_moe_backends = { cutlass = { mxfp4 = ['hopper'] } }\nunmodelled_moe_backends_source = 's'\n", "t");
  ASSERT_TRUE(ok) << ok.error().to_string();
  const Engine& e = ok->engines().at(0);
  EXPECT_NE(e.unmodelled_moe_backend("cutlass", gpu("h100-sxm"), Precision::mxfp4), "");
  EXPECT_EQ(e.unmodelled_moe_backend("triton", gpu("h100-sxm"), Precision::mxfp4), "");
  EXPECT_EQ(e.unmodelled_moe_backend("cutlass", gpu("b200"), Precision::mxfp4), "");
  EXPECT_EQ(e.unmodelled_moe_backend("cutlass", gpu("h100-sxm"), Precision::fp8), "");
  for (const char* bad : {"unmodelled_moe_backends = { cutlass = { mxfp4 = ['hopper'] } }\n",  // no source
                          "unmodelled_moe_backends = { cutlass = { q9 = ['hopper'] } }\nunmodelled_moe_backends_source = 's'\n",
                          "unmodelled_moe_backends = { cutlass = { mxfp4 = [] } }\nunmodelled_moe_backends_source = 's'\n",
                          "unmodelled_moe_backends = { cutlass = 'hopper' }\nunmodelled_moe_backends_source = 's'\n",
                          "unmodelled_moe_backends = 'cutlass'\nunmodelled_moe_backends_source = 's'\n"}) {
    auto r = EngineCatalog::from_toml(base + bad, "t");
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().field.find("unmodelled_moe_backends"), std::string::npos) << bad;
  }
}

}  // namespace gpuplan

namespace gpuplan {

// Attention data parallelism (TensorRT-LLM enable_attention_dp, SGLang --enable-dp-attention):
// Qwen3-235B's 4 KV heads over 8 GPUs are cached twice under tensor-parallel attention; with each
// GPU caching its own requests whole, the replica holds about twice the tokens, less the attention
// weights every GPU now keeps whole.
TEST(Engines, AttentionDataParallelismCachesEachRequestOnceWithEveryHead) {
  const ModelSpec m = *Presets::builtin().find("qwen3-235b-a22b");
  const Gpu g = gpu("h200-sxm");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g);
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::fp8;
  w.par.tp = 8;
  const InferenceRequest r{1000, 1000, 64};
  const Engine trt = engine("tensorrt-llm");
  const InferenceMemory tp = inference_memory(m, w, r, g, eff, trt);
  Workload adp = w;
  ASSERT_FALSE(trt.use_attention_dp(adp, m, "--attention-dp"));
  EXPECT_EQ(adp.par.ep, 8);
  EXPECT_FALSE(adp.par.attention_dp_dense_tp);  // TensorRT-LLM replicates the dense MLPs
  const InferenceMemory dp = inference_memory(m, adp, r, g, eff, trt);
  EXPECT_DOUBLE_EQ(tp.kv_replication, 2);
  EXPECT_DOUBLE_EQ(dp.kv_replication, 1);
  EXPECT_GT(dp.weight_bytes_per_gpu, tp.weight_bytes_per_gpu);
  EXPECT_GT(dp.kv_capacity_tokens, 1.6 * static_cast<double>(tp.kv_capacity_tokens));
  EXPECT_LT(dp.kv_capacity_tokens, 2 * tp.kv_capacity_tokens);
  // One request lives on one GPU: its decode reads its cache there, with every head.
  const Efficiency e = eff;
  // (A long context, so that the reads, not a small kernel's fixed time, set the step.)
  const double one_tp = estimate_inference(m, w, {30000, 2, 1}, g, e, default_cluster(g), trt).decode_kv_read_s;
  const double one_dp = estimate_inference(m, adp, {30000, 2, 1}, g, e, default_cluster(g), trt).decode_kv_read_s;
  EXPECT_NEAR(one_dp / one_tp, 4.0, 0.5);  // 4 heads on one GPU where TP held one head a GPU

  Workload sg = w;
  ASSERT_FALSE(engine("sglang").use_attention_dp(sg, m, "--attention-dp"));
  EXPECT_TRUE(sg.par.attention_dp_dense_tp);  // SGLang splits them over the group

  Workload v = w;
  ASSERT_FALSE(engine("vllm").use_attention_dp(v, m, "--attention-dp"));  // --data-parallel-size with EP
  EXPECT_FALSE(v.par.attention_dp_dense_tp);
  Workload l = w;
  auto refused = engine("llama.cpp").use_attention_dp(l, m, "--attention-dp");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->field, "--attention-dp");
  Workload dense = w;
  dense.precision = Precision::bf16;
  auto not_moe = trt.use_attention_dp(dense, *Presets::builtin().find("llama-3.1-70b"), "--attention-dp");
  ASSERT_TRUE(not_moe);
  EXPECT_NE(not_moe->message.find("dense"), std::string::npos);
}

TEST(Engines, AttentionDataParallelKnobsNeedTheLayoutItself) {
  auto c = EngineCatalog::from_toml(R"([[engine]]
id = "x"
name = "x"
source = "s"
source_date = "2026-01"
autoscale_metric = "m"
attention_dp_gather = true
)",
                                    "t.toml");
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().field.find("attention_dp_gather"), std::string::npos);
}

}  // namespace gpuplan
