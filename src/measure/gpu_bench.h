// `gpuplan bench`: achieved dense GEMM throughput (cuBLAS, bf16/fp16/tf32) and device memory
// bandwidth (device-to-device copy) on the local GPU, against its catalog datasheet figures. The
// CUDA runtime and cuBLAS are loaded at run time, so gpuplan builds without a CUDA toolkit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hardware/catalog.h"
#include "util/status.h"

namespace gpuplan {

struct GemmResult {
  std::string precision;  // bf16, fp16, tf32
  int64_t size = 0;       // m = n = k
  double tflops = 0;
  double datasheet_tflops = 0;
};

struct BenchResult {
  std::string device_name, catalog_id;
  std::vector<GemmResult> gemm;
  double copy_bandwidth_gbps = 0, datasheet_bandwidth_gbps = 0;
  std::vector<std::string> notes;
};

Result<BenchResult> run_gpu_bench(const Catalog& catalog);

// The measured efficiencies in efficiency.toml's layout ([gpu.<id>]), for --calibration.
std::string calibration_toml(const BenchResult& r);
nlohmann::json bench_json(const BenchResult& r);
std::string bench_text(const BenchResult& r);

}  // namespace gpuplan
