// The GPU side of `gpuplan profile`: a sampler backend reads per-GPU counters (utilisation, memory,
// clocks, power, energy, throttle reasons, PCIe, per-process memory, and GPM activity where the
// driver offers it). NVIDIA's is NVML loaded at run time; an AMD backend would implement the same
// interface. A reading the driver cannot give is empty, never zero.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status.h"

namespace gpuplan {

struct GpuDevice {
  std::string name, uuid;
  std::string compute_capability;  // "9.0"
  int architecture = 0;            // NVML's: Volta 5, Ampere 7, Ada 8, Hopper 9, Blackwell 10
  double memory_total_bytes = 0;
  std::optional<double> power_limit_w, max_sm_clock_mhz;
  bool gpm = false;                // SM/tensor/DRAM activity counters available
};

struct GpuSample {
  double t_s = 0;  // seconds since the profile started
  int gpu = 0;
  std::optional<double> util_pct;       // share of time a kernel was running (not SM occupancy)
  std::optional<double> mem_util_pct;   // share of time device memory was read or written
  std::optional<double> mem_used_bytes, mem_total_bytes;
  std::optional<double> process_mem_bytes;  // the profiled processes' memory on this GPU
  std::optional<double> temperature_c, power_w, energy_j;
  std::optional<double> sm_clock_mhz, mem_clock_mhz;
  std::optional<unsigned long long> clock_event_reasons;
  std::optional<double> pcie_tx_Bps, pcie_rx_Bps;
  std::optional<double> sm_active_pct, tensor_active_pct, dram_active_pct;  // GPM, Hopper and newer
  std::string error;  // the first failing call this round, e.g. "nvmlDeviceGetUtilizationRates: GPU is lost"
};

class GpuSampler {
 public:
  virtual ~GpuSampler() = default;
  virtual std::string backend() const = 0;
  virtual std::string driver_version() const = 0;
  virtual std::optional<int> cuda_driver_version() const = 0;  // e.g. 12040 for CUDA 12.4
  virtual const std::vector<GpuDevice>& devices() const = 0;
  // One reading of every GPU; `pids` are the processes whose GPU memory is summed.
  virtual std::vector<GpuSample> sample(double t_s, const std::vector<pid_t>& pids) = 0;
};

// Loads NVML from `library` (default: libnvidia-ml.so.1 on the loader path) and initialises it.
// Fails with a specific message for each step: library missing, symbol missing, init failed, no GPUs.
Result<std::unique_ptr<GpuSampler>> open_nvml(const std::string& library = "libnvidia-ml.so.1");

}  // namespace gpuplan
