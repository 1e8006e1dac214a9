#include "model/safetensors.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>

#include "util/text_file.h"

namespace gpuplan {

using nlohmann::json;

void TensorInventory::add(TensorInfo t) {
  parameters += t.elements;
  bytes += t.bytes;
  // Kept up to date per tensor: recounting every tensor on each add made reading a sharded
  // model's headers quadratic in its tensor count.
  const double held = bytes_by_dtype[t.dtype] += t.bytes;
  if (dominant_dtype.empty() || held > bytes_by_dtype[dominant_dtype] ||
      (held == bytes_by_dtype[dominant_dtype] && t.dtype < dominant_dtype))
    dominant_dtype = t.dtype;
  tensors.push_back(std::move(t));
}

namespace {

int dtype_bytes(const std::string& d) {
  static const std::map<std::string, int> sizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"I16", 2},
      {"U16", 2},  {"F16", 2}, {"BF16", 2}, {"I32", 4},    {"U32", 4},     {"F32", 4},
      {"I64", 8},  {"U64", 8}, {"F64", 8}};
  auto it = sizes.find(d);
  return it == sizes.end() ? 0 : it->second;
}

}  // namespace

Result<TensorInventory> parse_safetensors_header(std::string_view prefix, uint64_t file_size,
                                                 const std::string& origin) {
  if (file_size < 8 || prefix.size() < 8)
    return make_error(origin, "truncated safetensors file: shorter than its 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(prefix[i]);
  if (n > kMaxSafetensorsHeader)
    return make_error(origin, fmt::format("safetensors header length {} is absurd (the format caps it at 100 MB)", n));
  if (n > file_size - 8)
    return make_error(origin, fmt::format("truncated safetensors file: header claims {} bytes but only {} follow", n, file_size - 8));
  if (prefix.size() < 8 + n)
    return make_error(origin, "truncated safetensors header");
  json j = json::parse(prefix.substr(8, n), nullptr, false);
  if (j.is_discarded()) return make_error(origin, "safetensors header is not valid JSON");
  if (!j.is_object()) return make_error(origin, "safetensors header must be a JSON object");
  const uint64_t data_size = file_size - 8 - n;
  TensorInventory inv;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() == "__metadata__") continue;
    const std::string where = origin + ": tensor '" + it.key() + "'";
    const json& t = it.value();
    if (!t.is_object()) return make_error(where, "must be an object");
    auto dt = t.find("dtype");
    auto sh = t.find("shape");
    auto off = t.find("data_offsets");
    if (dt == t.end() || !dt->is_string()) return make_error(where, "dtype missing or not a string");
    if (sh == t.end() || !sh->is_array()) return make_error(where, "shape missing or not an array");
    if (off == t.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
        !(*off)[1].is_number_unsigned())
      return make_error(where, "data_offsets must be two unsigned integers");
    TensorInfo info;
    info.name = it.key();
    info.dtype = dt->get<std::string>();
    const int eb = dtype_bytes(info.dtype);
    if (eb == 0) return make_error(where, "unknown dtype '" + info.dtype + "'");
    if (sh->size() > 8) return make_error(where, "more than 8 dimensions");
    long double elements = 1;
    for (const auto& d : *sh) {
      if (!d.is_number_unsigned()) return make_error(where, "shape entries must be non-negative integers");
      info.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
      elements *= static_cast<long double>(d.get<uint64_t>());
    }
    const uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (begin > end || end > data_size)
      return make_error(where, fmt::format("data_offsets [{}, {}] fall outside the {} data bytes", begin, end, data_size));
    if (elements * eb != static_cast<long double>(end - begin))
      return make_error(where, "shape and dtype do not match the data_offsets span");
    info.elements = static_cast<int64_t>(elements);
    info.bytes = static_cast<double>(end - begin);
    inv.add(std::move(info));
  }
  if (inv.tensors.empty()) return make_error(origin, "safetensors header lists no tensors");
  return inv;
}

Result<TensorInventory> read_safetensors_file(const std::string& path) {
  auto in = InputFile::open(path, "safetensors file");
  if (!in) return in.error();
  const uint64_t size = in->size();
  auto head = in->read(0, 8);
  if (!head) return head.error();
  if (size >= 8 && head->size() == 8) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>((*head)[static_cast<size_t>(i)]);
    // Only read what the header claims once it is known to fit in the file and the format's cap.
    if (n <= kMaxSafetensorsHeader && n <= size - 8) {
      auto rest = in->read(8, n);
      if (!rest) return rest.error();
      if (rest->size() != n) return make_error(path, "could not read the safetensors header");
      *head += *rest;
    }
  }
  return parse_safetensors_header(*head, size, path);
}

}  // namespace gpuplan
