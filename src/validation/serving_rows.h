// Validation rows measured on serving engines ([[serving]] in data/validation.toml): single
// requests and static batches go through the inference estimate under the row's engine; rows at a
// request rate or a client concurrency through the serving simulator, read at the published
// percentile; memory rows through the engine's KV-cache budget. Rows the model cannot express are
// kept in the table with their reason and not scored.
#pragma once

#include <optional>
#include <string>

#include <toml++/toml.h>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "util/status.h"
#include "validation/validation.h"

namespace gpuplan {

// Predicts one row. `row` arrives with its section, what, source, publication and published
// figure filled in.
Result<ValidationRow> serving_row(const toml::table& t, const std::string& where, const ModelSpec& m, const Gpu& gpu,
                                  const Efficiency& eff, ValidationRow row);

}  // namespace gpuplan
