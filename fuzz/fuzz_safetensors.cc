// libFuzzer target: any bytes as a .safetensors file must give an inventory or an error, and never
// allocate what a corrupt header claims.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gpuplan::parse_safetensors_header(std::string_view(reinterpret_cast<const char*>(data), size), size, "fuzz");
  return 0;
}
