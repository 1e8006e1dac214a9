// The planner's search rate on its hardest built-in case: Llama 3.1 405B on every power-of-two
// cluster from 8 to 16,384 H100s on InfiniBand NDR, with the stack's recompute modes and context
// parallelism 1, 2 and 4. Reports layouts evaluated per second; issue 9 asks for under 0.5 s.
#include <benchmark/benchmark.h>

#include "hardware/catalog.h"
#include "hardware/fabric.h"
#include "model/presets.h"
#include "planner/training_planner.h"

using namespace gpuplan;

static void BM_Plan405bSweep(benchmark::State& state) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-405b");
  const Gpu g = *Catalog::builtin().find("h100-sxm");
  const Stack stack = *StackCatalog::builtin().find("megatron");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g, stack);
  Workload base;
  base.task = Task::pretrain;
  base.seq = 8192;
  PlanSpace space;
  space.min_gpus = 8;
  space.max_gpus = 16384;
  space.global_batch = 2048;
  space.context_parallel = {1, 2, 4};
  Cluster cluster = default_cluster(g);
  cluster.network_Bps = FabricCatalog::builtin().find("ib-ndr")->per_gpu_Bps(cluster.gpus_per_node);
  int64_t configs = 0;
  for (auto _ : state) {
    const PlanResult r = plan_training(m, base, g, eff, stack, cluster, space);
    configs += r.configs_evaluated;
    benchmark::DoNotOptimize(r.best);
  }
  state.SetItemsProcessed(configs);
  state.counters["configs_per_sweep"] = static_cast<double>(configs) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Plan405bSweep)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
