// Cost of one estimate, the unit the planner multiplies by millions. Results are reported as
// evaluations per second (items_per_second), not as pass/fail timings.
#include <benchmark/benchmark.h>

#include "hardware/catalog.h"
#include "memory/memory_model.h"
#include "model/presets.h"
#include "perf/inference.h"
#include "perf/training.h"

using namespace gpuplan;

namespace {

struct Setup {
  ModelSpec model = *Presets::builtin().find("llama-3.1-405b");
  Gpu gpu = *Catalog::builtin().find("h100-sxm");
  Stack stack = *StackCatalog::builtin().find("megatron");
  Efficiency eff = EfficiencyTable::builtin().for_gpu(gpu, stack);
  Cluster cluster = default_cluster(gpu);
  Workload w = [] {
    Workload w;
    w.task = Task::pretrain;
    w.seq = 8192;
    w.recompute = Recompute::selective;
    w.par.tp = 8;
    w.par.pp = 16;
    w.par.dp = 64;
    w.par.virtual_stages = 2;
    return w;
  }();
};

void BM_TrainingStepEstimate(benchmark::State& state) {
  const Setup s;
  TrainingRun run;
  run.global_batch = 2048;
  for (auto _ : state) benchmark::DoNotOptimize(estimate_training(s.model, s.w, s.gpu, s.eff, s.stack, s.cluster, run));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TrainingStepEstimate);

void BM_MemoryEstimate(benchmark::State& state) {
  const Setup s;
  for (auto _ : state) benchmark::DoNotOptimize(estimate_memory(s.model, s.w, s.eff));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MemoryEstimate);

void BM_InferenceEstimate(benchmark::State& state) {
  Setup s;
  s.model = *Presets::builtin().find("llama-3.1-8b");
  Workload w;
  w.task = Task::infer;
  for (auto _ : state)
    benchmark::DoNotOptimize(estimate_inference(s.model, w, {1024, 256, 16}, s.gpu, s.eff, s.cluster, *EngineCatalog::builtin().find("vllm")));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InferenceEstimate);

}  // namespace

BENCHMARK_MAIN();
