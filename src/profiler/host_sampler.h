// The host side of `gpuplan profile`: CPU use (per core and for the profiled process tree), the
// tree's wait for a free core, resident memory and read I/O of that tree, read from /proc.
#pragma once

#include <sys/types.h>

#include <map>
#include <vector>

namespace gpuplan {

struct HostSample {
  double t_s = 0;
  double tree_cpu_percent = 0;   // 100 = one core busy
  double tree_wait_percent = 0;  // time the tree's processes waited for a core; 100 = one core's worth
  double rss_bytes = 0;          // summed over the tree
  double read_Bps = 0;           // storage reads by the tree
  std::vector<double> core_busy_percent;  // per logical CPU, whole machine
  int processes = 0;
  std::vector<pid_t> pids;       // the tree, root first (when included)
};

class HostSampler {
 public:
  // Samples `root`'s process tree; without `include_root`, only what lies below it (gpuplan
  // samples its own descendants, which include escapees re-parented to it, but not itself).
  explicit HostSampler(pid_t root, bool include_root = true) : root_(root), include_root_(include_root) {}
  HostSample sample(double t_s);
  int cores() const { return cores_; }

 private:
  pid_t root_;
  bool include_root_;
  int cores_ = 0;
  double last_t_ = -1;
  std::map<pid_t, double> last_cpu_s_;     // utime + stime per process
  std::map<pid_t, double> last_wait_s_;    // run-queue wait per process
  std::map<pid_t, double> last_read_;
  std::vector<std::pair<double, double>> last_core_;  // (busy, total) jiffies
};

// Descendants of `root` (inclusive), from /proc/<pid>/task/<tid>/children.
std::vector<pid_t> process_tree(pid_t root);

}  // namespace gpuplan
