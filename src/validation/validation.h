// The published-measurement tables (data/validation.toml) run through the performance model:
// each row's prediction, its error, and the mean absolute percentage error per section.
// `gpuplan validate` prints this; the test suite holds it to its targets.
#pragma once

#include <string>
#include <vector>

#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "util/status.h"

namespace gpuplan {

struct ValidationRow {
  std::string section;  // training, inference, operation, cross_gpu, moe_training, moe_serving, serving
  std::string what, metric, source, assumed;
  std::string publication;  // rows from one publication share it (leave-one-publication-out)
  std::string engine;       // inference rows: the serving engine that ran it
  double published = 0, predicted = 0;
  double uncalibrated = 0;  // cross_gpu rows: the target predicted without the source measurement
  double error() const { return (predicted - published) / published; }
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  // Serving rows kept in the table with the reason the model cannot express them, not scored.
  int64_t unexpressible = 0;
  // Mean absolute percentage error of one section (0..1).
  double mape(const std::string& section) const;
  // The same over the section's rows run on one engine (0 when it has none).
  double mape(const std::string& section, const std::string& engine) const;
  double worst(const std::string& section) const;
};

Result<ValidationReport> run_validation(std::string_view toml_text, const std::string& origin,
                                        const Catalog& catalog, const EfficiencyTable& eff);
// The built-in table.
Result<ValidationReport> run_builtin_validation(const Catalog& catalog, const EfficiencyTable& eff);

}  // namespace gpuplan
