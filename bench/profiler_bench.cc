// Cost of one sampling round of `gpuplan profile`: host counters from /proc for a process tree, and
// NVML readings through the fake driver library when FAKE_NVML_SCENARIO and the library path are
// set (`make bench` sets them). Reports the share of one core the sampler uses at a 100 ms interval.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "profiler/gpu_sampler.h"
#include "profiler/host_sampler.h"
#include "profiler/step_detector.h"

using namespace gpuplan;

// Seconds per round over a 0.1 s interval, as a percentage of one core.
static void report_share(benchmark::State& state, std::chrono::steady_clock::time_point start) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  state.counters["percent_of_core_at_100ms"] = 100.0 * s / static_cast<double>(state.iterations()) / 0.1;
}

static void BM_HostSampleRound(benchmark::State& state) {
  HostSampler h(getpid());
  double t = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(h.sample(t += 0.1));
  report_share(state, start);
}
BENCHMARK(BM_HostSampleRound);

static void BM_NvmlSampleRound(benchmark::State& state) {
  const char* lib = std::getenv("GPUPLAN_BENCH_NVML");
  auto s = open_nvml(lib ? lib : "libnvidia-ml.so.1");
  if (!s) {
    state.SkipWithError("no NVML library (set GPUPLAN_BENCH_NVML to the fake driver and FAKE_NVML_SCENARIO)");
    return;
  }
  std::vector<pid_t> pids{getpid()};
  double t = 0;
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize((*s)->sample(t += 0.1, pids));
  report_share(state, start);
}
BENCHMARK(BM_NvmlSampleRound);


// The step patterns on adversarial lines: 4,096 digits (a dumped tensor, a progress counter gone
// wild) with the default patterns, and 4,096 x's with a user pattern that backtracks
// catastrophically in ECMAScript engines. Time per iteration is time per line.
static void BM_StepPatternsOnAdversarialLines(benchmark::State& state) {
  std::string err;
  const bool user = state.range(0) == 1;
  auto d = StepDetector::make(user ? R"((\d+)*\d*!)" : "", user ? "(x*)*y" : "", &err);
  if (!d) {
    state.SkipWithError(err.c_str());
    return;
  }
  const std::string line = user ? std::string(4096, 'x') : std::string(4096, '7');
  double t = 0;
  for (auto _ : state) d->on_line(t += 0.001, line);
  state.SetLabel(user ? "(x*)*y on 4,096 x's" : "default patterns on 4,096 digits");
  state.SetItemsProcessed(state.iterations());  // lines
}
BENCHMARK(BM_StepPatternsOnAdversarialLines)->Arg(0)->Arg(1);

BENCHMARK_MAIN();
