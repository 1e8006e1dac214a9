// Fitting the few parameters of data/fitted.toml on the validation rows, and scoring the model
// leave-one-publication-out: for each publication, fit on all the others and predict its rows, so
// the printed error is that of runs the fit never saw. The fit is closed-form and deterministic.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "stack/fitted.h"
#include "validation/validation.h"

namespace gpuplan {

// Generic leave-one-publication-out: `fit` gets the indices of the rows to fit on and returns a
// predictor of any row by index; each row is predicted by the fit that left its publication out.
using RowPredictor = std::function<double(size_t)>;
std::vector<double> leave_one_publication_out(const std::vector<std::string>& publication_of_row,
                                              const std::function<RowPredictor(const std::vector<size_t>&)>& fit);

// The 10th and 90th percentiles of published / predicted (linear interpolation).
FitBand band_of(std::vector<double> ratios);

// Mean absolute percentage error of one kind scored one way.
struct Score {
  double mape = 0;
  int rows = 0, publications = 0;
};

struct CrossValidation {
  FittedParameters fitted;  // fit on every row, with bands from the cross-validated residuals
  std::map<std::string, Score> cross_validated, in_sample;  // by kind
  // By kind, then stack, for stacks with at least kMinStackRows rows.
  std::map<std::string, std::map<std::string, Score>> cross_validated_by_stack, in_sample_by_stack;
  // Serving rows by how the run loaded the engine (ValidationRow::load), held out.
  std::map<std::string, Score> serving_by_load;
};

// Stacks get their own compute scale, and their own band, from this many rows and two publications.
inline constexpr int kMinStackRows = 10;

// Fits on report.rows of kinds train_throughput and train_memory (their `fit` inputs, taken under
// an identity fit); sets each such row's `predicted` (fit on all rows) and `cross_validated`.
// `allocator_prior` is efficiency.toml's sourced allocator_fraction, the fit's starting point.
CrossValidation cross_validate(ValidationReport& report, double allocator_prior);

// Applies `fitted` to the rows of the fitted kinds and to the MoE training rows (scored apart,
// never fitted on). `allocator_prior` serves where the fit leaves the reserve unset.
void apply_fit(ValidationReport& report, const FittedParameters& fitted, double allocator_prior);

// The table run, fitted on all its rows (rows' `predicted`: in sample) and cross-validated
// (`cross_validated`). What `gpuplan validate` prints and `gpuplan fit` writes.
struct ValidatedTable {
  ValidationReport report;
  CrossValidation cv;
};
Result<ValidatedTable> run_cross_validation(std::string_view toml_text, const std::string& origin, const Catalog& catalog,
                                            const EfficiencyTable& eff);
Result<ValidatedTable> run_builtin_cross_validation(const Catalog& catalog, const EfficiencyTable& eff);

}  // namespace gpuplan
