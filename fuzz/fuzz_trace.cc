// libFuzzer target: any bytes as a request trace (CSV or JSON Lines) must parse or give an error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "serving/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpuplan::parse_trace(text, "fuzz-trace");
  return 0;
}
