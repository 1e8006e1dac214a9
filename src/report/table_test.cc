#include "report/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpuplan {

TEST(TextTable, WrapsTheWidestTextColumnToFitTheWidth) {
  TextTable t({"term", "bytes", "how"});
  t.align_right({1});
  t.add_row({"weights", "14.96 GiB", "8.03B parameters x 2 bytes (bf16), stored once per tensor-parallel shard and replicated"});
  const std::string out = t.render(60);
  std::istringstream lines(out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 60u) << line;
    ++n;
  }
  EXPECT_GT(n, 3);  // the formula continued on further lines
  EXPECT_NE(out.find("replicated"), std::string::npos);
}

TEST(TextTable, LeavesNarrowTablesAlone) {
  TextTable t({"a", "b"});
  t.add_row({"x", "y"});
  EXPECT_EQ(t.render(100), "a  b\n----\nx  y\n");
}

TEST(WrapWords, BreaksAtSpacesAndSplitsLongWords) {
  EXPECT_EQ(wrap_words("one two three", 7), (std::vector<std::string>{"one two", "three"}));
  EXPECT_EQ(wrap_words("abcdefghij", 4), (std::vector<std::string>{"abcd", "efgh", "ij"}));
}

}  // namespace gpuplan
