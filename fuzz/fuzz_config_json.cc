// libFuzzer target: any bytes as a Hugging Face config.json must give a spec or an error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = gpuplan::parse_hf_config(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (r.ok()) (void)r->total_parameters();
  return 0;
}
