// How long the serving simulator takes for 10,000 requests (the bar: under one second on
// one core). Llama 3.1 8B under vLLM on one H100 at a load that keeps a batch of about 60 busy,
// and the same past saturation, where the queue and preemptions work hardest.
#include <benchmark/benchmark.h>

#include "hardware/catalog.h"
#include "model/presets.h"
#include "perf/inference.h"
#include "serving/simulator.h"

namespace {

using namespace gpuplan;

void BM_Simulate10kRequests(benchmark::State& state) {
  const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  const Gpu gpu = *Catalog::builtin().find("h100-sxm");
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(gpu);
  const Engine engine = *EngineCatalog::builtin().find("vllm");
  Workload w;
  w.task = Task::infer;
  const InferenceMemory mem = inference_memory(m, w, {1024, 256, 1}, gpu, eff, engine);
  const ServingSetup s = setup_for(engine, gpu, step_cost(m, w, gpu, eff, default_cluster(gpu), engine), mem.kv_capacity_tokens);
  Load load;
  load.requests = poisson_arrivals(10000, static_cast<double>(state.range(0)), 1024, 256, 1);
  int64_t steps = 0;
  for (auto _ : state) {
    auto r = simulate_serving(s, load);
    benchmark::DoNotOptimize(r);
    steps = r ? r->steps : 0;
  }
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_Simulate10kRequests)->Arg(20)->Arg(200)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
