// NVML backend of GpuSampler: dlopen'ed at run time, every symbol checked, versioned entry points
// tried newest first. Optional calls that are missing or unsupported leave their reading empty.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "profiler/gpu_sampler.h"
#include "profiler/nvml_api.h"

namespace gpuplan {

namespace {

struct Api {
  void* handle = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*cuda_driver_version)(int*) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*architecture)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*compute_capability)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*memory_v2)(nvmlDevice_t, nvmlMemory_v2_t*) = nullptr;
  nvmlReturn_t (*memory_v1)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*clock_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*gpm_support)(nvmlDevice_t, nvmlGpmSupport_t*) = nullptr;
  nvmlReturn_t (*gpm_alloc)(nvmlGpmSample_t*) = nullptr;
  nvmlReturn_t (*gpm_free)(nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_get)(nvmlDevice_t, nvmlGpmSample_t) = nullptr;
  nvmlReturn_t (*gpm_metrics)(nvmlGpmMetricsGet_t*) = nullptr;
};

template <class F>
void bind(void* h, F& out, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* p = dlsym(h, n)) {
      out = reinterpret_cast<F>(p);
      return;
    }
}

struct GpmState {
  nvmlGpmSample_t prev = nullptr, cur = nullptr;
  double prev_t = -1;
};

class NvmlSampler final : public GpuSampler {
 public:
  NvmlSampler(Api api, std::vector<nvmlDevice_t> handles, std::vector<GpuDevice> devices, std::string driver,
              std::optional<int> cuda)
      : api_(api), handles_(std::move(handles)), devices_(std::move(devices)), driver_(std::move(driver)), cuda_(cuda),
        gpm_(handles_.size()), energy0_(handles_.size()) {}
  ~NvmlSampler() override {
    for (auto& g : gpm_) {
      if (g.prev) api_.gpm_free(g.prev);
      if (g.cur) api_.gpm_free(g.cur);
    }
    if (api_.shutdown) api_.shutdown();
    dlclose(api_.handle);
  }
  std::string backend() const override { return "nvml"; }
  std::string driver_version() const override { return driver_; }
  std::optional<int> cuda_driver_version() const override { return cuda_; }
  const std::vector<GpuDevice>& devices() const override { return devices_; }

  std::vector<GpuSample> sample(double t, const std::vector<pid_t>& pids) override {
    std::vector<GpuSample> out;
    for (size_t i = 0; i < handles_.size(); ++i) out.push_back(sample_one(i, t, pids));
    return out;
  }

 private:
  std::string err(const char* call, nvmlReturn_t r) const {
    return fmt::format("{}: {}", call, api_.error_string ? api_.error_string(r) : std::to_string(r));
  }

  GpuSample sample_one(size_t i, double t, const std::vector<pid_t>& pids) {
    GpuSample s;
    s.t_s = t;
    s.gpu = static_cast<int>(i);
    nvmlDevice_t d = handles_[i];
    auto note = [&](const char* call, nvmlReturn_t r) {
      if (r != NVML_SUCCESS && r != NVML_ERROR_NOT_SUPPORTED && s.error.empty()) s.error = err(call, r);
    };
    if (api_.memory_v2) {
      nvmlMemory_v2_t m{};
      m.version = kNvmlMemoryV2Version;
      const nvmlReturn_t r = api_.memory_v2(d, &m);
      if (r == NVML_SUCCESS) s.mem_used_bytes = static_cast<double>(m.used), s.mem_total_bytes = static_cast<double>(m.total);
      else note("nvmlDeviceGetMemoryInfo_v2", r);
    } else if (api_.memory_v1) {
      nvmlMemory_t m{};
      const nvmlReturn_t r = api_.memory_v1(d, &m);
      if (r == NVML_SUCCESS) s.mem_used_bytes = static_cast<double>(m.used), s.mem_total_bytes = static_cast<double>(m.total);
      else note("nvmlDeviceGetMemoryInfo", r);
    }
    if (api_.utilization) {
      nvmlUtilization_t u{};
      const nvmlReturn_t r = api_.utilization(d, &u);
      if (r == NVML_SUCCESS) s.util_pct = u.gpu, s.mem_util_pct = u.memory;
      else note("nvmlDeviceGetUtilizationRates", r);
    }
    unsigned v = 0;
    if (api_.temperature) {
      const nvmlReturn_t r = api_.temperature(d, NVML_TEMPERATURE_GPU, &v);
      if (r == NVML_SUCCESS) s.temperature_c = v;
      else note("nvmlDeviceGetTemperature", r);
    }
    if (api_.power) {
      const nvmlReturn_t r = api_.power(d, &v);
      if (r == NVML_SUCCESS) s.power_w = v / 1000.0;
      else note("nvmlDeviceGetPowerUsage", r);
    }
    if (api_.energy) {
      unsigned long long mj = 0;
      const nvmlReturn_t r = api_.energy(d, &mj);
      if (r == NVML_SUCCESS) {
        if (!energy0_[i]) energy0_[i] = mj;
        s.energy_j = static_cast<double>(mj - *energy0_[i]) / 1000.0;
      } else {
        note("nvmlDeviceGetTotalEnergyConsumption", r);
      }
    }
    if (api_.clock) {
      if (api_.clock(d, NVML_CLOCK_SM, &v) == NVML_SUCCESS) s.sm_clock_mhz = v;
      if (api_.clock(d, NVML_CLOCK_MEM, &v) == NVML_SUCCESS) s.mem_clock_mhz = v;
    }
    if (api_.clock_reasons) {
      unsigned long long reasons = 0;
      const nvmlReturn_t r = api_.clock_reasons(d, &reasons);
      if (r == NVML_SUCCESS) s.clock_event_reasons = reasons;
      else note("nvmlDeviceGetCurrentClocksEventReasons", r);
    }
    if (api_.pcie) {
      if (api_.pcie(d, NVML_PCIE_UTIL_TX_BYTES, &v) == NVML_SUCCESS) s.pcie_tx_Bps = v * 1024.0;  // KB/s
      if (api_.pcie(d, NVML_PCIE_UTIL_RX_BYTES, &v) == NVML_SUCCESS) s.pcie_rx_Bps = v * 1024.0;
    }
    if (api_.processes) {
      unsigned n = 64;
      std::vector<nvmlProcessInfo_t> infos(n);
      nvmlReturn_t r = api_.processes(d, &n, infos.data());
      if (r == NVML_ERROR_INSUFFICIENT_SIZE && n > 64 && n < 65536) {
        infos.resize(n);
        r = api_.processes(d, &n, infos.data());
      }
      if (r == NVML_SUCCESS) {
        double bytes = 0;
        for (unsigned k = 0; k < n && k < infos.size(); ++k)
          if (std::find(pids.begin(), pids.end(), static_cast<pid_t>(infos[k].pid)) != pids.end())
            bytes += static_cast<double>(infos[k].usedGpuMemory);
        s.process_mem_bytes = bytes;
      } else {
        note("nvmlDeviceGetComputeRunningProcesses", r);
      }
    }
    if (devices_[i].gpm) gpm_sample(i, d, t, s);
    return s;
  }

  // GPM metrics come from the difference of two samples at least 100 ms apart (nvml.h).
  void gpm_sample(size_t i, nvmlDevice_t d, double t, GpuSample& s) {
    GpmState& g = gpm_[i];
    if (!g.cur && api_.gpm_alloc(&g.cur) != NVML_SUCCESS) return;
    if (api_.gpm_get(d, g.cur) != NVML_SUCCESS) return;
    if (g.prev && t - g.prev_t >= 0.1) {
      auto* req = new nvmlGpmMetricsGet_t{};
      req->version = 1;
      req->numMetrics = 3;
      req->sample1 = g.prev;
      req->sample2 = g.cur;
      req->metrics[0].metricId = NVML_GPM_METRIC_SM_UTIL;
      req->metrics[1].metricId = NVML_GPM_METRIC_ANY_TENSOR_UTIL;
      req->metrics[2].metricId = NVML_GPM_METRIC_DRAM_BW_UTIL;
      if (api_.gpm_metrics(req) == NVML_SUCCESS) {
        if (req->metrics[0].nvmlReturn == NVML_SUCCESS) s.sm_active_pct = req->metrics[0].value;
        if (req->metrics[1].nvmlReturn == NVML_SUCCESS) s.tensor_active_pct = req->metrics[1].value;
        if (req->metrics[2].nvmlReturn == NVML_SUCCESS) s.dram_active_pct = req->metrics[2].value;
      }
      delete req;
    }
    if (!g.prev || t - g.prev_t >= 0.1) {
      std::swap(g.prev, g.cur);
      g.prev_t = t;
    }
  }

  Api api_;
  std::vector<nvmlDevice_t> handles_;
  std::vector<GpuDevice> devices_;
  std::string driver_;
  std::optional<int> cuda_;
  std::vector<GpmState> gpm_;
  std::vector<std::optional<unsigned long long>> energy0_;
};

}  // namespace

Result<std::unique_ptr<GpuSampler>> open_nvml(const std::string& library) {
  Api a;
  a.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!a.handle) return make_error("nvml", "no NVIDIA driver found (" + library + " could not be loaded)");
  bind(a.handle, a.init, {"nvmlInit_v2", "nvmlInit"});
  bind(a.handle, a.shutdown, {"nvmlShutdown"});
  bind(a.handle, a.error_string, {"nvmlErrorString"});
  bind(a.handle, a.driver_version, {"nvmlSystemGetDriverVersion"});
  bind(a.handle, a.cuda_driver_version, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"});
  bind(a.handle, a.count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  bind(a.handle, a.handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  bind(a.handle, a.name, {"nvmlDeviceGetName"});
  bind(a.handle, a.uuid, {"nvmlDeviceGetUUID"});
  bind(a.handle, a.architecture, {"nvmlDeviceGetArchitecture"});
  bind(a.handle, a.compute_capability, {"nvmlDeviceGetCudaComputeCapability"});
  bind(a.handle, a.memory_v2, {"nvmlDeviceGetMemoryInfo_v2"});
  bind(a.handle, a.memory_v1, {"nvmlDeviceGetMemoryInfo"});
  bind(a.handle, a.utilization, {"nvmlDeviceGetUtilizationRates"});
  bind(a.handle, a.temperature, {"nvmlDeviceGetTemperature"});
  bind(a.handle, a.power, {"nvmlDeviceGetPowerUsage"});
  bind(a.handle, a.power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  bind(a.handle, a.energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  bind(a.handle, a.clock, {"nvmlDeviceGetClockInfo"});
  bind(a.handle, a.max_clock, {"nvmlDeviceGetMaxClockInfo"});
  bind(a.handle, a.clock_reasons, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  bind(a.handle, a.pcie, {"nvmlDeviceGetPcieThroughput"});
  bind(a.handle, a.processes, {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  bind(a.handle, a.gpm_support, {"nvmlGpmQueryDeviceSupport"});
  bind(a.handle, a.gpm_alloc, {"nvmlGpmSampleAlloc"});
  bind(a.handle, a.gpm_free, {"nvmlGpmSampleFree"});
  bind(a.handle, a.gpm_get, {"nvmlGpmSampleGet"});
  bind(a.handle, a.gpm_metrics, {"nvmlGpmMetricsGet"});
  auto fail = [&](const std::string& msg) -> Result<std::unique_ptr<GpuSampler>> {
    dlclose(a.handle);
    return make_error("nvml", msg);
  };
  for (auto [ok, sym] : {std::pair{a.init != nullptr, "nvmlInit_v2"}, std::pair{a.count != nullptr, "nvmlDeviceGetCount_v2"},
                         std::pair{a.handle_by_index != nullptr, "nvmlDeviceGetHandleByIndex_v2"},
                         std::pair{a.name != nullptr, "nvmlDeviceGetName"}})
    if (!ok) return fail(fmt::format("{} lacks {}; the driver is too old or not NVML", library, sym));
  if (const nvmlReturn_t r = a.init(); r != NVML_SUCCESS)
    return fail(fmt::format("nvmlInit failed: {}", a.error_string ? a.error_string(r) : std::to_string(r)));
  char buf[96] = {};
  std::string driver = a.driver_version && a.driver_version(buf, sizeof buf) == NVML_SUCCESS ? buf : "";
  std::optional<int> cuda;
  int cv = 0;
  if (a.cuda_driver_version && a.cuda_driver_version(&cv) == NVML_SUCCESS) cuda = cv;
  unsigned n = 0;
  if (a.count(&n) != NVML_SUCCESS || n == 0) {
    if (a.shutdown) a.shutdown();
    return fail("the NVIDIA driver reports no GPUs");
  }
  std::vector<nvmlDevice_t> handles;
  std::vector<GpuDevice> devices;
  for (unsigned i = 0; i < n && i < 64; ++i) {
    nvmlDevice_t d = nullptr;
    if (a.handle_by_index(i, &d) != NVML_SUCCESS) continue;
    GpuDevice g;
    if (a.name(d, buf, sizeof buf) == NVML_SUCCESS) g.name = buf;
    if (a.uuid && a.uuid(d, buf, sizeof buf) == NVML_SUCCESS) g.uuid = buf;
    unsigned arch = 0;
    if (a.architecture && a.architecture(d, &arch) == NVML_SUCCESS) g.architecture = static_cast<int>(arch);
    int major = 0, minor = 0;
    if (a.compute_capability && a.compute_capability(d, &major, &minor) == NVML_SUCCESS)
      g.compute_capability = fmt::format("{}.{}", major, minor);
    unsigned v = 0;
    if (a.power_limit && a.power_limit(d, &v) == NVML_SUCCESS) g.power_limit_w = v / 1000.0;
    if (a.max_clock && a.max_clock(d, NVML_CLOCK_SM, &v) == NVML_SUCCESS) g.max_sm_clock_mhz = v;
    if (a.memory_v2) {
      nvmlMemory_v2_t m{};
      m.version = kNvmlMemoryV2Version;
      if (a.memory_v2(d, &m) == NVML_SUCCESS) g.memory_total_bytes = static_cast<double>(m.total);
    }
    if (a.gpm_support && a.gpm_alloc && a.gpm_get && a.gpm_metrics && a.gpm_free) {
      nvmlGpmSupport_t sup{1, 0};
      g.gpm = a.gpm_support(d, &sup) == NVML_SUCCESS && sup.isSupportedDevice;
    }
    handles.push_back(d);
    devices.push_back(g);
  }
  if (handles.empty()) return fail("no GPU handle could be opened");
  return std::unique_ptr<GpuSampler>(new NvmlSampler(a, std::move(handles), std::move(devices), driver, cuda));
}

}  // namespace gpuplan
