// Turning a --model argument into a ModelSpec: a preset id, a config.json, a model directory
// (config.json plus safetensors headers for exact counts), a .safetensors file or a .gguf file.
#pragma once

#include <string>

#include "model/model.h"
#include "util/status.h"

namespace gpuplan {

Result<ModelSpec> resolve_model(const std::string& arg, const ReadOptions& options = {});

}  // namespace gpuplan
