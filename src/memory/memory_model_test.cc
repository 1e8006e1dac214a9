#include "memory/memory_model.h"

#include <gtest/gtest.h>

#include "hardware/catalog.h"
#include "memory/fit.h"
#include "model/presets.h"
#include "stack/stack.h"
#include "stack/fitted.h"
#include "util/units.h"
#include "util/builtin_lookup_for_tests.h"

namespace gpuplan {

namespace {
using testing_support::preset;
// The sourced figures alone: these tests pin the formulas, not the fit of data/fitted.toml.
Efficiency eff_for(const char* gpu) { return EfficiencyTable::builtin().without_fit().for_gpu(*Catalog::builtin().find(gpu)); }
Workload infer(int64_t batch, int64_t seq) {
  Workload w;
  w.task = Task::infer;
  w.micro_batch = batch;
  w.seq = seq;
  return w;
}
double kv_per_token(const char* id, Precision kv = Precision::fp16, int64_t tokens = 1024) {
  Workload w = infer(1, tokens);
  w.kv_precision = kv;
  return estimate_memory(preset(id), w, eff_for("h100-sxm")).kv_cache / static_cast<double>(tokens);
}
// One named term of the estimate, -1 when it has none.
double term_bytes(const MemoryEstimate& e, const std::string& name) {
  for (const MemoryTerm& t : e.terms)
    if (t.name == name) return t.bytes;
  return -1.0;
}
}  // namespace

TEST(KvCache, Llama31_8bIs128KiBPerTokenInFp16) {
  // 2 x 32 layers x 8 KV heads x 128 head_dim x 2 bytes = 131,072 B. Hugging Face's Llama 3.1 blog:
  // 0.125 GB per 1k tokens in fp16.
  EXPECT_DOUBLE_EQ(kv_per_token("llama-3.1-8b"), 128 * 1024);
}

TEST(KvCache, Qwen25_7bIs56KiBPerToken) {
  // config.json: 28 layers, 4 KV heads, head_dim 3584/28 = 128: 2 x 28 x 4 x 128 x 2 = 57,344 B.
  EXPECT_DOUBLE_EQ(kv_per_token("qwen2.5-7b"), 57344);
}

TEST(KvCache, Mistral7bIs128KiBPerTokenWithinItsWindow) {
  // config.json: 32 layers, 8 KV heads, head_dim 128; sliding_window 4096.
  EXPECT_DOUBLE_EQ(kv_per_token("mistral-7b", Precision::fp16, 4096), 128 * 1024);
}

TEST(KvCache, SlidingWindowCapsTheCache) {
  // Mistral 7B v0.1 keeps at most 4,096 tokens per layer: 32k tokens cost what 4k do.
  const double at_4k = kv_per_token("mistral-7b", Precision::fp16, 4096) * 4096;
  const double at_32k = kv_per_token("mistral-7b", Precision::fp16, 32768) * 32768;
  EXPECT_DOUBLE_EQ(at_32k, at_4k);
}

TEST(KvCache, Gemma2WindowsHalfItsLayers) {
  // 42 layers, 8 KV heads, head_dim 256, bf16: 2 x 8 x 256 x 2 = 8 KiB per layer-token.
  // At 8,192 tokens: 21 global layers x 8192 + 21 local layers x 4096.
  const double total = kv_per_token("gemma-2-9b", Precision::bf16, 8192) * 8192;
  EXPECT_DOUBLE_EQ(total, 8192.0 * (21 * 8192 + 21 * 4096));
}

TEST(KvCache, Fp8HalvesIt) {
  EXPECT_DOUBLE_EQ(kv_per_token("llama-3.1-8b", Precision::fp8), 64 * 1024);
}

TEST(KvCache, TensorParallelSplitsKvHeadsButNeverBelowOne) {
  Workload w = infer(1, 1000);
  w.par.tp = 8;
  const double tp8 = estimate_memory(preset("llama-3.1-70b"), w, eff_for("h100-sxm")).kv_cache;
  w.par.tp = 1;
  const double tp1 = estimate_memory(preset("llama-3.1-70b"), w, eff_for("h100-sxm")).kv_cache;
  EXPECT_DOUBLE_EQ(tp1 / tp8, 8);
  // GPT-BigCode-style MQA (1 KV head) replicates its single head on every TP rank (vLLM cache_engine).
  ModelSpec mqa = preset("llama-3.1-8b");
  mqa.kv_heads = 1;
  w.par.tp = 4;
  const double mqa_tp4 = estimate_memory(mqa, w, eff_for("h100-sxm")).kv_cache;
  w.par.tp = 1;
  EXPECT_DOUBLE_EQ(estimate_memory(mqa, w, eff_for("h100-sxm")).kv_cache, mqa_tp4);
}

// Past tp = kv_heads each head is cached on several GPUs, and an MLA latent on all of them: the
// factor attention data parallelism would divide the cache by, which infer reports.
TEST(KvCache, ReplicationCountsTheGpusHoldingEachCachedHead) {
  auto tp = [](int64_t n) {
    Parallelism p;
    p.tp = n;
    return p;
  };
  EXPECT_DOUBLE_EQ(kv_cache_replication(preset("llama-3.1-70b"), tp(8)), 1);    // 8 KV heads over 8 GPUs
  EXPECT_DOUBLE_EQ(kv_cache_replication(preset("qwen3-235b-a22b"), tp(8)), 2);  // 4 KV heads over 8
  EXPECT_DOUBLE_EQ(kv_cache_replication(preset("deepseek-v3"), tp(8)), 8);      // one latent, whole on each
  EXPECT_DOUBLE_EQ(kv_cache_replication(preset("qwen3-235b-a22b"), tp(1)), 1);
  Parallelism adp = tp(8);
  adp.attention_dp = true;
  EXPECT_DOUBLE_EQ(kv_cache_replication(preset("deepseek-v3"), adp), 1);
}

TEST(Memory, AdamMixedPrecisionIs16BytesPerParameter) {
  Workload w;
  w.seq = 16;
  const ModelSpec m = preset("llama-3.1-8b");
  const MemoryEstimate e = estimate_memory(m, w, eff_for("h100-sxm"));
  EXPECT_NEAR(e.model_states() / m.total_parameters(), 16.0, 1e-6);
}

// A model loaded in 16 bits and stepped in place (torch_dtype=bfloat16, LitGPT's bf16-true): no
// fp32 master copy, and torch's AdamW makes m and v like the parameter, 16-bit: 2 + 2 + 4 B.
TEST(Memory, PureSixteenBitAdamIs8BytesPerParameter) {
  Workload w;
  w.seq = 16;
  w.fp32_master_weights = false;
  const ModelSpec m = preset("llama-3.1-8b");
  EXPECT_NEAR(estimate_memory(m, w, eff_for("h100-sxm")).model_states() / m.total_parameters(), 8.0, 1e-6);
  w.optimizer = Optimizer::adamw8bit;  // bitsandbytes keeps its int8 states whatever the weights
  EXPECT_NEAR(estimate_memory(m, w, eff_for("h100-sxm")).model_states() / m.total_parameters(), 6.0, 1e-6);
}

TEST(Memory, BreakdownSumsToTheTotal) {
  Workload w;
  const MemoryEstimate e = estimate_memory(preset("mistral-7b"), w, eff_for("a100-80gb-sxm"));
  EXPECT_NEAR(e.weights + e.gradients + e.optimizer + e.activations + e.kv_cache + e.overhead(), e.nvidia_smi(), 1);
  double terms = 0;
  for (const auto& t : e.terms) terms += t.bytes;
  EXPECT_NEAR(terms, e.nvidia_smi(), 1);
}

TEST(Memory, RecomputeCutsActivations) {
  Workload w;
  w.seq = 4096;
  w.micro_batch = 4;
  const ModelSpec m = preset("llama-3.1-8b");
  const auto eff = eff_for("h100-sxm");
  w.recompute = Recompute::none;
  const double none = estimate_memory(m, w, eff).activations;
  w.recompute = Recompute::full;
  const double full = estimate_memory(m, w, eff).activations;
  EXPECT_LT(full, none / 3);
}

// torchtitan's ChunkedLossWrapper (docs/chunked_loss.md) runs the LM head and the loss 1,024 tokens at
// a time: a chunk's logits in 16-bit and fp32 plus the hidden-state gradient the chunks fill, never
// the whole 32k-token logits.
TEST(Memory, AChunkOfTokensBoundsTheFusedLossLogits) {
  Workload w;
  w.seq = 32768;
  w.loss = Loss::fused;
  w.loss_chunk_tokens = 1024;
  const ModelSpec m = preset("llama-3.1-8b");
  auto logits = [&] { return term_bytes(estimate_memory(m, w, eff_for("h100-sxm")), "logits and loss"); };
  const double a = eff_for("h100-sxm").fit.activation_scale;
  EXPECT_NEAR(logits(), a * (1024.0 * m.vocab * (2 + 8) + 32768.0 * m.hidden * 2), 1);
  w.loss = Loss::standard;
  EXPECT_FALSE(w.check_loss_chunk() == std::nullopt);
  w.loss = Loss::compiled;
  EXPECT_FALSE(w.check_loss_chunk() == std::nullopt);
}

// Eager cross-entropy on upcast bf16 logits peaks as its backward starts: the saved fp32
// log-softmax, nll_loss's fp32 gradient and log_softmax_backward's fp32 output (12 B a value).
// Compiled with the model (torchtitan-compile's default) the fp32 work stays inside fused kernels:
// the bf16 logits and their bf16 gradient (4 B), a third of it.
TEST(Memory, CompilingTheLossKeepsOnlyTheLogitsAndTheirGradient) {
  Workload w;
  w.seq = 8192;
  w.micro_batch = 2;
  const ModelSpec m = preset("llama-3.1-8b");
  const auto eff = eff_for("h100-sxm");
  auto logits = [&] { return term_bytes(estimate_memory(m, w, eff), "logits and loss"); };
  const double values = 8192.0 * 2 * m.vocab, a = eff.fit.activation_scale;
  w.loss = Loss::standard;
  EXPECT_NEAR(logits(), a * values * 12, 1);
  w.loss = Loss::compiled;
  EXPECT_NEAR(logits(), a * values * 4, 1);
  EXPECT_EQ(StackCatalog::builtin().find("torchtitan-compile")->default_loss, "compiled");
  EXPECT_EQ(StackCatalog::builtin().find("torchtitan")->default_loss, "standard");
}

TEST(Memory, FlashAttentionRemovesTheQuadraticTerm) {
  Workload w;
  w.seq = 8192;
  w.flash_attention = false;
  const ModelSpec m = preset("llama-2-7b");
  const auto eff = eff_for("h100-sxm");
  const double eager = estimate_memory(m, w, eff).activations;
  w.flash_attention = true;
  const double flash = estimate_memory(m, w, eff).activations;
  // 32 heads x 8192^2 x 2 B = 4 GiB per layer of softmax output alone.
  EXPECT_GT(eager - flash, 32 * 4.0 * kGiB);
}

TEST(Memory, KorthikantiSelectiveWithSequenceParallelIs34sbhOverT) {
  // Korthikanti et al. 2022, Table 2: sequence parallel + selective recompute stores 34 sbh / t
  // bytes per layer (GPT layer: f = 4h, a*d = h, 16-bit activations, dropout).
  ModelSpec m = preset("gpt3-175b");
  Workload w;
  w.task = Task::pretrain;
  w.seq = 2048;
  w.micro_batch = 1;
  w.recompute = Recompute::selective;
  w.flash_attention = false;
  w.par.tp = 8;
  w.par.pp = 96;  // one layer per stage, so "layer activations" is one layer x 1 micro-batch
  w.grad_accum = 1;
  const MemoryEstimate e = estimate_memory(m, w, eff_for("a100-80gb-sxm"));
  double layer = 0;
  for (const auto& t : e.terms)
    if (t.name == "layer activations") layer = t.bytes;
  EXPECT_DOUBLE_EQ(layer, 34.0 * 2048 * 1 * 12288 / 8);
}

TEST(Memory, ZeroStagesShardWhatTheyShould) {
  Workload w;
  w.seq = 16;
  w.par.dp = 8;
  const ModelSpec m = preset("llama-3.1-8b");
  const auto eff = eff_for("h100-sxm");
  MemoryEstimate z[4];
  for (int s = 0; s < 4; ++s) {
    w.par.zero = s;
    z[s] = estimate_memory(m, w, eff);
  }
  EXPECT_DOUBLE_EQ(z[0].optimizer / z[1].optimizer, 8);
  EXPECT_DOUBLE_EQ(z[1].gradients / z[2].gradients, 8);
  EXPECT_LT(z[3].weights, z[2].weights / 4);
  EXPECT_GT(z[3].fsdp_working_set, 0);
}

// torchtitan under pipeline stages: torch.distributed.pipelining turns FSDP's gradient sync off
// until the last micro-batch, and FSDP2 keeps the unsharded gradients in its fp32 reduce dtype; a
// Megatron-class stack reduce-scatters each micro-batch and keeps its shard.
TEST(Memory, FsdpUnderPipelineStagesHoldsWholeFp32GradientsUntilTheLastMicroBatch) {
  Workload w;
  w.task = Task::pretrain;
  w.micro_batch = 1;
  w.seq = 4096;
  w.grad_accum = 8;
  w.par.tp = 8, w.par.pp = 8, w.par.dp = 8, w.par.zero = 3;
  Workload titan = w, megatron = w;
  apply_stack_layout(*StackCatalog::builtin().find("torchtitan"), titan);
  apply_stack_layout(*StackCatalog::builtin().find("megatron"), megatron);
  EXPECT_TRUE(titan.par.defer_grad_reduce);
  EXPECT_FALSE(megatron.par.defer_grad_reduce);
  const MemoryEstimate a = estimate_memory(preset("llama-3.1-405b"), titan, eff_for("h100-sxm"));
  const MemoryEstimate b = estimate_memory(preset("llama-3.1-405b"), megatron, eff_for("h100-sxm"));
  // 4 B whole against 2 B over 8 shards.
  EXPECT_NEAR(a.gradients / b.gradients, 4.0 * 8 / 2, 0.5);
}

// LitGPT's LoRA under Lightning Fabric's FSDP1 (its resource tables: 7B on 2 A100s 20.66 GiB, 13B
// on 4 A100s 33.1 GiB allocated, both about the whole bf16 model plus its shard): use_orig_params
// wraps frozen weights and adapters in one flat parameter, which gets gradients for all of them,
// and no_sync() keeps them unsharded over the accumulation steps. The syncing step alone would hold
// a shard; Hugging Face's PEFT under FSDP holds adapter gradients only.
TEST(Memory, FabricFsdpLoraAccumulatesWholeGradientsOfTheFrozenWeights) {
  Workload w;
  w.task = Task::lora;
  w.lora_rank = 8;
  w.micro_batch = 1;
  w.seq = 1304;
  w.grad_accum = 64;
  w.recompute = Recompute::full;
  w.par.dp = 2, w.par.zero = 3;
  const ModelSpec m = preset("llama-2-7b");
  Workload fabric = w, hf = w;
  apply_stack_training(*StackCatalog::builtin().find("litgpt"), fabric);
  apply_stack_training(*StackCatalog::builtin().find("hf"), hf);
  const double layers = static_cast<double>(m.parameters().per_layer()) * m.layers;
  const MemoryEstimate a = estimate_memory(m, fabric, eff_for("a100-40gb-sxm"));
  EXPECT_NEAR(a.gradients, layers * 2, layers * 0.01);  // every layer weight, bf16, unsharded
  fabric.grad_accum = 1;
  EXPECT_NEAR(estimate_memory(m, fabric, eff_for("a100-40gb-sxm")).gradients, layers * 2 / 2, layers * 0.01);
  EXPECT_LT(estimate_memory(m, hf, eff_for("a100-40gb-sxm")).gradients, 0.01 * layers);
}

// Megatron accumulates and reduces bf16 gradients in fp32 main_grad buffers (arguments.py turns
// --accumulate-allreduce-grads-in-fp32 on for bf16): 4 B a parameter, where fp16 and stacks
// without the buffers keep 2 B; a run that reduces in bf16 (NeMo's FP8 performance recipes) is
// back to 2 B.
TEST(Memory, MegatronKeepsBf16GradientsInFp32) {
  Workload w;
  w.task = Task::pretrain;
  w.micro_batch = 1;
  w.seq = 2048;
  const ModelSpec m = preset("llama-3.1-8b");
  const double params = static_cast<double>(m.parameters().total());
  Workload megatron = w, torchtitan = w;
  apply_stack_training(*StackCatalog::builtin().find("megatron"), megatron);
  apply_stack_training(*StackCatalog::builtin().find("torchtitan"), torchtitan);
  const auto grads = [&](const Workload& x) { return estimate_memory(m, x, eff_for("h100-sxm")).gradients; };
  EXPECT_NEAR(grads(megatron), 4 * params, 0.01 * params);
  EXPECT_NEAR(grads(torchtitan), 2 * params, 0.01 * params);
  megatron.precision = Precision::fp16;
  EXPECT_NEAR(grads(megatron), 2 * params, 0.01 * params);
  megatron.precision = Precision::bf16;
  megatron.bf16_grads_in_fp32 = false;
  EXPECT_NEAR(grads(megatron), 2 * params, 0.01 * params);
}

TEST(Memory, LoraTrainsOnlyAdapters) {
  Workload w;
  w.task = Task::lora;
  w.lora_rank = 16;
  const ModelSpec m = preset("llama-3.1-8b");
  const MemoryEstimate e = estimate_memory(m, w, eff_for("h100-sxm"));
  EXPECT_EQ(e.trainable_parameters, m.lora_parameters(16));
  EXPECT_LT(e.gradients, 0.02 * e.weights);  // rank-16 adapters are ~0.5% of 8B
}

// bitsandbytes' MatMul4Bit keeps each 4-bit linear's input for backward; torchao's NF4 linear keeps
// only the weight, as a frozen 16-bit nn.Linear does. Llama 2 7B without recompute: per layer and
// token, the attention input h, the output projection's input h, the MLP input h and the down
// projection's input 11008, in bf16, in all 32 layers.
TEST(Memory, BitsandbytesQloraKeepsTheInputsOfItsFourBitLinears) {
  Workload w;
  w.task = Task::qlora;
  w.micro_batch = 1;
  w.seq = 1304;
  w.recompute = Recompute::none;
  const ModelSpec m = preset("llama-2-7b");
  Workload bnb = w, torchao = w;
  apply_stack_training(*StackCatalog::builtin().find("hf"), bnb);
  apply_stack_training(*StackCatalog::builtin().find("torchtune"), torchao);
  const auto layer_acts = [&](const Workload& x) {
    return term_bytes(estimate_memory(m, x, eff_for("a100-40gb-sxm")), "layer activations");
  };
  const double kept = (3.0 * 4096 + 11008) * 2 * 1304 * 32;
  EXPECT_NEAR(layer_acts(bnb) - layer_acts(torchao), kept, 1e-6 * kept);
  // A 16-bit LoRA run through the same stack keeps none of them.
  bnb.task = Task::lora;
  EXPECT_NEAR(layer_acts(bnb), layer_acts(torchao), 1.0);
}

// Lightning's bitsandbytes plugin replaces the nn.Linear class, LitGPT's LM head included, and
// quantises from float16, so a dequantised linear is a float16 copy and its bf16 cast at once.
// Llama 3.1 8B: the head's 128256 x 4096 values move from 2 B to nf4, and the buffer is that head
// in 16 bits twice where the Hugging Face stack's is its largest block linear once.
TEST(Memory, LitgptQloraQuantisesTheHeadAndDequantisesItTwice) {
  Workload w;
  w.task = Task::qlora;
  w.micro_batch = 1;
  w.seq = 512;
  const ModelSpec m = preset("llama-3.1-8b");
  Workload lit = w, hf = w;
  apply_stack_training(*StackCatalog::builtin().find("litgpt"), lit);
  apply_stack_training(*StackCatalog::builtin().find("hf"), hf);
  const MemoryEstimate a = estimate_memory(m, lit, eff_for("a100-40gb-sxm"));
  const MemoryEstimate b = estimate_memory(m, hf, eff_for("a100-40gb-sxm"));
  const double head = 128256.0 * 4096;
  EXPECT_NEAR(b.weights - a.weights, head * (2 - bytes_per_value(Precision::nf4)), 1e-6 * head);
  EXPECT_NEAR(term_bytes(a, "dequantisation buffer"), head * 2 * 2, 1.0);
  EXPECT_NEAR(term_bytes(b, "dequantisation buffer"), 14336.0 * 4096 * 2, 1.0);
}

// Double quantisation stores each 64-weight block's fp32 absmax again in 8 bits (QLoRA paper,
// section 3): 4.127 bits a weight; without it, 4 + 32/64 = 4.5 bits.
TEST(Memory, QloraWithoutDoubleQuantisationKeepsAnFp32ScalePer64Weights) {
  Workload w;
  w.task = Task::qlora;
  const ModelSpec m = preset("llama-3.1-8b");
  Workload single = w;
  single.double_quant = false;
  const double linears = static_cast<double>(m.parameters().linear);
  const double diff = estimate_memory(m, single, eff_for("h100-sxm")).weights - estimate_memory(m, w, eff_for("h100-sxm")).weights;
  EXPECT_NEAR(diff, linears * (4.5 - 4.127) / 8, 1e-6 * linears);
  EXPECT_TRUE(w.validate(m) == std::nullopt);
  single.task = Task::lora;
  ASSERT_TRUE(single.validate(m).has_value());
  EXPECT_EQ(single.validate(m)->field, "--no-double-quant");
}

TEST(Memory, QloraOf8bFitsOnA24GbCard) {
  // The common single-GPU QLoRA recipe (QLoRA paper; Answer.AI): 8B at 2k context with checkpointing.
  Workload w;
  w.task = Task::qlora;
  w.recompute = Recompute::full;
  w.seq = 2048;
  const Gpu g = *Catalog::builtin().find("rtx-4090");
  EXPECT_TRUE(check_fit(preset("llama-3.1-8b"), w, g, eff_for("rtx-4090")).fits);
}

TEST(Memory, FullFineTuneOf70bDoesNotFitOneH100) {
  Workload w;
  const Gpu g = *Catalog::builtin().find("h100-sxm");
  const ModelSpec m = preset("llama-3.1-70b");
  const FitReport f = check_fit(m, w, g, eff_for("h100-sxm"));
  EXPECT_FALSE(f.fits);
  EXPECT_FALSE(f.max_batch.has_value());
  auto split = smallest_fitting_split(m, w, g, eff_for("h100-sxm"));
  ASSERT_TRUE(split.has_value());
  // 70.6B x 16 B = 1.13 TB of model states: at least 16 x 80 GB cards.
  EXPECT_GE(split->par.gpus(), 16);
}

TEST(Fit, MaxBatchIsTheLargestThatFits) {
  Workload w = infer(1, 4096);
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu g = *Catalog::builtin().find("h100-sxm");
  const auto eff = eff_for("h100-sxm");
  const FitReport f = check_fit(m, w, g, eff);
  ASSERT_TRUE(f.max_batch.has_value());
  Workload at = w, over = w;
  at.micro_batch = *f.max_batch;
  over.micro_batch = *f.max_batch + 1;
  EXPECT_LE(estimate_memory(m, at, eff).nvidia_smi(), f.capacity_bytes);
  EXPECT_GT(estimate_memory(m, over, eff).nvidia_smi(), f.capacity_bytes);
}

TEST(Fit, LongestSequenceIsCappedAtTheModelContext) {
  Workload w = infer(1, 1024);
  const FitReport f = check_fit(preset("gpt2"), w, *Catalog::builtin().find("h100-sxm"), eff_for("h100-sxm"));
  ASSERT_TRUE(f.max_seq.has_value());
  EXPECT_EQ(*f.max_seq, 1024);
  EXPECT_TRUE(f.max_seq_capped);
}

// The default headroom keeps the top of the training estimate's error band free, by task class
// (data/fitted.toml memory_band_<task>); --headroom replaces it with a plain fraction.
TEST(Headroom, DefaultKeepsTheTaskErrorBandAndTheFlagReplacesIt) {
  Workload w;
  w.task = Task::qlora;
  w.micro_batch = 1;
  w.seq = 2048;
  const Gpu gpu = *Catalog::builtin().find("rtx-a6000");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(gpu, *StackCatalog::builtin().find("hf"));
  const MemoryEstimate e = estimate_memory(preset("llama-2-7b"), w, eff);
  const FitBand& band = FittedParameters::builtin().global.memory_band_for("qlora");
  ASSERT_GT(band.rows, 0);
  ASSERT_TRUE(e.per_gpu_bytes_band);
  EXPECT_NEAR(e.per_gpu_bytes_band->second, e.nvidia_smi() * band.high, 1);
  const double cap = usable_memory_bytes(gpu);
  const MemoryMargin by_default = margin_on_card(e, cap, default_headroom(0.10, "test"));
  EXPECT_NEAR(by_default.required_bytes, std::max(0.10 * cap, (band.high - 1) * e.nvidia_smi()), 1);
  const MemoryMargin by_flag = margin_on_card(e, cap, Headroom{0.05, "--headroom"});
  EXPECT_NEAR(by_flag.required_bytes, 0.05 * cap, 1);
  // A band wider than the fraction decides: a job at 80% of the card fits a 10% rule, not a 1.4x band.
  MemoryEstimate big = e;
  big.per_gpu_bytes_band = std::pair{0.8 * cap * 0.8, 0.8 * cap * 1.4};
  const double est = 0.8 * cap;
  EXPECT_TRUE(memory_margin(est, cap, Headroom{0.10, "x"}, big.per_gpu_bytes_band->second).fits);
  EXPECT_FALSE(memory_margin(est, cap, default_headroom(0.10, "x"), big.per_gpu_bytes_band->second).fits);
}

// A layer's backward holds the activation gradients of the op it is in, not a whole layer's worth:
// in a gated MLP the down projection's input gradient and the gate and up gradients made from it
// (3 x 14,336 values a token for Llama 3.1 8B), beside the residual stream's gradient in and out.
// Full recompute rebuilds the layer on top.
TEST(Memory, BackwardHoldsTheMlpGradientsNotAWholeLayersWorth) {
  Workload w;
  w.seq = 4096;
  w.micro_batch = 2;
  w.recompute = Recompute::none;
  const ModelSpec m = preset("llama-3.1-8b");
  const auto eff = eff_for("h100-sxm");
  auto working_set = [&] { return term_bytes(estimate_memory(m, w, eff), "backward working set"); };
  const double tokens = 4096.0 * 2, a = eff.fit.activation_scale;
  EXPECT_NEAR(working_set(), a * tokens * (3 * 14336.0 + 2 * 4096.0) * 2, 1);
  const double grads = working_set();
  w.recompute = Recompute::full;
  const double full = working_set();
  EXPECT_GT(full, grads * 1.5);  // the rebuilt layer comes on top
  // Without a fused attention kernel the scores' gradients (heads x seq per token, twice) win.
  w.recompute = Recompute::none;
  w.flash_attention = false;
  EXPECT_NEAR(working_set(), a * tokens * (2 * 32.0 * 4096 + 2 * 4096.0) * 2, 1);
}

}  // namespace gpuplan

namespace gpuplan {

// torchtune's single-GPU full fine-tune of Llama 3.1 8B (recipes/configs/llama3_1/
// 8B_full_single_device.yaml): bf16 weights trained directly, bitsandbytes PagedAdamW8bit and the
// optimizer stepped in backward. Its README reports 18.9 GiB reserved on a 4090: the bf16 weights
// (15 GiB) and little else, since paged states live outside PyTorch's allocator.
TEST(Optimizer, InBackwardKeepsOneLayerOfGradientsAndPagedStatesLeaveTheCard) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  Workload w;
  w.task = Task::full;
  w.optimizer = Optimizer::adamw8bit;
  w.micro_batch = 2;
  w.seq = 2048;
  w.recompute = Recompute::full;
  w.loss = Loss::chunked;  // CEWithChunkedOutputLoss, the recipe's loss in 2024
  const Efficiency eff = EfficiencyTable::builtin().without_fit().for_gpu(*Catalog::builtin().find("rtx-4090"));
  const MemoryEstimate plain = estimate_memory(m, w, eff);
  w.optimizer_in_backward = true;
  w.paged_optimizer = true;
  w.fp32_master_weights = false;
  const MemoryEstimate tt = estimate_memory(m, w, eff);
  const double params = static_cast<double>(m.parameters().total());
  EXPECT_NEAR(tt.gradients, plain.gradients / static_cast<double>(m.layers), plain.gradients * 0.01);
  EXPECT_EQ(tt.optimizer, 0);                       // no master copy; states paged
  EXPECT_NEAR(tt.cpu_offload, params * 2, params * 0.01);  // 8-bit m and v: 2 B a parameter, in host memory at worst
  EXPECT_GT(plain.optimizer, params * 5);          // 2 B states + 4 B fp32 master on the card
  EXPECT_NEAR(tt.reserved() / kGiB, 18.9, 18.9 * 0.15);
  EXPECT_FALSE(w.validate(m));
  w.grad_accum = 2;
  ASSERT_TRUE(w.validate(m));
  EXPECT_EQ(w.validate(m)->field, "--optimizer-in-backward");
}

}  // namespace gpuplan
