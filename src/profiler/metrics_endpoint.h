// `gpuplan profile --metrics-port N`: the live samples as a Prometheus scrape target, named as
// NVIDIA's DCGM exporter names them (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_DEV_FB_USED in MiB, ...) so
// existing Grafana dashboards work, plus gpuplan's own step-time series.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "profiler/profile_session.h"
#include "util/status.h"

namespace gpuplan {

// The Prometheus text exposition (format 0.0.4) of one sampling round. `hostname` labels every
// series (as DCGM's Hostname label), so one Prometheus can tell the nodes of a job apart.
std::string prometheus_text(const LiveSample& s, const std::string& hostname);

// An HTTP server on its own thread answering GET /metrics with the latest round.
class MetricsEndpoint {
 public:
  // Binds host:port (port 0: any free port) before returning, so a bad port is an error up front.
  static Result<std::unique_ptr<MetricsEndpoint>> start(const std::string& host, int port);
  ~MetricsEndpoint();
  int port() const { return port_; }
  void publish(const LiveSample& s);

 private:
  struct Impl;
  MetricsEndpoint() = default;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::string hostname_;
};

}  // namespace gpuplan
