// Tests name GPUs and model presets that the built-in catalogs hold: these look them up by id.
#pragma once

#include "hardware/catalog.h"
#include "model/presets.h"

namespace gpuplan::testing_support {

inline Gpu gpu(const char* id) { return *Catalog::builtin().find(id); }
inline ModelSpec preset(const char* id) { return *Presets::builtin().find(id); }

}  // namespace gpuplan::testing_support
