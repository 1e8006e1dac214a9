#include "report/svg_labels.h"

#include <cmath>

namespace gpuplan {

Box text_box(double x, double y, const std::string& text, double font_size) {
  // Sans-serif glyphs average about 0.6 em; count code points, not bytes.
  double chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  const double w = chars * font_size * 0.6;
  return {x, y - font_size * 0.85, x + w, y + font_size * 0.25};
}

std::optional<std::pair<double, double>> LabelPlacer::place(double x, double y, const std::string& text, double font_size,
                                                            const Box& within) {
  const double w = text_box(0, 0, text, font_size).x1;
  const std::pair<double, double> spots[] = {{x + 7, y - 4},          {x + 7, y + font_size + 2}, {x - 7 - w, y - 4},
                                             {x - 7 - w, y + font_size + 2}, {x - w / 2, y - 9},  {x - w / 2, y + font_size + 8}};
  for (auto [sx, sy] : spots) {
    const Box b = text_box(sx, sy, text, font_size);
    if (b.x0 < within.x0 || b.x1 > within.x1 || b.y0 < within.y0 || b.y1 > within.y1) continue;
    bool free = true;
    for (const Box& t : taken_) free = free && !b.overlaps(t);
    if (!free) continue;
    taken_.push_back(b);
    return std::make_pair(sx, sy);
  }
  return std::nullopt;
}

std::vector<double> nice_ticks(double lo, double hi, int count) {
  std::vector<double> out;
  if (!(hi > lo) || count < 1) return {lo};
  const double raw = (hi - lo) / count;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  // The 1-2-5 step nearest the raw step, measured as a ratio.
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (std::fabs(std::log(m * mag / raw)) < std::fabs(std::log(step / raw))) step = m * mag;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return out;
}

}  // namespace gpuplan
