#include <gtest/gtest.h>

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
  return *d;
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
