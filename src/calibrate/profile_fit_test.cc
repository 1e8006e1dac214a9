#include "calibrate/profile_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "calibrate/cross_gpu.h"

namespace gpuplan {

namespace {
nlohmann::json fixture(const char* name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/profiles/" + name);
  return nlohmann::json::parse(in);
}
}  // namespace

TEST(ProfileFit, ReproducesTheMeasuredStepOnTheSourceGpu) {
  auto fit = fit_profile(fixture("mpt7b-a100-8gpu.json"), {}, Catalog::builtin(), EfficiencyTable::builtin().without_fit());
  ASSERT_TRUE(fit.ok()) << fit.error().to_string();
  EXPECT_EQ(fit->source.id, "a100-80gb-sxm");  // recognised from "NVIDIA A100-SXM4-80GB"
  const Efficiency e = scaled(EfficiencyTable::builtin().without_fit().for_gpu(fit->source, fit->stack), fit->scale);
  const double step = estimate_training(fit->model, fit->workload, fit->source, e, fit->stack, default_cluster(fit->source), fit->run).step_time_s;
  EXPECT_NEAR(step / fit->measured_step_s, 1.0, 1e-3);
}

// llm-foundry's H100 80GB table has the same run at 8,611 tokens/s/GPU.
TEST(ProfileFit, PredictsTheH100RunWithinFifteenPercent) {
  auto fit = fit_profile(fixture("mpt7b-a100-8gpu.json"), {}, Catalog::builtin(), EfficiencyTable::builtin().without_fit());
  ASSERT_TRUE(fit.ok());
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  const Efficiency src = EfficiencyTable::builtin().without_fit().for_gpu(fit->source, fit->stack);
  const Efficiency tgt = EfficiencyTable::builtin().without_fit().for_gpu(h100, fit->stack);
  const Cluster sc = default_cluster(fit->source), tc = default_cluster(h100);
  const auto p = predict_across(
      src, [&](const Efficiency& e) { return estimate_training(fit->model, fit->workload, fit->source, e, fit->stack, sc, fit->run).step_time_s; },
      fit->measured_step_s, tgt,
      [&](const Efficiency& e) { return estimate_training(fit->model, fit->workload, h100, e, fit->stack, tc, fit->run).step_time_s; }, fit->spread);
  const double tokens_per_gpu = 16.0 * 2 * 8 * 4096 / p.seconds / 8;
  EXPECT_NEAR(tokens_per_gpu / 8611, 1.0, 0.15);
  EXPECT_LE(p.low_s, p.seconds);
  EXPECT_GE(p.high_s, p.seconds);
}

TEST(ProfileFit, CalibratedTableScalesEveryGpu) {
  EfficiencyScale s;
  s.compute = 0.5;
  s.memory = 0.8;
  const EfficiencyTable t = calibrated_table(EfficiencyTable::builtin().without_fit(), Catalog::builtin(), s);
  const Gpu l4 = *Catalog::builtin().find("l4");
  EXPECT_NEAR(t.for_gpu(l4).matmul_max_fraction, 0.5 * EfficiencyTable::builtin().without_fit().for_gpu(l4).matmul_max_fraction, 1e-9);
  EXPECT_NEAR(t.for_gpu(l4).memory_max_fraction, 0.8 * EfficiencyTable::builtin().without_fit().for_gpu(l4).memory_max_fraction, 1e-9);
  // FP8 GEMMs keep their own share, scaled alike (the MAMF table's H100 figure).
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  EXPECT_NEAR(t.for_gpu(h100).matmul_max_fraction_fp8, 0.5 * 0.709, 1e-9);
}

TEST(ProfileFit, SaysWhatIsMissing) {
  nlohmann::json s = fixture("mpt7b-a100-8gpu.json");
  s.erase("workload");
  auto f = fit_profile(s, {}, Catalog::builtin(), EfficiencyTable::builtin().without_fit());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "--model");
  s = fixture("mpt7b-a100-8gpu.json");
  s["steps"]["median_s"] = nullptr;
  EXPECT_FALSE(fit_profile(s, {}, Catalog::builtin(), EfficiencyTable::builtin().without_fit()).ok());
}

TEST(ProfileFit, RefusesCountsBeyondTheLimitsNamingWhereTheyCameFrom) {
  const Catalog& c = Catalog::builtin();
  const EfficiencyTable& t = EfficiencyTable::builtin();
  nlohmann::json s = fixture("mpt7b-a100-8gpu.json");
  s["workload"]["gpus"] = int64_t{1} << 62;
  auto f = fit_profile(s, {}, c, t);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "--from: workload.gpus");
  ProfileWorkloadOverrides o;
  o.gpus = std::numeric_limits<int64_t>::max();
  f = fit_profile(fixture("mpt7b-a100-8gpu.json"), o, c, t);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "--source-gpus");
  o = {};
  o.grad_accum = std::numeric_limits<int64_t>::max();
  f = fit_profile(fixture("mpt7b-a100-8gpu.json"), o, c, t);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "--grad-accum");
}

TEST(ProfileFit, RefusesStepTimesThatMakeTheSpreadInfinite) {
  nlohmann::json s = fixture("mpt7b-a100-8gpu.json");
  s["steps"]["median_s"] = 1e-300;
  s["steps"]["p90_s"] = 1e300;
  auto f = fit_profile(s, {}, Catalog::builtin(), EfficiencyTable::builtin());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().field, "--from: steps.median_s");
}

TEST(ProfileFit, ReadsAGpuEntryOfTheWrongTypeWithoutThrowing) {
  nlohmann::json s = fixture("mpt7b-a100-8gpu.json");
  s["gpus"][0]["memory_total_bytes"] = "80 GB";
  EXPECT_NO_THROW((void)fit_profile(s, {}, Catalog::builtin(), EfficiencyTable::builtin()));
  s["gpus"][0] = 7;
  EXPECT_NO_THROW((void)fit_profile(s, {}, Catalog::builtin(), EfficiencyTable::builtin()));
}

}  // namespace gpuplan
