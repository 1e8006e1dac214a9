#include "model/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>

namespace gpuplan {

namespace {
std::string with_length(const std::string& header, uint64_t claimed, size_t data_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((claimed >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\0');
}
std::string file_of(const std::string& header, size_t data_bytes) {
  return with_length(header, header.size(), data_bytes);
}
}  // namespace

TEST(Safetensors, CountsParametersAndBytesFromTheHeader) {
  const std::string h = R"({"__metadata__":{"format":"pt"},
    "w":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},
    "b":{"dtype":"F32","shape":[8],"data_offsets":[64,96]}})";
  const std::string f = file_of(h, 96);
  auto inv = parse_safetensors_header(f, f.size(), "m.safetensors");
  ASSERT_TRUE(inv.ok()) << inv.error().to_string();
  EXPECT_EQ(inv->parameters, 40);
  EXPECT_DOUBLE_EQ(inv->bytes, 96);
  EXPECT_EQ(inv->dominant_dtype, "BF16");
}

TEST(Safetensors, AbsurdHeaderLengthIsRejectedBeforeAllocating) {
  const std::string f = with_length("{}", 1ull << 62, 0);
  auto inv = parse_safetensors_header(f, f.size(), "m.safetensors");
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(inv.error().message.find("absurd"), std::string::npos);
}

TEST(Safetensors, HeaderLongerThanTheFileIsTruncation) {
  const std::string f = with_length(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 5000, 0);
  auto inv = parse_safetensors_header(f, f.size(), "m.safetensors");
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(inv.error().message.find("truncated"), std::string::npos);
}

TEST(Safetensors, ShorterThanTheLengthFieldIsTruncation) {
  auto inv = parse_safetensors_header("abc", 3, "m.safetensors");
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(inv.error().message.find("truncated"), std::string::npos);
}

TEST(Safetensors, OffsetsOutsideTheDataAreRejected) {
  const std::string f = file_of(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8);
  auto inv = parse_safetensors_header(f, f.size(), "m.safetensors");
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(inv.error().field.find("'w'"), std::string::npos);
}

TEST(Safetensors, ShapeMustMatchTheByteSpan) {
  const std::string f = file_of(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16);
  EXPECT_FALSE(parse_safetensors_header(f, f.size(), "m").ok());
}

TEST(Safetensors, NonJsonHeaderIsAnError) {
  const std::string f = file_of("not json at all", 0);
  auto inv = parse_safetensors_header(f, f.size(), "m");
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(inv.error().message.find("JSON"), std::string::npos);
}

TEST(Safetensors, UnknownDtypeIsNamed) {
  const std::string f = file_of(R"({"w":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}})", 1);
  auto inv = parse_safetensors_header(f, f.size(), "m");
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(inv.error().message.find("F7"), std::string::npos);
}

}  // namespace gpuplan
