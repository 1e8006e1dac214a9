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

}  // namespace gpuplan
