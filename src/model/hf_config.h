// Reading a Hugging Face config.json into a ModelSpec: every field the estimators need, with the
// family's defaults where the file is silent, and a one-line error naming the bad key otherwise.
#pragma once

#include <string>
#include <string_view>

#include "model/model.h"
#include "util/status.h"

namespace gpuplan {

// `origin` names the file in errors and becomes the spec's id.
Result<ModelSpec> parse_hf_config(std::string_view json_text, const std::string& origin);

}  // namespace gpuplan
