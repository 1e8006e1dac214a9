// JSON forms of gpuplan's results, for scripts. Field names here are an interface: other tools
// read them, so they are added to, never renamed. Every document carries schema_version.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "hardware/gpu.h"
#include "memory/fit.h"
#include "memory/memory_model.h"
#include "model/model.h"
#include "workload/workload.h"

namespace gpuplan {

inline constexpr int kSchemaVersion = 1;

nlohmann::json to_json(const Gpu& g);
nlohmann::json to_json(const ModelSpec& m);
nlohmann::json to_json(const Workload& w);
// The `gpuplan memory --json` document.
nlohmann::json memory_json(const ModelSpec& m, const Workload& w, const MemoryEstimate& e,
                           const Gpu* gpu, const std::optional<FitReport>& fit,
                           const std::optional<Workload>& split);

}  // namespace gpuplan
