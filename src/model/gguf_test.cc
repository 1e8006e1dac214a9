#include "model/gguf.h"

#include <gtest/gtest.h>

#include <cstring>

namespace gpuplan {

namespace {
// Builds GGUF v3 bytes the way llama.cpp's gguf writer lays them out.
struct GgufWriter {
  std::string b;
  uint64_t n_tensors = 0, n_kv = 0;
  std::string kv, infos;
  template <class T>
  static void put(std::string& s, T v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static void put_str(std::string& s, const std::string& x) { put<uint64_t>(s, x.size()); s += x; }
  void u32(const std::string& k, uint32_t v) { put_str(kv, k); put<uint32_t>(kv, 4); put(kv, v); ++n_kv; }
  void str(const std::string& k, const std::string& v) { put_str(kv, k); put<uint32_t>(kv, 8); put_str(kv, v); ++n_kv; }
  void tensor(const std::string& name, std::vector<uint64_t> dims, uint32_t type) {
    put_str(infos, name);
    put<uint32_t>(infos, static_cast<uint32_t>(dims.size()));
    for (auto d : dims) put(infos, d);
    put<uint32_t>(infos, type);
    put<uint64_t>(infos, 0);
    ++n_tensors;
  }
  std::string bytes() const {
    std::string out = "GGUF";
    put<uint32_t>(out, 3);
    put(out, n_tensors);
    put(out, n_kv);
    return out + kv + infos;
  }
};

GgufWriter tiny_llama() {
  GgufWriter w;
  w.str("general.architecture", "llama");
  w.str("general.name", "tiny");
  w.u32("llama.block_count", 2);
  w.u32("llama.embedding_length", 64);
  w.u32("llama.feed_forward_length", 128);
  w.u32("llama.attention.head_count", 4);
  w.u32("llama.attention.head_count_kv", 2);
  w.u32("llama.context_length", 256);
  w.tensor("token_embd.weight", {64, 100}, 1);  // F16, ggml puts the fastest dimension first
  w.tensor("blk.0.attn_q.weight", {64, 64}, 2);  // Q4_0
  return w;
}
}  // namespace

TEST(Gguf, ReadsArchitectureAndTensorBytes) {
  const std::string f = tiny_llama().bytes();
  auto h = parse_gguf_header(f, f.size(), "tiny.gguf");
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_EQ(h->tensors.parameters, 64 * 100 + 64 * 64);
  // Q4_0 stores 32 weights in 18 bytes (ggml type_traits).
  EXPECT_DOUBLE_EQ(h->tensors.bytes, 64 * 100 * 2 + 64 * 64 / 32.0 * 18);
  auto m = model_from_gguf(*h, "tiny.gguf");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->layers, 2);
  EXPECT_EQ(m->kv_heads, 2);
  EXPECT_EQ(m->vocab, 100);
  EXPECT_TRUE(m->tied_embeddings);  // no output.weight tensor
  EXPECT_EQ(m->total_parameters(), 64 * 100 + 64 * 64);
}

TEST(Gguf, BadMagicIsRejected) {
  auto h = parse_gguf_header("GGUX\3\0\0\0", 8, "x.gguf");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("magic"), std::string::npos);
}

TEST(Gguf, EveryTruncationIsAnErrorNotACrash) {
  const std::string f = tiny_llama().bytes();
  for (size_t n = 0; n < f.size(); ++n) {
    auto h = parse_gguf_header(std::string_view(f).substr(0, n), f.size(), "t.gguf");
    EXPECT_FALSE(h.ok()) << "prefix of " << n << " bytes parsed";
  }
}

TEST(Gguf, AbsurdCountsAreRejectedBeforeAllocating) {
  std::string f = "GGUF";
  GgufWriter::put<uint32_t>(f, 3);
  GgufWriter::put<uint64_t>(f, 1);
  GgufWriter::put<uint64_t>(f, ~0ull);  // 2^64-1 metadata entries
  auto h = parse_gguf_header(f, f.size(), "t.gguf");
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.error().message.find("absurd"), std::string::npos);
}

TEST(Gguf, MissingArchitectureIsNamed) {
  GgufWriter w;
  w.u32("llama.block_count", 2);
  const std::string f = w.bytes();
  auto h = parse_gguf_header(f, f.size(), "t.gguf");
  ASSERT_TRUE(h.ok());
  auto m = model_from_gguf(*h, "t.gguf");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().field.find("general.architecture"), std::string::npos);
}

}  // namespace gpuplan
