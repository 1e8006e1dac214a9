#include <gtest/gtest.h>

#include <algorithm>

#include "measure/stack_check.h"
#include "profiler/diagnosis.h"
#include "profiler/profile_session.h"
#include "profiler/step_detector.h"

namespace gpuplan {

namespace {
StepDetector detector(const std::string& step = "", const std::string& epoch = "") {
  std::string err;
  auto d = StepDetector::make(step, epoch, &err);
  EXPECT_TRUE(d.has_value()) << err;
  return std::move(*d);
}
}  // namespace

TEST(StepDetector, CountsTqdmBarsOncePerStep) {
  StepDetector d = detector();
  // A Hugging Face Trainer bar repaints the same step several times.
  d.on_line(1.0, " 10/100 [00:05<00:45,  2.00it/s]");
  d.on_line(1.2, " 10/100 [00:05<00:45,  2.00it/s]");
  d.on_line(1.5, " 11/100 [00:05<00:44,  2.00it/s]");
  d.on_line(2.0, " 12/100 [00:06<00:44,  2.00it/s]");
  const StepStats s = d.stats(3);
  EXPECT_EQ(s.count, 3);
  ASSERT_TRUE(s.median_s);
  EXPECT_NEAR(*s.median_s, 0.5, 1e-9);
}

TEST(StepDetector, LoggingEveryNStepsDividesTheInterval) {
  StepDetector d = detector();
  d.on_line(0, "step 10 loss 2.3");
  d.on_line(5, "step 20 loss 2.1");
  d.on_line(10, "Step: 30 loss 2.0");
  EXPECT_NEAR(*d.stats(10).median_s, 0.5, 1e-9);
  EXPECT_EQ(d.stats(10).count, 21);
}

TEST(StepDetector, EpochsAndMarkers) {
  StepDetector d = detector();
  d.on_line(0, "Epoch 1/3");
  d.on_marker(1, "step");
  d.on_marker(2, "step");
  d.on_line(4, "epoch 2/3");
  d.on_marker(5, "epoch");
  const StepStats s = d.stats(7);
  EXPECT_EQ(s.count, 2);
  ASSERT_EQ(s.epoch_durations_s.size(), 3u);
  EXPECT_DOUBLE_EQ(s.epoch_durations_s[0], 4);
  EXPECT_DOUBLE_EQ(s.epoch_durations_s[2], 2);
}

TEST(StepDetector, UserRegexAndInvalidRegex) {
  StepDetector d = detector(R"(it=(\d+))");
  d.on_line(0, "it=1");
  d.on_line(1, "step 99");  // the defaults are replaced, not added to
  d.on_line(2, "it=2");
  EXPECT_EQ(d.stats(2).count, 2);
  std::string err;
  EXPECT_FALSE(StepDetector::make("(", "", &err).has_value());
  EXPECT_NE(err.find("--step-regex"), std::string::npos);
}

TEST(StepDetector, CatastrophicPatternsRunInLinearTime) {
  // With a backtracking engine `(x*)*y` on 4,096 x's never finishes; RE2 returns at once (the CTest
  // timeout is the bound; bench_profiler measures the time).
  StepDetector d = detector(R"((\d+)*\d*!)", "(x*)*y");
  const std::string xs(4096, 'x'), digits(4096, '7');
  for (int i = 0; i < 10; ++i) {
    d.on_line(i, xs);
    d.on_line(i, digits);
  }
  EXPECT_EQ(d.stats(10).count, 0);
  EXPECT_TRUE(d.stats(10).epoch_starts_s.empty());
}

TEST(StepDetector, LongLinesAreInspectedOnlyAtTheirStart) {
  StepDetector d = detector();
  d.on_line(0, std::string(kMaxInspectedLine, ' ') + "step 5");
  d.on_line(1, "step 6 " + std::string(100000, '9'));
  ASSERT_EQ(d.steps().size(), 1u);
  EXPECT_EQ(d.steps()[0].second, 6);
}

TEST(StepDetector, BackreferencesAreRefusedWithTheFlagNamed) {
  std::string err;
  EXPECT_FALSE(StepDetector::make("", R"((a)\1)", &err).has_value());
  EXPECT_NE(err.find("--epoch-regex: invalid regular expression"), std::string::npos) << err;
}

TEST(StepDetector, BytesThatAreNotUtf8DoNotThrow) {
  StepDetector d = detector();
  d.on_line(0, "step \xff\xfe 3");
  d.on_marker(1, "step \xff");
  d.on_marker(2, "step 7");
  EXPECT_EQ(d.steps().back().second, 7);
}

namespace {
// A profile without GPUs on `cores` cores: the tree used `tree_cores` and waited `wait_cores` for a
// core; the machine was `busy_pct` busy.
ProfileData host_only(int cores, double tree_cores, double busy_pct, double wait_cores = 0) {
  ProfileData p;
  p.cores = cores;
  p.gpu_unavailable_reason = "no NVIDIA driver found";
  for (int i = 1; i <= 10; ++i) {
    HostSample h;
    h.t_s = i * 0.1;
    h.tree_cpu_percent = 100 * tree_cores;
    h.tree_wait_percent = 100 * wait_cores;
    h.core_busy_percent.assign(static_cast<size_t>(cores), busy_pct);
    p.host.push_back(h);
  }
  return p;
}
bool has(const std::vector<Finding>& f, const std::string& name) {
  return std::any_of(f.begin(), f.end(), [&](const Finding& x) { return x.finding == name; });
}
}  // namespace

TEST(Diagnosis, OtherProcessesLoadIsNotBlamedOnTheRun) {
  // The issue's case: an idle process tree on a machine kept busy by other jobs.
  const auto f = diagnose(host_only(2, 0.0, 100));
  EXPECT_FALSE(has(f, "CPU-bound"));
  ASSERT_TRUE(has(f, "host shared with other load"));
  const HostLoad l = host_load(host_only(2, 0.0, 100));
  EXPECT_NEAR(l.other_cores, 2.0, 1e-9);
  EXPECT_NEAR(l.tree_cores, 0.0, 1e-9);
}

TEST(Diagnosis, ATreeFillingTheCoresIsCpuBound) {
  const auto f = diagnose(host_only(4, 3.8, 96));
  EXPECT_TRUE(has(f, "CPU-bound"));
  EXPECT_FALSE(has(f, "host shared with other load"));
}

TEST(Diagnosis, ATreeCrowdedByOthersIsCpuBoundAndTheLoadIsSaid) {
  // Three busy processes given 1.2 of 2 cores by other jobs: they waited 1.8 cores' worth for a core.
  const auto f = diagnose(host_only(2, 1.2, 100, 1.8));
  EXPECT_TRUE(has(f, "CPU-bound"));
  EXPECT_TRUE(has(f, "host shared with other load"));
}

TEST(Diagnosis, ATreeThatNeverWaitsIsNotCpuBoundOnABusyMachine) {
  const auto f = diagnose(host_only(2, 0.6, 100, 0.0));
  EXPECT_FALSE(has(f, "CPU-bound"));
  EXPECT_TRUE(has(f, "host shared with other load"));
}

TEST(Diagnosis, NoDriverIsSaidPlainly) {
  ProfileData p;
  p.gpu_unavailable_reason = "no NVIDIA driver found (libnvidia-ml.so.1 could not be loaded)";
  const auto f = diagnose(p);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].finding, "no GPU measured");
}

TEST(Diagnosis, MemoryNearCapacityQuotesThePeak) {
  ProfileData p;
  GpuDevice d;
  d.name = "x";
  d.memory_total_bytes = 80e9;
  p.devices = {d};
  GpuSample s;
  s.util_pct = 30;
  s.mem_used_bytes = 76e9;
  s.mem_total_bytes = 80e9;
  p.gpu = {{s, s}};
  bool found = false;
  for (const auto& f : diagnose(p))
    if (f.finding == "memory near capacity") found = f.evidence.find("95%") != std::string::npos;
  EXPECT_TRUE(found);
}

TEST(Doctor, PrecisionsFollowComputeCapability) {
  EXPECT_EQ(precisions_for(7, 0), (std::vector<std::string>{"fp32", "fp16"}));
  const auto a100 = precisions_for(8, 0);
  EXPECT_NE(std::find(a100.begin(), a100.end(), "bf16"), a100.end());
  EXPECT_EQ(std::find(a100.begin(), a100.end(), "fp8"), a100.end());
  const auto l40s = precisions_for(8, 9);
  EXPECT_NE(std::find(l40s.begin(), l40s.end(), "fp8"), l40s.end());
  EXPECT_EQ(cuda_version_string(12040), "12.4");
}

TEST(Doctor, ToolkitNewerThanDriverIsAnError) {
  StackReport r;
  r.cuda_driver = "12.2";
  r.cuda_toolkit = "12.4";
  r.torch = "2.3.0 cuda 12.1 available True";
  add_compatibility_findings(r);
  bool toolkit_error = false, torch_ok = false;
  for (const auto& f : r.findings) {
    toolkit_error = toolkit_error || (f.level == "error" && f.text.find("toolkit") != std::string::npos);
    torch_ok = torch_ok || (f.level == "ok" && f.text.find("PyTorch") != std::string::npos);
  }
  EXPECT_TRUE(toolkit_error);
  EXPECT_TRUE(torch_ok);
}

TEST(Doctor, CatalogMatchesDriverNames) {
  const Catalog& c = Catalog::builtin();
  EXPECT_EQ(c.match_device("NVIDIA H100 80GB HBM3", 85e9), "h100-sxm");
  EXPECT_EQ(c.match_device("NVIDIA H100 PCIe", 85e9), "h100-pcie");
  EXPECT_EQ(c.match_device("NVIDIA A100-SXM4-40GB", 42e9), "a100-40gb-sxm");
  EXPECT_EQ(c.match_device("NVIDIA A100 80GB PCIe", 85e9), "a100-80gb-pcie");
  EXPECT_EQ(c.match_device("NVIDIA GeForce RTX 4090", 25e9), "rtx-4090");
  EXPECT_EQ(c.match_device("NVIDIA H200", 150e9), "h200-sxm");
  EXPECT_EQ(c.match_device("NVIDIA L4", 24e9), "l4");
  EXPECT_FALSE(c.match_device("NVIDIA A10G", 24e9).has_value());
}

TEST(Profile, IntervalParsing) {
  EXPECT_DOUBLE_EQ(*parse_interval("100ms"), 0.1);
  EXPECT_DOUBLE_EQ(*parse_interval("2s"), 2);
  EXPECT_FALSE(parse_interval("5ms").ok());
  EXPECT_FALSE(parse_interval("fast").ok());
}

}  // namespace gpuplan
