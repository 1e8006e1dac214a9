#include "data/toml_document.h"

#include <gtest/gtest.h>

namespace gpuplan {
namespace {

TomlFields fields_of(const toml::table& t) { return TomlFields(t, "row"); }

TEST(TomlFields, OptionalNumberBetweenPassesAbsentAndInRangeValues) {
  auto t = parse_toml("a = 0.5\nb = 1\n", "test");
  ASSERT_TRUE(t);
  const TomlFields f = fields_of(*t);
  auto a = f.optional_number_between("a", 0.05, 1);
  ASSERT_TRUE(a);
  EXPECT_EQ(**a, 0.5);
  auto b = f.optional_number_between("b", 0.05, 1);  // the bounds are inclusive, and integers are numbers
  ASSERT_TRUE(b);
  EXPECT_EQ(**b, 1.0);
  auto missing = f.optional_number_between("c", 0.05, 1);
  ASSERT_TRUE(missing);
  EXPECT_FALSE(missing->has_value());
}

TEST(TomlFields, OptionalNumberBetweenNamesTheFieldOutOfRangeOrNotANumber) {
  auto t = parse_toml("low = 0.01\nhigh = inf\nnot_a_number = nan\ntext = 'x'\n", "test");
  ASSERT_TRUE(t);
  const TomlFields f = fields_of(*t);
  for (const char* key : {"low", "high", "not_a_number"}) {
    auto r = f.optional_number_between(key, 0.05, 1);
    ASSERT_FALSE(r) << key;
    EXPECT_NE(r.error().message.find("must be between 0.05 and 1"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().field.find(key), std::string::npos) << r.error().field;
  }
  auto text = f.optional_number_between("text", 0.05, 1);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("must be a number"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
