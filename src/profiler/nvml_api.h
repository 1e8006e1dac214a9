// Our own minimal declarations of the NVML C API (libnvidia-ml.so.1), written from the public
// nvml.h documentation so gpuplan needs no NVIDIA header to build. The values and layouts are
// NVML 12/13's; sizes are pinned by static_assert so a refactor cannot silently change the ABI.
// The test suite's fake driver library implements these same signatures.
#pragma once

#include <cstdint>

extern "C" {

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;
typedef int nvmlReturn_t;

enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_TIMEOUT = 10,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_FUNCTION_NOT_FOUND = 13,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_UNKNOWN = 999,
};

// Clock-event (throttle) reason bits.
enum : unsigned long long {
  NVML_CLOCK_EVENT_GPU_IDLE = 0x1,
  NVML_CLOCK_EVENT_SW_POWER_CAP = 0x4,
  NVML_CLOCK_EVENT_HW_SLOWDOWN = 0x8,
  NVML_CLOCK_EVENT_SYNC_BOOST = 0x10,
  NVML_CLOCK_EVENT_SW_THERMAL = 0x20,
  NVML_CLOCK_EVENT_HW_THERMAL = 0x40,
  NVML_CLOCK_EVENT_HW_POWER_BRAKE = 0x80,
};

enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_GPM_METRIC_SM_UTIL = 2, NVML_GPM_METRIC_SM_OCCUPANCY = 3, NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5,
       NVML_GPM_METRIC_DRAM_BW_UTIL = 10 };

typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int version; unsigned long long total, reserved, free, used; } nvmlMemory_v2_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;

typedef struct {
  unsigned int metricId;
  nvmlReturn_t nvmlReturn;
  double value;
  struct { char* shortName; char* longName; char* unit; } metricInfo;
} nvmlGpmMetric_t;

// NVML_GPM_METRIC_MAX grew from 98 to 333 across releases with the struct version unchanged, so the
// array is sized for the largest; a newer library never writes past it.
inline constexpr int kGpmMetricSlots = 512;
typedef struct {
  unsigned int version;  // 1
  unsigned int numMetrics;
  nvmlGpmSample_t sample1, sample2;
  nvmlGpmMetric_t metrics[kGpmMetricSlots];
} nvmlGpmMetricsGet_t;
typedef struct { unsigned int version; unsigned int isSupportedDevice; } nvmlGpmSupport_t;

static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t layout");
static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_v2_t layout");
static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t layout");

}  // extern "C"

// NVML_STRUCT_VERSION(size, ver) = size | ver << 24.
inline constexpr unsigned int kNvmlMemoryV2Version = static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2u << 24);
