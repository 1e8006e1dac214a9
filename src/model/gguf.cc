#include "model/gguf.h"

#include <fmt/format.h>

#include <cstring>
#include <set>

#include "util/text_file.h"

namespace gpuplan {

namespace {

class Reader {
 public:
  Reader(std::string_view b) : b_(b) {}
  size_t left() const { return b_.size() - pos_; }
  bool u32(uint32_t& v) { return raw(&v, 4); }
  bool u64(uint64_t& v) { return raw(&v, 8); }
  bool raw(void* out, size_t n) {
    if (left() < n) return false;
    std::memcpy(out, b_.data() + pos_, n);  // GGUF is little-endian, as is every supported host
    pos_ += n;
    return true;
  }
  bool skip(uint64_t n) {
    if (left() < n) return false;
    pos_ += n;
    return true;
  }
  bool str(std::string& s) {
    uint64_t n;
    if (!u64(n) || n > left()) return false;
    s.assign(b_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view b_;
  size_t pos_ = 0;
};

enum : uint32_t { U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 };

size_t scalar_size(uint32_t t) {
  switch (t) {
    case U8: case I8: case BOOL: return 1;
    case U16: case I16: return 2;
    case U32: case I32: case F32: return 4;
    case U64: case I64: case F64: return 8;
    default: return 0;
  }
}

bool read_scalar(Reader& r, uint32_t t, GgufValue& out) {
  unsigned char buf[8] = {};
  const size_t n = scalar_size(t);
  if (n == 0 || !r.raw(buf, n)) return false;
  switch (t) {
    case U8: out = int64_t{buf[0]}; break;
    case I8: out = int64_t{static_cast<int8_t>(buf[0])}; break;
    case BOOL: out = buf[0] != 0; break;
    case U16: { uint16_t v; std::memcpy(&v, buf, 2); out = int64_t{v}; break; }
    case I16: { int16_t v; std::memcpy(&v, buf, 2); out = int64_t{v}; break; }
    case U32: { uint32_t v; std::memcpy(&v, buf, 4); out = int64_t{v}; break; }
    case I32: { int32_t v; std::memcpy(&v, buf, 4); out = int64_t{v}; break; }
    case F32: { float v; std::memcpy(&v, buf, 4); out = double{v}; break; }
    case U64: { uint64_t v; std::memcpy(&v, buf, 8); out = static_cast<int64_t>(v > INT64_MAX ? INT64_MAX : v); break; }
    case I64: { int64_t v; std::memcpy(&v, buf, 8); out = v; break; }
    case F64: { double v; std::memcpy(&v, buf, 8); out = v; break; }
  }
  return true;
}

// ggml tensor types: (elements per block, bytes per block), from ggml.c's type_traits.
bool ggml_block(uint32_t type, int& block, int& bytes, const char*& name) {
  struct T { uint32_t id; int block, bytes; const char* name; };
  static const T types[] = {
      {0, 1, 4, "F32"},       {1, 1, 2, "F16"},        {2, 32, 18, "Q4_0"},    {3, 32, 20, "Q4_1"},
      {6, 32, 22, "Q5_0"},    {7, 32, 24, "Q5_1"},     {8, 32, 34, "Q8_0"},    {9, 32, 36, "Q8_1"},
      {10, 256, 84, "Q2_K"},  {11, 256, 110, "Q3_K"},  {12, 256, 144, "Q4_K"}, {13, 256, 176, "Q5_K"},
      {14, 256, 210, "Q6_K"}, {15, 256, 292, "Q8_K"},  {16, 256, 66, "IQ2_XXS"}, {17, 256, 74, "IQ2_XS"},
      {18, 256, 98, "IQ3_XXS"}, {19, 256, 50, "IQ1_S"}, {20, 32, 18, "IQ4_NL"}, {21, 256, 110, "IQ3_S"},
      {22, 256, 82, "IQ2_S"}, {23, 256, 136, "IQ4_XS"}, {24, 1, 1, "I8"},       {25, 1, 2, "I16"},
      {26, 1, 4, "I32"},      {27, 1, 8, "I64"},       {28, 1, 8, "F64"},      {29, 256, 56, "IQ1_M"},
      {30, 1, 2, "BF16"},     {34, 256, 54, "TQ1_0"},  {35, 256, 66, "TQ2_0"}, {39, 32, 17, "MXFP4"},
  };
  for (const auto& t : types)
    if (t.id == type) {
      block = t.block, bytes = t.bytes, name = t.name;
      return true;
    }
  return false;
}

}  // namespace

Result<GgufHeader> parse_gguf_header(std::string_view prefix, uint64_t file_size, const std::string& origin) {
  Reader r(prefix);
  char magic[4];
  if (!r.raw(magic, 4) || std::memcmp(magic, "GGUF", 4) != 0) return make_error(origin, "not a GGUF file (bad magic)");
  GgufHeader h;
  uint64_t n_tensors = 0, n_kv = 0;
  if (!r.u32(h.version) || !r.u64(n_tensors) || !r.u64(n_kv)) return make_error(origin, "truncated GGUF header");
  if (h.version < 2 || h.version > 3) return make_error(origin, fmt::format("unsupported GGUF version {}", h.version));
  // Each metadata entry takes at least 12 bytes and each tensor info at least 28: counts beyond
  // what the bytes could hold are corrupt, and are rejected before anything is reserved.
  if (n_kv > r.left() / 12) return make_error(origin, fmt::format("GGUF metadata count {} is absurd for the header size", n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    std::string key;
    uint32_t type;
    if (!r.str(key) || !r.u32(type)) return make_error(origin, fmt::format("truncated GGUF metadata entry {}", i));
    const std::string where = origin + ": metadata '" + key + "'";
    GgufValue v;
    if (type == STRING) {
      std::string s;
      if (!r.str(s)) return make_error(where, "truncated string");
      v = std::move(s);
    } else if (type == ARRAY) {
      uint32_t et;
      uint64_t n;
      if (!r.u32(et) || !r.u64(n)) return make_error(where, "truncated array");
      if (et == STRING) {
        if (n > r.left() / 8) return make_error(where, "array length is absurd for the header size");
        for (uint64_t k = 0; k < n; ++k) {
          uint64_t len;
          if (!r.u64(len) || !r.skip(len)) return make_error(where, "truncated string array");
        }
      } else {
        const size_t es = scalar_size(et);
        if (es == 0) return make_error(where, fmt::format("unsupported array element type {}", et));
        if (n > r.left() / es || !r.skip(n * es)) return make_error(where, "truncated array");
      }
      v = n;
    } else {
      if (!read_scalar(r, type, v)) return make_error(where, fmt::format("bad or truncated value of type {}", type));
    }
    h.metadata[key] = std::move(v);
  }
  if (n_tensors > r.left() / 28) return make_error(origin, fmt::format("GGUF tensor count {} is absurd for the header size", n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) {
    TensorInfo t;
    uint32_t dims, type;
    if (!r.str(t.name) || !r.u32(dims)) return make_error(origin, fmt::format("truncated GGUF tensor info {}", i));
    if (dims == 0 || dims > 8) return make_error(origin + ": tensor '" + t.name + "'", fmt::format("{} dimensions", dims));
    long double elements = 1;
    for (uint32_t d = 0; d < dims; ++d) {
      uint64_t n;
      if (!r.u64(n)) return make_error(origin, "truncated GGUF tensor dims");
      if (n > (uint64_t{1} << 40)) return make_error(origin + ": tensor '" + t.name + "'", "dimension is absurd");
      t.shape.push_back(static_cast<int64_t>(n));
      elements *= n;
    }
    uint64_t offset;
    if (!r.u32(type) || !r.u64(offset)) return make_error(origin, "truncated GGUF tensor info");
    int block, bytes;
    const char* name;
    if (!ggml_block(type, block, bytes, name))
      return make_error(origin + ": tensor '" + t.name + "'", fmt::format("unknown ggml type {}", type));
    if (elements > 1e15L) return make_error(origin + ": tensor '" + t.name + "'", "element count is absurd");
    t.dtype = name;
    t.elements = static_cast<int64_t>(elements);
    t.bytes = static_cast<double>(elements) / block * bytes;
    if (offset > file_size) return make_error(origin + ": tensor '" + t.name + "'", "data offset lies beyond the end of the file");
    h.tensors.add(std::move(t));
  }
  return h;
}

Result<GgufHeader> read_gguf_file(const std::string& path) {
  auto in = InputFile::open(path, "GGUF file");
  if (!in) return in.error();
  const uint64_t size = in->size();
  const uint64_t cap = limits::kMaxGgufHeaderBytes;
  auto buf = in->read(0, cap);
  if (!buf) return buf.error();
  auto h = parse_gguf_header(*buf, size, path);
  if (!h && size > cap) return make_error(path, "GGUF header not found in the first 256 MiB");
  return h;
}

namespace {

// llama.cpp's architecture names (llama-arch.cpp) and the Hugging Face families they come from.
const char* family_of_gguf_arch(const std::string& arch, bool experts) {
  struct A {
    const char* gguf;
    const char* family;
  };
  static const A table[] = {
      {"llama", "llama"},     {"mistral", "mistral"}, {"qwen2", "qwen2"},       {"qwen2moe", "qwen2_moe"},
      {"qwen3", "qwen3"},     {"qwen3moe", "qwen3_moe"}, {"deepseek2", "deepseek_v3"}, {"gpt-oss", "gpt_oss"},
      {"llama4", "llama4_text"}, {"phimoe", "phimoe"}, {"olmoe", "olmoe"},       {"olmo2", "olmo2"},
      {"gemma", "gemma"},     {"gemma2", "gemma2"},   {"gemma3", "gemma3_text"}, {"phi3", "phi3"},
      {"gpt2", "gpt2"},       {"bert", "bert"},       {"mpt", "mpt"},           {"starcoder", "gpt_bigcode"},
  };
  if (arch == "llama" && experts) return "mixtral";  // llama.cpp stores Mixtral as llama with experts
  for (const A& a : table)
    if (arch == a.gguf) return a.family;
  return nullptr;
}

// `{arch}.` keys that describe structure; the reader interprets these and refuses the others that
// name experts, latent attention, state-space or recurrent layers.
bool gguf_key_understood(const std::string& suffix) {
  static const std::set<std::string> known = {
      "expert_count", "expert_used_count", "expert_shared_count", "expert_feed_forward_length",
      "expert_shared_feed_forward_length", "leading_dense_block_count", "expert_weights_scale",
      "expert_weights_norm", "expert_gating_func", "expert_group_count", "expert_group_used_count", "interleave_moe_layer_step",
      "attention.q_lora_rank", "attention.kv_lora_rank", "attention.key_length_mla",
      "attention.value_length_mla", "nextn_predict_layers"};
  if (known.count(suffix)) return true;
  static const char* markers[] = {"expert", "moe", "lora_rank", "ssm", "wkv", "nextn", "shortconv",
                                  "attention_interval", "time_mix", "token_shift"};
  for (const char* mk : markers)
    if (suffix.find(mk) != std::string::npos) return false;
  return true;
}

}  // namespace

Result<ModelSpec> model_from_gguf(const GgufHeader& h, const std::string& origin, const ReadOptions& options) {
  auto get_str = [&](const std::string& k) -> std::string {
    auto it = h.metadata.find(k);
    if (it == h.metadata.end()) return "";
    if (auto s = std::get_if<std::string>(&it->second)) return *s;
    return "";
  };
  auto get_int = [&](const std::string& k) -> int64_t {
    auto it = h.metadata.find(k);
    if (it == h.metadata.end()) return 0;
    if (auto v = std::get_if<int64_t>(&it->second)) return *v;
    if (auto v = std::get_if<uint64_t>(&it->second)) return static_cast<int64_t>(*v);  // array length
    return 0;
  };
  const std::string arch = get_str("general.architecture");
  if (arch.empty()) return make_error(origin + ": general.architecture", "is missing");
  ModelSpec m;
  m.id = origin;
  m.source = origin;
  m.name = get_str("general.name").empty() ? arch : get_str("general.name");
  const std::string p = arch + ".";
  const char* family = family_of_gguf_arch(arch, get_int(p + "expert_count") > 0);
  std::vector<std::string> odd;
  for (const auto& [key, value] : h.metadata)
    if (key.rfind(p, 0) == 0 && !gguf_key_understood(key.substr(p.size()))) odd.push_back(key);
  if (!family && !options.assume_dense)
    return make_error(origin + ": general.architecture",
                      "unknown architecture '" + arch + "'; --assume-dense reads it as a dense Llama-style decoder");
  if (!odd.empty() && !options.assume_dense) {
    std::string keys;
    for (const auto& k : odd) keys += (keys.empty() ? "" : ", ") + k;
    return make_error(origin + ": " + keys, "not understood for architecture '" + arch +
                                                "' (recurrent, state-space or expert keys); --assume-dense ignores them");
  }
  const bool dense_override = !family || !odd.empty();
  m.family = family ? family : arch;
  m.traits = family ? *family_traits(family) : *family_traits("llama");
  if (dense_override) {
    m.assumed_dense = true;
    m.notes.push_back("--assume-dense: GGUF architecture '" + arch + "' read as a dense Llama-style decoder");
  }
  m.layers = get_int(p + "block_count");
  m.hidden = get_int(p + "embedding_length");
  m.intermediate = get_int(p + "feed_forward_length");
  m.heads = get_int(p + "attention.head_count");
  m.kv_heads = get_int(p + "attention.head_count_kv");
  m.head_dim = get_int(p + "attention.key_length");
  m.max_position = get_int(p + "context_length");
  m.sliding_window = get_int(p + "attention.sliding_window");
  if (m.sliding_window > 0) m.sliding_layers = arch == "gemma2" || arch == "gpt-oss" ? m.layers / 2 : m.layers;
  if (arch == "gemma3" && m.sliding_window > 0) m.sliding_layers = m.layers - m.layers / 6;  // Gemma 3: 5 local : 1 global
  if (!dense_override && get_int(p + "expert_count") > 0) {
    m.experts = get_int(p + "expert_count");
    m.experts_per_token = get_int(p + "expert_used_count");
    m.expert_intermediate = get_int(p + "expert_feed_forward_length");
    m.shared_experts = get_int(p + "expert_shared_count");
    if (const int64_t sw = get_int(p + "expert_shared_feed_forward_length"); sw > 0) {
      m.shared_experts = std::max<int64_t>(1, m.shared_experts), m.shared_intermediate = sw;
      m.shared_expert_gate = arch == "qwen2moe";
    }
    const int64_t lead = get_int(p + "leading_dense_block_count");
    const int64_t step = std::max<int64_t>(1, get_int(p + "interleave_moe_layer_step"));
    m.moe_layers = 0;
    for (int64_t i = lead; i < m.layers; ++i) m.moe_layers += (i + 1) % step == 0;
    if (arch == "llama4") m.shared_experts = 1;
    m.expert_bias = arch == "gpt-oss";
  }
  if (!dense_override && get_int(p + "attention.kv_lora_rank") > 0) {
    m.q_lora_rank = get_int(p + "attention.q_lora_rank");
    m.kv_lora_rank = get_int(p + "attention.kv_lora_rank");
    m.qk_rope_dim = get_int(p + "rope.dimension_count");
    // Newer conversions store the absorbed (latent) key length and keep the per-head one as *_mla.
    const int64_t key = get_int(p + "attention.key_length_mla") > 0 ? get_int(p + "attention.key_length_mla") : m.head_dim;
    const int64_t value = get_int(p + "attention.value_length_mla") > 0 ? get_int(p + "attention.value_length_mla")
                                                                        : get_int(p + "attention.value_length");
    m.qk_nope_dim = key - m.qk_rope_dim;
    m.v_head_dim = value;
    m.head_dim = key;
    m.kv_heads = m.heads;
    m.mtp_layers = get_int(p + "nextn_predict_layers");
  }
  m.attention_sinks = arch == "gpt-oss";
  m.vocab = get_int(p + "vocab_size");
  bool has_output = false;
  for (const auto& t : h.tensors.tensors) {
    if (t.name == "token_embd.weight" && t.shape.size() == 2 && m.vocab == 0) m.vocab = t.shape[1];
    has_output = has_output || t.name == "output.weight";
  }
  if (m.vocab == 0) m.vocab = get_int("tokenizer.ggml.tokens");
  m.tied_embeddings = !has_output;
  m.tensor_parameters = h.tensors.parameters;
  m.tensor_bytes = h.tensors.bytes;
  m.tensor_dtype = h.tensors.dominant_dtype;
  const char* missing = m.layers == 0 ? ".block_count" : m.hidden == 0 ? ".embedding_length"
                       : m.heads == 0 ? ".attention.head_count"
                       : m.intermediate == 0 && m.expert_intermediate == 0 ? ".feed_forward_length"
                       : m.vocab == 0 ? ".vocab_size" : nullptr;
  if (missing) return make_error(origin + ": " + arch + missing, "is missing");
  if (m.intermediate == 0) m.intermediate = m.expert_intermediate;
  if (auto s = m.validate()) return make_error(origin + ": " + s->field, s->message);
  return m;
}

}  // namespace gpuplan
