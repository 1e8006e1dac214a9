#include "profiler/host_sampler.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuplan {

namespace {

const double kTick = static_cast<double>(sysconf(_SC_CLK_TCK));
const double kPage = static_cast<double>(sysconf(_SC_PAGESIZE));

// CPU seconds of a process and of the children it has reaped (utime + stime + cutime + cstime), or
// -1 if it is gone. Counting reaped children keeps short-lived processes (a shell loop's commands)
// in the tree's figure: a child's time moves into its parent's cutime when it exits, so the sum
// over the living tree changes by exactly the CPU used in between.
double cpu_seconds(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE* f = std::fopen(path, "r");
  if (!f) return -1;
  char buf[1024];
  const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = 0;
  // The command name may hold spaces and parentheses: fields resume after the last ')'.
  const char* p = std::strrchr(buf, ')');
  if (!p) return -1;
  unsigned long utime = 0, stime = 0;
  long cutime = 0, cstime = 0;
  if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu %ld %ld", &utime, &stime, &cutime, &cstime) != 4)
    return -1;
  return (static_cast<double>(utime) + static_cast<double>(stime) + static_cast<double>(cutime) + static_cast<double>(cstime)) / kTick;
}

// Seconds the process's main thread has waited on a run queue for a core (runnable, not running),
// or -1 if unknown. CPU time plus this wait is what the process asked of the CPUs.
double wait_seconds(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/schedstat", pid);
  FILE* f = std::fopen(path, "r");
  if (!f) return -1;
  unsigned long long run_ns = 0, wait_ns = 0;
  const int got = std::fscanf(f, "%llu %llu", &run_ns, &wait_ns);
  std::fclose(f);
  return got == 2 ? static_cast<double>(wait_ns) / 1e9 : -1;
}

double rss_bytes(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/statm", pid);
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  unsigned long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return got == 2 ? static_cast<double>(resident) * kPage : 0;
}

double read_bytes(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/io", pid);
  std::ifstream in(path);
  std::string key;
  double v = 0;
  while (in >> key >> v)
    if (key == "read_bytes:") return v;
  return 0;
}

}  // namespace

std::vector<pid_t> process_tree(pid_t root) {
  std::vector<pid_t> out{root};
  for (size_t i = 0; i < out.size() && out.size() < 4096; ++i) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task", out[i]);
    DIR* d = opendir(path);
    if (!d) continue;
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      char cpath[320];
      std::snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", out[i], e->d_name);
      FILE* f = std::fopen(cpath, "r");
      if (!f) continue;
      int pid;
      while (std::fscanf(f, "%d", &pid) == 1) out.push_back(pid);
      std::fclose(f);
    }
    closedir(d);
  }
  return out;
}

HostSample HostSampler::sample(double t) {
  HostSample s;
  s.t_s = t;
  s.pids = process_tree(root_);
  if (!include_root_) s.pids.erase(s.pids.begin());
  const double dt = last_t_ >= 0 ? t - last_t_ : 0;
  std::map<pid_t, double> cpu, rd, wait;
  double cpu_delta = 0, read_delta = 0, wait_delta = 0;
  for (pid_t p : s.pids) {
    const double c = cpu_seconds(p);
    if (c < 0) continue;
    ++s.processes;
    cpu[p] = c;
    // A process new since the last sample contributes from its start, which is within the interval.
    auto it = last_cpu_s_.find(p);
    cpu_delta += c - (it != last_cpu_s_.end() ? it->second : (last_t_ >= 0 ? 0 : c));
    if (const double w = wait_seconds(p); w >= 0) {
      wait[p] = w;
      auto iw = last_wait_s_.find(p);
      wait_delta += w - (iw != last_wait_s_.end() ? iw->second : (last_t_ >= 0 ? 0 : w));
    }
    s.rss_bytes += rss_bytes(p);
    const double r = read_bytes(p);
    rd[p] = r;
    auto ir = last_read_.find(p);
    read_delta += r - (ir != last_read_.end() ? ir->second : r);
  }
  if (dt > 0) {
    s.tree_cpu_percent = 100.0 * std::max(0.0, cpu_delta) / dt;
    s.read_Bps = std::max(0.0, read_delta) / dt;
    s.tree_wait_percent = 100.0 * std::max(0.0, wait_delta) / dt;
  }
  last_cpu_s_ = std::move(cpu);
  last_wait_s_ = std::move(wait);
  last_read_ = std::move(rd);
  // Whole-machine per-core busy share from /proc/stat.
  std::ifstream stat("/proc/stat");
  std::string line;
  std::vector<std::pair<double, double>> now;
  while (std::getline(stat, line)) {
    if (line.rfind("cpu", 0) != 0 || line.size() < 4 || !std::isdigit(static_cast<unsigned char>(line[3]))) continue;
    std::istringstream ls(line.substr(line.find(' ')));
    double v[8] = {};
    for (double& x : v) ls >> x;
    const double idle = v[3] + v[4];
    double total = 0;
    for (double x : v) total += x;
    now.emplace_back(total - idle, total);
  }
  cores_ = static_cast<int>(now.size());
  if (last_core_.size() == now.size())
    for (size_t i = 0; i < now.size(); ++i) {
      const double busy = now[i].first - last_core_[i].first, total = now[i].second - last_core_[i].second;
      s.core_busy_percent.push_back(total > 0 ? 100.0 * busy / total : 0);
    }
  last_core_ = std::move(now);
  last_t_ = t;
  return s;
}

}  // namespace gpuplan
