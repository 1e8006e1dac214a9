#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hardware/catalog.h"
#include "memory/fit.h"
#include "model/presets.h"
#include "planner/serving_planner.h"
#include "serving/simulator.h"
#include "perf/inference.h"
#include "planner/fit_search.h"
#include "planner/training_planner.h"
#include "util/builtin_lookup_for_tests.h"

namespace gpuplan {

namespace {
using testing_support::gpu;
Efficiency eff(const Gpu& g) { return EfficiencyTable::builtin().for_gpu(g); }
const Stack& megatron() {
  static const Stack s = *StackCatalog::builtin().find("megatron");
  return s;
}
Efficiency train_eff(const Gpu& g) { return EfficiencyTable::builtin().for_gpu(g, megatron()); }
const Engine& vllm() {
  static const Engine e = *EngineCatalog::builtin().find("vllm");
  return e;
}
}  // namespace

// Llama 3 405B as published (Llama 3 Herd of Models, Table 4): 8,192 H100, TP 8, PP 16, DP 64,
// 2,048 sequences of 8,192 tokens per step.
TEST(TrainingPlanner, BeatsOrMatchesTheLlama3LayoutAndFits) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-405b");
  const Gpu h100 = gpu("h100-sxm");
  const Cluster cluster = default_cluster(h100);
  Workload base;
  base.task = Task::pretrain;
  base.seq = 8192;
  Workload published = base;
  published.par.tp = 8, published.par.pp = 16, published.par.dp = 64, published.par.virtual_stages = 2;
  published.par.sequence_parallel = true;
  published.micro_batch = 1;
  published.recompute = Recompute::selective;
  TrainingRun run;
  run.global_batch = 2048;
  const double published_step = estimate_training(m, published, h100, train_eff(h100), megatron(), cluster, run).step_time_s;

  PlanSpace space;
  space.min_gpus = space.max_gpus = 8192;
  space.global_batch = 2048;
  const PlanResult r = plan_training(m, base, h100, train_eff(h100), megatron(), cluster, space);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_LE(r.best->estimate.step_time_s, published_step);
  EXPECT_LE(estimate_memory(m, r.best->workload, eff(h100)).nvidia_smi(), usable_memory_bytes(h100));
  EXPECT_EQ(r.best->workload.par.gpus(), 8192);
  EXPECT_GT(r.configs_evaluated, 100);
}

// Korthikanti et al. 2022, Table 3: 175B on 64 A100s as TP 8 x PP 8, batch 64.
TEST(TrainingPlanner, BeatsOrMatchesTheMegatron175bLayout) {
  const ModelSpec m = *Presets::builtin().find("gpt3-175b");
  const Gpu a100 = gpu("a100-80gb-sxm");
  const Cluster cluster = default_cluster(a100);
  Workload base;
  base.task = Task::pretrain;
  base.seq = 2048;
  Workload published = base;
  published.par.tp = 8, published.par.pp = 8, published.par.dp = 1, published.par.virtual_stages = 3;
  published.recompute = Recompute::selective;
  TrainingRun run;
  run.global_batch = 64;
  PlanSpace space;
  space.min_gpus = space.max_gpus = 64;
  space.global_batch = 64;
  space.virtual_stages = {1, 2, 3, 4};
  const PlanResult r = plan_training(m, base, a100, train_eff(a100), megatron(), cluster, space);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_LE(r.best->estimate.step_time_s, estimate_training(m, published, a100, train_eff(a100), megatron(), cluster, run).step_time_s);
  EXPECT_LE(r.best->memory_per_gpu_bytes, usable_memory_bytes(a100));
}

TEST(TrainingPlanner, ReportsTheBestLayoutAtEachCountAndRunnersUpInOrder) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu h100 = gpu("h100-sxm");
  PlanSpace space;
  space.min_gpus = 1;
  space.max_gpus = 16;
  space.global_batch = 64;
  Workload base;
  base.task = Task::pretrain;
  const PlanResult r = plan_training(m, base, h100, train_eff(h100), megatron(), default_cluster(h100), space);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_GE(r.best_per_count.size(), 3u);
  double last = r.best->estimate.step_time_s;
  for (const auto& c : r.runners_up) {
    EXPECT_GE(c.estimate.step_time_s, last);
    last = c.estimate.step_time_s;
  }
  for (const auto& c : r.best_per_count) EXPECT_EQ(c.workload.micro_batch * c.workload.grad_accum * c.workload.par.dp, 64);
}

TEST(TrainingPlanner, FindsNothingWhenNothingFits) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-405b");
  const Gpu t4 = gpu("t4");
  PlanSpace space;
  space.max_gpus = 8;
  Workload base;
  base.task = Task::pretrain;
  EXPECT_FALSE(plan_training(m, base, t4, train_eff(t4), megatron(), default_cluster(t4), space).best.has_value());
}

TEST(ServingPlanner, MeetsTheLatencyTargetsAndScalesReplicasWithLoad) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu h100 = gpu("h100-sxm");
  Workload w;
  w.task = Task::infer;
  ServiceTarget t;
  t.prompt_tokens = 1024;
  t.output_tokens = 256;
  t.peak_rps = 120;
  t.average_rps = 10;
  t.ttft_s = 1.0;
  t.tpot_s = 0.05;
  const ServingPlan p = plan_serving(m, w, h100, eff(h100), default_cluster(h100), t, vllm());
  ASSERT_TRUE(p.best.has_value());
  EXPECT_LE(p.best->tpot_s, t.tpot_s);  // p99 at the peak, spread over the replicas
  EXPECT_LE(p.best->ttft_s, t.ttft_s);
  EXPECT_GE(p.best->replicas_peak * p.best->replica_rps, t.peak_rps);
  EXPECT_LT(p.best->replicas_min, p.best->replicas_peak);
  EXPECT_GE(p.best->headroom, 0);
  EXPECT_LT(p.best->headroom, 1);
}

// The search over the rate is monotone and ends on the boundary: one replica meets the p99 targets
// at the rate found and misses them 5% above it, and the replica count is the fewest that meets
// them at the peak (one fewer misses).
TEST(ServingPlanner, TheRateSearchConvergesOnTheFewestReplicas) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu h100 = gpu("h100-sxm");
  Workload w;
  w.task = Task::infer;
  ServiceTarget t;
  t.prompt_tokens = 1024;
  t.output_tokens = 256;
  t.peak_rps = 40;
  t.average_rps = 12;
  t.ttft_s = 1.0;
  t.tpot_s = 0.05;
  const ServingPlan p = plan_serving(m, w, h100, eff(h100), default_cluster(h100), t, vllm());
  ASSERT_TRUE(p.best.has_value());
  const ServingOption& o = *p.best;
  Workload rw = w;
  rw.par.tp = o.tp;
  const InferenceMemory mem = inference_memory(m, rw, {1024, 256, 1}, h100, eff(h100), vllm());
  const ServingSetup setup = setup_for(vllm(), h100, step_cost(m, rw, h100, eff(h100), default_cluster(h100), vllm()), mem.kv_capacity_tokens);
  EXPECT_TRUE(replica_at_rate(setup, t, o.replica_rps).meets);
  EXPECT_FALSE(replica_at_rate(setup, t, o.replica_rps * 1.05).meets);
  EXPECT_TRUE(replica_at_rate(setup, t, t.peak_rps / static_cast<double>(o.replicas_peak)).meets);
  if (o.replicas_peak > 1) { EXPECT_FALSE(replica_at_rate(setup, t, t.peak_rps / static_cast<double>(o.replicas_peak - 1)).meets); }
}

// examples/chat-service-8b.toml: 40 requests/s at peak, 1,024 + 256 tokens, TTFT 1 s, TPOT 50 ms.
// Issue 11: the old fixed-point loop gave H100 6 GPUs where its own model needed 2. The count is
// the fewest replicas of the replica rate the model finds (TheRateSearchConverges... checks that
// one fewer misses): with vLLM's fitted time scale (data/fitted.toml) one TP-1 replica sustains
// 15-20 requests/s within the targets, so two or three replicas carry the peak, never six.
TEST(ServingPlanner, TheChatServiceExampleSizesH100AtTheCountItsModelNeeds) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu h100 = gpu("h100-sxm");
  Workload w;
  w.task = Task::infer;
  w.kv_precision = Precision::fp8;
  ServiceTarget t;
  t.prompt_tokens = 1024;
  t.output_tokens = 256;
  t.peak_rps = 40;
  t.average_rps = 12;
  t.ttft_s = 1.0;
  t.tpot_s = 0.05;
  const ServingPlan p = plan_serving(m, w, h100, eff(h100), default_cluster(h100), t, vllm());
  ASSERT_TRUE(p.best.has_value());
  EXPECT_EQ(p.best->tp, 1);
  EXPECT_EQ(p.best->replicas_peak, static_cast<int64_t>(std::ceil(t.peak_rps / p.best->replica_rps)));
  EXPECT_GE(p.best->gpus_peak, 2);
  EXPECT_LE(p.best->gpus_peak, 3);
  EXPECT_EQ(p.best->replicas_min, 1);
}

// With chat lengths the planner's load has ShareGPT's long tail: at the same rate and means, the
// longest prompts and answers raise the p99s above those of equal lengths.
TEST(ServingPlanner, ChatLengthsRaiseTheTailAtTheSameRate) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu h100 = gpu("h100-sxm");
  Workload w;
  w.task = Task::infer;
  const InferenceMemory mem = inference_memory(m, w, {300, 200, 1}, h100, eff(h100), vllm());
  const ServingSetup setup = setup_for(vllm(), h100, step_cost(m, w, h100, eff(h100), default_cluster(h100), vllm()), mem.kv_capacity_tokens);
  ServiceTarget t;
  t.prompt_tokens = 300;
  t.output_tokens = 200;
  const ReplicaLoad equal = replica_at_rate(setup, t, 20);
  t.chat_lengths = true;
  const ReplicaLoad chat = replica_at_rate(setup, t, 20);
  EXPECT_GT(chat.ttft_p99_s, equal.ttft_p99_s);
  EXPECT_GT(chat.mean_batch, 0);
}

// `infer --emit k8s` plans one replica at the TP it was given: the same option the sweep finds there.
TEST(ServingPlanner, OneReplicaSizeIsTheSweepsOptionAtThatTp) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-70b");
  const Gpu h100 = gpu("h100-sxm");
  Workload w;
  w.task = Task::infer;
  ServiceTarget t;
  t.peak_rps = 12;
  t.average_rps = 3;
  const ServingPlan p = plan_serving(m, w, h100, eff(h100), default_cluster(h100), t, vllm());
  ASSERT_FALSE(p.options.empty());
  for (const ServingOption& o : p.options) {
    const ServingOption one = plan_replica(m, w, o.tp, h100, eff(h100), default_cluster(h100), t, vllm());
    EXPECT_EQ(one.why_not, o.why_not) << "tp " << o.tp;
    EXPECT_EQ(one.replica_rps, o.replica_rps) << "tp " << o.tp;
    EXPECT_EQ(one.replicas_peak, o.replicas_peak) << "tp " << o.tp;
  }
  // TP 1 cannot hold 70B of bf16 weights in 80 GB: the option says why.
  EXPECT_NE(plan_replica(m, w, 1, h100, eff(h100), default_cluster(h100), t, vllm()).why_not.find("do not fit"), std::string::npos);
}

TEST(ServingPlanner, ATpotTargetBelowTheWeightReadTimeCannotBeMet) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-70b");
  const Gpu l4 = gpu("l4");
  Workload w;
  w.task = Task::infer;
  ServiceTarget t;
  t.tpot_s = 0.005;  // 5 ms a token: 141 GB of weights at 300 GB/s per card cannot get there on 8 L4s
  const ServingPlan p = plan_serving(m, w, l4, eff(l4), default_cluster(l4), t, vllm());
  EXPECT_FALSE(p.best.has_value());
  ASSERT_FALSE(p.options.empty());
  for (const auto& o : p.options) EXPECT_FALSE(o.why_not.empty());
}

}  // namespace gpuplan

namespace gpuplan {

// What engineers try before adding GPUs: for a 70B full fine-tune on H100s, recomputation, ZeRO-3
// and the optimizer in CPU memory fit one 8-GPU node; keeping everything on the GPUs takes a few
// nodes, not the 128 GPUs plain sharding needs.
TEST(FitSearch, Full70bFitsOneNodeWithOffloadOrAFewWithout) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-70b");
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  const Stack hf = *StackCatalog::builtin().find("hf");
  Workload w;
  w.task = Task::full;
  w.seq = 4096;
  const Headroom h{0.1, "test"};
  const FitSearch s = find_fit(m, w, h100, EfficiencyTable::builtin().for_gpu(h100), hf, &Platform::builtin(), h, 8);
  ASSERT_TRUE(s.first && s.without_offload);
  EXPECT_LE(s.first->workload.par.gpus(), 8);
  EXPECT_TRUE(s.first->workload.offload_optimizer);
  EXPECT_LE(s.first->host_bytes_per_node, 2048e9);  // a DGX-class node's host memory
  EXPECT_LE(s.without_offload->workload.par.gpus(), 32);
  EXPECT_FALSE(s.without_offload->workload.offload_optimizer);
  EXPECT_LE(s.without_offload->memory_per_gpu_bytes, usable_memory_bytes(h100) * 0.9);
}

// Plans at every count train at one global batch, so step times compare like for like.
TEST(TrainingPlanner, EveryCountTrainsAtTheSameGlobalBatch) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  const Stack mt = *StackCatalog::builtin().find("megatron");
  Workload base;
  base.task = Task::pretrain;
  base.seq = 4096;
  PlanSpace space;
  space.min_gpus = 8;
  space.max_gpus = 64;
  space.platform = &Platform::builtin();
  space.headroom = {0.1, "test"};
  const PlanResult r = plan_training(m, base, h100, EfficiencyTable::builtin().for_gpu(h100, mt), mt, default_cluster(h100), space);
  EXPECT_EQ(r.global_batch, default_global_batch(4096));
  ASSERT_GE(r.best_per_count.size(), 3u);
  for (const auto& p : r.best_per_count) {
    EXPECT_EQ(p.estimate.global_batch, r.global_batch);
    EXPECT_GE(p.margin.free_fraction, 0.1 - 1e-12);
  }
  ASSERT_TRUE(r.cheapest);
  for (const auto& p : r.best_per_count) EXPECT_LE(r.cheapest->gpu_hours_per_step(), p.gpu_hours_per_step() + 1e-12);
}

// The stack decides the search: the Trainer has no pipeline stages; DeepSpeed pipelines only with
// ZeRO-1; GeForce cards get no tensor parallelism.
TEST(TrainingPlanner, SearchesOnlyWhatTheStackAndLinksOffer) {
  const ModelSpec m = *Presets::builtin().find("llama-2-13b");
  Workload base;
  base.task = Task::full;
  base.seq = 2048;
  PlanSpace space;
  space.min_gpus = 8;
  space.max_gpus = 16;
  space.global_batch = 64;
  space.platform = &Platform::builtin();
  for (const char* stack : {"hf", "deepspeed"}) {
    const Stack s = *StackCatalog::builtin().find(stack);
    const Gpu a100 = *Catalog::builtin().find("a100-80gb-sxm");
    const PlanResult r = plan_training(m, base, a100, EfficiencyTable::builtin().for_gpu(a100, s), s, default_cluster(a100), space);
    EXPECT_GT(r.excluded_by_stack, 0) << stack;
    for (const auto& p : r.best_per_count) EXPECT_EQ(Platform::builtin().stack_support(stack)->why_not(p.workload), "") << stack;
  }
  const Gpu g = *Catalog::builtin().find("rtx-4090");
  const Stack mt = *StackCatalog::builtin().find("megatron");  // offers tensor parallelism
  const PlanResult r = plan_training(m, base, g, EfficiencyTable::builtin().for_gpu(g, mt), mt, default_cluster(g), space);
  EXPECT_GT(r.excluded_by_link, 0);
  for (const auto& p : r.best_per_count) EXPECT_EQ(p.workload.par.tp, 1);
}

}  // namespace gpuplan

namespace gpuplan {

namespace {
// Qwen3-235B in FP8 on H200 under TensorRT-LLM at 20 requests/s of 1,000/500 tokens, planned with
// attention DP as `choice` says (`model` replaces the MoE model).
ServingPlan plan_moe_service(AttentionDpChoice choice = AttentionDpChoice::automatic,
                             const std::string& model = "qwen3-235b-a22b") {
  const Gpu h200 = gpu("h200-sxm");
  Workload w;
  w.task = Task::infer;
  w.precision = Precision::fp8;
  ServiceTarget t;
  t.prompt_tokens = 1000;
  t.output_tokens = 500;
  t.peak_rps = t.average_rps = 20;
  return plan_serving(*Presets::builtin().find(model), w, h200, EfficiencyTable::builtin().for_gpu(h200),
                      default_cluster(h200), t, *EngineCatalog::builtin().find("tensorrt-llm"), choice);
}
}  // namespace

// For a mixture-of-experts model on an engine that runs attention data-parallel, each replica size
// from TP 2 up is planned both ways; a dense model, or an engine without it, gets TP only.
TEST(ServingPlanner, MoeOnAnAttentionDpEngineIsPlannedBothWays) {
  const ServingPlan p = plan_moe_service();
  int adp = 0;
  for (const ServingOption& o : p.options) {
    adp += o.attention_dp;
    if (o.attention_dp) {
      EXPECT_GE(o.tp, 2);
      const auto tp_only = std::find_if(p.options.begin(), p.options.end(),
                                        [&](const ServingOption& x) { return x.tp == o.tp && !x.attention_dp; });
      ASSERT_NE(tp_only, p.options.end());
      // Each request cached once: at least as many requests a second as the same GPUs with TP attention.
      if (o.ok() && tp_only->ok()) {
        EXPECT_GT(o.replica_rps, 0.5 * tp_only->replica_rps);
      }
    }
  }
  EXPECT_GT(adp, 0);
  ASSERT_TRUE(p.best);
  for (const ServingOption& o : plan_moe_service(AttentionDpChoice::automatic, "llama-3.1-70b").options)
    EXPECT_FALSE(o.attention_dp);
}

}  // namespace gpuplan

namespace gpuplan {

// --attention-dp on plans each TP from 2 up with attention data parallelism only, off never with it;
// "on" refuses a dense model or an engine without it rather than plan something else.
TEST(ServingPlanner, AttentionDpChoiceKeepsOnlyTheChosenLayouts) {
  const ServingPlan on = plan_moe_service(AttentionDpChoice::on);
  const ServingPlan off = plan_moe_service(AttentionDpChoice::off);
  ASSERT_FALSE(on.options.empty());
  ASSERT_FALSE(off.options.empty());
  for (const ServingOption& o : on.options) EXPECT_EQ(o.attention_dp, o.tp >= 2) << "tp " << o.tp;
  for (const ServingOption& o : off.options) EXPECT_FALSE(o.attention_dp);
  ASSERT_TRUE(on.best && off.best);
  EXPECT_TRUE(on.best->attention_dp);

  EXPECT_EQ(parse_attention_dp_choice("auto"), AttentionDpChoice::automatic);
  EXPECT_EQ(parse_attention_dp_choice("off"), AttentionDpChoice::off);
  EXPECT_FALSE(parse_attention_dp_choice("yes"));
  const Engine trt = *EngineCatalog::builtin().find("tensorrt-llm");
  const ModelSpec moe = *Presets::builtin().find("qwen3-235b-a22b");
  EXPECT_NE(attention_dp_choice_refusal(AttentionDpChoice::on, *Presets::builtin().find("llama-3.1-70b"), trt), "");
  EXPECT_NE(attention_dp_choice_refusal(AttentionDpChoice::on, moe, *EngineCatalog::builtin().find("llama.cpp")), "");
  EXPECT_EQ(attention_dp_choice_refusal(AttentionDpChoice::on, moe, trt), "");
  EXPECT_EQ(attention_dp_choice_refusal(AttentionDpChoice::off, *Presets::builtin().find("llama-3.1-70b"), trt), "");
}

}  // namespace gpuplan
