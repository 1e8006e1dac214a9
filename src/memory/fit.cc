#include "memory/fit.h"

#include <algorithm>

#include "util/units.h"

namespace gpuplan {

double usable_memory_bytes(const Gpu& gpu) { return gpu.memory_bytes / kGB * kGiB; }

namespace {

bool fits_with(const ModelSpec& m, Workload w, const Efficiency& eff, double capacity, const Headroom& h) {
  return w.validate(m) == std::nullopt && margin_on_card(estimate_memory(m, w, eff), capacity, h).fits;
}

// Largest v in [1, hi] with pred(v) true, given pred is monotone (true then false); 0 if none.
template <class Pred>
int64_t largest_true(int64_t hi, Pred pred) {
  if (!pred(1)) return 0;
  int64_t lo = 1;
  int64_t step = 1;
  while (lo + step <= hi && pred(lo + step)) lo += step, step *= 2;  // gallop
  int64_t top = std::min(hi, lo + step);
  while (lo < top) {
    const int64_t mid = lo + (top - lo + 1) / 2;
    if (pred(mid)) lo = mid;
    else top = mid - 1;
  }
  return lo;
}

}  // namespace

MemoryMargin margin_on_card(const MemoryEstimate& e, double capacity_bytes, const Headroom& h) {
  return memory_margin(e.nvidia_smi(), capacity_bytes, h, e.per_gpu_bytes_band ? e.per_gpu_bytes_band->second : 0);
}

FitReport check_fit(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff, const Headroom& headroom) {
  FitReport r;
  r.capacity_bytes = usable_memory_bytes(gpu);
  const MemoryEstimate e = estimate_memory(m, w, eff);
  r.headroom_bytes = r.capacity_bytes - e.nvidia_smi();
  r.margin = margin_on_card(e, r.capacity_bytes, headroom);
  r.fits = r.margin.fits;
  const int64_t b = largest_true(1 << 20, [&](int64_t v) {
    Workload x = w;
    x.micro_batch = v;
    return fits_with(m, x, eff, r.capacity_bytes, headroom);
  });
  if (b > 0) r.max_batch = b;
  const int64_t seq_cap = m.max_position > 0 ? m.max_position : (int64_t{1} << 24);
  const int64_t s = largest_true(seq_cap, [&](int64_t v) {
    Workload x = w;
    x.seq = v;
    return fits_with(m, x, eff, r.capacity_bytes, headroom);
  });
  if (s > 0) {
    r.max_seq = s;
    r.max_seq_capped = s == seq_cap;
  }
  return r;
}

std::optional<Workload> smallest_fitting_split(const ModelSpec& m, const Workload& w, const Gpu& gpu,
                                               const Efficiency& eff, int64_t max_gpus, const Headroom& headroom) {
  const double capacity = usable_memory_bytes(gpu);
  for (int64_t n = 2; n <= max_gpus; n *= 2) {
    Workload x = w;
    if (w.training()) {
      x.par.tp = 1, x.par.pp = 1, x.par.dp = n, x.par.zero = 3;
    } else {
      if (m.heads % n != 0) break;
      x.par.tp = n, x.par.pp = 1, x.par.dp = 1;
    }
    if (fits_with(m, x, eff, capacity, headroom)) return x;
  }
  return std::nullopt;
}

}  // namespace gpuplan
