// Places chart labels so that none covers another: each label tries a few spots around its point
// and takes the first that is free; a label with no free spot is left out (its point keeps a
// tooltip). Text boxes are estimated from the character count at the font size.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
};

// An estimate of a text's box in SVG units, anchored at its start (left, baseline at y).
Box text_box(double x, double y, const std::string& text, double font_size);

class LabelPlacer {
 public:
  // Boxes that labels must avoid (axes, legend, titles).
  void reserve(const Box& b) { taken_.push_back(b); }
  // Where a label of `text` beside the point (x, y) goes: the SVG x and baseline y, or nothing.
  std::optional<std::pair<double, double>> place(double x, double y, const std::string& text, double font_size,
                                                 const Box& within);

 private:
  std::vector<Box> taken_;
};

// Tick values for an axis from lo to hi: about `count` steps of 1, 2 or 5 times a power of ten.
std::vector<double> nice_ticks(double lo, double hi, int count);

}  // namespace gpuplan
