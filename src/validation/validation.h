// The published-measurement tables (data/validation.toml) run through the performance model:
// each row's prediction, its error, and the mean absolute percentage error per section.
// `gpuplan validate` prints this; the test suite holds it to its targets.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "perf/training.h"
#include "util/status.h"

namespace gpuplan {

// What a row's published figure measures in the model's own quantity, so that the fitted
// multipliers (data/fitted.toml) can be applied and refitted without running the estimator again.
struct FitInputs {
  // train_throughput: the unfitted step time split into the terms the fit scales.
  FitTerms time;
  // train_memory: bytes that no fitted parameter touches, saved activations, workspaces, and
  // whether the measure includes the caching allocator's reserve (reserved, nvidia-smi).
  double fixed_bytes = 0, activation_bytes = 0, workspace_bytes = 0;
  bool counts_reserve = false;
  // The row's metric at the unfitted estimate, and whether it falls as the quantity (seconds or
  // bytes) rises (throughput, MFU) or grows with it (step time, GPU-hours, memory).
  double raw_metric = 0, raw_quantity = 0;
  bool inverse = false;
  // The metric for a fitted quantity.
  double metric_at(double quantity) const {
    return inverse ? raw_metric * raw_quantity / quantity : raw_metric * quantity / raw_quantity;
  }
};

// What the serving fit sets on an engine: its time scale and, where its quantised mat-vec is
// latency-bound, the bytes/s per SM it streams at (0: no bound).
struct ServingKnobs {
  double time_scale = 1;
  double matvec_sm_Bps = 0;
  double prefill_matmul_scale = 1;  // where the engine leaves its prompt GEMMs to the fit
  double per_query_head_kv_share = 1;  // where the row ran a per-query-head decode kernel
  double frontend_request_s = 0;       // where the row's engine streams through a frontend under load
};

struct ValidationRow {
  std::string section;  // training, memory, inference, operation, cross_gpu, moe_training, moe_serving, serving
  // The kind the fit and leave-one-publication-out scoring group it under: train_throughput,
  // train_memory, serving (its times and rates); empty for rows scored only as they stand.
  std::string kind;
  std::string what, metric, source, assumed, stack;
  std::string publication;  // rows from one publication share it (leave-one-publication-out)
  std::string engine;       // inference rows: the serving engine that ran it
  // Non-empty: gpuplan refuses this row's setup, or the published figure beats the hardware's
  // peak as the row is written. It is kept unscored with this reason.
  std::string refused;
  // The refusal says the run was not the one the row describes (its figure beats the peak): the
  // same run's other rows (its memory beside its throughput) are not that run's either.
  bool not_as_described = false;
  std::string task_class;   // train_memory rows: memory_band_class() of the task
  double published = 0, predicted = 0;
  double uncalibrated = 0;  // cross_gpu rows: the target predicted without the source measurement
  double cross_validated = 0;  // fitted kinds: predicted by a fit that never saw this publication
  FitInputs fit;
  // Serving rows of kind "serving": the prediction with the engine's fitted parameters at `k` (NaN
  // where the model cannot run it), whether the figure is a rate (falls as times grow), and whether
  // the engine's quantised mat-vec rate per SM can bind on it and its prompt GEMMs' multiplier
  // is fitted.
  std::function<double(const ServingKnobs& k)> serving_at;
  bool serving_rate = false;
  bool serving_matvec_bound = false;
  bool serving_prefill_fitted = false;
  bool serving_per_query_head = false;  // a per-query-head decode kernel on a grouped-query model
  bool serving_frontend = false;        // simulated under load through the engine's serving frontend
  // Serving rows: how the run loaded the engine, "burst" (every request at once), "request_rate"
  // (arrivals at a rate), "concurrency" (a closed loop of clients) or "batch" (one static batch or
  // request), so the error can be told apart by load.
  std::string load;
  double error() const { return (predicted - published) / published; }
  double cv_error() const { return (cross_validated - published) / published; }
  // The published figure in the model's quantity (seconds or bytes).
  double published_quantity() const {
    return fit.inverse ? fit.raw_quantity * fit.raw_metric / published : fit.raw_quantity * published / fit.raw_metric;
  }
};

// A published run the model cannot express yet, kept with the reason instead of dropped.
struct UnscoredRow {
  std::string section, what, publication, source, reason;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;
  std::vector<UnscoredRow> unscored;
  // Of those, the serving rows (counted apart for the serving report): in the table with the reason the model cannot express them, not scored.
  int64_t unexpressible = 0;
  // Mean absolute percentage error of one section (0..1).
  double mape(const std::string& section) const;
  // The same over the section's rows run on one engine (0 when it has none).
  double mape(const std::string& section, const std::string& engine) const;
  double worst(const std::string& section) const;
};

// Runs every row under `eff` as given; `predicted` is the estimate under that table's fit.
// Fitting and cross-validation are in validation/cross_validation.h.
Result<ValidationReport> run_validation(std::string_view toml_text, const std::string& origin,
                                        const Catalog& catalog, const EfficiencyTable& eff);
// The built-in tables (validation.toml and validation_serving.toml), rows as they stand under
// `eff`; cross_validation.h fits and scores the training kinds on them.
Result<ValidationReport> run_builtin_validation(const Catalog& catalog, const EfficiencyTable& eff);

}  // namespace gpuplan
