// Mixture of experts in the performance model: which experts a decode step reads, active-parameter
// FLOPs, expert-parallel all-to-all on the fabric the group spans, and FP4 on the GPUs that have it.
#include <gtest/gtest.h>

#include <map>

#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "model/presets.h"
#include "perf/comm.h"
#include "perf/expert_parallel.h"
#include "perf/inference.h"
#include "perf/operations.h"
#include "planner/training_planner.h"
#include "stack/stack.h"

namespace gpuplan {

namespace {

const ModelSpec& cached_preset(const char* id) {
  static std::map<std::string, ModelSpec> cache;
  auto it = cache.find(id);
  if (it == cache.end()) it = cache.emplace(id, *Presets::builtin().find(id)).first;
  return it->second;
}

double expert_weight_bytes(const ModelSpec& m, const ForwardShape& s) {
  double b = 0;
  for (const Op& op : block_forward_ops(m, s))
    if (op.name.rfind("expert ", 0) == 0 && op.kind == OpKind::matmul) b += op.bytes * op.calls;
  return b;
}

}  // namespace

TEST(MoePerf, DecodeReadsOnlyTheExpertsItsTokensChose) {
  const ModelSpec& m = cached_preset("qwen3-30b-a3b");  // 128 experts, top-8
  ForwardShape one;
  one.tokens = 1;
  one.kv_cache_read = true;
  ForwardShape many = one;
  many.tokens = 512;
  // One token touches its 8 experts; 512 tokens touch all 128 (1 - (120/128)^512 ~ 1).
  EXPECT_NEAR(expert_work(m, one).experts_touched, 8, 1e-9);
  EXPECT_NEAR(expert_work(m, many).experts_touched, 128, 0.01);
  const double per_expert = 3.0 * m.hidden * m.expert_width() * 2;  // bf16
  EXPECT_NEAR(expert_weight_bytes(m, one) / (8 * per_expert), 1, 0.01);
}

TEST(MoePerf, ModelFlopsCountActiveParametersOnly) {
  // 6 x active non-embedding parameters per token is the usual MoE training estimate; the
  // Megatron convention adds attention, which is small at 128 tokens.
  const ModelSpec& m = cached_preset("deepseek-v3");
  const double flops = model_forward_flops(m, 1, 128);
  const ParameterCounts pc = m.parameters();
  const double active_matmul = static_cast<double>(m.active_parameters() - pc.embedding - pc.norms - pc.final_norm);
  EXPECT_NEAR(flops / (2 * active_matmul), 1, 0.03);
}

TEST(MoePerf, ExpertAllToAllStaysOnNvlinkInsideAnNvl72Rack) {
  const Catalog& cat = Catalog::builtin();
  const Gpu gb200 = *cat.find("gb200"), h100 = *cat.find("h100-sxm");
  const Efficiency e = EfficiencyTable::builtin().for_gpu(h100);
  const double bytes = 64e6;
  // EP 64: one NVL72 domain on GB200, eight HGX nodes (and the network) on H100.
  EXPECT_EQ(group_link(gb200, e, default_cluster(gb200), 64, 1).name, "NVLink");
  EXPECT_EQ(group_link(h100, e, default_cluster(h100), 64, 1).name, "network");
  const double rack = all_to_all_time(bytes, 64, 1, gb200, e, default_cluster(gb200));
  const double nodes = all_to_all_time(bytes, 64, 1, h100, e, default_cluster(h100));
  EXPECT_GT(nodes, 5 * rack);
  // Within one HGX node the all-to-all runs on NVLink too.
  EXPECT_LT(all_to_all_time(bytes, 8, 1, h100, e, default_cluster(h100)), nodes / 5);
}

TEST(MoePerf, TrainingChargesTheAllToAllOnlyWithExpertParallelism) {
  const ModelSpec& m = cached_preset("qwen3-30b-a3b");
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  const Stack stack = *StackCatalog::builtin().find(default_stack_id(Task::pretrain));
  const Efficiency e = EfficiencyTable::builtin().for_gpu(h100, stack);
  Workload w;
  w.task = Task::pretrain;
  w.seq = 4096;
  w.par.dp = 8;
  w.par.zero = 3;
  const TrainingEstimate no_ep = estimate_training(m, w, h100, e, stack, default_cluster(h100), {});
  w.par.ep = 8;
  const TrainingEstimate ep = estimate_training(m, w, h100, e, stack, default_cluster(h100), {});
  EXPECT_EQ(no_ep.breakdown.ep_comm_s, 0);
  EXPECT_GT(ep.breakdown.ep_comm_s, 0);
  EXPECT_EQ(ep.ep_link, "NVLink");
}

TEST(MoePerf, Fp4RunsAtTheFp4RateOnBlackwellAndDequantisesElsewhere) {
  const Catalog& cat = Catalog::builtin();
  // NVIDIA HGX B200 table: 9 PFLOPS dense FP4; H100 has no FP4 path and multiplies in bf16.
  EXPECT_DOUBLE_EQ(cat.find("b200")->peak_matmul_flops(Precision::nvfp4), 9000e12);
  EXPECT_DOUBLE_EQ(cat.find("h100-sxm")->peak_matmul_flops(Precision::mxfp4), cat.find("h100-sxm")->bf16_flops);
  EXPECT_DOUBLE_EQ(cat.find("gb300")->peak_matmul_flops(Precision::fp4), 15000e12);
}

TEST(MoePerf, PlannerTriesExpertParallelDegreesForMoeModels) {
  const ModelSpec& m = cached_preset("qwen3-30b-a3b");
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  const Stack stack = *StackCatalog::builtin().find(default_stack_id(Task::pretrain));
  const Efficiency e = EfficiencyTable::builtin().for_gpu(h100, stack);
  Workload base;
  base.task = Task::pretrain;
  base.seq = 4096;
  PlanSpace space;
  space.min_gpus = space.max_gpus = 8;
  space.micro_batches = {1};
  space.virtual_stages = {1};
  space.expert_parallel = {1, 2, 4, 8};
  const PlanResult r = plan_training(m, base, h100, e, stack, default_cluster(h100), space);
  ASSERT_TRUE(r.best);
  bool saw_ep = r.best->workload.par.ep > 1;
  for (const auto& c : r.runners_up) saw_ep = saw_ep || c.workload.par.ep > 1;
  EXPECT_TRUE(saw_ep);
}

TEST(MoePerf, ExpertParallelDegreeMustFitTheStageAndTheExperts) {
  const ModelSpec& m = cached_preset("mixtral-8x7b");
  Workload w;
  w.par.dp = 4;
  w.par.ep = 3;
  ASSERT_TRUE(w.validate(m).has_value());
  EXPECT_EQ(w.validate(m)->field, "--ep");
  w.par.ep = 16;  // 8 experts
  EXPECT_TRUE(w.validate(m).has_value());
  Workload dense;
  dense.par.dp = 2;
  dense.par.ep = 2;
  EXPECT_TRUE(dense.validate(cached_preset("llama-3.1-8b")).has_value());
}

TEST(Precision, GgufTypesAreReadByNameWithLlamaCppBitsPerWeight) {
  // llama.cpp tools/quantize/quantize.cpp: Q4_K_M is 4.58 GiB on Llama-3-8B (8.03B weights).
  auto p = parse_precision("Q4_K_M");
  ASSERT_TRUE(p);
  EXPECT_NEAR(bytes_per_value(*p) * 8, 4.58 * 1073741824.0 * 8 / 8030261248.0, 1e-9);
  EXPECT_NEAR(bytes_per_value(*parse_precision("iq4_xs")) * 8, 4.25, 1e-9);
  EXPECT_NEAR(bytes_per_value(*parse_precision("mxfp4")) * 8, 4.25, 1e-9);  // OCP MX: 4 + 8/32
  EXPECT_NEAR(bytes_per_value(*parse_precision("nvfp4")) * 8, 4.5, 1e-9);   // 4 + 8/16
  EXPECT_TRUE(is_weight_only(*parse_precision("q6_k")));
  EXPECT_EQ(parse_precision("F16"), Precision::fp16);  // GGUF's unquantised file types
  EXPECT_EQ(parse_precision("f32"), Precision::fp32);
  EXPECT_FALSE(parse_precision("q4_k_x"));
}

}  // namespace gpuplan
