#include <gtest/gtest.h>

#include <numeric>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hardware/catalog.h"
#include "hardware/platform.h"
#include "memory/fit.h"
#include "model/presets.h"
#include "perf/inference.h"
#include "perf/offload.h"
#include "perf/operations.h"
#include "perf/phase_roofline.h"
#include "perf/training.h"
#include "util/builtin_lookup_for_tests.h"

namespace gpuplan {

namespace {
const Engine& vllm() {
  static const Engine e = *EngineCatalog::builtin().find("vllm");
  return e;
}
using testing_support::preset;
using testing_support::gpu;
Efficiency eff(const Gpu& g) { return EfficiencyTable::builtin().for_gpu(g); }
const Stack& megatron() {
  static const Stack s = *StackCatalog::builtin().find("megatron");
  return s;
}
Efficiency train_eff(const Gpu& g) { return EfficiencyTable::builtin().for_gpu(g, megatron()); }
// The sourced figures alone (no fitted scales), for a stack under test.
Efficiency unfitted(const Gpu& g, const Stack& s) { return EfficiencyTable::builtin().without_fit().for_gpu(g, s); }
Stack stack(const char* id) { return *StackCatalog::builtin().find(id); }
// One GPU training `micro_batch` sequences of `seq` tokens.
Workload training(Task task, int64_t micro_batch, int64_t seq, Precision p = Precision::bf16) {
  Workload w;
  w.task = task;
  w.precision = p;
  w.micro_batch = micro_batch;
  w.seq = seq;
  return w;
}
}  // namespace

TEST(Roofline, DecodeAtBatchOneIsMemoryBoundOnEveryGpu) {
  Workload w;
  w.task = Task::infer;
  w.micro_batch = 1;
  w.seq = 2048;
  for (const Gpu& g : Catalog::builtin().gpus()) {
    const RooflineReport r = roofline(preset("llama-3.1-8b"), w, g, eff(g), Phase::decode);
    EXPECT_TRUE(r.memory_bound()) << g.id;
    for (const auto& op : r.ops)
      if (op.name == "MLP gate+up projection") {
        EXPECT_LT(op.intensity, 2.0) << g.id;  // a GEMV does ~1 FLOP per weight byte in 16-bit
        EXPECT_TRUE(op.memory_bound) << g.id;
      }
  }
}

TEST(Roofline, LargePrefillGemmsAreComputeBoundOnH100) {
  Workload w;
  w.task = Task::infer;
  w.micro_batch = 1;
  w.seq = 4096;
  const Gpu h100 = gpu("h100-sxm");
  const RooflineReport r = roofline(preset("llama-3.1-70b"), w, h100, eff(h100), Phase::prefill);
  EXPECT_FALSE(r.memory_bound());
  EXPECT_NEAR(r.ridge_point, 989.5e12 / 3350e9, 1);  // 295 FLOP/byte
  for (const auto& op : r.ops)
    if (op.name.find("projection") != std::string::npos) {
      EXPECT_FALSE(op.memory_bound) << op.name;
      EXPECT_GT(op.intensity, r.ridge_point) << op.name;
    }
}

TEST(Roofline, NormsAndActivationsAreMemoryBoundEvenInTraining) {
  Workload w;
  w.micro_batch = 4;
  const Gpu h100 = gpu("h100-sxm");
  const RooflineReport r = roofline(preset("llama-3.1-8b"), w, h100, eff(h100), Phase::train);
  for (const auto& op : r.ops)
    if (op.name == "attention norm" || op.name == "SwiGLU activation") {
      EXPECT_TRUE(op.memory_bound) << op.name;
    }
}

// A V100's FP32 units run a GEMM 8x slower than its tensor cores: a BERT-large MLP GEMM at 2,048
// tokens (17 GFLOP) that is small for the tensor cores fills them, reaching the share of the FP32
// peak that the 8x larger tensor-core GEMM reaches of the FP16 peak.
TEST(Roofline, Fp32GemmsFillTheGpuSoonerThanTensorCoreGemms) {
  const Gpu v100 = gpu("v100-32gb");
  const Efficiency e = eff(v100);
  auto fraction = [&](double flops, Precision p) {
    Op op{"gemm", OpKind::matmul, flops, 0};
    return flops / (time_op(op, v100, e, p).compute_s * op_peak_flops(v100, OpKind::matmul, p));
  };
  const double gemm = 2.0 * 2048 * 1024 * 4096;
  const double ratio = op_peak_flops(v100, OpKind::matmul, Precision::fp16) / op_peak_flops(v100, OpKind::matmul, Precision::fp32);
  EXPECT_GT(ratio, 7.0);
  EXPECT_GT(fraction(gemm, Precision::fp32), fraction(gemm, Precision::fp16) + 0.1);
  // ... at the size curve's point of a tensor-core GEMM as long, and toward SGEMM's own ceiling.
  EXPECT_NEAR(fraction(gemm, Precision::fp32),
              fraction(gemm * ratio, Precision::fp16) * e.matmul_max_fraction_fp32 / e.matmul_max_fraction, 1e-9);
}

// Llama rotates q and k every layer; MPT's ALiBi is a bias inside the attention kernel and GPT-2
// adds learned positions once at the input, so neither pays the rotary pass.
TEST(Operations, OnlyRotaryModelsPayTheRotaryPass) {
  ForwardShape s;
  s.tokens = 4096;
  s.kv_len = 4096;
  auto has_rotary = [&](const char* id) {
    for (const Op& op : block_forward_ops(preset(id), s))
      if (op.name == "rotary embedding") return true;
    return false;
  };
  EXPECT_TRUE(has_rotary("llama-3.1-8b"));
  EXPECT_FALSE(has_rotary("mpt-7b"));
  EXPECT_FALSE(has_rotary("gpt2"));
}

TEST(Flops, MegatronFormulaForAGpt3Layer) {
  // Narayanan et al. 2021, Eq. 3 without recompute: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) for fwd+bwd.
  const ModelSpec m = preset("gpt3-175b");
  const double B = 1, s = 2048, l = 96, h = 12288, V = 50257;
  const double expected = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(3 * model_forward_flops(m, B * s, s) / expected, 1.0, 1e-9);
}

TEST(Training, MfuIsBelowOneAndHfuAboveMfuWithRecompute) {
  Workload w;
  w.task = Task::pretrain;
  w.seq = 4096;
  w.recompute = Recompute::full;
  w.par.dp = 8;
  const Gpu h100 = gpu("h100-sxm");
  const TrainingEstimate e = estimate_training(preset("llama-3.1-8b"), w, h100, train_eff(h100), megatron(), default_cluster(h100), {});
  EXPECT_GT(e.mfu, 0.2);
  EXPECT_LT(e.mfu, 0.8);
  EXPECT_NEAR(e.hfu / e.mfu, 4.0 / 3.0, 1e-9);
}

TEST(Training, TensorParallelOverPcieCostsMoreThanOverNvlink) {
  Workload w;
  w.task = Task::pretrain;
  w.par.tp = 4;
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu h100 = gpu("h100-sxm"), l40s = gpu("l40s");
  const auto a = estimate_training(m, w, h100, train_eff(h100), megatron(), default_cluster(h100), {});
  const auto b = estimate_training(m, w, l40s, train_eff(l40s), megatron(), default_cluster(l40s), {});
  EXPECT_EQ(a.tp_link, "NVLink");
  EXPECT_EQ(b.tp_link, "PCIe");
  EXPECT_GT(b.breakdown.tp_comm_s / b.step_time_s, a.breakdown.tp_comm_s / a.step_time_s);
}

// With TE userbuffers or async TP the collectives run under the neighbouring GEMMs: over NVLink a
// 70B layer's GEMMs hide them; over PCIe (L40S) only part hides, but still less is exposed.
TEST(Training, OverlappedTensorParallelHidesCollectivesBehindGemms) {
  Workload w;
  w.task = Task::pretrain;
  w.micro_batch = 1;
  w.seq = 8192;
  w.par.tp = 8;
  const ModelSpec m = preset("llama-3.1-70b");
  Stack plain = megatron(), overlapped = megatron();
  plain.overlap_tp = false;
  overlapped.overlap_tp = true;
  for (const char* id : {"h100-sxm", "l40s"}) {
    const Gpu g = gpu(id);
    const auto off = estimate_training(m, w, g, train_eff(g), plain, default_cluster(g), {});
    const auto on = estimate_training(m, w, g, train_eff(g), overlapped, default_cluster(g), {});
    EXPECT_GT(off.breakdown.tp_comm_s, 0) << id;
    EXPECT_LT(on.breakdown.tp_comm_s, off.breakdown.tp_comm_s) << id;
    EXPECT_LT(on.step_time_s, off.step_time_s) << id;
  }
  // Unfitted (the whole hideable share hidden), an H100's GEMMs cover the collectives entirely.
  const Gpu h100 = gpu("h100-sxm");
  const Efficiency unfitted = EfficiencyTable::builtin().without_fit().for_gpu(h100, overlapped);
  EXPECT_EQ(estimate_training(m, w, h100, unfitted, overlapped, default_cluster(h100), {}).breakdown.tp_comm_s, 0);
}

// torchao's rowwise recipe re-scales each gradient GEMM's output and re-casts the saved input per
// linear module: model code with separate Q, K and V (and gate and up) modules pays it five times
// on the inputs where a fused QKV and gate/up pays it twice. Tensorwise has no such work beyond
// the smaller GEMMs separate modules run.
TEST(Training, RowwiseFp8BackwardWorkFollowsTheModelsLinearModules) {
  Workload w;
  w.task = Task::pretrain;
  w.micro_batch = 2;
  w.seq = 8192;
  w.precision = Precision::fp8;
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu g = gpu("h100-sxm");
  Stack fused = *StackCatalog::builtin().find("torchtitan-compile"), separate = fused;
  fused.separate_projections = false;
  separate.separate_projections = true;
  const Efficiency e = EfficiencyTable::builtin().for_gpu(g, fused);
  const auto step = [&](const Stack& s, const char* recipe) {
    w.fp8_recipe = recipe;
    return estimate_training(m, w, g, e, s, default_cluster(g), {}).step_time_s;
  };
  EXPECT_GT(step(separate, "rowwise"), step(fused, "rowwise"));
  EXPECT_GT(step(fused, "rowwise"), step(fused, "tensorwise"));
  // Separate modules also run smaller GEMMs, under either recipe; rowwise adds its per-module work.
  EXPECT_GT(step(separate, "rowwise") - step(fused, "rowwise"), step(separate, "tensorwise") - step(fused, "tensorwise"));
}

// FSDP prefetches each gather under the pass that needs it; in the backward the gradients'
// reduce-scatter crosses the same link as the backward's gather. Over 100 Gbit/s per GPU (the
// PyTorch FSDP blog's H100 cluster, 800 Gbit/s a node) Llama 2 7B's backward gather and
// reduce-scatter together outlast the backward; over 400 all of it hides.
TEST(Training, FsdpReduceScatterSharesTheBackwardsLinkWithItsGather) {
  Workload w;
  w.task = Task::pretrain;
  w.micro_batch = 2;
  w.seq = 4096;
  w.par.zero = 3;
  w.par.dp = 96;
  const ModelSpec m = preset("llama-2-7b");
  const Gpu g = gpu("h100-sxm");
  const Stack torchtitan = *StackCatalog::builtin().find("torchtitan");
  const Efficiency e = EfficiencyTable::builtin().without_fit().for_gpu(g, torchtitan);
  Cluster slow = default_cluster(g), fast = slow;
  slow.network_Bps = 100e9 / 8;
  const auto at = [&](const Cluster& c) { return estimate_training(m, w, g, e, torchtitan, c, {}); };
  const TrainingEstimate s = at(slow), f = at(fast);
  EXPECT_GT(s.breakdown.dp_comm_exposed_s, 0);
  EXPECT_LT(s.breakdown.dp_comm_exposed_s, s.breakdown.dp_comm_total_s);
  EXPECT_EQ(f.breakdown.dp_comm_exposed_s, 0);
  EXPECT_GT(s.step_time_s, f.step_time_s);
}

// FSDP gathers and reduce-scatters one transformer block at a time, so each micro-batch pays a
// ring's latency per layer, three times (forward gather, backward gather, gradient reduce-scatter).
// Over 1,536 A100s each ring is 7.3 ms (NCCL's tuning model), over 64 about 0.5 ms.
TEST(Training, FsdpPaysARingLatencyPerLayerThatGrowsWithTheGroup) {
  Workload w;
  w.task = Task::pretrain;
  w.micro_batch = 1;
  w.seq = 2048;
  w.par.zero = 3;
  w.recompute = Recompute::full;
  const ModelSpec m = preset("llama-2-7b");
  const Gpu g = gpu("a100-80gb-sxm");
  const Stack torchtitan = *StackCatalog::builtin().find("torchtitan");
  const Efficiency e = EfficiencyTable::builtin().without_fit().for_gpu(g, torchtitan);
  // A 400 Gb/s NIC a GPU, where the rings' bandwidth terms of 64 and 1,536 ranks (their (n-1)/n
  // shares) differ by under 5% of the latency this test measures.
  Cluster c = default_cluster(g);
  c.network_Bps = 400e9 / 8;
  const auto total = [&](int64_t dp) {
    w.par.dp = dp;
    return estimate_training(m, w, g, e, torchtitan, c, {}).breakdown.dp_comm_total_s;
  };
  const double per_layer = ring_latency(1536, 1, g, e, c) - ring_latency(64, 1, g, e, c);
  // Forward and backward gathers and the reduce-scatter: 3 x (layers - 1) further rings each.
  EXPECT_NEAR(total(1536) - total(64), 3 * (m.layers - 1) * per_layer, 0.05 * 3 * (m.layers - 1) * per_layer);
}

// torch's default AdamW (foreach) runs its update as seven separate passes over fp32 tensors, 72 B
// a parameter (torch/optim/adam.py _multi_tensor_adam), where a fused kernel moves 28: the Hugging
// Face stack's optimizer step costs 72/28 of a fused stack's on the same work.
TEST(Training, UnfusedAdamwMovesMoreBytesAParameter) {
  const Workload w = training(Task::full, 1, 512);
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu g = gpu("a100-80gb-sxm");
  Stack fused = stack("hf"), unfused = fused;
  ASSERT_FALSE(unfused.fused_optimizer);
  fused.fused_optimizer = true;
  const Efficiency e = unfitted(g, fused);
  const auto opt = [&](const Stack& s) { return estimate_training(m, w, g, e, s, default_cluster(g), {}).breakdown.optimizer_s; };
  EXPECT_NEAR(opt(unfused) / opt(fused), 72.0 / 28.0, 1e-9);
}

// A model trained in bf16 with no fp32 master copy keeps its AdamW states in bf16 (torch.optim
// creates them as zeros_like(param)): each pass moves half the bytes, as the memory model counts
// half the state bytes.
TEST(Training, AdamwOverBf16ParametersMovesHalfTheBytes) {
  Workload w = training(Task::full, 1, 512);
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu g = gpu("a100-80gb-sxm");
  const Stack hf = stack("hf");
  const Efficiency e = unfitted(g, hf);
  const auto opt = [&](const Workload& x) { return estimate_training(m, x, g, e, hf, default_cluster(g), {}).breakdown.optimizer_s; };
  const double master = opt(w);
  w.fp32_master_weights = false;
  EXPECT_NEAR(opt(w) / master, 0.5, 1e-9);
  w.optimizer = Optimizer::adamw8bit;  // its states are 8-bit whatever the weights
  const double eight = opt(w);
  w.fp32_master_weights = true;
  EXPECT_DOUBLE_EQ(opt(w), eight);
}

// BERT fine-tuned for classification or QA spans swaps its MLM head for a small task head: no
// vocabulary projection and no cross-entropy over 30,522 logits a token (the memory model already
// leaves the logits out). Pre-training keeps the MLM head.
TEST(Training, EncoderFineTunesCarryNoLmHead) {
  Workload w = training(Task::full, 32, 128, Precision::fp16);
  const ModelSpec m = preset("bert-base");
  const Gpu g = gpu("v100-32gb");
  const Stack hf = stack("hf");
  const Efficiency e = unfitted(g, hf);
  EXPECT_FALSE(w.lm_head(m));
  const double finetune = estimate_training(m, w, g, e, hf, default_cluster(g), {}).breakdown.compute_s;
  w.task = Task::pretrain;
  EXPECT_TRUE(w.lm_head(m));
  const double pretrain = estimate_training(m, w, g, e, hf, default_cluster(g), {}).breakdown.compute_s;
  // The MLM head is h x vocab = 768 x 30,522 of BERT-base's GEMMs, three passes of it.
  EXPECT_GT(pretrain, finetune * 1.15);
  EXPECT_TRUE(w.lm_head(preset("llama-3.1-8b")));
  w.task = Task::full;
  EXPECT_TRUE(w.lm_head(preset("llama-3.1-8b")));  // a causal LM fine-tunes on its own logits
}

// Q, K and V kept as three nn.Linear modules run three GEMMs a third the size of a fused QKV one;
// at a small micro-batch each sits lower on the GEMM size curve, so the step is slower. The FLOPs
// are the same.
TEST(Training, SeparateProjectionsRunAsSmallerGemms) {
  const Workload w = training(Task::full, 1, 512, Precision::fp16);
  const ModelSpec m = preset("bert-large");
  const Gpu g = gpu("v100-32gb");
  Stack apart = stack("hf"), fused = apart;
  ASSERT_TRUE(apart.separate_projections);
  fused.separate_projections = false;
  const Efficiency e = unfitted(g, apart);
  const auto run = [&](const Stack& st) { return estimate_training(m, w, g, e, st, default_cluster(g), {}); };
  EXPECT_GT(run(apart).breakdown.compute_s, run(fused).breakdown.compute_s * 1.02);
  EXPECT_DOUBLE_EQ(run(apart).hardware_flops_per_step, run(fused).hardware_flops_per_step);
}

// The Trainer's --fp16 on a model loaded in fp32 runs under torch.autocast, whose 16-bit weight
// copies last one forward: each micro-batch casts every weight (6 B), a recompute casts it again,
// the gradient comes back to fp32 (6 B) and is added to .grad after the first micro-batch (12 B).
// A model already in 16-bit (DeepSpeed's cast module) pays none of it.
TEST(Training, AutocastCastsFp32WeightsEveryMicroBatch) {
  Workload w = training(Task::full, 1, 512, Precision::fp16);
  w.grad_accum = 4;
  w.recompute = Recompute::full;
  const ModelSpec m = preset("bert-large");
  const Gpu g = gpu("v100-32gb");
  const Stack hf = stack("hf");
  ASSERT_TRUE(hf.autocast_fp32_weights);
  Stack half = hf;
  half.autocast_fp32_weights = false;
  const Efficiency e = unfitted(g, hf);
  const auto run = [&](const Stack& st) { return estimate_training(m, w, g, e, st, default_cluster(g), {}); };
  const double params = static_cast<double>(m.parameters().total());
  const double bw = g.memory_bw_Bps * e.memory_max_fraction * e.vector_memory_fraction;
  // Four micro-batches, each casting forward, in the recompute and back (18 B), three accumulations
  // (12 B); the model's parameters less the MLM head a classifier fine-tune leaves out (under 1%).
  EXPECT_NEAR(run(hf).breakdown.memory_s - run(half).breakdown.memory_s, params * (4 * 6 * 3 + 3 * 12) / bw,
              0.01 * params * (4 * 6 * 3 + 3 * 12) / bw);
  w.precision = Precision::fp32;  // nothing to cast
  EXPECT_DOUBLE_EQ(run(hf).step_time_s, run(half).step_time_s);
  // A model loaded in 16 bits (--no-master-weights, row key master_weights = false) has no fp32
  // weights to cast, no master copy in memory (4 B) and AdamW states like the weights (4 B less),
  // whose update moves half the bytes.
  w.precision = Precision::fp16;
  Workload loaded16 = w;
  loaded16.fp32_master_weights = false;
  const TrainingEstimate l16 = estimate_training(m, loaded16, g, e, hf, default_cluster(g), {}), no_cast = run(half);
  EXPECT_NEAR(l16.step_time_s - l16.breakdown.optimizer_s, no_cast.step_time_s - no_cast.breakdown.optimizer_s, 1e-12);
  EXPECT_NEAR(l16.breakdown.optimizer_s, no_cast.breakdown.optimizer_s / 2, 1e-12);
  EXPECT_NEAR(estimate_memory(m, w, e).model_states() - estimate_memory(m, loaded16, e).model_states(), 8 * params,
              0.01 * 8 * params);
}

// An offloaded optimizer steps on the host: its time replaces the GPU's update in the step and in
// the memory-bound fit term, at the fitted memory scale, so a refit sees the same step.
TEST(Training, OffloadedOptimizerTimeJoinsTheMemoryBoundTerm) {
  Workload w = training(Task::full, 4, 512);
  w.par.dp = 2;
  w.par.zero = 2;
  w.offload_optimizer = true;
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu g = gpu("a100-40gb-sxm");
  Efficiency e = unfitted(g, stack("deepspeed"));
  e.fit.memory_scale = 2;
  TrainingEstimate t = estimate_training(m, w, g, e, stack("deepspeed"), default_cluster(g), {});
  const double step = t.step_time_s, opt = t.breakdown.optimizer_s, memory = t.fit_terms.memory_s;
  // On the node class platform.toml houses the card in.
  const auto nodes = Platform::builtin().nodes_for(g);
  ASSERT_FALSE(nodes.empty());
  const Stack ds = stack("deepspeed");
  const double host_s = offload_optimizer_step_s(m, w, g, 8, nodes.front()->host_memory_Bps * ds.host_optimizer_fraction);
  ASSERT_GT(host_s, 0);
  t.step_time_s_band = std::pair{0.8 * step, 1.5 * step};
  add_host_optimizer_step(t, m, w, g, ds, 8);
  EXPECT_NEAR(t.step_time_s, step - opt + 2 * host_s, 1e-9);
  EXPECT_NEAR(t.step_time_s_band->first / t.step_time_s, 0.8, 1e-9);  // the band is a ratio to the step
  EXPECT_NEAR(t.step_time_s_band->second / t.step_time_s, 1.5, 1e-9);
  EXPECT_NEAR(t.fit_terms.memory_s, memory - opt / 2 + host_s, 1e-9);
  EXPECT_NEAR(t.breakdown.offload_s, 2 * host_s, 1e-9);
  EXPECT_DOUBLE_EQ(t.breakdown.optimizer_s, 0);
}

// Megatron's GPT block holds 12 tensors (two LayerNorms' weights and biases, the fused qkv, the
// attention output and the two MLP matrices, each with a bias): 4 of them reach DeepSpeed's
// 100,000-element persistence threshold. Hugging Face's Llama block splits q, k, v and gate, up.
TEST(Training, LayerParameterTensorsFollowTheModelCode) {
  Stack fused = stack("deepspeed");
  fused.separate_projections = false;
  const auto gpt = layer_parameter_tensors(preset("gpt3-175b"), fused);
  EXPECT_EQ(gpt.size(), 12u);
  EXPECT_EQ(std::count_if(gpt.begin(), gpt.end(), [&](int64_t n) { return n >= fused.zero3_persistence_threshold; }), 4);
  EXPECT_EQ(fused.zero3_persistence_threshold, 100000);
  const auto llama = layer_parameter_tensors(preset("llama-3.1-8b"), stack("deepspeed"));
  EXPECT_EQ(llama.size(), 9u);  // 2 RMSNorms, q, k, v, o, gate, up, down
  // DeepSeek-V3's MoE block: 2 norms; q down, its norm, q up; kv down, its norm, kv up; o; 256
  // routed and 1 shared expert of 3 matrices; the router. The parameters add up to the block's.
  const ModelSpec v3 = preset("deepseek-v3");
  const auto moe = layer_parameter_tensors(v3, stack("deepspeed"));
  EXPECT_EQ(moe.size(), 2u + 7u + 257u * 3u + 1u);
  const ParameterCounts pc = v3.parameters();
  const double moe_block = static_cast<double>(pc.attention + pc.norms + pc.routers + pc.routed_experts + pc.shared_experts) / v3.layers;
  const double listed = static_cast<double>(std::accumulate(moe.begin(), moe.end(), int64_t{0}));
  EXPECT_NEAR(listed / moe_block, 1.0, 0.1);  // the three dense blocks pull the average down
}

// DeepSpeed before 0.5.5 gathered and reduce-scattered each parameter tensor alone, a sync before
// each gather: at thousands of ranks every collective pays a ring's latency and a copy a rank, and
// nothing hides the gathers, so the step grows with the ranks at a fixed global batch, as
// Narayanan et al. 2021 (Table 2) measured for GPT 175B (74 days to train at 768 and at 1536 GPUs).
TEST(Training, GatheringEachTensorCostsMoreWithEveryRank) {
  const ModelSpec m = preset("gpt3-175b");
  const Gpu g = gpu("a100-80gb-sxm");
  Stack ds = stack("deepspeed");
  ds.separate_projections = false;
  const Efficiency e = unfitted(g, ds);
  const auto dp_comm = [&](int64_t gpus, bool each) {
    Workload w = training(Task::pretrain, 1536 / gpus, 2048, Precision::fp16);
    w.par.dp = gpus;
    w.par.zero = 3;
    w.set_recompute({Recompute::full, 0});
    TrainingRun run;
    run.gather_each_tensor = each;
    return estimate_training(m, w, g, e, ds, default_cluster(g), run).breakdown.dp_comm_exposed_s;
  };
  EXPECT_GT(dp_comm(1536, true), 2 * dp_comm(1536, false));
  EXPECT_GT(dp_comm(1536, true), 1.5 * dp_comm(384, true));
}

// DeepSpeed's CPU-Adam updated 25 billion parameters in 6.74 s on a DGX-2 host (ZeRO-Offload, Ren
// et al. 2021, Table 4: 1, 2, 4, 8 and 10 billion; Table 2: 2 Xeon 8168 with DDR4-2666, 256 GB/s).
// The deepspeed stack's host step on such a host takes that long a parameter, within 3%; a run
// that names its host is timed on it, not on the node class's.
TEST(Training, HostOptimizerStepMatchesCpuAdamOnTheHostTheRunNames) {
  Workload w = training(Task::full, 1, 512);
  w.offload_optimizer = true;
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu g = gpu("v100-32gb");
  const Stack ds = stack("deepspeed");
  const double dgx2_host_Bps = 12 * 21.33e9;
  const double host_s = offload_optimizer_step_s(m, w, g, 1, dgx2_host_Bps * ds.host_optimizer_fraction) -
                        offload_optimizer_step_s(m, w, g, 1, 1e30);  // without the host, only PCIe remains
  const double per_param = host_s / static_cast<double>(m.total_parameters());
  EXPECT_NEAR(per_param / (6.74 / 25e9), 1.0, 0.03);
  const Efficiency e = unfitted(g, ds);
  TrainingEstimate named = estimate_training(m, w, g, e, ds, default_cluster(g), {});
  TrainingEstimate node = named;
  add_host_optimizer_step(named, m, w, g, ds, 1, dgx2_host_Bps);
  add_host_optimizer_step(node, m, w, g, ds, 1);
  EXPECT_NEAR(named.breakdown.offload_s, offload_optimizer_step_s(m, w, g, 1, dgx2_host_Bps * ds.host_optimizer_fraction), 1e-9);
  EXPECT_GT(named.breakdown.offload_s, node.breakdown.offload_s);  // 256 GB/s against the node class's 614
}

// Adafactor saves memory, not traffic: transformers' Adafactor.step makes eight passes over each
// factored fp32 tensor, 84 B a parameter, three times a fused AdamW's 28.
TEST(Training, AdafactorStepsMoveMoreBytesThanFusedAdamw) {
  Workload w = training(Task::full, 1, 512);
  const ModelSpec m = preset("llama-3.1-8b");
  const Gpu g = gpu("a100-80gb-sxm");
  ASSERT_TRUE(megatron().fused_optimizer);
  const Efficiency e = unfitted(g, megatron());
  const auto opt = [&](Optimizer o) {
    w.optimizer = o;
    return estimate_training(m, w, g, e, megatron(), default_cluster(g), {}).breakdown.optimizer_s;
  };
  EXPECT_NEAR(opt(Optimizer::adafactor) / opt(Optimizer::adamw), 84.0 / 28.0, 1e-9);
}

// Eager attention (flash off) runs the model code's element-wise ops over every score element:
// the stack's own byte count (stacks.toml), where a fused softmax kernel reads and writes once.
// Only the softmax op changes; with flash attention on there are no scores to move.
TEST(Training, EagerAttentionMovesTheStacksBytesPerScore) {
  Workload w = training(Task::full, 4, 1024, Precision::fp16);
  w.flash_attention = false;
  const ModelSpec m = preset("gpt2");
  const Gpu g = gpu("v100-32gb");
  const Stack hf = stack("hf");
  Stack fused = hf;
  fused.eager_score_forward_bytes = fused.eager_score_backward_bytes = 0;
  const Efficiency e = unfitted(g, hf);
  ForwardShape s;
  s.tokens = 4 * 1024, s.sequences = 4, s.kv_len = 1024, s.flash = false;
  s.score_forward_bytes = hf.eager_score_forward_bytes, s.score_backward_bytes = hf.eager_score_backward_bytes;
  const double scores = 4.0 * 1024 * 1024 * m.heads;
  for (const Op& op : block_forward_ops(m, s)) {
    if (op.name != "softmax") continue;
    EXPECT_DOUBLE_EQ(op.bytes, scores * 33);
    EXPECT_DOUBLE_EQ(backward_of(op).bytes, scores * 37);
  }
  const auto step = [&](const Stack& st) { return estimate_training(m, w, g, e, st, default_cluster(g), {}).step_time_s; };
  const double extra = step(hf) - step(fused);
  const double bw = g.memory_bw_Bps * e.memory_max_fraction * e.vector_memory_fraction;
  // (33 + 37) - (4 + 8) bytes a score element, in every layer.
  EXPECT_NEAR(extra, scores * m.layers * (70 - 12) / bw, 1e-9);
  w.flash_attention = true;
  EXPECT_DOUBLE_EQ(step(hf), step(fused));
}

// QLoRA expands each frozen 4-bit weight to 16 bits before every use (bitsandbytes MatMul4Bit:
// dequantize_4bit, then the 16-bit GEMM), in the forward, the backward and, under full recompute,
// the recompute: reading 4.127 bits and writing 2 bytes a weight, three times a micro-batch. LoRA on
// 16-bit weights runs the same GEMMs without it.
TEST(Training, QloraExpandsItsWeightsBeforeEachUse) {
  Workload w;
  w.micro_batch = 2;
  w.seq = 2048;
  w.recompute = Recompute::full;
  const ModelSpec m = preset("llama-2-7b");
  const Gpu g = gpu("rtx-4090");
  const Stack hf = *StackCatalog::builtin().find("hf");
  const Efficiency e = EfficiencyTable::builtin().without_fit().for_gpu(g, hf);
  w.task = Task::lora;
  const double lora = estimate_training(m, w, g, e, hf, default_cluster(g), {}).step_time_s;
  w.task = Task::qlora;
  const double qlora = estimate_training(m, w, g, e, hf, default_cluster(g), {}).step_time_s;
  const double weights = static_cast<double>(m.layers) * static_cast<double>(m.parameters().per_layer());
  const double pass = weights * (4.127 / 8 + 2) / (g.memory_bw_Bps * e.memory_max_fraction * e.vector_memory_fraction);
  EXPECT_NEAR(qlora - lora, 3 * pass, 0.02 * 3 * pass);
}

TEST(Training, PipelineBubbleShrinksWithMoreMicroBatchesAndInterleaving) {
  Workload w;
  w.task = Task::pretrain;
  w.par.tp = 8;
  w.par.pp = 8;
  const ModelSpec m = preset("gpt3-175b");
  const Gpu a100 = gpu("a100-80gb-sxm");
  TrainingRun run;
  run.global_batch = 8;
  const auto few = estimate_training(m, w, a100, train_eff(a100), megatron(), default_cluster(a100), run);
  run.global_batch = 64;
  const auto many = estimate_training(m, w, a100, train_eff(a100), megatron(), default_cluster(a100), run);
  w.par.virtual_stages = 4;
  const auto interleaved = estimate_training(m, w, a100, train_eff(a100), megatron(), default_cluster(a100), run);
  // (p-1)/m: 7/8 of a step's compute with 8 micro-batches, 7/64 with 64, and /4 interleaved.
  EXPECT_GT(few.breakdown.bubble_s / few.step_time_s, many.breakdown.bubble_s / many.step_time_s);
  EXPECT_NEAR(interleaved.breakdown.bubble_s * 4, many.breakdown.bubble_s,
              0.2 * many.breakdown.bubble_s);  // comm per micro-batch grows with v
}

TEST(Training, DataParallelAcrossNodesUsesTheNetwork) {
  Workload w;
  w.task = Task::pretrain;
  w.par.dp = 64;
  const Gpu h100 = gpu("h100-sxm");
  const auto e = estimate_training(preset("llama-3.1-8b"), w, h100, train_eff(h100), megatron(), default_cluster(h100), {});
  EXPECT_EQ(e.dp_link, "network");
  EXPECT_GT(e.breakdown.dp_comm_total_s, 0);
}

// Two RTX 3090s come with an NVLink bridge in the catalog; without it (--no-nvlink) the same
// pair talks over PCIe, and FSDP's gathers take longer.
TEST(Training, ACardWithoutItsBridgeTalksOverPcie) {
  Workload w;
  w.task = Task::lora;
  w.par.dp = 2;
  w.par.zero = 3;
  w.seq = 512;
  const Gpu g = gpu("rtx-3090");
  Cluster bridged = default_cluster(g), bare = bridged;
  bare.nvlink = false;
  // The links' own rates (the fitted per-link scales would blur the comparison).
  const Efficiency e = EfficiencyTable::builtin().without_fit().for_gpu(g, megatron());
  const auto a = estimate_training(preset("llama-3.1-8b"), w, g, e, megatron(), bridged, {});
  const auto b = estimate_training(preset("llama-3.1-8b"), w, g, e, megatron(), bare, {});
  EXPECT_EQ(a.dp_link, "NVLink");
  EXPECT_EQ(b.dp_link, "PCIe");
  EXPECT_GT(b.fit_terms.comm_pcie_s, 0);
  EXPECT_EQ(a.fit_terms.comm_pcie_s, 0);
  // The bridge's 56 GB/s a direction at 0.74 against PCIe 4.0 x16's 32 GB/s at 0.70: 1.9x.
  EXPECT_GT(b.breakdown.dp_comm_total_s, 1.7 * a.breakdown.dp_comm_total_s);
}

// A node that wires less NVLink than the part offers (BigScience's Jean Zay V100 boards: "50GBps
// intra-node connections" against the DGX-2's 300): tensor-parallel all-reduces take six times as
// long over it, the link still NVLink.
TEST(Training, ANodeWithLessNvlinkSlowsTensorParallelCollectives) {
  Workload w;
  w.task = Task::pretrain;
  w.par.tp = 4;
  w.seq = 2048;
  const Gpu g = gpu("v100-32gb");
  Cluster full = default_cluster(g), thin = full;
  thin.nvlink_Bps = 50e9;
  const Efficiency e = EfficiencyTable::builtin().without_fit().for_gpu(g, megatron());
  const auto a = estimate_training(preset("llama-2-7b"), w, g, e, megatron(), full, {});
  const auto b = estimate_training(preset("llama-2-7b"), w, g, e, megatron(), thin, {});
  EXPECT_EQ(b.tp_link, "NVLink");
  const Link wide = group_link(g, e, full, 4, 1), narrow = group_link(g, e, thin, 4, 1);
  EXPECT_NEAR(wide.busbw_Bps / narrow.busbw_Bps, 6.0, 1e-9);
  EXPECT_GT(b.step_time_s, a.step_time_s);
}

// QLoRA under FSDP gathers the stored NF4 weights, about a quarter of LoRA's bf16 bytes.
TEST(Training, QloraGathersFourBitWeights) {
  Workload w;
  w.task = Task::lora;
  w.par.dp = 4;
  w.par.zero = 3;
  w.seq = 2048;
  const Gpu g = gpu("h100-sxm");
  const ModelSpec m = preset("llama-3.1-70b");
  const auto lora = estimate_training(m, w, g, train_eff(g), megatron(), default_cluster(g), {});
  w.task = Task::qlora;
  const auto qlora = estimate_training(m, w, g, train_eff(g), megatron(), default_cluster(g), {});
  const double ratio = qlora.breakdown.dp_comm_total_s / lora.breakdown.dp_comm_total_s;
  EXPECT_NEAR(ratio, bytes_per_value(Precision::nf4) / 2, 0.03);
}

// The adapters the step times are exactly those ModelSpec::lora_parameters counts: rank x (d_in +
// d_out) weights each; they cost time (they read the linears' inputs and write full-width
// outputs) and are trained (a full backward), unlike the frozen linears.
TEST(Training, LoraAdaptersAreTheCountedOnesAndCostTime) {
  const ModelSpec m = preset("llama-3.1-8b");
  ForwardShape s;
  s.tokens = 4096;
  s.kv_len = 4096;
  const std::vector<Op> plain = block_forward_ops(m, s);
  s.lora_rank = 16;
  const std::vector<Op> adapted = block_forward_ops(m, s);
  double weights = 0;
  int adapters = 0;
  for (const Op& op : adapted) {
    if (!op.adapter || op.kind != OpKind::matmul) continue;
    ++adapters;
    weights += op.calls * op.flops / (2 * s.tokens);  // [tokens x in] x [in x out]: 2 x tokens x in x out
  }
  // q, k and v (one shape, two calls), o, gate and up (one shape), down: A, B, scale-and-add each.
  EXPECT_EQ(plain.size() + 3 * 5, adapted.size());
  EXPECT_EQ(adapters, 10);
  EXPECT_DOUBLE_EQ(weights * static_cast<double>(m.layers), static_cast<double>(m.lora_parameters(16)));

  Workload w;
  w.task = Task::lora;
  w.lora_rank = 64;
  w.seq = 2048;
  const Gpu g = gpu("h100-sxm");
  const auto r64 = estimate_training(m, w, g, train_eff(g), megatron(), default_cluster(g), {});
  w.lora_rank = 8;
  const auto r8 = estimate_training(m, w, g, train_eff(g), megatron(), default_cluster(g), {});
  EXPECT_GT(r64.step_time_s, r8.step_time_s);
}

// An eager stack's host spends stacks.toml's host_layer_pass_s on each layer's forward, backward
// and recomputed forward (gpt-fast's eager Llama loop: 1.22 ms a layer). One sequence of 128 tokens
// through Llama 2 7B keeps an A100 busy for less than that, so the step waits for the host; at
// 8,192 tokens the GPU is the slower, and a stack with no host figure never waits.
TEST(Training, AnEagerStackAtATinyBatchWaitsForItsHost) {
  const ModelSpec m = preset("llama-2-7b");
  const Gpu g = gpu("a100-80gb-sxm");
  const Stack hf = stack("hf");
  ASSERT_GT(hf.host_layer_pass_s, 0);
  Workload w = training(Task::full, 1, 128);
  w.grad_accum = 8;
  w.recompute = Recompute::full;
  const auto tiny = estimate_training(m, w, g, unfitted(g, hf), hf, default_cluster(g), {});
  const double host = 8 * hf.host_layer_pass_s * static_cast<double>(m.layers) * 3;
  EXPECT_NEAR(tiny.fit_terms.host_busy_s, host, 1e-9);
  EXPECT_GT(tiny.breakdown.host_bound_s, 0);
  EXPECT_GT(tiny.step_time_s, host);  // the host's time, then the optimizer step
  w.seq = 8192;
  const auto long_seq = estimate_training(m, w, g, unfitted(g, hf), hf, default_cluster(g), {});
  EXPECT_EQ(long_seq.breakdown.host_bound_s, 0);
  EXPECT_GT(long_seq.step_time_s, host);
  w.seq = 128;
  const Stack compiled = stack("torchtitan-compile");
  EXPECT_EQ(compiled.host_layer_pass_s, 0);
  EXPECT_EQ(estimate_training(m, w, g, unfitted(g, compiled), compiled, default_cluster(g), {}).breakdown.host_bound_s, 0);
}

// Each LoRA-adapted linear adds its own dispatches (PEFT's dropout, two GEMMs, scale and add) to
// every layer pass on the host: all seven of a Llama layer's linears add seven times the figure.
TEST(Training, LoraAdaptersAddTheirDispatchesToTheHostsTime) {
  const ModelSpec m = preset("llama-2-7b");
  const Gpu g = gpu("a100-80gb-sxm");
  const Stack hf = stack("hf");
  Workload w = training(Task::full, 1, 256);
  const auto full = estimate_training(m, w, g, unfitted(g, hf), hf, default_cluster(g), {});
  w.task = Task::lora;
  w.lora_rank = 16;
  const auto lora = estimate_training(m, w, g, unfitted(g, hf), hf, default_cluster(g), {});
  EXPECT_NEAR(lora.fit_terms.host_busy_s - full.fit_terms.host_busy_s,
              7 * hf.host_adapter_pass_s * static_cast<double>(m.layers) * 2, 1e-9);
}

// DeepSpeed's ZeRO-3 runs Python hooks on every module and parameter that no measurement times: its
// estimates say they leave them out. ZeRO-2, and FSDP's ZeRO-3, carry no such note.
TEST(Training, DeepSpeedZeroThreeSaysItsHooksAreNotTimed) {
  const ModelSpec m = preset("llama-2-7b");
  const Gpu g = gpu("a100-80gb-sxm");
  const Stack ds = stack("deepspeed");
  ASSERT_TRUE(ds.zero3_module_hooks);
  ASSERT_TRUE(stack("megatron-deepspeed").zero3_module_hooks);
  Workload w = training(Task::full, 1, 256);
  w.par.zero = 3;
  const auto z3 = estimate_training(m, w, g, unfitted(g, ds), ds, default_cluster(g), {});
  ASSERT_EQ(z3.not_modelled.size(), 1u);
  EXPECT_NE(z3.not_modelled[0].find("ZeRO-3 Python hooks"), std::string::npos);
  const Stack fsdp = stack("torchtitan");
  EXPECT_FALSE(fsdp.zero3_module_hooks);
  EXPECT_TRUE(estimate_training(m, w, g, unfitted(g, fsdp), fsdp, default_cluster(g), {}).not_modelled.empty());
  w.par.zero = 2;
  EXPECT_TRUE(estimate_training(m, w, g, unfitted(g, ds), ds, default_cluster(g), {}).not_modelled.empty());
}

// DeepSpeed reduces ZeRO-2's partitioned gradients at every micro-batch ("ZeRO stage >= 2
// communicates during non gradient accumulation boundaries as well"), ZeRO-1's once a step: four
// micro-batches a step expose four reductions under ZeRO-2 and one under ZeRO-1.
TEST(Training, ZeroTwoReducesTheGradientsOfEveryMicroBatch) {
  const ModelSpec m = preset("llama-2-7b");
  const Gpu g = gpu("a100-80gb-sxm");
  const Stack ds = stack("deepspeed");
  ASSERT_TRUE(ds.partitioned_grads_reduce_each_micro_batch);
  Workload w = training(Task::full, 1, 2048);
  w.par.dp = 8;
  auto exposed = [&](int zero, int64_t accumulation) {
    w.par.zero = zero;
    w.grad_accum = accumulation;
    return estimate_training(m, w, g, unfitted(g, ds), ds, default_cluster(g), {}).breakdown.dp_comm_exposed_s;
  };
  ASSERT_GT(exposed(2, 1), 0);
  EXPECT_NEAR(exposed(2, 4), 4 * exposed(2, 1), 1e-9);
  EXPECT_NEAR(exposed(1, 4), exposed(1, 1), 1e-9);
}

// DeepSpeed's ZeRO-3 fetches ahead at most stage3_prefetch_bucket_size elements: a 70B model's
// projections (8 to 235 million elements) outgrow DeepSpeed's default window of 5e7, so more of
// each gather waits than under the Hugging Face integration's 0.9 x 8192^2 = 6.0e7, and all of it
// without a window; a window larger than any projection hides as much as FSDP's whole-layer prefetch.
TEST(Training, ZeroThreeWaitsForWhatItsFetchAheadWindowCannotHold) {
  const ModelSpec m = preset("llama-2-70b");
  const Gpu g = gpu("a100-80gb-sxm");
  const Stack ds = stack("deepspeed");
  EXPECT_DOUBLE_EQ(ds.zero3_prefetch_window(8192), 0.9 * 8192 * 8192);
  Workload w = training(Task::full, 1, 4096);
  w.par.dp = 16, w.par.zero = 3;
  w.recompute = Recompute::full;
  auto exposed = [&](std::optional<double> window) {
    TrainingRun run;
    run.zero3_prefetch_params = window;
    return estimate_training(m, w, g, unfitted(g, ds), ds, default_cluster(g), run).breakdown.dp_comm_exposed_s;
  };
  const double none = exposed(0), deepspeed = exposed(5e7), hf = exposed(std::nullopt), whole = exposed(1e12);
  EXPECT_GT(none, deepspeed);
  EXPECT_GT(deepspeed, hf);
  EXPECT_GT(hf, whole);
}

// 64 ranks two apart on NVL72 racks are not a multiple of the 36 a rack holds: they run as two
// domains of 32 (hierarchical), not as one flat ring over the network.
TEST(Comm, AGroupThatDoesNotFillTheDomainEvenlyStillGoesHierarchical) {
  const Gpu g = gpu("gb200");
  const Cluster c = default_cluster(g);
  ASSERT_EQ(c.gpus_per_node, 72);
  const Efficiency e = eff(g);
  const double bytes = 100e9;
  const double split = group_collective_time(Collective::all_gather, bytes, 64, 2, g, e, c);
  const double flat = collective_time(Collective::all_gather, bytes, 64, group_link(g, e, c, 64, 2));
  Link inner = group_link(g, e, c, 32, 2), outer = group_link(g, e, c, 64, 2);
  inner.latency_s = outer.latency_s = 0;
  const double expected = collective_time(Collective::all_gather, bytes, 32, inner) +
                          collective_time(Collective::all_gather, bytes / 32, 2, outer) + ring_latency(64, 2, g, e, c);
  EXPECT_DOUBLE_EQ(split, expected);
  EXPECT_LT(split, flat / 4);
}

// A plan that names no network runs over the NICs of the node the part ships in: a DGX A100 has a
// 200 Gb/s ConnectX-6 per GPU, a GB300 tray an 800 Gb/s ConnectX-8, a DGX-2 eight 100 Gb/s NICs for
// 16 V100s (data/gpus.toml node_network_gbps); a part with no reference node keeps 400 Gb/s, and
// workstation cards 25 Gb/s Ethernet between boxes.
TEST(Comm, DefaultClusterRunsOverTheNicsOfTheNodeThePartShipsIn) {
  EXPECT_DOUBLE_EQ(default_cluster(gpu("a100-80gb-sxm")).network_Bps, 200e9 / 8);
  EXPECT_DOUBLE_EQ(default_cluster(gpu("gb300")).network_Bps, 800e9 / 8);
  EXPECT_DOUBLE_EQ(default_cluster(gpu("v100-32gb")).network_Bps, 50e9 / 8);
  EXPECT_DOUBLE_EQ(default_cluster(gpu("h100-pcie")).network_Bps, 400e9 / 8);
  EXPECT_DOUBLE_EQ(default_cluster(gpu("rtx-4090")).network_Bps, 25e9 / 8);
  // The slower NIC costs a DP gradient all-reduce across nodes its bandwidth share.
  const Gpu a100 = gpu("a100-80gb-sxm");
  const Efficiency e = eff(a100);
  Cluster fast = default_cluster(a100);
  fast.network_Bps = 400e9 / 8;
  const double own = group_collective_time(Collective::all_reduce, 10e9, 64, 8, a100, e, default_cluster(a100));
  const double twice = group_collective_time(Collective::all_reduce, 10e9, 64, 8, a100, e, fast);
  EXPECT_GT(own, 1.8 * twice);
}

// NCCL's tuning model (src/graph/tuning.cc, Ring/Simple): 8.4 us, then 3.4 us a step on NVLink and
// 14 us a step that crosses nodes. 1,536 A100s, 8 a node: 1,344 NVLink steps and 191 network steps.
TEST(Comm, RingLatencyCountsEveryStepOfTheRing) {
  const Gpu g = gpu("a100-80gb-sxm");
  const Cluster c = default_cluster(g);
  const Efficiency e = eff(g);
  EXPECT_NEAR(ring_latency(1536, 1, g, e, c), 8.4e-6 + 1344 * 3.4e-6 + 191 * 14e-6, 1e-12);
  EXPECT_NEAR(ring_latency(8, 1, g, e, c), 8.4e-6 + 7 * 3.4e-6, 1e-12);
  EXPECT_EQ(ring_latency(1, 1, g, e, c), 0);
  // A tiny gather over thousands of ranks is all latency.
  EXPECT_NEAR(group_collective_time(Collective::all_gather, 1024, 1536, 1, g, e, c), ring_latency(1536, 1, g, e, c), 1e-6);
}

TEST(Training, RunTimeAndGpuHoursFollowFromTokens) {
  Workload w;
  w.task = Task::pretrain;
  w.par.dp = 8;
  const Gpu h100 = gpu("h100-sxm");
  TrainingRun run;
  run.tokens = 1e9;
  const auto e = estimate_training(preset("llama-3.1-8b"), w, h100, train_eff(h100), megatron(), default_cluster(h100), run);
  ASSERT_TRUE(e.time_to_train_s && e.gpu_hours);
  EXPECT_NEAR(*e.time_to_train_s, 1e9 / e.tokens_per_s, 1e-6);
  EXPECT_NEAR(*e.gpu_hours, *e.time_to_train_s / 3600 * 8, 1e-6);
}

TEST(Inference, DecodeIsBoundByWeightBytesOverBandwidth) {
  Workload w;
  w.task = Task::infer;
  const Gpu h100 = gpu("h100-sxm");
  const ModelSpec m = preset("llama-3.1-8b");
  const auto e = estimate_inference(m, w, {128, 128, 1}, h100, eff(h100), default_cluster(h100), vllm());
  // 16 GB of bf16 weights at 3.35 TB/s is 4.8 ms; achievable bandwidth and launches add to it.
  EXPECT_GT(e.tpot_s, 16.06e9 / 3.35e12);
  EXPECT_LT(e.tpot_s, 3 * 16.06e9 / 3.35e12);
  EXPECT_GT(e.decode_weight_read_s, 0.6 * e.tpot_s);
}

TEST(Inference, QuantisedWeightsDecodeFaster) {
  const Gpu g = gpu("rtx-4090");
  const ModelSpec m = preset("llama-3.1-8b");
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::bf16;
  const double bf16 = estimate_inference(m, w, {128, 128, 1}, g, eff(g), default_cluster(g), vllm()).tpot_s;
  w.precision = Precision::int4;
  const double int4 = estimate_inference(m, w, {128, 128, 1}, g, eff(g), default_cluster(g), vllm()).tpot_s;
  EXPECT_LT(int4, bf16 / 2);
}

TEST(Inference, BatchingRaisesTotalThroughputAndKvLimitsConcurrency) {
  const Gpu g = gpu("h100-sxm");
  const ModelSpec m = preset("llama-3.1-8b");
  Workload w;
  w.task = Task::infer;
  const auto one = estimate_inference(m, w, {1024, 256, 1}, g, eff(g), default_cluster(g), vllm());
  const auto many = estimate_inference(m, w, {1024, 256, 32}, g, eff(g), default_cluster(g), vllm());
  EXPECT_GT(many.total_output_tokens_per_s, 10 * one.total_output_tokens_per_s);
  const InferenceMemory mem = inference_memory(m, w, {1024, 256, 1}, g, eff(g), vllm());
  ASSERT_TRUE(mem.max_concurrency.has_value());
  // 80 GB less 16 GB of weights over 1,280 tokens x 128 KiB each: a few hundred sequences.
  EXPECT_GT(*mem.max_concurrency, 200);
  EXPECT_LT(*mem.max_concurrency, 500);
  EXPECT_EQ(*mem.max_concurrency, mem.kv_capacity_tokens / 1280);
}

// A decode kernel with one thread block per query head (TensorRT-LLM before XQA) reads a grouped-
// query model's cache once per query head, of which the share given reaches DRAM: Llama 3.1 70B
// (64 query heads, 8 KV heads) reads 1 + share x 7 times the cache; Llama 2 7B (no grouping) once.
TEST(Inference, PerQueryHeadDecodeReadsAGroupedCacheOncePerQueryHead) {
  const Gpu g = gpu("h100-sxm");
  Workload w;
  w.task = Task::infer;
  Engine trt = *EngineCatalog::builtin().find("tensorrt-llm");
  ASSERT_TRUE(trt.has_per_query_head_decode());
  auto kv_read_s = [&](const char* model, const Engine& e) {
    return estimate_inference(preset(model), w, {4096, 2, 64}, g, eff(g), default_cluster(g), e).decode_kv_read_s;
  };
  Engine old = trt.with_per_query_head_decode();
  old.per_query_head_kv_share = 0.5;
  EXPECT_NEAR(kv_read_s("llama-3.1-70b", old) / kv_read_s("llama-3.1-70b", trt), 1 + 0.5 * 7, 0.05);
  EXPECT_NEAR(kv_read_s("llama-2-7b", old) / kv_read_s("llama-2-7b", trt), 1.0, 1e-9);
}

// The concurrency an output promises is what the engine's cache holds: SGLang caches gpt-oss's
// sliding-window layers at full length (full_kv_families), so its sequences are fewer than the
// card's memory less the weights would hold with windowed layers.
TEST(Inference, MaxConcurrencyIsTheEnginesCacheNotTheCards) {
  const Gpu g = gpu("h100-sxm");
  const ModelSpec m = preset("gpt-oss-120b");
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::mxfp4;
  const Engine sglang = *EngineCatalog::builtin().find("sglang");
  const InferenceMemory mem = inference_memory(m, w, {215, 196, 1}, g, eff(g), sglang);
  ASSERT_TRUE(mem.max_concurrency.has_value());
  EXPECT_EQ(*mem.max_concurrency, mem.kv_capacity_tokens / 411);
  Workload card = w;
  card.seq = 411;
  card.micro_batch = 1;
  EXPECT_LT(*mem.max_concurrency, *check_fit(m, card, g, eff(g)).max_batch);
}

// torchao's float8 README, "Performance / Rowwise scaling": speedup over bfloat16 of a LayerNorm ->
// Linear -> Sigmoid forward and backward under torch.compile on an H100, by the forward's M, K, N
// (github.com/pytorch/ao docs/static/fp8-rowwise-perf.png at commit 6243040, 2025-06-13, PyTorch
// 2.8.0a0+git48807d5). The rows with M >= 8192 and K >= 4096, the shapes of training micro-batches,
// from which the rowwise recipe's backward input-side bytes in data/stacks.toml were derived: the
// recipe as the model prices it must reproduce them.
TEST(Fp8Recipes, RowwiseLinearReproducesTorchaosH100KernelTable) {
  struct Row {
    double m, k;
    double speedup[6];  // N = 1024, 2048, ..., 32768
  };
  const Row table[] = {
      {8192, 4096, {0.52, 0.76, 1.00, 1.13, 1.17, 1.19}},
      {8192, 8192, {0.59, 0.85, 1.05, 1.20, 1.31, 1.41}},
      {8192, 16384, {0.58, 0.82, 1.03, 1.22, 1.37, 1.40}},
      {8192, 32768, {0.59, 0.82, 1.04, 1.30, 1.36, 1.46}},
      {16384, 4096, {0.57, 0.79, 1.02, 1.20, 1.26, 1.40}},
      {16384, 8192, {0.61, 0.87, 1.08, 1.33, 1.39, 1.49}},
      {16384, 16384, {0.59, 0.83, 1.07, 1.34, 1.42, 1.55}},
      {16384, 32768, {0.60, 0.85, 1.16, 1.35, 1.48, 1.72}},
      {32768, 4096, {0.59, 0.81, 1.04, 1.28, 1.35, 1.49}},
      {32768, 8192, {0.63, 0.87, 1.11, 1.41, 1.50, 1.62}},
      {32768, 16384, {0.60, 0.83, 1.16, 1.39, 1.49, 1.73}},
      {32768, 32768, {0.63, 0.93, 1.16, 1.48, 1.70, 1.52}},
  };
  const Stack stack = *StackCatalog::builtin().find("torchtitan-compile");
  const LowPrecisionRecipe& rowwise = *stack.recipe("rowwise");
  const Gpu g = gpu("h100-sxm");
  const Efficiency e = EfficiencyTable::builtin().for_gpu(g, stack);
  const auto vector = [](double elements) { return Op{"norm", OpKind::vector, 4 * elements, 4 * elements, 1}; };
  const auto seconds = [&](const Op& op, Precision p) {
    return time_op(op, g, e, p).total_s() + time_op(backward_of(op), g, e, p).total_s();
  };
  std::vector<double> log_ratios;
  for (const Row& r : table)
    for (int i = 0; i < 6; ++i) {
      const double n = 1024.0 * (1 << i);
      Op linear{"linear", OpKind::matmul, 2 * r.m * r.k * n, 2 * (r.m * r.k + r.k * n + r.m * n), 1};
      linear.input_elements = r.m * r.k + r.k * n, linear.output_elements = r.m * n, linear.activation_elements = r.m * r.k;
      const double around = seconds(vector(r.m * r.k), Precision::bf16) + seconds(vector(r.m * n), Precision::bf16);
      OpTime fwd = time_op(linear, g, e, Precision::fp8), bwd = time_op(backward_of(linear), g, e, Precision::fp8);
      const OpTime extra = apply_low_precision_recipe(linear, rowwise, stack, g, e, fwd, bwd);
      const double bf16 = seconds(linear, Precision::bf16) + around;
      const double fp8 = fwd.total_s() + bwd.total_s() + extra.total_s() + around;
      log_ratios.push_back(std::log(bf16 / fp8 / r.speedup[i]));
    }
  std::sort(log_ratios.begin(), log_ratios.end());
  double mean_abs = 0;
  for (double x : log_ratios) mean_abs += std::abs(x) / static_cast<double>(log_ratios.size());
  EXPECT_NEAR(log_ratios[log_ratios.size() / 2], 0.0, 0.05);  // unbiased
  EXPECT_LT(mean_abs, 0.10);  // without the backward input-side bytes: median 0.25, mean 0.30
}

}  // namespace gpuplan
