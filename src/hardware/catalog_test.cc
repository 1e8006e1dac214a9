#include "hardware/catalog.h"

#include <gtest/gtest.h>

#include "hardware/efficiency.h"
#include "hardware/prices.h"

namespace gpuplan {

// The ids the issue tracker names; scripts depend on them.
const char* kRequiredIds[] = {"b200", "h200-sxm", "h100-sxm", "h100-pcie", "h100-nvl", "a100-80gb-sxm",
                              "a100-40gb-sxm", "a100-80gb-pcie", "l40s", "l4", "a10", "v100-32gb", "t4",
                              "rtx-pro-6000", "rtx-6000-ada", "rtx-a6000", "rtx-5090", "rtx-4090",
                              "rtx-3090", "rtx-3060-12gb", "mi300x", "mi325x", "gaudi3"};

TEST(Catalog, HoldsEveryRequiredGpuWithSourceAndDate) {
  const Catalog& c = Catalog::builtin();
  for (const char* id : kRequiredIds) {
    auto g = c.find(id);
    ASSERT_TRUE(g.ok()) << id;
    EXPECT_FALSE(g->source.empty()) << id;
    EXPECT_FALSE(g->source_date.empty()) << id;
    EXPECT_GT(g->memory_bytes, 0) << id;
    EXPECT_GT(g->memory_bw_Bps, 0) << id;
  }
}

TEST(Catalog, StoresDenseNotSparsePeaks) {
  // H100 SXM datasheet: 1,979 TFLOPS FP16 "with sparsity"; dense is half, 989.5.
  EXPECT_DOUBLE_EQ(Catalog::builtin().find("h100-sxm")->bf16_flops, 989.5e12);
  // MI300X: AMD's 2,614.9 TFLOPS FP16 is with sparsity; dense 1,307.4.
  EXPECT_DOUBLE_EQ(Catalog::builtin().find("mi300x")->fp16_flops, 1307.4e12);
}

TEST(Catalog, GeforceFp32AccumulateIsHalfTheFp16AccumulateRate) {
  // NVIDIA Ada whitepaper: RTX 4090 165.2 (FP32 acc) vs 330.3 (FP16 acc) dense TFLOPS.
  for (const char* id : {"rtx-4090", "rtx-3090", "rtx-5090", "rtx-3060-12gb"}) {
    const Gpu g = *Catalog::builtin().find(id);
    EXPECT_NEAR(g.fp16_acc16_flops / g.fp16_flops, 2.0, 0.01) << id;
  }
}

TEST(Catalog, VoltaAndTuringHaveNoBf16) {
  EXPECT_EQ(Catalog::builtin().find("v100-32gb")->peak_matmul_flops(Precision::bf16), 0);
  EXPECT_EQ(Catalog::builtin().find("t4")->peak_matmul_flops(Precision::bf16), 0);
  EXPECT_GT(Catalog::builtin().find("t4")->peak_matmul_flops(Precision::fp16), 0);
}

TEST(Catalog, UnknownGpuSuggestsTheNearestIds) {
  auto r = Catalog::builtin().find("h100-smx");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("h100-sxm"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().field, "--gpu");
}

TEST(Catalog, RejectsAMalformedUserFile) {
  auto r = Catalog::from_toml("[[gpu]]\nid = \"x\"\nmemory_gb = \"lots\"\n", "mine.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().field.find("mine.toml"), std::string::npos);
  auto bad_syntax = Catalog::from_toml("[[gpu]\n", "mine.toml");
  ASSERT_FALSE(bad_syntax.ok());
  EXPECT_NE(bad_syntax.error().message.find("malformed TOML"), std::string::npos);
}

namespace {

// A user catalog's smallest valid entry, for the tests of one optional key at a time.
const std::string kMinimalGpu =
    "[[gpu]]\nid='x'\nvendor='v'\nname='n'\ntier='consumer'\narchitecture='ada'\nsource='s'\n"
      "source_date='d'\nmemory_gb=8\nmemory_bandwidth_gbps=100\nfp16_tflops=10\ntdp_w=100\n";

}  // namespace

// Kernels that stream at a rate per SM need the count; every NVIDIA part has one with its source,
// except the rack-scale GB200 and GB300, whose enabled count no printout was found for.
TEST(Catalog, NvidiaPartsCarryTheirSmCountWithItsSource) {
  for (const Gpu& g : Catalog::builtin().gpus()) {
    if (g.vendor != "NVIDIA" || g.id == "gb200" || g.id == "gb300") continue;
    EXPECT_GT(g.sm_count, 0) << g.id;
  }
  EXPECT_EQ(Catalog::builtin().find("h100-sxm")->sm_count, 132);
  EXPECT_EQ(Catalog::builtin().find("h100-pcie")->sm_count, 114);
  const std::string base = kMinimalGpu;
  EXPECT_FALSE(Catalog::from_toml(base + "sm_count = 40\n", "mine.toml"));  // no source
  EXPECT_FALSE(Catalog::from_toml(base + "sm_count = 40.5\nsm_count_source = 's'\n", "mine.toml"));
  EXPECT_FALSE(Catalog::from_toml(base + "sm_count = -4\nsm_count_source = 's'\n", "mine.toml"));
  auto ok = Catalog::from_toml(base + "sm_count = 40\nsm_count_source = 's'\n", "mine.toml");
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_EQ(ok->find("x")->sm_count, 40);
}

// The scale-out NIC per GPU of the node a part ships in, with the datasheet that says so.
TEST(Catalog, ServerPartsCarryTheirNodesNetworkWithItsSource) {
  for (const char* id : {"v100-32gb", "a100-80gb-sxm", "a100-40gb-sxm", "h100-sxm", "h200-sxm", "b200", "b300", "gb200", "gb300"}) {
    const auto g = Catalog::builtin().find(id);
    ASSERT_TRUE(g) << id;
    EXPECT_GT(g->node_network_bps, 0) << id;
  }
  EXPECT_DOUBLE_EQ(Catalog::builtin().find("a100-80gb-sxm")->node_network_bps, 200e9);
  EXPECT_DOUBLE_EQ(Catalog::builtin().find("b300")->node_network_bps, 800e9);
  const std::string base = kMinimalGpu;
  EXPECT_FALSE(Catalog::from_toml(base + "node_network_gbps = 400\n", "mine.toml"));  // no source
  EXPECT_FALSE(Catalog::from_toml(base + "node_network_gbps = -400\nnode_network_source = 's'\n", "mine.toml"));
  EXPECT_FALSE(Catalog::from_toml(base + "node_network_gbps = 1e9\nnode_network_source = 's'\n", "mine.toml"));
  auto ok = Catalog::from_toml(base + "node_network_gbps = 400\nnode_network_source = 's'\n", "mine.toml");
  ASSERT_TRUE(ok) << ok.error().to_string();
  EXPECT_DOUBLE_EQ(ok->find("x")->node_network_bps, 400e9);
}

TEST(Catalog, RejectsUnknownKeysSoTyposSurface) {
  auto r = Catalog::from_toml(kMinimalGpu + "memroy_type='x'\n", "mine.toml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().field.find("memroy_type"), std::string::npos);
}

TEST(Prices, EveryPriceNamesACatalogGpuAndIsDated) {
  const Catalog& c = Catalog::builtin();
  for (const auto& p : PriceBook::builtin().prices()) {
    EXPECT_TRUE(c.find(p.gpu).ok()) << p.gpu;
    for (const auto& q : p.cloud) EXPECT_FALSE(q.date.empty()) << p.gpu;
  }
  // Datacenter parts most teams rent have quotes from at least two providers.
  for (const char* id : {"h100-sxm", "h200-sxm", "a100-80gb-sxm", "l40s", "l4"})
    EXPECT_GE(PriceBook::builtin().find(id)->cloud.size(), 2u) << id;
  for (const auto& p : PriceBook::builtin().prices())
    for (const auto& b : p.purchase) {
      EXPECT_FALSE(b.source.empty()) << p.gpu;
      EXPECT_FALSE(b.date.empty()) << p.gpu;
    }
}

// A buyer sees more than one price: on demand, reservations and spot across provider classes.
TEST(Prices, TheH100IsQuotedEveryWayABuyerRentsIt) {
  const GpuPrice* p = PriceBook::builtin().find("h100-sxm");
  ASSERT_NE(p, nullptr);
  for (RentalMode m : {RentalMode::on_demand, RentalMode::capacity_block, RentalMode::reserved_1y, RentalMode::reserved_3y, RentalMode::spot})
    EXPECT_TRUE(p->cheapest(m).has_value()) << to_string(m);
  for (const char* cls : {"hyperscaler", "gpu-cloud", "marketplace"}) EXPECT_TRUE(p->cheapest(RentalMode::on_demand, cls)) << cls;
  // Reserved is cheaper than on demand, spot cheaper still.
  EXPECT_LT(p->cheapest(RentalMode::reserved_1y)->usd_per_gpu_hour, p->cheapest(RentalMode::on_demand)->usd_per_gpu_hour);
  EXPECT_LT(p->cheapest(RentalMode::spot)->usd_per_gpu_hour, p->cheapest(RentalMode::on_demand)->usd_per_gpu_hour);
}

TEST(Prices, ConsumerCardsAreAtStreetOrUsedPricesNotLaunchMsrp) {
  for (const char* id : {"rtx-5090", "rtx-4090", "rtx-3090"}) {
    const PurchasePrice* p = PriceBook::builtin().find(id)->purchase_price();
    ASSERT_NE(p, nullptr) << id;
    EXPECT_EQ(p->kind, "street") << id;
  }
}

// A user's file with `extends = "builtin"` replaces the rows it names and keeps the rest.
TEST(Prices, UserQuotesOverlayTheBuiltInBook) {
  auto r = PriceBook::from_toml(
      "extends = \"builtin\"\n[ownership]\nelectricity_usd_per_kwh = 0.30\n"
      "[[price]]\ngpu = \"h100-sxm\"\npurchase = [{ condition = \"new\", usd = 21000, kind = \"quote\", source = \"our vendor\", date = \"2026-06\" }]\n"
      "cloud = [{ provider = \"Acme\", class = \"gpu-cloud\", mode = \"reserved-1y\", usd_per_gpu_hour = 1.5, basis = \"our contract\", date = \"2026-06\" }]\n",
      "mine.toml");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_DOUBLE_EQ(*r->find("h100-sxm")->purchase_usd(), 21000);
  EXPECT_EQ(r->find("h100-sxm")->cloud.size(), 1u);
  EXPECT_DOUBLE_EQ(r->ownership().electricity_usd_per_kwh, 0.30);
  EXPECT_DOUBLE_EQ(r->ownership().pue, PriceBook::builtin().ownership().pue);
  EXPECT_NE(r->find("a100-80gb-sxm"), nullptr);  // untouched rows kept
  auto bad = PriceBook::from_toml("[[price]]\ngpu='x'\ncloud=[{provider='p', class='nope', mode='on-demand', usd_per_gpu_hour=1, basis='b', date='d'}]\n", "b.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().to_string().find("provider class"), std::string::npos);
  auto mode = PriceBook::from_toml("[[price]]\ngpu='x'\ncloud=[{provider='p', class='gpu-cloud', mode='monthly', usd_per_gpu_hour=1, basis='b', date='d'}]\n", "b.toml");
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(mode.error().to_string().find("mode"), std::string::npos);
}

TEST(Efficiency, GpuOverridesArchitectureOverridesDefault) {
  const EfficiencyTable& t = EfficiencyTable::builtin();
  const Gpu h200 = *Catalog::builtin().find("h200-sxm");
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  EXPECT_DOUBLE_EQ(t.for_gpu(h200).memory_max_fraction, 0.78);
  EXPECT_DOUBLE_EQ(t.for_gpu(h100).memory_max_fraction, 0.85);
  EXPECT_DOUBLE_EQ(t.for_gpu(h100).matmul_max_fraction, 0.803);
}

TEST(Efficiency, SmallGemmsRunFarBelowPeak) {
  const Efficiency e = EfficiencyTable::builtin().for_gpu(*Catalog::builtin().find("a100-80gb-sxm"));
  // LLMCompass A100 sweep: 17 GFLOP at 59% of peak, 4,948 GFLOP at 93%.
  EXPECT_LT(e.matmul_fraction(17e9), 0.65);
  EXPECT_GT(e.matmul_fraction(4948e9), 0.85);
  EXPECT_LT(e.matmul_fraction(1e6), 0.01);
}

// stas00/ml-engineering MAMF table: H100 SXM reaches 80.3% of its BF16 peak in a matmul but 70.9%
// of its FP8 peak; an A100 has no FP8 figure and keeps its one share.
TEST(Efficiency, Fp8GemmsReachTheirOwnShareOfTheFp8Peak) {
  const Efficiency h100 = EfficiencyTable::builtin().for_gpu(*Catalog::builtin().find("h100-sxm"));
  EXPECT_NEAR(h100.matmul_fraction(1e15, Precision::fp8), 0.709, 1e-9);
  EXPECT_NEAR(h100.matmul_fraction(1e15, Precision::bf16), 0.803, 1e-9);
  const Efficiency a100 = EfficiencyTable::builtin().for_gpu(*Catalog::builtin().find("a100-80gb-sxm"));
  EXPECT_DOUBLE_EQ(a100.matmul_fraction(1e15, Precision::fp8), a100.matmul_fraction(1e15));
}

// Mu Li's transformers-benchmarks micro-benchmarks on a V100: FP32 matmul 14 of 15.7 TFLOPS on the
// CUDA cores, FP16 95 of 125 on the tensor cores. An fp32 training step on a V100 times its GEMMs
// at the first share, a fp16 one at the second.
TEST(Efficiency, VoltaFp32GemmsReachTheirOwnShareOfTheFp32Peak) {
  const Gpu v100 = *Catalog::builtin().find("v100-32gb");
  const Efficiency e = EfficiencyTable::builtin().for_gpu(v100);
  EXPECT_NEAR(e.matmul_fraction(1e15, v100.gemm_precision(Precision::fp32)), 0.89, 1e-9);
  EXPECT_NEAR(e.matmul_fraction(1e15, Precision::fp16), 0.76, 1e-9);
  const Efficiency a100 = EfficiencyTable::builtin().for_gpu(*Catalog::builtin().find("a100-80gb-sxm"));
  EXPECT_DOUBLE_EQ(a100.matmul_fraction(1e15, Precision::fp32), a100.matmul_fraction(1e15));
}

// vLLM PR #20646: NVFP4 GEMMs on a B200 reach 3,904 of the 9,000 TFLOPS FP4 peak (43.4%) where
// BF16 reaches 77.6% (MAMF table).
TEST(Efficiency, Fp4GemmsReachTheirOwnShareOfTheFp4Peak) {
  const Gpu b200 = *Catalog::builtin().find("b200");
  const Efficiency e = EfficiencyTable::builtin().for_gpu(b200);
  EXPECT_NEAR(e.matmul_fraction(1e15, b200.gemm_precision(Precision::nvfp4)), 0.434, 1e-9);
  EXPECT_NEAR(e.matmul_fraction(1e15, Precision::bf16), 0.776, 1e-9);
}

// ModelOpt NVFP4 quantises activations too: on Blackwell the GEMMs run on the FP4 tensor cores;
// on a Hopper card, and for the other 4-bit weight formats, they are dequantised to 16-bit.
TEST(Catalog, Nvfp4MultipliesInFp4OnlyWhereTheCardHasFp4TensorCores) {
  const Gpu b200 = *Catalog::builtin().find("b200");
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  EXPECT_DOUBLE_EQ(b200.peak_matmul_flops(b200.gemm_precision(Precision::nvfp4)), 9000e12);
  EXPECT_EQ(h100.gemm_precision(Precision::nvfp4), Precision::bf16);
  EXPECT_EQ(b200.gemm_precision(Precision::mxfp4), Precision::bf16);
  EXPECT_EQ(b200.gemm_precision(Precision::int4), Precision::bf16);
  EXPECT_EQ(b200.gemm_precision(Precision::fp8), Precision::fp8);
}

TEST(Efficiency, CalibrationOverridesKeyByKey) {
  auto cal = EfficiencyTable::from_toml("[gpu.h100-sxm]\nmatmul_max_fraction = 0.5\n", "cal.toml");
  ASSERT_TRUE(cal.ok());
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  const Efficiency e = EfficiencyTable::builtin().with_overrides(*cal).for_gpu(h100);
  EXPECT_DOUBLE_EQ(e.matmul_max_fraction, 0.5);
  EXPECT_DOUBLE_EQ(e.memory_max_fraction, 0.85);  // untouched keys keep the built-in value
  EXPECT_FALSE(EfficiencyTable::from_toml("[gpu.h100-sxm]\nmatmul_max_fraction = 3\n", "c").ok());
  EXPECT_FALSE(EfficiencyTable::from_toml("[bogus]\n", "c").ok());
}

}  // namespace gpuplan
