#include "profiler/profile_session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "profiler/diagnosis.h"
#include "profiler/gpu_sampler.h"
#include "profiler/host_sampler.h"
#include "profiler/step_detector.h"
#include "util/utf8.h"

namespace gpuplan {

using nlohmann::json;

namespace {

volatile sig_atomic_t g_signal = 0;
int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  g_signal = sig;
  const char c = 1;
  if (g_signal_pipe[1] >= 0) (void)!write(g_signal_pipe[1], &c, 1);
}

void write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // our own output closed: keep profiling, drop the copy
    p += w;
    n -= static_cast<size_t>(w);
  }
}

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
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec) return make_error("--out", "cannot create " + o.out_dir + ": " + ec.message());
  const std::string trace_path = o.out_dir + "/trace.jsonl";
  std::ofstream trace(trace_path, std::ios::trunc);
  if (!trace) return make_error("--out", "cannot write " + trace_path);

  std::unique_ptr<GpuSampler> gpu;
  std::string gpu_reason;
  {
    auto s = open_nvml(o.nvml_library);
    if (s) gpu = std::move(s).value();
    else gpu_reason = s.error().message;
  }
  int out_pipe[2], err_pipe[2], marker_pipe[2];
  if (pipe(out_pipe) || pipe(err_pipe) || pipe(marker_pipe) || pipe(g_signal_pipe))
    return make_error("profile", std::string("cannot create pipes: ") + std::strerror(errno));
  for (int fd : {out_pipe[0], err_pipe[0], marker_pipe[0], g_signal_pipe[0], g_signal_pipe[1]}) fcntl(fd, F_SETFD, FD_CLOEXEC);
  // Exec failure is reported through this pipe, so a bad command is an error, not a child exit code.
  int exec_pipe[2];
  if (pipe(exec_pipe)) return make_error("profile", "cannot create pipes");
  fcntl(exec_pipe[1], F_SETFD, FD_CLOEXEC);

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {}, old_term {}, old_hup {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGHUP, &sa, &old_hup);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t child = fork();
  auto restore_signals = [&] {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGHUP, &old_hup, nullptr);
  };
  if (child < 0) {
    restore_signals();
    return make_error("profile", std::string("fork failed: ") + std::strerror(errno));
  }
  if (child == 0) {
    setpgid(0, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (marker_pipe[1] != 3) dup2(marker_pipe[1], 3);
    fcntl(3, F_SETFD, 0);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1], marker_pipe[0], exec_pipe[0]}) close(fd);
    if (marker_pipe[1] != 3) close(marker_pipe[1]);
    setenv("GPUPLAN_MARKER_FD", "3", 1);
    setenv("PYTHONUNBUFFERED", "1", 0);  // Python would hold back step lines written to a pipe
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    std::vector<char*> args;
    for (const auto& a : o.argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    const int e = errno;
    (void)!write(exec_pipe[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(child, child);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(marker_pipe[1]);
  close(exec_pipe[1]);
  int exec_errno = 0;
  if (read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
    close(exec_pipe[0]);
    waitpid(child, nullptr, 0);
    restore_signals();
    return make_error("command", "cannot run '" + o.argv[0] + "': " + std::strerror(exec_errno));
  }
  close(exec_pipe[0]);

  HostSampler host(child);
  ProfileData data;
  if (gpu) {
    data.devices = gpu->devices();
    data.gpu.resize(data.devices.size());
  } else {
    data.gpu_unavailable_reason = gpu_reason;
  }
  LineSplitter out_lines, err_lines, marker_lines;
  bool out_open = true, err_open = true, marker_open = true, reaped = false;
  int status = 0;
  double next_sample = 0, last_flush = 0, force_kill_at = -1, drain_until = -1;
  std::vector<pid_t> pids{child};
  char buf[65536];
  while (true) {
    const double t = now_since(t0);
    if (!reaped && waitpid(child, &status, WNOHANG) == child) reaped = true;
    if (reaped && !out_open && !err_open) break;
    if (reaped && drain_until < 0) drain_until = t + 0.5;  // what grandchildren still write, briefly
    if (reaped && t > drain_until) break;
    if (g_signal) {
      const int sig = g_signal;
      g_signal = 0;
      kill(-child, sig);  // forward to the child's whole process group
      if (force_kill_at < 0) force_kill_at = t + 10;  // then insist
    }
    if (!reaped && force_kill_at > 0 && t > force_kill_at) kill(-child, SIGKILL);
    if (t >= next_sample) {
      const HostSample h = host.sample(t);
      if (!h.pids.empty()) pids = h.pids;
      data.host.push_back(h);
      trace << json_text(json{{"type", "host"}, {"t", h.t_s}, {"cpu_percent", h.tree_cpu_percent}, {"rss_bytes", h.rss_bytes},
                    {"read_Bps", h.read_Bps}, {"processes", h.processes}, {"core_busy_percent", h.core_busy_percent}})
            << '\n';
      std::vector<GpuSample> round;
      if (gpu) {
        round = gpu->sample(t, pids);
        for (const GpuSample& s : round) {
          data.gpu[static_cast<size_t>(s.gpu)].push_back(s);
          trace << json_text(gpu_sample_json(s)) << '\n';
        }
      }
      if (o.on_sample) o.on_sample(LiveSample{t, h, round, data.devices, detector->steps()});
      next_sample += o.interval_s;
      if (next_sample < t) next_sample = t + o.interval_s;  // fell behind: skip, do not burst
    }
    if (t - last_flush >= 1.0) {
      trace.flush();  // a crash loses at most the last second
      last_flush = t;
    }
    pollfd fds[4];
    int n = 0;
    auto add = [&](int fd, bool open) {
      if (open) fds[n++] = {fd, POLLIN, 0};
    };
    add(out_pipe[0], out_open);
    add(err_pipe[0], err_open);
    add(marker_pipe[0], marker_open);
    fds[n++] = {g_signal_pipe[0], POLLIN, 0};
    const double wait = std::max(0.0, std::min(next_sample - now_since(t0), reaped ? 0.05 : 0.25));
    const int ready = poll(fds, static_cast<nfds_t>(n), static_cast<int>(std::ceil(wait * 1000)));
    if (ready <= 0) continue;
    for (int i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const int fd = fds[i].fd;
      const ssize_t r = read(fd, buf, sizeof buf);
      const double tr = now_since(t0);
      if (fd == g_signal_pipe[0]) continue;
      if (r <= 0) {
        if (r < 0 && errno == EINTR) continue;
        if (fd == out_pipe[0]) out_open = false;
        if (fd == err_pipe[0]) err_open = false;
        if (fd == marker_pipe[0]) marker_open = false;
        continue;
      }
      const size_t len = static_cast<size_t>(r);
      auto on_line = [&](const std::string& line) {
        const size_t before = detector->steps().size();
        detector->on_line(tr, line);
        if (detector->steps().size() != before)
          trace << json_text(json{{"type", "step"}, {"t", tr}, {"step", detector->steps().back().second}}) << '\n';
      };
      if (fd == out_pipe[0]) {
        write_all(o.child_stdout_fd, buf, len);
        out_lines.feed(buf, len, on_line);
      } else if (fd == err_pipe[0]) {
        write_all(2, buf, len);
        err_lines.feed(buf, len, on_line);
      } else {
        marker_lines.feed(buf, len, [&](const std::string& line) {
          detector->on_marker(tr, line);
          trace << json_text(json{{"type", "marker"}, {"t", tr}, {"line", line}}) << '\n';
        });
      }
    }
  }
  // Nothing of the child's group may outlive the profile: end stragglers (data-loader workers).
  if (kill(-child, 0) == 0) {
    kill(-child, SIGTERM);
    usleep(200000);
    kill(-child, SIGKILL);
  }
  for (int fd : {out_pipe[0], err_pipe[0], marker_pipe[0], g_signal_pipe[0], g_signal_pipe[1]}) close(fd);
  g_signal_pipe[0] = g_signal_pipe[1] = -1;
  restore_signals();

  const double wall = now_since(t0);
  ProfileOutcome res;
  res.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
  data.wall_s = wall;
  data.cores = std::max(1, host.cores());
  data.steps = detector->stats(wall);
  const std::vector<Finding> findings = diagnose(data);

  // ---- summary.json ----
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
  json diag = json::array();
  for (const auto& f : findings) diag.push_back({{"finding", f.finding}, {"evidence", f.evidence}, {"advice", f.advice}});
  json epochs = json::array();
  for (size_t i = 0; i < data.steps.epoch_starts_s.size(); ++i)
    epochs.push_back({{"index", i}, {"start_s", data.steps.epoch_starts_s[i]}, {"duration_s", data.steps.epoch_durations_s[i]}});
  // Steps per second over time, in ten windows.
  json rate = json::array();
  const auto& steps = detector->steps();
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
  res.summary = {
      {"schema_version", 1},
      {"command", command},
      {"exit_code", res.exit_code},
      {"wall_s", wall},
      {"interval_s", o.interval_s},
      {"steps", {{"count", data.steps.count}, {"median_s", opt(data.steps.median_s)}, {"p90_s", opt(data.steps.p90_s)},
                 {"mean_s", opt(data.steps.mean_s)}, {"steps_per_s_over_time", rate}}},
      {"epochs", epochs},
      {"host", {{"cpu_percent_mean", cpu_n ? cpu_sum / cpu_n : 0.0}, {"rss_peak_bytes", static_cast<int64_t>(rss_peak)},
                {"cores", data.cores}}},
      {"gpu_backend", gpu ? json(gpu->backend()) : json(nullptr)},
      {"driver_version", gpu ? json(gpu->driver_version()) : json(nullptr)},
      {"gpu_unavailable", gpu ? json(nullptr) : json(gpu_reason)},
      {"gpus", gpus},
      {"diagnosis", diag},
      {"profiler_cpu_percent", wall > 0 ? 100 * self_cpu / wall : 0.0},
      {"trace", trace_path},
  };
  char hostname[256] = {};
  res.summary["hostname"] = gethostname(hostname, sizeof hostname - 1) == 0 ? valid_utf8(hostname) : "";
  if (!o.workload.is_null()) res.summary["workload"] = o.workload;
  if (o.predicted_step_s && data.steps.median_s)
    res.summary["predicted"] = {{"step_time_s", *o.predicted_step_s},
                                {"measured_over_predicted", *data.steps.median_s / *o.predicted_step_s}};
  trace.flush();
  std::ofstream(o.out_dir + "/summary.json") << json_text(res.summary, 2) << '\n';
  return res;
}

}  // namespace gpuplan
