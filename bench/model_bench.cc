// Reading a sharded model's safetensors headers, as `--model DIR` does: DeepSeek-V3's checkpoint
// holds about 91,000 tensors in 163 shards (its model.safetensors.index.json lists 91,991 names).
// Synthetic shards with that many tensors (two per expert projection: the FP8 weight and its
// block scales) are written once to a temporary folder beside the fixture's config.json. The
// `tensors_per_s` counter staying flat from 10k to 91k tensors shows the reading is linear.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "model/resolve.h"

namespace fs = std::filesystem;
using namespace gpuplan;

namespace {

// The synthetic folders, removed when the program ends (a benchmark function runs several times).
struct Folders {
  std::vector<fs::path> made;
  ~Folders() {
    for (const auto& p : made) fs::remove_all(p);
  }
} g_folders;

// A model folder with DeepSeek-V3's config.json and `tensors` tensors spread over 163 shards.
fs::path make_model(int64_t tensors) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpuplan-bench-{}-{}", getpid(), tensors);
  if (fs::exists(dir / "config.json")) return dir;
  fs::create_directories(dir);
  g_folders.made.push_back(dir);
  fs::copy_file(fs::path(GPUPLAN_SOURCE_DIR) / "tests/fixtures/configs/deepseek-v3.json", dir / "config.json",
                fs::copy_options::overwrite_existing);
  const int shards = 163;
  const char* projections[] = {"gate_proj", "up_proj", "down_proj"};
  int64_t made = 0;
  for (int s = 0; s < shards; ++s) {
    nlohmann::json header = nlohmann::json::object();
    const int64_t in_shard = tensors / shards + (s < tensors % shards ? 1 : 0);
    uint64_t offset = 0;
    for (int64_t k = 0; k < in_shard; ++k, ++made) {
      const int64_t weight = made / 2, layer = weight / 768 % 61, expert = weight / 3 % 256;
      const std::string name = fmt::format("model.layers.{}.mlp.experts.{}.{}.{}", layer, expert, projections[weight % 3],
                                           made % 2 ? "weight_scale_inv" : "weight");
      header[name] = {{"dtype", made % 2 ? "F32" : "F8_E4M3"}, {"shape", {2, 2}}, {"data_offsets", {offset, offset + (made % 2 ? 16 : 4)}}};
      offset += made % 2 ? 16 : 4;
    }
    const std::string text = header.dump();
    std::ofstream out(dir / fmt::format("model-{:05}-of-{:05}.safetensors", s + 1, shards), std::ios::binary);
    const uint64_t n = text.size();
    for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
    out << text << std::string(offset, '\0');
  }
  return dir;
}

void BM_ReadShardedHeaders(benchmark::State& state) {
  const int64_t tensors = state.range(0);
  const fs::path dir = make_model(tensors);
  for (auto _ : state) {
    auto m = resolve_model(dir.string());
    if (!m) {
      state.SkipWithError(m.error().to_string().c_str());
      break;
    }
    benchmark::DoNotOptimize(m->tensor_parameters);
  }
  state.counters["tensors"] = static_cast<double>(tensors);
  state.counters["tensors_per_s"] = benchmark::Counter(static_cast<double>(tensors), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ReadShardedHeaders)->Arg(10'000)->Arg(91'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
