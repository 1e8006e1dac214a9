#include "util/units.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuplan {

TEST(FormatBytes, UsesBinaryUnits) {
  EXPECT_EQ(format_bytes(128 * kKiB), "128.0 KiB");
  EXPECT_EQ(format_bytes(1.5 * kGiB), "1.50 GiB");
  EXPECT_EQ(format_bytes(512), "512 B");
}

TEST(FormatUsd, GroupsThousands) {
  EXPECT_EQ(format_usd(1234567.4), "$1,234,567");
  EXPECT_EQ(format_usd(0.42), "$0.42");
}

TEST(FormatUsd, NeverOverflowsOnHugeOrNonFiniteAmounts) {
  EXPECT_EQ(format_usd(1e300), "$1e+300");
  EXPECT_EQ(format_usd(-2.5e18), "-$2.5e+18");
  EXPECT_EQ(format_usd(INFINITY), "$inf");
}

TEST(FormatSeconds, PicksAReadableUnit) {
  EXPECT_EQ(format_seconds(0.0123), "12.30 ms");
  EXPECT_EQ(format_seconds(7200 * 2), "4.0 h");
  EXPECT_EQ(format_seconds(86400 * 10), "10.0 days");
}

TEST(ParseCount, ReadsSuffixesPeopleWrite) {
  EXPECT_EQ(*parse_count("2B", "--tokens"), 2e9);
  EXPECT_EQ(*parse_count("1.5T", "--tokens"), 1.5e12);
  EXPECT_EQ(*parse_count("128k", "--seq"), 128000);
  EXPECT_EQ(*parse_count("4Ki", "--seq"), 4096);
  EXPECT_EQ(*parse_count("300", "--tokens"), 300);
  EXPECT_EQ(*parse_count("3e-4", "--lr"), 3e-4);
}

TEST(ParseCount, RefusesWhatIsNotACount) {
  for (const char* bad : {"", "B", "2X", "two", "1e400", "2BB", "inf"}) {
    auto r = parse_count(bad, "--tokens");
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().field, "--tokens");
  }
}

TEST(Plural, SaysOneWithoutAnS) {
  EXPECT_EQ(plural(1, "GPU"), "1 GPU");
  EXPECT_EQ(plural(8, "GPU"), "8 GPUs");
  EXPECT_EQ(plural(1, "micro-batch", "micro-batches"), "1 micro-batch");
  EXPECT_EQ(plural(4, "micro-batch", "micro-batches"), "4 micro-batches");
}

}  // namespace gpuplan
