// Reading the header of a .safetensors file: tensor names, dtypes and shapes, hence exact parameter
// counts and weight bytes, without loading any weights. Header sizes are checked against the file
// before anything is allocated.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace gpuplan {

struct TensorInfo {
  std::string name;
  std::string dtype;  // "BF16", "F32", "Q4_K", ...
  std::vector<int64_t> shape;
  int64_t elements = 0;
  double bytes = 0;
};

struct TensorInventory {
  std::vector<TensorInfo> tensors;
  int64_t parameters = 0;
  double bytes = 0;
  std::string dominant_dtype;  // by bytes
  std::map<std::string, double> bytes_by_dtype;

  void add(TensorInfo t);  // constant time in the number of tensors already held
};

// The spec caps the JSON header at 100 MB.
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// `prefix` holds the first bytes of the file (at least 8 + the header length, or the whole file if
// shorter); `file_size` is the whole file's size.
Result<TensorInventory> parse_safetensors_header(std::string_view prefix, uint64_t file_size,
                                                 const std::string& origin);
Result<TensorInventory> read_safetensors_file(const std::string& path);

}  // namespace gpuplan
