#include "util/suggest.h"

#include <gtest/gtest.h>

namespace gpuplan {

TEST(Suggest, FindsTheGpuATypoMeant) {
  const std::vector<std::string> ids = {"h100-sxm", "h100-pcie", "h200-sxm", "rtx-4090", "a100-80gb-sxm"};
  const auto near = nearest_names("h100-smx", ids);
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near.front(), "h100-sxm");
}

TEST(Suggest, ASubstringIsAStrongHint) {
  const std::vector<std::string> ids = {"rtx-4090", "rtx-3090", "l40s"};
  EXPECT_EQ(nearest_names("4090", ids).front(), "rtx-4090");
}

TEST(Suggest, SaysNothingWhenNothingIsClose) {
  EXPECT_EQ(did_you_mean("zzzzzzzzzzzzzz", {"t4", "l4"}), "");
}

}  // namespace gpuplan
