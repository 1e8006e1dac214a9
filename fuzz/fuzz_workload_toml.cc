// libFuzzer target: any bytes as a workload file, catalog, price, engine, stack, fabric or fitted-parameter file must
// parse or give an error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "advise/workload_file.h"
#include "engine/engine.h"
#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "hardware/fabric.h"
#include "hardware/platform.h"
#include "hardware/prices.h"
#include "stack/fitted.h"
#include "stack/stack.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)gpuplan::parse_workload_file(text, "fuzz.toml", 20790, gpuplan::OwnershipCosts{});
  (void)gpuplan::Catalog::from_toml(text, "fuzz.toml");
  (void)gpuplan::PriceBook::from_toml(text, "fuzz.toml");
  (void)gpuplan::Platform::from_toml(text, "fuzz.toml");
  (void)gpuplan::EfficiencyTable::from_toml(text, "fuzz.toml");
  (void)gpuplan::EngineCatalog::from_toml(text, "fuzz.toml");
  (void)gpuplan::StackCatalog::from_toml(text, "fuzz.toml");
  (void)gpuplan::FabricCatalog::from_toml(text, "fuzz.toml");
  (void)gpuplan::FittedParameters::from_toml(text, "fuzz.toml");
  return 0;
}
