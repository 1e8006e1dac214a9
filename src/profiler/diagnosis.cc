#include "profiler/diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "profiler/nvml_api.h"
#include "util/units.h"

namespace gpuplan {

namespace {

// Mean of the readings that are present; nullopt if none is.
std::optional<double> mean(const std::vector<GpuSample>& s, std::optional<double> GpuSample::*f) {
  double sum = 0;
  int n = 0;
  for (const auto& x : s)
    if ((x.*f)) sum += *(x.*f), ++n;
  if (!n) return std::nullopt;
  return sum / n;
}

double share_with(const std::vector<GpuSample>& s, unsigned long long bits) {
  int n = 0, hit = 0;
  for (const auto& x : s) {
    if (!x.clock_event_reasons) continue;
    ++n;
    hit += (*x.clock_event_reasons & bits) != 0;
  }
  return n ? static_cast<double>(hit) / n : 0;
}

}  // namespace

HostLoad host_load(const ProfileData& p) {
  HostLoad l;
  l.cores = std::max(1, p.cores);
  double cpu_sum = 0, wait_sum = 0;
  int cpu_n = 0;
  for (const auto& h : p.host)
    if (h.t_s > 0) cpu_sum += h.tree_cpu_percent, wait_sum += h.tree_wait_percent, ++cpu_n;
  l.tree_cores = cpu_n ? cpu_sum / cpu_n / 100.0 : 0;
  l.tree_wait_cores = cpu_n ? wait_sum / cpu_n / 100.0 : 0;
  double machine_sum = 0;
  int machine_n = 0;
  for (const auto& h : p.host)
    for (double c : h.core_busy_percent) machine_sum += c, ++machine_n;
  l.machine_share = machine_n ? machine_sum / machine_n / 100.0 : 0;
  // Sampled at slightly different moments, the tree can read a little above the machine.
  l.other_cores = std::max(0.0, l.machine_share * l.cores - l.tree_cores);
  return l;
}

namespace {

// Other processes' load distorts every timing of the run; said once, with the numbers.
void note_other_load(const HostLoad& l, std::vector<Finding>& out) {
  if (l.other_cores < 0.5 || l.other_cores / l.cores < 0.25) return;
  out.push_back({"host shared with other load",
                 fmt::format("other processes kept {:.1f} of {} cores busy while the profiled process tree used {:.1f} "
                             "(machine {:.0f}% busy)", l.other_cores, l.cores, l.tree_cores, 100 * l.machine_share),
                 "The measurement is distorted: step times and CPU-bound signs partly reflect the other load. Profile on an "
                 "idle machine or cores reserved for the run (taskset, a Slurm exclusive allocation) before acting on it."});
}

}  // namespace

std::vector<Finding> diagnose(const ProfileData& p) {
  std::vector<Finding> out;
  // Only the profiled tree's own CPU use can make the run CPU-bound; a machine busy with other
  // work is reported as such, not blamed on the run.
  const HostLoad load = host_load(p);
  const double tree_share = load.tree_cores / load.cores;
  const double tree_cores = load.tree_cores;
  // The run is short of CPU when its tree fills the cores, or when what it asked of them (CPU time
  // plus time runnable but waiting for a core) would fill them: a tree crowded out by other jobs
  // still shows its demand, while an idle tree on a busy machine shows none.
  const double tree_demand_share = (load.tree_cores + load.tree_wait_cores) / load.cores;
  auto tree_saturates = [&](double level) { return tree_share > level || tree_demand_share > level; };
  const std::string demand_txt =
      load.tree_wait_cores >= 0.1 ? fmt::format(" and waited for a core {:.1f} cores' worth of the time", load.tree_wait_cores) : "";

  if (p.devices.empty()) {
    out.push_back({"no GPU measured", p.gpu_unavailable_reason,
                   "Only host CPU, memory and steps were profiled. Run on a machine with an NVIDIA driver to see the GPU side."});
    if (tree_saturates(0.85))
      out.push_back({"CPU-bound", fmt::format("the process tree kept {:.1f} of {} cores busy ({:.0f}%){}", tree_cores, p.cores, 100 * tree_share,
                                              demand_txt),
                     "The run is limited by the host CPU: more cores, fewer data-loader transforms, or move the work to a GPU."});
    note_other_load(load, out);
    return out;
  }

  for (size_t g = 0; g < p.gpu.size(); ++g) {
    const auto& s = p.gpu[g];
    const std::string who = p.gpu.size() > 1 ? fmt::format("GPU {}: ", g) : "";
    // Driver faults: the trace keeps what was read before and after.
    for (const auto& x : s)
      if (!x.error.empty()) {
        int failed = 0;
        for (const auto& y : s) failed += !y.error.empty();
        out.push_back({"driver fault", fmt::format("{}{} at t={:.1f}s ({} of {} samples affected)", who, x.error, x.t_s, failed, s.size()),
                       "Readings after the fault are missing in the trace; check `nvidia-smi -q` and the kernel log (Xid errors) for a lost or failing GPU."});
        break;
      }
    const auto util = mean(s, &GpuSample::util_pct);
    const auto mem_util = mean(s, &GpuSample::mem_util_pct);
    const auto sm = mean(s, &GpuSample::sm_active_pct);
    const auto tensor = mean(s, &GpuSample::tensor_active_pct);
    const auto dram = mean(s, &GpuSample::dram_active_pct);
    if (!util) continue;
    const bool gpm = sm && tensor && dram;
    // Input pipeline: the GPU waits while the run's own processes saturate the host's cores.
    if (*util < 60 && tree_saturates(0.7)) {
      out.push_back({"input-bound",
                     fmt::format("{}GPU busy only {:.0f}% of the time while the process tree kept {:.1f} of {} cores busy "
                                 "({:.0f}%){}", who, *util, tree_cores, p.cores, 100 * tree_share, demand_txt),
                     "The data pipeline cannot feed the GPU: raise DataLoader num_workers, enable pin_memory, pre-tokenise or cache "
                     "the dataset, or move augmentation to the GPU."});
    } else if (*util < 50) {
      out.push_back({"GPU underused",
                     fmt::format("{}GPU busy {:.0f}% of the time; the process tree used {:.1f} of {} cores", who, *util,
                                 tree_cores, p.cores),
                     "Kernels are small or the GPU waits on synchronisation: a larger batch, CUDA graphs or torch.compile, "
                     "and fewer .item()/.cpu() calls in the loop."});
    }
    // Compute against memory bandwidth. GPM's SM/tensor/DRAM activity is the real signal; without it,
    // NVML's coarse kernel-active and memory-controller-busy shares are all there is, and we say so.
    if (*util >= 60) {
      if (gpm && *dram >= 50 && *tensor < 30) {
        out.push_back({"memory-bandwidth-bound",
                       fmt::format("{}DRAM bandwidth {:.0f}% of peak while tensor cores are active {:.0f}% and SMs {:.0f}% (GPM)", who,
                                   *dram, *tensor, *sm),
                       "Raise arithmetic intensity: a larger batch, fused kernels (FlashAttention, fused optimizers), lower "
                       "precision weights; or a GPU with more memory bandwidth (H200, B200)."});
      } else if (gpm && *sm >= 70 && *tensor >= 40) {
        out.push_back({"compute-bound",
                       fmt::format("{}SMs active {:.0f}% and tensor cores {:.0f}% with DRAM at {:.0f}% (GPM)", who, *sm, *tensor, *dram),
                       "The math units are the limit: use bf16/fp8 if not already, or a GPU with more tensor throughput, or more GPUs."});
      } else if (!gpm && mem_util && *mem_util >= 60) {
        out.push_back({"memory-bandwidth-bound",
                       fmt::format("{}device memory busy {:.0f}% of the time with kernels running {:.0f}% (NVML; no GPM counters on this GPU/driver)",
                                   who, *mem_util, *util),
                       "Likely bandwidth-limited: a larger batch, fused kernels, or a GPU with more memory bandwidth. "
                       "Kernel-active time is not SM occupancy; confirm with Nsight Compute."});
      } else if (!gpm && *util >= 85) {
        out.push_back({"compute-bound",
                       fmt::format("{}kernels running {:.0f}% of the time, memory busy {:.0f}% (NVML; no GPM counters)", who, *util,
                                   mem_util.value_or(0)),
                       "The GPU is kept busy: faster math (bf16/fp8, a larger card) or more GPUs is the next step. "
                       "Kernel-active time is not SM occupancy; GPM (Hopper+) would show tensor-core use."});
      } else if (gpm) {
        out.push_back({"mixed load",
                       fmt::format("{}SMs {:.0f}%, tensor cores {:.0f}%, DRAM {:.0f}% (GPM)", who, *sm, *tensor, *dram),
                       "No single unit saturates; look at the slowest kernels with a profiler (Nsight Systems / torch.profiler)."});
      }
    }
    // Throttling, masking the idle bit.
    const double thermal = share_with(s, NVML_CLOCK_EVENT_SW_THERMAL | NVML_CLOCK_EVENT_HW_THERMAL);
    const double power = share_with(s, NVML_CLOCK_EVENT_SW_POWER_CAP | NVML_CLOCK_EVENT_HW_POWER_BRAKE);
    double tmax = 0;
    for (const auto& x : s) tmax = std::max(tmax, x.temperature_c.value_or(0));
    const auto clock = mean(s, &GpuSample::sm_clock_mhz);
    const auto max_clock = p.devices[g].max_sm_clock_mhz;
    const std::string clock_txt = clock && max_clock ? fmt::format(", SM clock {:.0f} of {:.0f} MHz", *clock, *max_clock) : "";
    if (thermal > 0.1)
      out.push_back({"thermal throttling",
                     fmt::format("{}thermal slowdown reported in {:.0f}% of samples, up to {:.0f} C{}", who, 100 * thermal, tmax, clock_txt),
                     "Clocks drop to stay within temperature: improve airflow or cooling, check fans and ambient temperature."});
    if (power > 0.1) {
      const auto pw = mean(s, &GpuSample::power_w);
      out.push_back({"power-limited",
                     fmt::format("{}power cap reported in {:.0f}% of samples{}{}", who, 100 * power,
                                 pw && p.devices[g].power_limit_w ? fmt::format(", drawing {:.0f} of {:.0f} W", *pw, *p.devices[g].power_limit_w) : "",
                                 clock_txt),
                     "The board power limit holds clocks down: raise it (nvidia-smi -pl) if the cooling allows, or expect this speed."});
    }
    // Memory capacity.
    double peak = 0, total = p.devices[g].memory_total_bytes;
    for (const auto& x : s) {
      peak = std::max(peak, x.mem_used_bytes.value_or(0));
      if (x.mem_total_bytes) total = *x.mem_total_bytes;
    }
    if (total > 0 && peak >= 0.9 * total)
      out.push_back({"memory near capacity",
                     fmt::format("{}peak {} of {} in use ({:.0f}%)", who, format_bytes(peak), format_bytes(total), 100 * peak / total),
                     "An out-of-memory error is close: keep the batch as it is or lower it, enable activation checkpointing, or use "
                     "a card with more memory; `gpuplan memory` shows the largest batch that fits."});
  }
  // Imbalance across GPUs.
  if (p.gpu.size() > 1) {
    double lo = 101, hi = -1;
    size_t lo_i = 0, hi_i = 0;
    for (size_t g = 0; g < p.gpu.size(); ++g) {
      const auto u = mean(p.gpu[g], &GpuSample::util_pct);
      if (!u) continue;
      if (*u < lo) lo = *u, lo_i = g;
      if (*u > hi) hi = *u, hi_i = g;
    }
    if (hi - lo > 20)
      out.push_back({"multi-GPU imbalance", fmt::format("GPU {} busy {:.0f}% but GPU {} only {:.0f}%", hi_i, hi, lo_i, lo),
                     "Work is uneven: check the data sharding and pipeline-stage balance, or a straggling GPU (clocks, PCIe link width)."});
  }
  note_other_load(load, out);
  if (p.steps.count > 2 && p.steps.median_s && p.steps.p90_s && *p.steps.p90_s > 1.5 * *p.steps.median_s)
    out.push_back({"uneven step times",
                   fmt::format("p90 step {} against a median of {}", format_seconds(*p.steps.p90_s), format_seconds(*p.steps.median_s)),
                   "Some steps stall: periodic evaluation or checkpointing, data-loader hiccups, or variable sequence lengths."});
  return out;
}

}  // namespace gpuplan
