#include "memory/headroom.h"

#include <algorithm>

namespace gpuplan {

MemoryMargin memory_margin(double estimate_bytes, double capacity_bytes, const Headroom& h, double band_high_bytes) {
  MemoryMargin m;
  m.capacity_bytes = capacity_bytes;
  m.estimate_bytes = estimate_bytes;
  m.free_bytes = capacity_bytes - estimate_bytes;
  m.free_fraction = capacity_bytes > 0 ? m.free_bytes / capacity_bytes : 0;
  const double band = h.keep_band && band_high_bytes > estimate_bytes ? band_high_bytes - estimate_bytes : 0.0;
  m.required_bytes = std::max(h.fraction * capacity_bytes, band);
  m.required_fraction = capacity_bytes > 0 ? m.required_bytes / capacity_bytes : 0;
  m.fits_without_headroom = m.free_bytes >= 0;
  m.fits = m.free_bytes >= m.required_bytes;
  return m;
}

Headroom default_headroom(double platform_fraction, const std::string& platform_source) {
  return Headroom{platform_fraction,
                  "default: the larger of the memory estimate's cross-validated error band (training) and " +
                      platform_source,
                  true};
}

double usable_with_headroom(double capacity_bytes, const Headroom& h) { return capacity_bytes * (1 - h.fraction); }

}  // namespace gpuplan
