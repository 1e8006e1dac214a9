// libFuzzer target: any bytes as a GGUF file must give a header (and a model or an error), or an error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/gguf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto h = gpuplan::parse_gguf_header(std::string_view(reinterpret_cast<const char*>(data), size), size, "fuzz");
  if (h.ok()) {
    auto m = gpuplan::model_from_gguf(*h, "fuzz");
    if (m.ok()) (void)m->total_parameters();
  }
  return 0;
}
