// Workload::validate at the edge: every degree and count bounded before products are taken, so a
// hostile --tp/--pp/--grad-accum is an error naming the flag, never an overflow (issue 14).
#include "workload/workload.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "model/presets.h"
#include "util/limits.h"

namespace gpuplan {

namespace {
const ModelSpec& llama8b() {
  static const ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  return m;
}
std::string refused_field(const Workload& w) {
  auto s = w.validate(llama8b());
  return s ? s->field : "";
}
}  // namespace

TEST(WorkloadValidate, AcceptsAnOrdinarySplit) {
  Workload w;
  w.par.tp = 8, w.par.pp = 4, w.par.dp = 64;
  EXPECT_EQ(refused_field(w), "");
}

TEST(WorkloadValidate, RefusesDegreesBeyondTheGpuLimitBeforeMultiplying) {
  Workload w;
  w.par.tp = int64_t{1} << 32, w.par.pp = int64_t{1} << 32;  // tp x pp would wrap to 0
  EXPECT_EQ(refused_field(w), "--tp");
  w = Workload{};
  w.par.dp = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(refused_field(w), "--dp");
  w = Workload{};
  w.par.tp = 1024, w.par.pp = 1, w.par.dp = 2048;  // each within the limit, the product not
  EXPECT_EQ(refused_field(w), "--gpus");
}

TEST(WorkloadValidate, RefusesStepsWhoseTokenCountWouldOverflow) {
  Workload w;
  w.grad_accum = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(refused_field(w), "--grad-accum");
  w.grad_accum = limits::kMaxGradAccum;
  w.micro_batch = limits::kMaxBatch;  // 2^40 sequences a step, x seq overflows int64 soon after
  EXPECT_EQ(refused_field(w), "--grad-accum");
}

TEST(WorkloadValidate, RefusesVirtualStagesThatWouldOverflowWithPp) {
  Workload w;
  w.par.pp = 2;
  w.par.virtual_stages = std::numeric_limits<int64_t>::max() / 2 + 1;
  EXPECT_EQ(refused_field(w), "--virtual-stages");
}

TEST(WorkloadValidate, RefusesANanCapacityFactor) {
  Workload w;
  w.moe_capacity_factor = std::nan("");
  EXPECT_EQ(refused_field(w), "--capacity-factor");
}

}  // namespace gpuplan
