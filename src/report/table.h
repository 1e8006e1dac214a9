// A plain-text table for terminals: columns sized to their widest cell, quantities right-aligned,
// text columns wrapped so the table fits the output width (see util/terminal.h). Cells and wrapped
// text pass through printable(): a catalog id cannot carry terminal escape codes to the screen.
#pragma once

#include <string>
#include <vector>

namespace gpuplan {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void add_row(std::vector<std::string> row);
  void add_separator() { rows_.emplace_back(); }
  // Columns holding quantities read better right-aligned; text columns stay left-aligned.
  void align_right(std::vector<size_t> columns) { right_ = std::move(columns); }
  std::string render() const;  // fits output_style().width
  std::string render(size_t max_width) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
  std::vector<size_t> right_;
};

// `text` broken at spaces into lines of at most `cols` display columns (a longer word is split).
std::vector<std::string> wrap_words(const std::string& text, size_t cols);

// `text` as lines that fit output_style().width: the first starts with `first`, the rest with
// `rest` (a hanging indent); ends with a newline.
std::string fit_width(const std::string& text, const std::string& first = "", const std::string& rest = "  ");

}  // namespace gpuplan
