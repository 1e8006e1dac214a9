#include "profiler/metrics_endpoint.h"

#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "util/units.h"

namespace gpuplan {

namespace {

// Label values escape backslash, quote and newline (the exposition format's rule).
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

struct Series {
  const char* name;
  const char* type;
  const char* help;
  std::function<std::optional<double>(const GpuSample&)> value;
};

const std::vector<Series>& gpu_series() {
  static const std::vector<Series> s = {
      {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %): share of time a kernel ran.", [](const GpuSample& g) { return g.util_pct; }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", [](const GpuSample& g) { return g.mem_util_pct; }},
      {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
       [](const GpuSample& g) { return g.mem_used_bytes ? std::optional(*g.mem_used_bytes / kMiB) : std::nullopt; }},
      {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
       [](const GpuSample& g) {
         return g.mem_used_bytes && g.mem_total_bytes ? std::optional((*g.mem_total_bytes - *g.mem_used_bytes) / kMiB) : std::nullopt;
       }},
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", [](const GpuSample& g) { return g.temperature_c; }},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", [](const GpuSample& g) { return g.power_w; }},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since the profile started (in mJ).",
       [](const GpuSample& g) { return g.energy_j ? std::optional(*g.energy_j * 1000) : std::nullopt; }},
      {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", [](const GpuSample& g) { return g.sm_clock_mhz; }},
      {"DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", [](const GpuSample& g) { return g.mem_clock_mhz; }},
      {"DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "Clock event (throttle) reasons, NVML's bitmask.",
       [](const GpuSample& g) {
         return g.clock_event_reasons ? std::optional(static_cast<double>(*g.clock_event_reasons)) : std::nullopt;
       }},
      {"DCGM_FI_PROF_SM_ACTIVE", "gauge", "Ratio of cycles an SM has at least one warp assigned (NVML GPM).",
       [](const GpuSample& g) { return g.sm_active_pct ? std::optional(*g.sm_active_pct / 100) : std::nullopt; }},
      {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor (HMMA) pipe is active (NVML GPM).",
       [](const GpuSample& g) { return g.tensor_active_pct ? std::optional(*g.tensor_active_pct / 100) : std::nullopt; }},
      {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active (NVML GPM).",
       [](const GpuSample& g) { return g.dram_active_pct ? std::optional(*g.dram_active_pct / 100) : std::nullopt; }},
      {"DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "PCIe bytes transmitted per second.", [](const GpuSample& g) { return g.pcie_tx_Bps; }},
      {"DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "PCIe bytes received per second.", [](const GpuSample& g) { return g.pcie_rx_Bps; }},
      {"gpuplan_process_gpu_memory_bytes", "gauge", "GPU memory of the profiled processes (bytes).",
       [](const GpuSample& g) { return g.process_mem_bytes; }},
  };
  return s;
}

}  // namespace

std::string prometheus_text(const LiveSample& s, const std::string& hostname) {
  std::string out;
  const std::string host = label(hostname);
  for (const Series& series : gpu_series()) {
    std::string rows;
    for (const GpuSample& g : s.gpus) {
      const auto v = series.value(g);
      if (!v) continue;  // a reading the driver cannot give is absent, never zero
      const size_t i = static_cast<size_t>(g.gpu);
      const GpuDevice* d = i < s.devices.size() ? &s.devices[i] : nullptr;
      rows += fmt::format("{}{{gpu=\"{}\",UUID=\"{}\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\"}} {}\n", series.name, g.gpu,
                          label(d ? d->uuid : ""), g.gpu, label(d ? d->name : ""), host, *v);
    }
    if (!rows.empty()) out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", series.name, series.help, series.name, series.type, rows);
  }
  const auto& st = s.steps;
  out += fmt::format("# HELP gpuplan_steps_total Training steps recognised in the command's output.\n"
                     "# TYPE gpuplan_steps_total counter\ngpuplan_steps_total{{Hostname=\"{}\"}} {}\n",
                     host, st.size());
  if (st.size() >= 2) {
    const double last = st.back().first - st[st.size() - 2].first;
    std::vector<double> d;
    for (size_t i = std::max<size_t>(1, st.size() > 50 ? st.size() - 50 : 1); i < st.size(); ++i) d.push_back(st[i].first - st[i - 1].first);
    std::nth_element(d.begin(), d.begin() + static_cast<long>(d.size() / 2), d.end());
    out += fmt::format("# HELP gpuplan_step_time_seconds Duration of the last step.\n# TYPE gpuplan_step_time_seconds gauge\n"
                       "gpuplan_step_time_seconds{{Hostname=\"{}\"}} {}\n"
                       "# HELP gpuplan_step_time_median_seconds Median duration of the last 50 steps.\n"
                       "# TYPE gpuplan_step_time_median_seconds gauge\ngpuplan_step_time_median_seconds{{Hostname=\"{}\"}} {}\n",
                       host, last, host, d[d.size() / 2]);
  }
  out += fmt::format("# HELP gpuplan_host_cpu_percent CPU use of the profiled process tree (100 = one core).\n"
                     "# TYPE gpuplan_host_cpu_percent gauge\ngpuplan_host_cpu_percent{{Hostname=\"{}\"}} {}\n"
                     "# HELP gpuplan_host_rss_bytes Resident memory of the profiled process tree.\n"
                     "# TYPE gpuplan_host_rss_bytes gauge\ngpuplan_host_rss_bytes{{Hostname=\"{}\"}} {}\n"
                     "# HELP gpuplan_profile_elapsed_seconds Time since the profiled command started.\n"
                     "# TYPE gpuplan_profile_elapsed_seconds gauge\ngpuplan_profile_elapsed_seconds{{Hostname=\"{}\"}} {}\n",
                     host, s.host.tree_cpu_percent, host, s.host.rss_bytes, host, s.t_s);
  return out;
}

struct MetricsEndpoint::Impl {
  httplib::Server server;
  std::thread thread;
  std::mutex mu;
  std::string text = "# no sample yet\n";
};

Result<std::unique_ptr<MetricsEndpoint>> MetricsEndpoint::start(const std::string& host, int port) {
  if (port < 0 || port > 65535) return make_error("--metrics-port", fmt::format("must be 0-65535, got {}", port));
  std::unique_ptr<MetricsEndpoint> e(new MetricsEndpoint);
  e->impl_ = std::make_unique<Impl>();
  char name[256] = {};
  e->hostname_ = gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
  Impl* impl = e->impl_.get();
  impl->server.Get("/metrics", [impl](const httplib::Request&, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(impl->mu);
    res.set_content(impl->text, "text/plain; version=0.0.4; charset=utf-8");
  });
  impl->server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("gpuplan profile: metrics at /metrics\n", "text/plain");
  });
  e->port_ = port == 0 ? impl->server.bind_to_any_port(host) : (impl->server.bind_to_port(host, port) ? port : -1);
  if (e->port_ <= 0) return make_error("--metrics-port", fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", host, port));
  impl->thread = std::thread([impl] { impl->server.listen_after_bind(); });
  return e;
}

MetricsEndpoint::~MetricsEndpoint() {
  if (impl_) {
    impl_->server.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
  }
}

void MetricsEndpoint::publish(const LiveSample& s) {
  std::string text = prometheus_text(s, hostname_);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->text = std::move(text);
}

}  // namespace gpuplan
