// The memory margin every plan keeps: a plan fits a card only if it leaves at least this much of it
// free beyond the estimate, because the estimate has an error and the allocator fragments. By
// default the margin is the larger of the platform's fraction and the memory estimate's
// cross-validated error band (a training estimate times the band's top must fit); `--headroom`
// replaces both with one fraction. The same rule serves `memory`, `plan` and `advise`.
#pragma once

#include <string>

namespace gpuplan {

struct Headroom {
  double fraction = 0;     // share of the card's capacity that must stay free
  std::string basis;       // where the margin comes from, for people
  bool keep_band = false;  // also keep the estimate's error band (per_gpu_bytes_band) free
};

// The default: the platform's fraction (platform.toml [memory_headroom]) and the error band.
Headroom default_headroom(double platform_fraction, const std::string& platform_source);

// How close an estimate comes to a card's capacity.
struct MemoryMargin {
  double capacity_bytes = 0, estimate_bytes = 0;
  double free_bytes = 0;           // capacity - estimate (negative when over)
  double free_fraction = 0;        // free / capacity
  double required_bytes = 0;       // the margin the rule asks for
  double required_fraction = 0;    // required / capacity
  bool fits = false;               // free >= required
  bool fits_without_headroom = false;
};

// `band_high_bytes` is the top of the estimate's error band when the memory model gives one (0 when
// it does not): under `h.keep_band` the margin is the larger of the fraction and the band above
// the estimate.
MemoryMargin memory_margin(double estimate_bytes, double capacity_bytes, const Headroom& h, double band_high_bytes = 0);

// The most bytes of a memory without an error band (host memory for CPU offload) a plan may use.
double usable_with_headroom(double capacity_bytes, const Headroom& h);

}  // namespace gpuplan
