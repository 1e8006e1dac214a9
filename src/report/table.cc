#include "report/table.h"

#include <algorithm>

#include "util/escape.h"
#include "util/terminal.h"

namespace gpuplan {

namespace {
// A cell as one line of printable text.
std::string cell_text(const std::string& s) {
  std::string o = printable(s);
  std::replace(o.begin(), o.end(), '\n', ' ');
  std::replace(o.begin(), o.end(), '\t', ' ');
  return o;
}

// Display width in terminal columns: counts UTF-8 code points, not bytes.
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The first `cols` display columns of `s` (never splitting a UTF-8 sequence), and the rest.
std::pair<std::string, std::string> split_at(const std::string& s, size_t cols) {
  size_t seen = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == cols) break;
      ++seen;
    }
  }
  return {s.substr(0, i), s.substr(i)};
}
}  // namespace

std::vector<std::string> wrap_words(const std::string& text, size_t cols) {
  std::vector<std::string> lines;
  std::string rest = text;
  while (width(rest) > cols && cols > 0) {
    auto [head, tail] = split_at(rest, cols + 1);
    size_t cut = head.rfind(' ');
    if (cut == std::string::npos || cut == 0) {
      auto [h, t] = split_at(rest, cols);
      lines.push_back(h);
      rest = t;
    } else {
      lines.push_back(rest.substr(0, cut));
      rest = rest.substr(cut + 1);
    }
  }
  lines.push_back(rest);
  return lines;
}

std::string fit_width(const std::string& text, const std::string& first, const std::string& rest) {
  const size_t w = output_style().width;
  const size_t indent = std::max(width(first), width(rest));
  std::string out;
  const auto lines = wrap_words(cell_text(text), w > indent + 20 ? w - indent : 20);
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? rest : first) + lines[i] + "\n";
  return out;
}

TextTable::TextTable(std::vector<std::string> header) {
  for (auto& h : header) header_.push_back(cell_text(h));
}

void TextTable::add_row(std::vector<std::string> row) {
  for (auto& c : row) c = cell_text(c);
  rows_.push_back(std::move(row));
}

std::string TextTable::render() const { return render(output_style().width); }

std::string TextTable::render(size_t max_width) const {
  std::vector<size_t> w(header_.size(), 0);
  for (size_t i = 0; i < header_.size(); ++i) w[i] = width(header_[i]);
  for (const auto& r : rows_)
    for (size_t i = 0; i < r.size() && i < w.size(); ++i) w[i] = std::max(w[i], width(r[i]));
  auto total_width = [&] {
    size_t total = 0;
    for (size_t x : w) total += x;
    return total + 2 * (w.empty() ? 0 : w.size() - 1);
  };
  auto is_right = [&](size_t i) { return std::find(right_.begin(), right_.end(), i) != right_.end(); };
  // Too wide: narrow the widest text column (its cells wrap onto continuation lines), repeatedly.
  constexpr size_t kMinColumn = 12;
  while (total_width() > max_width) {
    size_t widest = w.size();
    for (size_t i = 0; i < w.size(); ++i)
      if (!is_right(i) && w[i] > kMinColumn && (widest == w.size() || w[i] > w[widest])) widest = i;
    if (widest == w.size()) break;  // nothing left to narrow: let the terminal wrap
    w[widest] = std::max(kMinColumn, w[widest] - std::min(w[widest] - kMinColumn, total_width() - max_width));
  }
  auto line = [&](const std::vector<std::string>& r) {
    std::vector<std::vector<std::string>> cells(w.size());
    size_t height = 1;
    for (size_t i = 0; i < w.size(); ++i) {
      cells[i] = wrap_words(i < r.size() ? r[i] : "", w[i]);
      height = std::max(height, cells[i].size());
    }
    std::string out;
    for (size_t k = 0; k < height; ++k) {
      std::string text;
      for (size_t i = 0; i < w.size(); ++i) {
        const std::string cell = k < cells[i].size() ? cells[i][k] : "";
        const std::string pad(w[i] - std::min(w[i], width(cell)), ' ');
        text += (i ? "  " : "") + (is_right(i) ? pad + cell : cell + (i + 1 < w.size() ? pad : ""));
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
    return out;
  };
  const size_t total = total_width();
  std::string head = line(header_);
  if (output_style().color) head = emphasis(head.substr(0, head.size() - 1)) + "\n";
  std::string out = head + std::string(total, '-') + "\n";
  for (const auto& r : rows_) out += r.empty() ? std::string(total, '-') + "\n" : line(r);
  return out;
}

}  // namespace gpuplan
