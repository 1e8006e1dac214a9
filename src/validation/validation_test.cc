// The performance model against published runs (data/validation.toml, each row citing its
// source). Prints the table; fails when a section misses its accuracy target.
#include "validation/cross_validation.h"
#include "validation/validation_test_support.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace gpuplan {

namespace {
// In sample: every row's `predicted` comes from the fit on all rows (cross_validation_test.cc
// scores the held-out figures).
const ValidatedTable& table() { return testing_support::builtin_validated_table(); }
const ValidationReport& report() { return table().report; }

void print(const std::string& section) {
  std::string out = fmt::format("\n{:<58} {:>16} {:>12} {:>12} {:>8}\n", section, "metric", "published", "predicted", "error");
  for (const auto& r : report().rows)
    if (r.section == section)
      out += fmt::format("{:<58} {:>16} {:>12.4g} {:>12.4g} {:>+7.1f}%\n", r.what, r.metric, r.published, r.predicted, r.error() * 100);
  out += fmt::format("MAPE {:.1f}%, worst {:.1f}%\n", report().mape(section) * 100, report().worst(section) * 100);
  std::printf("%s", out.c_str());
}
}  // namespace

// In sample: the dense training rows (Megatron-LM, Korthikanti, Llama 2/3 and the published runs
// of issue 9) under the fit of data/fitted.toml. The held-out error, the honest figure, is in
// cross_validation_test.cc; this guards the table and the model against regressions.
TEST(PerformanceValidation, TrainingInSampleWithinTwentyFivePercentMape) {
  print("training");
  ASSERT_GE(report().rows.size(), 150u);
  EXPECT_LE(report().mape("training"), 0.25);
}

// The memory rows (HF model-memory-anatomy, the optimize-llm blog, Answer.AI's fsdp_qlora
// benchmarks, the ZeRO paper, torchtitan, torchtune, LitGPT, PEFT and more), each citing its
// measure. In sample for the training rows; a regression guard.
TEST(PerformanceValidation, MemoryInSampleWithinTwentyFivePercentMape) {
  print("memory");
  EXPECT_LE(report().mape("memory"), 0.25);
}

// Regression guard. The rows run under the engines' fitted time scales, which the FP8 serving rows
// also set: with the MAMF table's FP8 GEMM shares (efficiency.toml) it moved from 24.2% to 25.4%.
TEST(PerformanceValidation, InferenceWithinTwentySixPercentMape) {
  print("inference");
  EXPECT_LE(report().mape("inference"), 0.26);
}

TEST(PerformanceValidation, CrossGpuPredictionFromOneMeasurementWithinFifteenPercentMape) {
  print("cross_gpu");
  double uncal = 0;
  int n = 0;
  for (const auto& r : report().rows)
    if (r.section == "cross_gpu") uncal += std::fabs(r.uncalibrated / r.published - 1), ++n;
  ASSERT_GE(n, 10);
  std::printf("the same pairs predicted without the source measurement: MAPE %.1f%%\n", 100 * uncal / n);
  EXPECT_LE(report().mape("cross_gpu"), 0.15);
}

// Vidur's H100 GEMM times (3 rows) within 22%, and within 10% on average. Its MLP-down time (369
// GFLOP in 437 us, 845 TFLOP/s) beats the best BF16 matmul the MAMF table measured on an H100 (794.5
// TFLOP/s, efficiency.toml), so no size curve can bring that row under +6%; it sits at +21% since
// the curve reads an H100 GEMM at the A100 size that takes as long (+14.5% before), where the QKV
// and gate-up rows moved from -5.1% and -2.1% to +0.2% and +3.3%.
TEST(PerformanceValidation, SingleGemmsWithinTwentyTwoPercent) {
  print("operation");
  for (const auto& r : report().rows)
    if (r.section == "operation") {
      EXPECT_LT(std::fabs(r.error()), 0.22) << r.what;
    }
  EXPECT_LE(report().mape("operation"), 0.10);
}

// Mixture-of-experts runs (NeMo AutoModel, Megatron-Bridge, vLLM CI, llama.cpp) are scored in
// their own sections; no efficiency is fitted on them, so their error is out of sample. The
// targets guard against regressions; the MoE errors are far from the dense sections' (gpt-oss
// is predicted 1.6-2x too fast in every training publication: see the README).
TEST(PerformanceValidation, MoeRowsFromSeveralPublicationsAreScoredApart) {
  print("moe_training");
  print("moe_serving");
  std::set<std::string> publications;
  int rows = 0;
  for (const auto& r : report().rows)
    if (r.section == "moe_training" || r.section == "moe_serving") {
      EXPECT_FALSE(r.publication.empty()) << r.what;
      publications.insert(r.publication);
      ++rows;
    }
  EXPECT_GE(rows, 10);
  EXPECT_GE(publications.size(), 4u);
  // Regression guard at today's 58% over the 128 MoE rows of issue 9 (Megatron-Bridge, NeMo,
  // torchtitan on B200/GB200/GB300): MoE is the model's weakest kind, see the README. The MoE
  // serving rows run under the engines' fitted time scales, fitted on the serving table alone.
  EXPECT_LE(report().mape("moe_training"), 0.62);
  EXPECT_LE(report().mape("moe_serving"), 0.78);
}

}  // namespace gpuplan

namespace gpuplan {

// Serving-engine rows (data/validation_serving.toml): breadth the issue asks for, and the error per
// engine held at today's level so a regression shows. The issue's target (leave-one-publication-out
// MAPE <= 15%) is not met yet. The per-engine errors are in sample (each engine's time scale is
// fitted on these rows); the held-out figure is checked at the end.
TEST(PerformanceValidation, ServingRowsSpanEnginesGpusAndLoadsAndHoldTheirErrorPerEngine) {
  print("serving");
  std::set<std::string> engines, publications;
  int64_t rows = 0, at_load = 0;
  for (const auto& r : report().rows)
    if (r.section == "serving") {
      ++rows;
      engines.insert(r.engine);
      publications.insert(r.publication);
      at_load += r.metric.find(' ') != std::string::npos;  // read at a percentile of a simulated load
    }
  EXPECT_GE(rows, 80);
  EXPECT_GE(engines.size(), 4u);
  EXPECT_GE(publications.size(), 10u);
  EXPECT_GE(at_load, 20);
  EXPECT_GT(report().unscored.size(), 0u);
  for (const char* e : {"vllm", "sglang", "tensorrt-llm", "llama.cpp", "transformers"})
    std::printf("%-13s MAPE %.1f%%\n", e, report().mape("serving", e) * 100);
  // In sample today: all 25.2%, vLLM 28.5%, SGLang 26.9%, TensorRT-LLM 20.5%, llama.cpp 12.6%
  // (24.0%, vLLM 26.7% and SGLang 27.9% before session 28 added 132 rows of five GPUStack pages of
  // GLM-4.5-Air and GLM-4.6, gathered whole: on A100s within 12-17%, on H100s and H200s 32-74% off
  // as its other H100 and H200 pages are; 23.5%, vLLM 25.0% and SGLang 31.8% before session 27 added 32 vLLM rows of five publications
  // gathered whole, at request rates and client concurrencies on H100 PCIe, RTX 4090, L40S and H100
  // cards, and 41 SGLang rows of DataCrunch's H200 runs, then paced vLLM by its API server and
  // scheduled SGLang prefill-first with its cache-sized sequence limit; 19.5% before session 25 added 165 rows of four GPUStack pages of Qwen3-14B and 32B on one H100
  // or A100, 80 of its two Qwen3-235B-A22B pages and 42 of its DeepSeek-R1 page on eight H200s; 22.1% before it gave vLLM's Marlin MXFP4 weights their logged size, let a preempted
  // request keep what the prefix cache still holds and refused the six TensorRT-LLM rows that ran
  // gpt-oss on Hopper on its CUTLASS MoE backend; 18.1% before 131 rows of three GPUStack performance-lab pages, gpt-oss under vLLM,
  // SGLang and TensorRT-LLM at their defaults and tuned, were added in session 24; llama.cpp 16.6%
  // before mlc-ai/llm-perf-bench's two RTX 4090 rows took that publication's own corrected
  // figures; 21.8% before its quantised mat-vec streamed at a fitted rate per SM on HBM cards, its
  // prompt GEMMs at a fitted share of the GPU's curve and its host time per token).
  EXPECT_LE(report().mape("serving"), 0.255);
  EXPECT_LE(report().mape("serving", "llama.cpp"), 0.13);
  EXPECT_LE(report().mape("serving", "tensorrt-llm"), 0.21);
  EXPECT_LE(report().mape("serving", "vllm"), 0.29);
  EXPECT_LE(report().mape("serving", "sglang"), 0.29);
  ASSERT_TRUE(table().cv.cross_validated.count("serving"));
  // Leave one publication out: 25.7% today over 937 rows (24.7% over 805 before session 28's GLM
  // rows; 24.6% over 732 before session 27's rows; 25.6% with its first 32 before vLLM's API
  // server paced heavy loads).
  EXPECT_LE(table().cv.cross_validated.at("serving").mape, 0.26);
}

// A row gpuplan would refuse on the command line, and a row whose published figure beats the GPU's
// peak as written, are kept with the reason and not scored; a plain row beside them is scored.
TEST(PerformanceValidation, RefusedAndImpossibleRowsAreKeptUnscoredWithTheReason) {
  const std::string table = R"(
[[serving]]
what = "SGLang gpt-oss-20b on an A100"
publication = "test-a"
engine = "sglang"
model = "gpt-oss-20b"
gpu = "a100-80gb-sxm"
precision = "mxfp4"
prompt = 200
output = 200
metric = "tokens_per_s"
published = 100
source = "test"

[[serving]]
what = "13B prefill of 16 x 512 tokens in 70 ms on an A100"
publication = "test-b"
engine = "transformers"
model = "llama-2-13b"
gpu = "a100-80gb-sxm"
precision = "fp16"
prompt = 512
output = 1
concurrency = 16
batch = 16
metric = "ttft_s"
published = 0.07
source = "test"

[[serving]]
what = "13B prefill of 512 tokens on an A100"
publication = "test-c"
engine = "transformers"
model = "llama-2-13b"
gpu = "a100-80gb-sxm"
precision = "fp16"
prompt = 512
output = 1
metric = "ttft_s"
published = 0.2
source = "test"
)";
  auto rep = run_validation(table, "test table", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(rep) << rep.error().to_string();
  ASSERT_EQ(rep->rows.size(), 1u);
  EXPECT_EQ(rep->rows[0].what, "13B prefill of 512 tokens on an A100");
  ASSERT_EQ(rep->unscored.size(), 2u);
  EXPECT_EQ(rep->unexpressible, 2);
  EXPECT_NE(rep->unscored[0].reason.find("gpuplan refuses: SGLang"), std::string::npos) << rep->unscored[0].reason;
  EXPECT_NE(rep->unscored[1].reason.find("peak dense rate"), std::string::npos) << rep->unscored[1].reason;
}

// A row from an engine version older than its current memory rule names that version's share of
// the card; the share is checked like any other input.
TEST(PerformanceValidation, AServingRowMayStateItsVersionsShareOfTheCard) {
  auto row = [](const std::string& fraction) {
    return "[[serving]]\nwhat = \"SGLang 0.3 KV cache\"\npublication = \"test\"\nengine = \"sglang\"\nmodel = \"llama-3.1-8b\"\n"
           "gpu = \"h100-sxm\"\nprecision = \"bf16\"\nprompt = 1024\noutput = 1\nmetric = \"kv_cache_gib\"\npublished = 50\n"
           "source = \"test\"\n" + fraction;
  };
  auto current = run_validation(row(""), "t", Catalog::builtin(), EfficiencyTable::builtin());
  auto old = run_validation(row("memory_fraction = 0.88\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(current && old);
  // The reserve rule leaves 83.6% of an 80 GB card; SGLang 0.3's constant 88%: 3.5 GiB more cache.
  EXPECT_NEAR(old->rows[0].predicted - current->rows[0].predicted, (0.88 - (81920 - 13440) / 81920.0) * 80, 0.05);
  auto bad = run_validation(row("memory_fraction = 1.5\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().field.find("memory_fraction"), std::string::npos);
}

// A vLLM burst driven through its API server streams every token through the frontend; one driven
// from Python in the engine's own process (`client = "offline"`, benchmark_throughput) does not.
// A 355M model's 2,000 requests outrun the frontend, so the server's run is the slower.
TEST(PerformanceValidation, AnOfflineClientSkipsTheServingFrontend) {
  auto row = [](const std::string& extra) {
    return "[[serving]]\nwhat = \"GPT-2 Medium burst\"\npublication = \"test\"\nengine = \"vllm\"\nmodel = \"gpt2-medium\"\n"
           "gpu = \"h100-sxm\"\nprecision = \"bf16\"\nprompt = 128\noutput = 128\nnum_prompts = 2000\nrequest_rate = \"inf\"\n"
           "metric = \"throughput_tokens_per_s\"\npublished = 10000\nsource = \"test\"\n" + extra;
  };
  auto server = run_validation(row(""), "t", Catalog::builtin(), EfficiencyTable::builtin());
  auto offline = run_validation(row("client = \"offline\"\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(server && offline) << (server ? offline.error().to_string() : server.error().to_string());
  ASSERT_EQ(server->rows.size(), 1u);
  ASSERT_EQ(offline->rows.size(), 1u);
  EXPECT_TRUE(server->rows[0].serving_frontend);
  EXPECT_FALSE(offline->rows[0].serving_frontend);
  EXPECT_LT(server->rows[0].predicted, 0.9 * offline->rows[0].predicted);
  // PR #12287's 66.9 us a sequence a step: no more than ~15,000 tokens a second through the server.
  EXPECT_LT(server->rows[0].predicted, 1 / 66.9e-6);
  auto bad = run_validation(row("client = \"browser\"\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().field.find("client"), std::string::npos);
}

// A row from a llama.cpp build before its grouped expert kernels says so: its MoE decode loops over
// the experts outside CUDA graphs and is slower; an engine with no such build recorded refuses it.
TEST(PerformanceValidation, AServingRowMayStateAnExpertLoopingBuild) {
  auto row = [](const std::string& engine, const std::string& extra) {
    return "[[serving]]\nwhat = \"gpt-oss-20b decode\"\npublication = \"test\"\nengine = \"" + engine +
           "\"\nmodel = \"gpt-oss-20b\"\ngpu = \"rtx-4090\"\nprecision = \"mxfp4\"\nprompt = 1\noutput = 128\n"
           "metric = \"tokens_per_s\"\npublished = 100\nsource = \"test\"\n" + extra;
  };
  auto now = run_validation(row("llama.cpp", ""), "t", Catalog::builtin(), EfficiencyTable::builtin());
  auto looped = run_validation(row("llama.cpp", "moe_expert_loop = true\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(now && looped);
  ASSERT_EQ(now->rows.size(), 1u);
  ASSERT_EQ(looped->rows.size(), 1u);
  EXPECT_LT(looped->rows[0].predicted, 0.8 * now->rows[0].predicted);
  auto bad = run_validation(row("vllm", "moe_expert_loop = true\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().field.find("moe_expert_loop"), std::string::npos);
}

// A row from a llama.cpp build before PR #9816 (scalar-load F16 mat-vec) decodes 16-bit weights on
// an HBM card 1.33x slower (issue #9817's H100 kernel figure); quantised weights and GDDR cards are
// unchanged; an engine with no such build recorded refuses the key.
TEST(PerformanceValidation, AServingRowMayStateAScalarLoadF16MatvecBuild) {
  auto row = [](const std::string& engine, const std::string& gpu, const std::string& precision, const std::string& extra) {
    return "[[serving]]\nwhat = \"8B decode\"\npublication = \"test\"\nengine = \"" + engine +
           "\"\nmodel = \"llama-3.1-8b\"\ngpu = \"" + gpu + "\"\nprecision = \"" + precision +
           "\"\nprompt = 1\noutput = 128\nmetric = \"tokens_per_s\"\npublished = 100\nsource = \"test\"\n" + extra;
  };
  auto ratio = [&](const std::string& gpu, const std::string& precision) {
    auto now = run_validation(row("llama.cpp", gpu, precision, ""), "t", Catalog::builtin(), EfficiencyTable::builtin());
    auto old = run_validation(row("llama.cpp", gpu, precision, "scalar_f16_matvec = true\n"), "t", Catalog::builtin(),
                              EfficiencyTable::builtin());
    EXPECT_TRUE(now && old);
    return now && old ? now->rows.at(0).predicted / old->rows.at(0).predicted : 0.0;
  };
  const double hbm16 = ratio("h100-pcie", "fp16");
  EXPECT_GT(hbm16, 1.2);   // mostly the weight stream, 1.33x slower
  EXPECT_LT(hbm16, 1.34);
  EXPECT_DOUBLE_EQ(ratio("rtx-4090", "fp16"), 1.0);
  EXPECT_DOUBLE_EQ(ratio("h100-pcie", "q4_0"), 1.0);
  auto bad = run_validation(row("vllm", "h100-sxm", "bf16", "scalar_f16_matvec = true\n"), "t", Catalog::builtin(),
                            EfficiencyTable::builtin());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().field.find("scalar_f16_matvec"), std::string::npos);
}

// A row from a TensorRT-LLM build before XQA says so: a grouped-query model's decode reads its cache
// once per query head (at the fitted DRAM share) and runs slower; a model without grouping is
// unchanged; an engine with no such build recorded refuses the key.
TEST(PerformanceValidation, AServingRowMayStateAPerQueryHeadDecodeBuild) {
  auto row = [](const std::string& engine, const std::string& model, const std::string& extra) {
    return "[[serving]]\nwhat = \"long decode\"\npublication = \"test\"\nengine = \"" + engine + "\"\nmodel = \"" + model +
           "\"\ngpu = \"h100-sxm\"\nprecision = \"fp8\"\nprompt = 2048\noutput = 2048\nconcurrency = 64\nbatching = \"static\"\n"
           "metric = \"throughput_tokens_per_s\"\npublished = 1000\nsource = \"test\"\n" + extra;
  };
  auto ratio = [&](const std::string& model) {
    auto now = run_validation(row("tensorrt-llm", model, ""), "t", Catalog::builtin(), EfficiencyTable::builtin());
    auto old = run_validation(row("tensorrt-llm", model, "per_query_head_decode = true\n"), "t", Catalog::builtin(),
                              EfficiencyTable::builtin());
    EXPECT_TRUE(now && old);
    if (!now || !old) return 0.0;
    EXPECT_EQ(old->rows.at(0).serving_per_query_head, model == "llama-3.1-8b");
    return now->rows.at(0).predicted / old->rows.at(0).predicted;
  };
  EXPECT_GT(ratio("llama-3.1-8b"), 1.3);
  EXPECT_DOUBLE_EQ(ratio("llama-2-7b"), 1.0);
  auto bad = run_validation(row("vllm", "llama-3.1-8b", "per_query_head_decode = true\n"), "t", Catalog::builtin(),
                            EfficiencyTable::builtin());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().field.find("per_query_head_decode"), std::string::npos);
}

// TensorRT-LLM's default MoE backend before its AUTO selection, CUTLASS, ran gpt-oss's MXFP4 experts
// on Hopper while its docs said that support was "still ongoing" and sent Hopper users to TRITON: a
// row that states CUTLASS there is refused (kept, with the reason); TRITON, or CUTLASS on a
// Blackwell card, is scored.
TEST(PerformanceValidation, AServingRowOnAnUnmodelledMoeBackendIsRefused) {
  auto row = [](const std::string& gpu, const std::string& backend) {
    return "[[serving]]\nwhat = \"gpt-oss decode\"\npublication = \"test\"\nengine = \"tensorrt-llm\"\nmodel = \"gpt-oss-120b\"\n"
           "gpu = \"" + gpu + "\"\nprecision = \"mxfp4\"\nprompt = 1024\noutput = 1024\nconcurrency = 8\nbatching = \"static\"\n"
           "metric = \"throughput_tokens_per_s\"\npublished = 1000\nsource = \"test\"\nmoe_backend = \"" + backend + "\"\n";
  };
  auto refused = [&](const std::string& gpu, const std::string& backend) {
    auto r = run_validation(row(gpu, backend), "t", Catalog::builtin(), EfficiencyTable::builtin());
    EXPECT_TRUE(r) << (r ? "" : r.error().to_string());
    return r ? r->rows.empty() && r->unscored.size() == 1 && r->unscored.at(0).reason.find("CUTLASS") != std::string::npos : false;
  };
  EXPECT_TRUE(refused("h100-sxm", "cutlass"));
  EXPECT_FALSE(refused("h100-sxm", "triton"));
  EXPECT_FALSE(refused("b200", "cutlass"));
  auto empty = run_validation(row("h100-sxm", ""), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().field.find("moe_backend"), std::string::npos);
}

namespace {

// torchtune's README run of Llama 3.1 8B LoRA on one RTX A6000 with activation checkpointing, as
// a row's description (what, where, how), and a table of its throughput row at `published` tokens/s
// with, where given, its memory row.
const std::string kLoraA6000Run = R"(
what = "8B LoRA on an RTX A6000"
publication = "test-a"
stack = "torchtune"
model = "llama-3.1-8b"
gpu = "rtx-a6000"
task = "lora"
gpus = 1
micro_batch = 2
global_batch = 2
seq = 2048
precision = "bf16"
recompute = "full"
lora_rank = 8
source = "test"
)";

std::string lora_a6000_table(double published, bool with_memory) {
  std::string t = fmt::format("[[training]]{}metric = \"tokens_per_s_per_gpu\"\npublished = {}\n", kLoraA6000Run, published);
  if (with_memory) t += "[[memory]]" + kLoraA6000Run + "metric = \"peak_memory_gib\"\nmeasure = \"reserved\"\npublished = 30.3\n";
  return t;
}

}  // namespace

// A training row whose published throughput needs more than the GPU's dense peak under the
// recomputation it states (torchtune's README: Llama 3.1 8B LoRA at 4,699 tokens/s on one RTX A6000
// with activation checkpointing, 146% of its 154.8 TFLOP/s) is kept with the reason, unscored; the
// same row at a possible rate is scored.
TEST(PerformanceValidation, TrainingRowsBeyondTheDensePeakAreKeptUnscored) {
  auto impossible = run_validation(lora_a6000_table(4699, false), "test table", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(impossible) << impossible.error().to_string();
  EXPECT_TRUE(impossible->rows.empty());
  ASSERT_EQ(impossible->unscored.size(), 1u);
  EXPECT_NE(impossible->unscored[0].reason.find("dense peak"), std::string::npos) << impossible->unscored[0].reason;
  auto possible = run_validation(lora_a6000_table(1500, false), "test table", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(possible) << possible.error().to_string();
  EXPECT_EQ(possible->rows.size(), 1u);
  EXPECT_TRUE(possible->unscored.empty());
}

// The same run's memory row goes with it: torchtune's README gives each run's tokens/s and its
// peak memory, and an A6000 run whose tokens/s beats the card's peak was not the configuration the
// row states, so neither is its 30.3 GiB.
TEST(PerformanceValidation, AMemoryRowOfARunThatWasNotAsDescribedIsKeptUnscored) {
  auto impossible = run_validation(lora_a6000_table(4699, true), "test table", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(impossible) << impossible.error().to_string();
  EXPECT_TRUE(impossible->rows.empty());
  ASSERT_EQ(impossible->unscored.size(), 2u);
  EXPECT_NE(impossible->unscored[1].reason.find("its memory is not that configuration's"), std::string::npos)
      << impossible->unscored[1].reason;
  auto possible = run_validation(lora_a6000_table(1500, true), "test table", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(possible) << possible.error().to_string();
  EXPECT_EQ(possible->rows.size(), 2u);
}


// A row may state the NVLink its node gives a GPU where the board wires less than the part
// (`nvlink_gbps`, as datasheets count it): a tensor-parallel run then takes longer; a value
// outside 1 to 100,000 GB/s is refused, naming the key.
TEST(PerformanceValidation, ATrainingRowMayStateItsNodesNvlink) {
  auto table = [](const std::string& extra) {
    return "[[training]]\nwhat = \"7B at TP 4 on V100s\"\npublication = \"test-a\"\nstack = \"megatron\"\n"
           "model = \"llama-2-7b\"\ngpu = \"v100-32gb\"\ntask = \"pretrain\"\ngpus = 4\ntp = 4\nmicro_batch = 1\n"
           "global_batch = 8\nseq = 2048\nprecision = \"fp16\"\nsource = \"test\"\nmetric = \"step_time_s\"\npublished = 10\n" +
           extra;
  };
  auto full = run_validation(table(""), "t", Catalog::builtin(), EfficiencyTable::builtin());
  auto thin = run_validation(table("nvlink_gbps = 50\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_TRUE(full && thin);
  ASSERT_EQ(full->rows.size(), 1u);
  ASSERT_EQ(thin->rows.size(), 1u);
  EXPECT_GT(thin->rows[0].predicted, full->rows[0].predicted);
  auto bad = run_validation(table("nvlink_gbps = 0\n"), "t", Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().field.find("nvlink_gbps"), std::string::npos);
}

}  // namespace gpuplan
