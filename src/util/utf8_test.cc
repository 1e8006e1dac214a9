#include "util/utf8.h"

#include <gtest/gtest.h>

namespace gpuplan {

TEST(Utf8, ValidTextIsUnchanged) {
  EXPECT_EQ(valid_utf8("llama/ünïcødé-模型 😀"), "llama/ünïcødé-模型 😀");
  EXPECT_TRUE(is_valid_utf8("plain"));
}

TEST(Utf8, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // UTF-16 surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe6\xa8"));          // truncated
  EXPECT_TRUE(is_valid_utf8(valid_utf8("\xc0\xaf\xed\xa0\x80\xe6\xa8\xff")));
}

TEST(Utf8, JsonTextNeverThrowsOnInvalidStrings) {
  nlohmann::json j = {{"model", "/tmp/m\xff\xfe/config.json"}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what --json used to do
  const std::string text = json_text(j, 2);
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_NE(text.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded());
}

}  // namespace gpuplan
