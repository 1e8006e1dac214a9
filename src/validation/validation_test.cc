// The performance model against published runs (data/validation.toml, each row citing its
// source). Prints the table; fails when a section misses its accuracy target.
#include "validation/validation.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace gpuplan {

namespace {
const ValidationReport& report() {
  static const ValidationReport r = [] {
    auto rep = run_builtin_validation(Catalog::builtin(), EfficiencyTable::builtin());
    if (!rep) {
      ADD_FAILURE() << rep.error().to_string();
      return ValidationReport{};
    }
    return *rep;
  }();
  return r;
}

void print(const std::string& section) {
  std::string out = fmt::format("\n{:<58} {:>16} {:>12} {:>12} {:>8}\n", section, "metric", "published", "predicted", "error");
  for (const auto& r : report().rows)
    if (r.section == section)
      out += fmt::format("{:<58} {:>16} {:>12.4g} {:>12.4g} {:>+7.1f}%\n", r.what, r.metric, r.published, r.predicted, r.error() * 100);
  out += fmt::format("MAPE {:.1f}%, worst {:.1f}%\n", report().mape(section) * 100, report().worst(section) * 100);
  std::printf("%s", out.c_str());
}
}  // namespace

TEST(PerformanceValidation, TrainingWithinFifteenPercentMapeEveryRowWithinThirty) {
  print("training");
  ASSERT_GE(report().rows.size(), 20u);
  EXPECT_LE(report().mape("training"), 0.15);
  for (const auto& r : report().rows)
    if (r.section == "training") {
      EXPECT_LT(std::fabs(r.error()), 0.30) << r.what << " (" << r.source << ")";
    }
}

TEST(PerformanceValidation, InferenceWithinTwentyFivePercentMape) {
  print("inference");
  EXPECT_LE(report().mape("inference"), 0.25);
}

TEST(PerformanceValidation, CrossGpuPredictionFromOneMeasurementWithinFifteenPercentMape) {
  print("cross_gpu");
  double uncal = 0;
  int n = 0;
  for (const auto& r : report().rows)
    if (r.section == "cross_gpu") uncal += std::fabs(r.uncalibrated / r.published - 1), ++n;
  ASSERT_GE(n, 10);
  std::printf("the same pairs predicted without the source measurement: MAPE %.1f%%\n", 100 * uncal / n);
  EXPECT_LE(report().mape("cross_gpu"), 0.15);
}

TEST(PerformanceValidation, SingleGemmsWithinTwentyPercent) {
  print("operation");
  for (const auto& r : report().rows)
    if (r.section == "operation") {
      EXPECT_LT(std::fabs(r.error()), 0.20) << r.what;
    }
}

// Mixture-of-experts runs (NeMo AutoModel, Megatron-Bridge, vLLM CI, llama.cpp) are scored in
// their own sections; no efficiency is fitted on them, so their error is out of sample. The
// targets guard against regressions; the MoE errors are far from the dense sections' (gpt-oss
// is predicted 1.6-2x too fast in every training publication: see the README).
TEST(PerformanceValidation, MoeRowsFromSeveralPublicationsAreScoredApart) {
  print("moe_training");
  print("moe_serving");
  std::set<std::string> publications;
  int rows = 0;
  for (const auto& r : report().rows)
    if (r.section == "moe_training" || r.section == "moe_serving") {
      EXPECT_FALSE(r.publication.empty()) << r.what;
      publications.insert(r.publication);
      ++rows;
    }
  EXPECT_GE(rows, 10);
  EXPECT_GE(publications.size(), 4u);
  EXPECT_LE(report().mape("moe_training"), 0.45);
  EXPECT_LE(report().mape("moe_serving"), 0.75);
}

}  // namespace gpuplan

namespace gpuplan {

// Serving-engine rows (data/validation_serving.toml): breadth the issue asks for, and the error per
// engine held at today's level so a regression shows. The target (leave-one-publication-out
// MAPE <= 15%) is not met yet; no engine figure is fitted to these rows, so the plain error printed
// here is already out of sample.
TEST(PerformanceValidation, ServingRowsSpanEnginesGpusAndLoadsAndHoldTheirErrorPerEngine) {
  print("serving");
  std::set<std::string> engines, publications;
  int64_t rows = 0, at_load = 0;
  for (const auto& r : report().rows)
    if (r.section == "serving") {
      ++rows;
      engines.insert(r.engine);
      publications.insert(r.publication);
      at_load += r.metric.find(' ') != std::string::npos;  // read at a percentile of a simulated load
    }
  EXPECT_GE(rows, 80);
  EXPECT_GE(engines.size(), 4u);
  EXPECT_GE(publications.size(), 10u);
  EXPECT_GE(at_load, 20);
  EXPECT_GT(report().unexpressible, 0);
  for (const char* e : {"vllm", "sglang", "tensorrt-llm", "llama.cpp", "transformers"})
    std::printf("%-13s MAPE %.1f%%\n", e, report().mape("serving", e) * 100);
  EXPECT_LE(report().mape("serving", "llama.cpp"), 0.60);
  EXPECT_LE(report().mape("serving", "tensorrt-llm"), 0.65);
  EXPECT_LE(report().mape("serving", "vllm"), 0.95);
}

}  // namespace gpuplan
