#include "report/table.h"

#include <algorithm>

namespace gpuplan {

namespace {
// Display width in terminal columns: counts UTF-8 code points, not bytes.
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}
}  // namespace

std::string TextTable::render() const {
  std::vector<size_t> w(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) w[i] = width(header_[i]);
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto line = [&](const std::vector<std::string>& r, bool head) {
    std::string out;
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const std::string pad(w[i] - width(cell), ' ');
      const bool right = std::find(right_.begin(), right_.end(), i) != right_.end();
      out += (i ? "  " : "") + (right ? pad + cell : cell + (i + 1 < w.size() ? pad : ""));
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  size_t total = 0;
  for (size_t x : w) total += x;
  total += 2 * (w.empty() ? 0 : w.size() - 1);
  std::string out = line(header_, true) + std::string(total, '-') + "\n";
  for (const auto& r : rows_) out += r.empty() ? std::string(total, '-') + "\n" : line(r, false);
  return out;
}

}  // namespace gpuplan
