#include "hardware/platform.h"

#include <gtest/gtest.h>

#include "hardware/catalog.h"
#include "stack/stack.h"
#include "util/builtin_lookup_for_tests.h"

namespace gpuplan {

namespace {
const Platform& P() { return Platform::builtin(); }
using testing_support::gpu;
}  // namespace

TEST(Platform, EveryCatalogArchitectureAndStackHasARecord) {
  for (const Gpu& g : Catalog::builtin().gpus()) EXPECT_NE(P().architecture(g.architecture), nullptr) << g.architecture;
  for (const Stack& s : StackCatalog::builtin().stacks()) {
    EXPECT_NE(P().stack_support(s.id), nullptr) << s.id;
    EXPECT_NE(P().software(s.id), nullptr) << s.id;
  }
}

// A stack offers optimizer offload (platform.toml) exactly when stacks.toml records how fast its CPU
// optimizer runs, so the planner never offloads to a host step it cannot time.
TEST(Platform, OptimizerOffloadGoesWithAHostOptimizerFigure) {
  for (const Stack& s : StackCatalog::builtin().stacks()) {
    const StackSupport* support = P().stack_support(s.id);
    ASSERT_NE(support, nullptr) << s.id;
    EXPECT_EQ(support->offload_optimizer, s.host_optimizer_fraction > 0) << s.id;
  }
}

// The catalog's datasheet rates and the architecture's data types must tell the same story: a
// card has a bf16 or fp8 rate exactly when its architecture has that data type.
TEST(Platform, ArchitectureDataTypesAgreeWithTheCatalogRates) {
  for (const Gpu& g : Catalog::builtin().gpus()) {
    const ArchitectureFacts* a = P().architecture(g.architecture);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->has("bf16"), g.bf16_flops > 0) << g.id;
    EXPECT_EQ(a->has("fp8"), g.fp8_flops > 0) << g.id;
  }
}

TEST(Platform, VoltaHasNoBf16AndItsToolchainIsEnding) {
  const ArchitectureFacts* v = P().architecture("volta");
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(v->has(Precision::bf16));
  EXPECT_TRUE(v->has(Precision::fp16));
  EXPECT_TRUE(v->legacy);
  EXPECT_EQ(v->cuda_last, "12.9");
  // NF4 weights compute in 16-bit: QLoRA on Volta is possible in fp16 only.
  EXPECT_TRUE(v->has(Precision::nf4) == v->has(compute_precision(Precision::nf4)));
}

TEST(Platform, SoftwareVerdictsNameTheirSource) {
  // bitsandbytes on AMD: official since v0.50 (its own installation guide says so).
  const SoftwareVerdict bnb = P().software_on("bitsandbytes", gpu("mi300x"));
  EXPECT_EQ(bnb.status, SoftwareStatus::supported);
  EXPECT_NE(bnb.reason.find("v0.50"), std::string::npos) << bnb.reason;
  EXPECT_FALSE(bnb.source.empty());
  // FlashAttention-3 is Hopper-only.
  EXPECT_EQ(P().software_on("flash-attention-3", gpu("h100-sxm")).status, SoftwareStatus::supported);
  EXPECT_EQ(P().software_on("flash-attention-3", gpu("a100-80gb-sxm")).status, SoftwareStatus::unsupported);
  EXPECT_EQ(P().software_on("flash-attention-3", gpu("b200")).status, SoftwareStatus::unsupported);
  // FlashAttention-2 needs Ampere.
  EXPECT_EQ(P().software_on("flash-attention-2", gpu("v100-32gb")).status, SoftwareStatus::unsupported);
  // No record is not a yes.
  const SoftwareVerdict trt = P().software_on("tensorrt-llm", gpu("mi300x"));
  EXPECT_EQ(trt.status, SoftwareStatus::unknown);
  EXPECT_FALSE(trt.usable());
  EXPECT_NE(trt.reason.find("no record"), std::string::npos);
  EXPECT_EQ(P().software_on("megatron", gpu("gaudi3")).status, SoftwareStatus::unknown);
}

TEST(Platform, StacksOfferOnlyTheParallelismTheyHave) {
  Workload w;
  w.par.pp = 2, w.par.dp = 4, w.par.zero = 3;
  EXPECT_NE(P().stack_support("deepspeed")->why_not(w).find("pipeline"), std::string::npos);
  EXPECT_TRUE(P().stack_support("torchtitan")->why_not(w).empty());
  EXPECT_FALSE(P().stack_support("hf")->why_not(w).empty());  // no pipeline in the Trainer
  Workload single;
  single.par.dp = 2;
  EXPECT_FALSE(P().stack_support("unsloth")->why_not(single).empty());
  Workload off;
  off.offload_optimizer = true;
  off.par.zero = 0;
  EXPECT_TRUE(P().stack_support("hf")->why_not(off).empty());
  EXPECT_FALSE(P().stack_support("megatron")->why_not(off).empty());
}

TEST(Platform, TensorParallelNeedsNvlinkOrPeerToPeer) {
  EXPECT_FALSE(P().direct_link_for_tp(gpu("rtx-4090"), 2, 4));  // GeForce: no P2P, no NVLink
  EXPECT_TRUE(P().direct_link_for_tp(gpu("rtx-3090"), 2, 4));   // NVLink bridge joins a pair
  EXPECT_FALSE(P().direct_link_for_tp(gpu("rtx-3090"), 4, 4));
  EXPECT_TRUE(P().direct_link_for_tp(gpu("h100-sxm"), 8, 8));
  EXPECT_TRUE(P().direct_link_for_tp(gpu("l40s"), 2, 8));       // datacenter PCIe: P2P
  EXPECT_TRUE(P().direct_link_for_tp(gpu("rtx-4090"), 1, 4));
}

TEST(Platform, BoughtModulesComeOnBoards) {
  auto ids = [](const std::vector<const NodeClass*>& v) {
    std::vector<std::string> out;
    for (auto* n : v) out.push_back(n->id);
    return out;
  };
  EXPECT_EQ(ids(P().nodes_for(gpu("b200"))), std::vector<std::string>{"hgx-8"});
  EXPECT_EQ(ids(P().nodes_for(gpu("h100-sxm"))), std::vector<std::string>{"hgx"});
  EXPECT_EQ(ids(P().nodes_for(gpu("v100-32gb"))), std::vector<std::string>{"hgx"});
  EXPECT_EQ(ids(P().nodes_for(gpu("mi300x"))), std::vector<std::string>{"oam-8"});
  EXPECT_EQ(ids(P().nodes_for(gpu("gaudi3"))), std::vector<std::string>{"oam-8"});
  EXPECT_EQ(ids(P().nodes_for(gpu("l40s"))), std::vector<std::string>{"pcie-server"});
  EXPECT_EQ(ids(P().nodes_for(gpu("rtx-4090"))), std::vector<std::string>{"workstation"});
  EXPECT_EQ(ids(P().nodes_for(gpu("rtx-a6000"))), (std::vector<std::string>{"workstation", "pcie-server"}));
  EXPECT_GT(P().nodes_for(gpu("h100-sxm")).front()->purchase_unit_gpus, 1);
  for (const Gpu& g : Catalog::builtin().gpus()) EXPECT_FALSE(P().nodes_for(g).empty()) << g.id;
}

TEST(Platform, GeforceLicenceForbidsDatacenters) {
  const Licence* l = P().licence_for(gpu("rtx-4090"));
  ASSERT_NE(l, nullptr);
  EXPECT_EQ(l->forbids, "datacenter");
  EXPECT_NE(l->text.find("No Datacenter Deployment"), std::string::npos);
  EXPECT_EQ(P().licence_for(gpu("rtx-a6000")), nullptr);
  EXPECT_EQ(P().licence_for(gpu("h100-sxm")), nullptr);
}

TEST(Platform, HeadroomDefaultIsSourced) {
  EXPECT_GT(P().default_headroom_fraction(), 0);
  EXPECT_FALSE(P().headroom_source().empty());
}

TEST(Platform, BadFilesNameTheField) {
  auto r = Platform::from_toml("[[architecture]]\nid='x'\nvendor='v'\nplatform='cuda'\ndtypes=['bf17']\nstatus='current'\nsource='s'\ndate='d'\n", "t.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().to_string().find("dtypes"), std::string::npos) << r.error().to_string();
  auto k = Platform::from_toml("bogus = 1\n", "t.toml");
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().to_string().find("bogus"), std::string::npos);
}

}  // namespace gpuplan
