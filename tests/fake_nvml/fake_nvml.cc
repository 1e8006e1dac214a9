// A fake libnvidia-ml.so.1 for tests: implements the NVML functions gpuplan calls, with readings
// scripted by a JSON scenario (FAKE_NVML_SCENARIO=path): per-device sample sequences over time,
// call failures in a time window, a GPU that disappears. Test-only; never presented as a GPU.
#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/nvml_api.h"

using nlohmann::json;

namespace {

struct Fault {
  std::string call;
  double from_s = 0, to_s = 1e30;
  int error = NVML_ERROR_UNKNOWN;
};

struct Device {
  json info;
  std::vector<json> samples;
  bool repeat = false;
  std::vector<Fault> faults;
  double lost_after_s = 1e30;
  double energy_mj = 0, energy_t = 0;
};

struct State {
  bool loaded = false, initialised = false;
  json scenario;
  std::vector<Device> devices;
  double period_s = 0.1;
  std::chrono::steady_clock::time_point start;
  std::mutex mu;
} g;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - g.start).count(); }

bool load() {
  if (g.loaded) return true;
  const char* path = std::getenv("FAKE_NVML_SCENARIO");
  if (!path) return false;
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  g.scenario = json::parse(ss.str(), nullptr, false);
  if (g.scenario.is_discarded()) return false;
  g.period_s = g.scenario.value("period_s", 0.1);
  for (const auto& d : g.scenario.value("devices", json::array())) {
    Device dev;
    dev.info = d;
    for (const auto& s : d.value("samples", json::array())) dev.samples.push_back(s);
    dev.repeat = d.value("repeat", false);
    dev.lost_after_s = d.value("lost_after_s", 1e30);
    for (const auto& f : d.value("faults", json::array()))
      dev.faults.push_back({f.value("call", ""), f.value("from_s", 0.0), f.value("to_s", 1e30), f.value("error", 999)});
    g.devices.push_back(dev);
  }
  g.loaded = true;
  return true;
}

Device* dev(nvmlDevice_t d) {
  const size_t i = reinterpret_cast<uintptr_t>(d) - 1;
  return i < g.devices.size() ? &g.devices[i] : nullptr;
}

// The scripted reading now, or the error this call must return.
nvmlReturn_t current(nvmlDevice_t d, const char* call, json& out) {
  if (!g.initialised) return NVML_ERROR_UNINITIALIZED;
  Device* x = dev(d);
  if (!x) return NVML_ERROR_INVALID_ARGUMENT;
  const double t = now_s();
  if (t >= x->lost_after_s) return NVML_ERROR_GPU_IS_LOST;
  for (const auto& f : x->faults)
    if (f.call == call && t >= f.from_s && t < f.to_s) return f.error;
  if (x->samples.empty()) return NVML_ERROR_NOT_SUPPORTED;
  size_t i = static_cast<size_t>(t / g.period_s);
  i = x->repeat ? i % x->samples.size() : std::min(i, x->samples.size() - 1);
  out = x->samples[i];
  return NVML_SUCCESS;
}

template <class T>
nvmlReturn_t field(nvmlDevice_t d, const char* call, const char* key, T* out, double scale = 1) {
  json s;
  if (nvmlReturn_t r = current(d, call, s); r != NVML_SUCCESS) return r;
  if (!s.contains(key)) return NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<T>(s[key].get<double>() * scale);
  return NVML_SUCCESS;
}

std::vector<unsigned> children_of_self() {
  std::vector<unsigned> out;
  DIR* dir = opendir("/proc/self/task");
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/children");
    unsigned pid;
    while (in >> pid) out.push_back(pid);
  }
  closedir(dir);
  return out;
}

struct FakeGpmSample {
  nvmlDevice_t device;
  json reading;
};

}  // namespace

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  std::lock_guard<std::mutex> l(g.mu);
  if (!load()) return NVML_ERROR_DRIVER_NOT_LOADED;
  if (int e = g.scenario.value("init_error", 0)) return e;
  g.initialised = true;
  g.start = std::chrono::steady_clock::now();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown() { g.initialised = false; return NVML_SUCCESS; }
const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}
nvmlReturn_t nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  std::snprintf(buf, len, "%s", g.scenario.value("driver", "0.0").c_str());
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  *v = g.scenario.value("cuda", 12040);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  if (!g.initialised) return NVML_ERROR_UNINITIALIZED;
  *n = static_cast<unsigned>(g.devices.size());
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i >= g.devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *d = reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(i + 1));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* buf, unsigned len) {
  Device* x = dev(d);
  if (!x) return NVML_ERROR_INVALID_ARGUMENT;
  std::snprintf(buf, len, "%s", x->info.value("name", "Fake GPU").c_str());
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* buf, unsigned len) {
  Device* x = dev(d);
  if (!x) return NVML_ERROR_INVALID_ARGUMENT;
  std::snprintf(buf, len, "%s", x->info.value("uuid", "GPU-fake").c_str());
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetArchitecture(nvmlDevice_t d, unsigned* a) {
  Device* x = dev(d);
  if (!x) return NVML_ERROR_INVALID_ARGUMENT;
  *a = x->info.value("arch", 9);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major, int* minor) {
  Device* x = dev(d);
  if (!x) return NVML_ERROR_INVALID_ARGUMENT;
  const json cc = x->info.value("cc", json::array({9, 0}));
  *major = cc[0].get<int>();
  *minor = cc[1].get<int>();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned* mw) {
  Device* x = dev(d);
  if (!x || !x->info.contains("power_limit_w")) return NVML_ERROR_NOT_SUPPORTED;
  *mw = static_cast<unsigned>(x->info["power_limit_w"].get<double>() * 1000);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int, unsigned* mhz) {
  Device* x = dev(d);
  if (!x || !x->info.contains("max_sm_clock")) return NVML_ERROR_NOT_SUPPORTED;
  *mhz = x->info["max_sm_clock"].get<unsigned>();
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  // The version word must be NVML_STRUCT_VERSION(nvmlMemory_v2, 2), as the real library checks.
  if (m->version != ((sizeof(nvmlMemory_v2_t)) | (2u << 24))) return 25;  // ARGUMENT_VERSION_MISMATCH
  Device* x = dev(d);
  if (!x) return NVML_ERROR_INVALID_ARGUMENT;
  m->total = static_cast<unsigned long long>(x->info.value("memory_total", 85899345920.0));
  if (!g.initialised) return NVML_ERROR_UNINITIALIZED;
  json s;
  if (nvmlReturn_t r = current(d, "nvmlDeviceGetMemoryInfo_v2", s); r != NVML_SUCCESS) return r;
  m->used = static_cast<unsigned long long>(s.value("mem_used", 0.0));
  m->free = m->total > m->used ? m->total - m->used : 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  json s;
  if (nvmlReturn_t r = current(d, "nvmlDeviceGetUtilizationRates", s); r != NVML_SUCCESS) return r;
  u->gpu = static_cast<unsigned>(s.value("util", 0.0));
  u->memory = static_cast<unsigned>(s.value("mem_util", 0.0));
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int, unsigned* t) { return field(d, "nvmlDeviceGetTemperature", "temp", t); }
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) { return field(d, "nvmlDeviceGetPowerUsage", "power_w", mw, 1000); }
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long* mj) {
  json s;
  if (nvmlReturn_t r = current(d, "nvmlDeviceGetTotalEnergyConsumption", s); r != NVML_SUCCESS) return r;
  Device* x = dev(d);
  const double t = now_s();
  x->energy_mj += s.value("power_w", 0.0) * 1000 * (t - x->energy_t);
  x->energy_t = t;
  *mj = static_cast<unsigned long long>(x->energy_mj) + 1000000;  // a driver counts from its load
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  return field(d, "nvmlDeviceGetClockInfo", type == NVML_CLOCK_MEM ? "mem_clock" : "sm_clock", mhz);
}
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long* r) {
  return field(d, "nvmlDeviceGetCurrentClocksEventReasons", "reasons", r);
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter, unsigned* kbps) {
  return field(d, "nvmlDeviceGetPcieThroughput", counter == NVML_PCIE_UTIL_TX_BYTES ? "pcie_tx" : "pcie_rx", kbps, 1.0 / 1024);
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned* n, nvmlProcessInfo_t* infos) {
  json s;
  if (nvmlReturn_t r = current(d, "nvmlDeviceGetComputeRunningProcesses_v3", s); r != NVML_SUCCESS) return r;
  const auto kids = children_of_self();
  if (kids.empty() || !s.contains("process_mem")) {
    *n = 0;
    return NVML_SUCCESS;
  }
  if (*n < 1) {
    *n = 1;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  infos[0] = nvmlProcessInfo_t{kids.front(), static_cast<unsigned long long>(s["process_mem"].get<double>()), 0xFFFFFFFF, 0xFFFFFFFF};
  *n = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t* s) {
  Device* x = dev(d);
  if (!x) return NVML_ERROR_INVALID_ARGUMENT;
  s->isSupportedDevice = x->info.value("gpm", false) ? 1 : 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* s) {
  *s = reinterpret_cast<nvmlGpmSample_t>(new FakeGpmSample{});
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t s) {
  delete reinterpret_cast<FakeGpmSample*>(s);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t s) {
  auto* f = reinterpret_cast<FakeGpmSample*>(s);
  f->device = d;
  return current(d, "nvmlGpmSampleGet", f->reading);
}
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* m) {
  if (m->version != 1) return 25;
  const json& r = reinterpret_cast<FakeGpmSample*>(m->sample2)->reading;
  for (unsigned i = 0; i < m->numMetrics; ++i) {
    const char* key = m->metrics[i].metricId == NVML_GPM_METRIC_SM_UTIL ? "sm_active"
                      : m->metrics[i].metricId == NVML_GPM_METRIC_ANY_TENSOR_UTIL ? "tensor_active"
                      : m->metrics[i].metricId == NVML_GPM_METRIC_DRAM_BW_UTIL ? "dram_active" : nullptr;
    if (key && r.contains(key)) {
      m->metrics[i].nvmlReturn = NVML_SUCCESS;
      m->metrics[i].value = r[key].get<double>();
    } else {
      m->metrics[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
    }
  }
  return NVML_SUCCESS;
}

}  // extern "C"
