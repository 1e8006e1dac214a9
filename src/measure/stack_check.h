// `gpuplan doctor`: the local GPU stack (driver, the CUDA version it supports, the CUDA toolkit,
// PyTorch's CUDA build, each GPU's compute capability) and what that allows or forbids.
#pragma once

#include <string>
#include <vector>

#include "hardware/catalog.h"

namespace gpuplan {

struct StackGpu {
  std::string name, compute_capability, catalog_id;
  double memory_bytes = 0;
  std::vector<std::string> precisions;  // tensor-core precisions this compute capability runs
};

struct StackFinding {
  std::string level;  // ok, warning, error
  std::string text;
};

struct StackReport {
  std::string driver_version, cuda_driver, cuda_toolkit, torch;
  std::vector<StackGpu> gpus;
  std::vector<StackFinding> findings;
};

// Tensor-core precisions by compute capability, from the architecture records of data/platform.toml
// (fp16 7.0+, int8 7.5+, bf16 and tf32 8.0+, fp8 8.9+, fp4 10.0+).
std::vector<std::string> precisions_for(int major, int minor);

// "12.4" from NVML's 12040.
std::string cuda_version_string(int v);

StackReport check_stack(const std::string& nvml_library, const Catalog& catalog);

// Pure part of doctor, for tests: findings from versions and compute capabilities.
void add_compatibility_findings(StackReport& r);

}  // namespace gpuplan
