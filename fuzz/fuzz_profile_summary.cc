// libFuzzer target: any JSON as a `gpuplan profile` summary fed to `predict` must fit or give an error.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "calibrate/profile_fit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = nlohmann::json::parse(data, data + size, nullptr, false);
  if (j.is_discarded()) return 0;
  (void)gpuplan::fit_profile(j, {}, gpuplan::Catalog::builtin(), gpuplan::EfficiencyTable::builtin());
  return 0;
}
