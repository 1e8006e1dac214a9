// The memory margin every plan keeps: a plan fits a card only if it leaves at least this much of it
// free beyond the estimate, because the estimate has an error and the allocator fragments. The same
// rule serves `memory`, `plan` and `advise`; `--headroom` replaces the default.
#pragma once

#include <string>

namespace gpuplan {

struct Headroom {
  double fraction = 0;  // share of the card's capacity that must stay free
  std::string basis;    // where the fraction comes from, for people
};

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
// it does not): the margin is then the larger of the fraction and the band above the estimate.
MemoryMargin memory_margin(double estimate_bytes, double capacity_bytes, const Headroom& h, double band_high_bytes = 0);

// The most bytes a plan may use on a card of `capacity_bytes` under `h`.
double usable_with_headroom(double capacity_bytes, const Headroom& h);

}  // namespace gpuplan
