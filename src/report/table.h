// A plain-text table for terminals: columns sized to their widest cell, quantities right-aligned.
#pragma once

#include <string>
#include <vector>

namespace gpuplan {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void add_separator() { rows_.emplace_back(); }
  // Columns holding quantities read better right-aligned; text columns stay left-aligned.
  void align_right(std::vector<size_t> columns) { right_ = std::move(columns); }
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a separator
  std::vector<size_t> right_;
};

}  // namespace gpuplan
