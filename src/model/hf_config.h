// Reading a Hugging Face config.json into a ModelSpec: every field the estimators need, with the
// family's defaults where the file is silent, and a one-line error naming the bad key otherwise.
// Mixture-of-experts (Mixtral, Qwen2/3-MoE, DeepSeek, gpt-oss, Llama 4, Phi-3.5-MoE, OLMoE),
// latent attention and window schedules are read per family; an unknown model_type, or a key that
// changes the structure in a way the family's reader does not interpret, is refused (exit 2)
// unless ReadOptions::assume_dense says to read a dense decoder anyway.
#pragma once

#include <string>
#include <string_view>

#include "model/model.h"
#include "util/status.h"

namespace gpuplan {

// `origin` names the file in errors and becomes the spec's id.
Result<ModelSpec> parse_hf_config(std::string_view json_text, const std::string& origin,
                                  const ReadOptions& options = {});

}  // namespace gpuplan
