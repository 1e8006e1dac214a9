#include "advise/sentence.h"

#include <gtest/gtest.h>

namespace gpuplan {

TEST(Sentence, RendersEachFactInTurnByItsKind) {
  const Sentence s = sentence("{} x {} for {} at {} MFU, {} free, {} busy.",
                              {fact::count("/g", 16), fact::text("/n", "H100"), fact::usd("/c", 12345.6), fact::percent("/m", 0.456),
                               fact::bytes("/b", 8.0 * 1024 * 1024 * 1024), fact::count("/h", 11960320)});
  EXPECT_EQ(s.text, "16 x H100 for $12,346 at 46% MFU, 8.00 GiB free, 11,960,320 busy.");
  EXPECT_EQ(s.facts.size(), 6u);
  EXPECT_EQ(render(fact::percent("/p", 0.002)), "0.2%");
  EXPECT_EQ(render(fact::seconds("/s", 7200)), "2.0 h");
}

}  // namespace gpuplan
