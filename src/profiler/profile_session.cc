#include "profiler/profile_session.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "profiler/diagnosis.h"
#include "profiler/gpu_sampler.h"
#include "profiler/host_sampler.h"
#include "profiler/run_folder.h"
#include "profiler/step_detector.h"
#include "profiler/supervisor.h"
#include "util/output_file.h"
#include "util/utf8.h"

namespace gpuplan {

using nlohmann::json;

namespace {

// Splits a byte stream into lines at \n or \r (progress bars repaint with \r).
struct LineSplitter {
  std::string partial;
  template <class F>
  void feed(const char* p, size_t n, F&& on_line) {
    for (size_t i = 0; i < n; ++i) {
      if (p[i] == '\n' || p[i] == '\r') {
        if (!partial.empty()) on_line(partial);
        partial.clear();
      } else if (partial.size() < 65536) {
        partial += p[i];
      }
    }
  }
};

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json gpu_sample_json(const GpuSample& s) {
  json j = {{"type", "gpu"}, {"t", s.t_s}, {"gpu", s.gpu}, {"util", opt(s.util_pct)}, {"mem_util", opt(s.mem_util_pct)},
            {"mem_used", opt(s.mem_used_bytes)}, {"process_mem", opt(s.process_mem_bytes)}, {"temp_c", opt(s.temperature_c)},
            {"power_w", opt(s.power_w)}, {"energy_j", opt(s.energy_j)}, {"sm_clock", opt(s.sm_clock_mhz)},
            {"mem_clock", opt(s.mem_clock_mhz)}, {"pcie_tx_Bps", opt(s.pcie_tx_Bps)}, {"pcie_rx_Bps", opt(s.pcie_rx_Bps)},
            {"sm_active", opt(s.sm_active_pct)}, {"tensor_active", opt(s.tensor_active_pct)}, {"dram_active", opt(s.dram_active_pct)}};
  j["clock_reasons"] = s.clock_event_reasons ? json(*s.clock_event_reasons) : json(nullptr);
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

double now_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Per-GPU means, peaks and totals over the run.
json gpus_json(const ProfileData& data) {
  json gpus = json::array();
  for (size_t g = 0; g < data.gpu.size(); ++g) {
    const auto& s = data.gpu[g];
    double util = 0, power = 0, tmax = 0, mem_peak = 0, proc_peak = 0, energy = 0;
    int nu = 0, np = 0, errors = 0;
    for (const auto& x : s) {
      if (x.util_pct) util += *x.util_pct, ++nu;
      if (x.power_w) power += *x.power_w, ++np;
      tmax = std::max(tmax, x.temperature_c.value_or(0));
      mem_peak = std::max(mem_peak, x.mem_used_bytes.value_or(0));
      proc_peak = std::max(proc_peak, x.process_mem_bytes.value_or(0));
      if (x.energy_j) energy = *x.energy_j;
      errors += !x.error.empty();
    }
    const GpuDevice& d = data.devices[g];
    gpus.push_back({{"index", g}, {"name", d.name}, {"uuid", d.uuid}, {"compute_capability", d.compute_capability},
                    {"util_mean", nu ? json(util / nu) : json(nullptr)},
                    {"util_note", "share of time a kernel was running, not SM occupancy"},
                    {"memory_peak_bytes", static_cast<int64_t>(mem_peak)}, {"process_memory_peak_bytes", static_cast<int64_t>(proc_peak)},
                    {"memory_total_bytes", static_cast<int64_t>(d.memory_total_bytes)},
                    {"power_mean_w", np ? json(power / np) : json(nullptr)}, {"energy_j", energy},
                    {"temperature_max_c", tmax}, {"gpm", d.gpm}, {"samples", s.size()}, {"sample_errors", errors}});
  }
  return gpus;
}

// summary.json: what `gpuplan predict`, `profile merge` and people read after the run.
json summary_json(const ProfileOptions& o, const ProfileData& data, const std::vector<std::pair<double, int64_t>>& steps,
                  const GpuSampler* gpu, const std::string& gpu_reason, int exit_code, const std::string& trace_path) {
  const double wall = data.wall_s;
  const std::vector<Finding> findings = diagnose(data);
  const HostLoad load = host_load(data);
  rusage self {};
  getrusage(RUSAGE_SELF, &self);
  const double self_cpu = static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                          static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
  std::string command;
  for (const auto& a : o.argv) command += (command.empty() ? "" : " ") + a;
  double cpu_sum = 0, rss_peak = 0;
  int cpu_n = 0;
  for (const auto& h : data.host) {
    if (h.t_s > 0) cpu_sum += h.tree_cpu_percent, ++cpu_n;
    rss_peak = std::max(rss_peak, h.rss_bytes);
  }
  json diag = json::array();
  for (const auto& f : findings) diag.push_back({{"finding", f.finding}, {"evidence", f.evidence}, {"advice", f.advice}});
  json epochs = json::array();
  for (size_t i = 0; i < data.steps.epoch_starts_s.size(); ++i)
    epochs.push_back({{"index", i}, {"start_s", data.steps.epoch_starts_s[i]}, {"duration_s", data.steps.epoch_durations_s[i]}});
  // Steps per second over time, in ten windows.
  json rate = json::array();
  for (int k = 0; k < 10 && wall > 0; ++k) {
    const double a = wall * k / 10, b = wall * (k + 1) / 10;
    int64_t first = -1, last = -1;
    for (const auto& [t, n] : steps)
      if (t >= a && t < b) {
        if (first < 0) first = n;
        last = n;
      }
    rate.push_back({{"from_s", a}, {"to_s", b}, {"steps_per_s", first < 0 ? 0.0 : static_cast<double>(last - first + 1) / (b - a)}});
  }
  json summary = {
      {"schema_version", 1},
      {"command", command},
      {"exit_code", exit_code},
      {"wall_s", wall},
      {"interval_s", o.interval_s},
      {"steps", {{"count", data.steps.count}, {"median_s", opt(data.steps.median_s)}, {"p90_s", opt(data.steps.p90_s)},
                 {"mean_s", opt(data.steps.mean_s)}, {"steps_per_s_over_time", rate}}},
      {"epochs", epochs},
      {"host", {{"cpu_percent_mean", cpu_n ? cpu_sum / cpu_n : 0.0}, {"rss_peak_bytes", static_cast<int64_t>(rss_peak)},
                {"cores", data.cores}, {"cpu_wait_cores_mean", load.tree_wait_cores},
                {"machine_busy_percent_mean", 100 * load.machine_share},
                {"other_load_cores_mean", load.other_cores}}},
      {"gpu_backend", gpu ? json(gpu->backend()) : json(nullptr)},
      {"driver_version", gpu ? json(gpu->driver_version()) : json(nullptr)},
      {"gpu_unavailable", gpu ? json(nullptr) : json(gpu_reason)},
      {"gpus", gpus_json(data)},
      {"diagnosis", diag},
      {"profiler_cpu_percent", wall > 0 ? 100 * self_cpu / wall : 0.0},
      {"trace", trace_path},
  };
  char hostname[256] = {};
  summary["hostname"] = gethostname(hostname, sizeof hostname - 1) == 0 ? valid_utf8(hostname) : "";
  if (!o.workload.is_null()) summary["workload"] = o.workload;
  if (o.predicted_step_s && data.steps.median_s)
    summary["predicted"] = {{"step_time_s", *o.predicted_step_s},
                                {"measured_over_predicted", *data.steps.median_s / *o.predicted_step_s}};
  return summary;
}

}  // namespace

Result<double> parse_interval(const std::string& s) {
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    const std::string unit = s.substr(used);
    if (unit == "ms") v /= 1000;
    else if (unit != "s" && !unit.empty()) throw std::invalid_argument(unit);
    if (!(v >= 0.01) || v > 60) return make_error("--interval", "must be between 10ms and 60s, not '" + s + "'");
    return v;
  } catch (const std::exception&) {
    return make_error("--interval", "must look like 100ms or 0.5s, not '" + s + "'");
  }
}

Result<ProfileOutcome> run_profile(const ProfileOptions& o) {
  if (o.argv.empty()) return make_error("command", "nothing to run: give it after --, e.g. gpuplan profile -- python train.py");
  std::string regex_error;
  auto detector = StepDetector::make(o.step_regex, o.epoch_regex, &regex_error);
  if (!detector) return make_error(regex_error.substr(0, regex_error.find(':')), regex_error.substr(regex_error.find(':') + 2));
  auto opened = RunFolder::open(o.out_dir);
  if (!opened) return opened.error();
  RunFolder& folder = **opened;

  std::unique_ptr<GpuSampler> gpu;
  std::string gpu_reason;
  {
    auto s = open_nvml(o.nvml_library);
    if (s) gpu = std::move(s).value();
    else gpu_reason = s.error().message;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto started = Supervisor::start(o.argv);
  if (!started) {
    folder.discard();
    return started.error();
  }
  Supervisor& sup = **started;

  // gpuplan's descendants, not the child's tree: escapees re-parented to gpuplan still count.
  HostSampler host(getpid(), false);
  ProfileData data;
  if (gpu) {
    data.devices = gpu->devices();
    data.gpu.resize(data.devices.size());
  } else {
    data.gpu_unavailable_reason = gpu_reason;
  }
  LineSplitter out_lines, err_lines, marker_lines;
  double next_sample = 0, last_flush = 0, drain_until = -1;
  bool trace_warned = false, watch_stdout = true, watch_stderr = true;
  std::vector<pid_t> pids{sup.child()};
  char buf[65536];
  while (true) {
    double t = now_since(t0);
    sup.service(t);
    const bool pipes_open = sup.stdout_fd() >= 0 || sup.stderr_fd() >= 0;
    if (sup.child_exited()) {
      if (!pipes_open) break;
      if (drain_until < 0) drain_until = t + 0.5;  // what grandchildren still write, briefly
      if (t > drain_until) break;
    }
    if (t >= next_sample) {
      const HostSample h = host.sample(t);
      if (!h.pids.empty()) pids = h.pids;
      data.host.push_back(h);
      folder.trace_line(json_text(json{{"type", "host"}, {"t", h.t_s}, {"cpu_percent", h.tree_cpu_percent},
                                       {"cpu_wait_percent", h.tree_wait_percent}, {"rss_bytes", h.rss_bytes},
                                       {"read_Bps", h.read_Bps}, {"processes", h.processes}, {"core_busy_percent", h.core_busy_percent}}));
      std::vector<GpuSample> round;
      if (gpu) {
        round = gpu->sample(t, pids);
        for (const GpuSample& s : round) {
          data.gpu[static_cast<size_t>(s.gpu)].push_back(s);
          folder.trace_line(json_text(gpu_sample_json(s)));
        }
      }
      if (o.on_sample) o.on_sample(LiveSample{t, h, round, data.devices, detector->steps()});
      next_sample += o.interval_s;
      if (next_sample < t) next_sample = t + o.interval_s;  // fell behind: skip, do not burst
    }
    if (t - last_flush >= 1.0) {
      folder.flush();  // a crash loses at most the last second
      last_flush = t;
      if (!folder.trace_error().empty() && !trace_warned) {
        fmt::print(stderr, "gpuplan profile: {}; the trace stops here, profiling goes on\n", folder.trace_error());
        trace_warned = true;
      }
    }
    // The readers of gpuplan's own output are watched too: a pipe whose reader has gone reports
    // POLLERR, and the command's pipe is closed at once (not at its next line, which may never come).
    pollfd fds[6];
    int n = 0;
    for (int fd : {sup.stdout_fd(), sup.stderr_fd(), sup.marker_fd(), sup.wake_fd()})
      if (fd >= 0) fds[n++] = {fd, POLLIN, 0};
    const int first_sink = n;
    if (watch_stdout && sup.stdout_fd() >= 0) fds[n++] = {o.child_stdout_fd, 0, 0};
    if (watch_stderr && sup.stderr_fd() >= 0 && o.child_stdout_fd != 2) fds[n++] = {2, 0, 0};
    const double wait = std::max(0.0, std::min(next_sample - now_since(t0), sup.child_exited() ? 0.05 : 0.25));
    const int ready = poll(fds, static_cast<nfds_t>(n), static_cast<int>(std::ceil(wait * 1000)));
    if (ready <= 0) continue;
    for (int i = first_sink; i < n; ++i) {
      if (!(fds[i].revents & (POLLERR | POLLNVAL))) continue;
      const bool gone = fds[i].revents & POLLERR;
      if (fds[i].fd == o.child_stdout_fd) {
        watch_stdout = false;
        if (gone) sup.close_pipe(sup.stdout_fd());
        if (gone && o.child_stdout_fd == 2) sup.close_pipe(sup.stderr_fd());
      } else {
        watch_stderr = false;
        if (gone) sup.close_pipe(sup.stderr_fd());
      }
    }
    n = first_sink;
    for (int i = 0; i < n; ++i) {
      const int fd = fds[i].fd;
      if (fd == sup.wake_fd() || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t r = read(fd, buf, sizeof buf);
      const double tr = now_since(t0);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r <= 0) {
        sup.close_pipe(fd);
        continue;
      }
      const size_t len = static_cast<size_t>(r);
      auto on_line = [&](const std::string& line) {
        const size_t before = detector->steps().size();
        detector->on_line(tr, line);
        if (detector->steps().size() != before)
          folder.trace_line(json_text(json{{"type", "step"}, {"t", tr}, {"step", detector->steps().back().second}}));
      };
      if (fd == sup.marker_fd()) {
        marker_lines.feed(buf, len, [&](const std::string& line) {
          detector->on_marker(tr, line);
          folder.trace_line(json_text(json{{"type", "marker"}, {"t", tr}, {"line", line}}));
        });
        continue;
      }
      const bool is_out = fd == sup.stdout_fd();
      (is_out ? out_lines : err_lines).feed(buf, len, on_line);
      // The copy's reader went away (`| head`): stop reading that pipe, so the command meets the
      // broken pipe at its next write, exactly as it would without gpuplan in between.
      if (write_fully(is_out ? o.child_stdout_fd : 2, buf, len) != 0) sup.close_pipe(fd);
    }
  }
  // Nothing below gpuplan may outlive the profile: stragglers (data-loader workers) and escapees.
  sup.end_tree();
  folder.flush();

  const double wall = now_since(t0);
  ProfileOutcome res;
  res.exit_code = sup.exit_code();
  res.out_dir = folder.path();
  data.wall_s = wall;
  data.cores = std::max(1, host.cores());
  data.steps = detector->stats(wall);

  res.summary = summary_json(o, data, detector->steps(), gpu.get(), gpu_reason, res.exit_code, folder.trace_path());
  if (!folder.trace_error().empty()) res.write_errors.push_back(make_error("--out", folder.trace_error()));
  if (auto e = folder.write_summary(json_text(res.summary, 2) + "\n")) res.write_errors.push_back(*e);
  return res;
}

}  // namespace gpuplan
