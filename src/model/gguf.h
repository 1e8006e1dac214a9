// Reading the header of a GGUF file (llama.cpp's format): architecture metadata and tensor infos,
// hence the model's shape, exact parameter count and quantised weight bytes. Every length and
// count is checked against the bytes present before use.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>

#include "model/model.h"
#include "model/safetensors.h"
#include "util/status.h"

namespace gpuplan {

using GgufValue = std::variant<int64_t, double, bool, std::string, uint64_t /*array length*/>;

struct GgufHeader {
  uint32_t version = 0;
  std::map<std::string, GgufValue> metadata;  // arrays keep only their length
  TensorInventory tensors;
};

// The header must lie within `prefix` (the first bytes of a file of `file_size` bytes).
Result<GgufHeader> parse_gguf_header(std::string_view prefix, uint64_t file_size, const std::string& origin);
Result<GgufHeader> read_gguf_file(const std::string& path);

// Builds the architecture from `{arch}.*` keys (including llama.cpp's expert_count,
// expert_used_count, expert_shared_count, expert_feed_forward_length, leading_dense_block_count,
// attention.kv_lora_rank, ...) and the tensor shapes. An unknown architecture, or recurrent or
// state-space keys, is refused unless `options.assume_dense`.
Result<ModelSpec> model_from_gguf(const GgufHeader& h, const std::string& origin, const ReadOptions& options = {});

}  // namespace gpuplan
