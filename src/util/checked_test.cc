#include "util/checked.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace gpuplan {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedArithmetic, AddAndMulReportOverflowInsteadOfWrapping) {
  EXPECT_EQ(checked_add(2, 3), 5);
  EXPECT_EQ(checked_add(kMax, 1), std::nullopt);
  EXPECT_EQ(checked_add(kMin, -1), std::nullopt);
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_EQ(checked_mul(int64_t{1} << 32, int64_t{1} << 32), std::nullopt);  // --tp 2^32 --pp 2^32
  EXPECT_EQ(checked_mul(kMin, -1), std::nullopt);
}

TEST(CheckedArithmetic, ProductOfManyFactorsNamesTheInputOnOverflow) {
  EXPECT_EQ(checked_product({4, 8, 16}), 512);
  EXPECT_EQ(checked_product({}), 1);
  auto p = product_of({kMax, 2, 1}, "--grad-accum", "micro-batch x grad-accum x dp");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().field, "--grad-accum");
  EXPECT_NE(p.error().message.find("overflows"), std::string::npos);
}

TEST(CheckedConversion, DoubleToInt64RefusesNonFiniteFractionalAndOutOfRange) {
  EXPECT_EQ(*to_int64(1e9, "x", 0, kMax), 1000000000);
  EXPECT_FALSE(to_int64(std::nan(""), "x", 0, kMax).ok());
  EXPECT_FALSE(to_int64(INFINITY, "x", 0, kMax).ok());
  EXPECT_FALSE(to_int64(-INFINITY, "x", kMin, kMax).ok());
  EXPECT_FALSE(to_int64(1.5, "x", 0, 10).ok());
  EXPECT_FALSE(to_int64(11, "x", 0, 10).ok());
  EXPECT_FALSE(to_int64(0x1p63, "x", kMin, kMax).ok());  // 2^63 is one past INT64_MAX
  EXPECT_FALSE(to_int64(1e300, "x", kMin, kMax).ok());
  EXPECT_EQ(*to_int64(-0x1p63, "x", kMin, kMax), kMin);
}

TEST(FiniteChecks, RefuseNanInfinityAndValuesOutsideTheRange) {
  EXPECT_FALSE(require_finite(1.0, "--tokens", 0, 10).has_value());
  EXPECT_TRUE(require_finite(std::nan(""), "--tokens", 0, 10).has_value());
  EXPECT_TRUE(require_finite(INFINITY, "--tokens", 0, INFINITY).has_value());
  EXPECT_TRUE(require_finite(-1, "--tokens", 0, 10).has_value());
  EXPECT_TRUE(require_positive(0, "--epochs", 10).has_value());
  EXPECT_TRUE(require_positive(1e300, "--epochs", 1e6).has_value());
  EXPECT_EQ(require_positive(std::nan(""), "--epochs", 1e6)->field, "--epochs");
  EXPECT_FALSE(require_range(5, "--tp", 1, 8).has_value());
  EXPECT_TRUE(require_range(9, "--tp", 1, 8).has_value());
}

}  // namespace gpuplan
