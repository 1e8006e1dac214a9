#include "stack/stack.h"

#include <gtest/gtest.h>

#include "hardware/catalog.h"
#include "hardware/efficiency.h"

namespace gpuplan {

TEST(Stacks, BuiltInCatalogHasTheNamedStacks) {
  const StackCatalog& c = StackCatalog::builtin();
  for (const char* id : {"megatron", "megatron-deepspeed", "torchtitan", "torchtitan-compile", "hf", "deepspeed", "torchtune", "unsloth", "litgpt"})
    EXPECT_TRUE(c.find(id).ok()) << id;
  for (const Stack& s : c.stacks()) {
    EXPECT_FALSE(s.source.empty()) << s.id;
    EXPECT_FALSE(s.source_date.empty()) << s.id;
  }
}

// Megatron-DeepSpeed runs Megatron-LM's model code (fused QKV and MLP GEMMs, fused bias-GeLU,
// LayerNorm and masked softmax) on DeepSpeed's engine, which leaves ZeRO-1/2's gradient reduction
// and the tensor-parallel all-reduces exposed (overlap_comm off for stages 1-2; no userbuffers).
TEST(Stacks, MegatronDeepSpeedRunsMegatronsKernelsOnDeepSpeedsEngine) {
  const StackCatalog& c = StackCatalog::builtin();
  const Stack mds = *c.find("megatron-deepspeed"), megatron = *c.find("megatron"), ds = *c.find("deepspeed");
  EXPECT_EQ(mds.fused_elementwise, megatron.fused_elementwise);
  EXPECT_EQ(mds.separate_projections, megatron.separate_projections);
  EXPECT_EQ(mds.eager_score_forward_bytes, megatron.eager_score_forward_bytes);
  EXPECT_EQ(mds.overlap_dp_grads, ds.overlap_dp_grads);
  EXPECT_FALSE(mds.overlap_tp);
  EXPECT_TRUE(megatron.overlap_tp);
  EXPECT_EQ(mds.zero3_persistence_threshold, ds.zero3_persistence_threshold);
}

TEST(Stacks, UnknownStackSuggestsTheNearestId) {
  auto s = StackCatalog::builtin().find("torchtitn");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().field, "--stack");
  EXPECT_NE(s.error().message.find("torchtitan"), std::string::npos);
}

// FlashAttention-3 paper Figures 5-6 (H100, head dim 128, 8k tokens): FA2 333 TFLOP/s forward and
// 318 backward, cuDNN 529 and 518; a training step weights the backward 2.5x. Megatron (TE) runs
// cuDNN on Hopper, torchtitan SDPA's FA2.
TEST(Stacks, AttentionKernelFollowsTheStackAndArchitecture) {
  const StackCatalog& c = StackCatalog::builtin();
  const Stack megatron = *c.find("megatron"), titan = *c.find("torchtitan");
  EXPECT_EQ(megatron.attention_kernel("hopper").id, "cudnn");
  EXPECT_EQ(megatron.attention_kernel("ampere").id, "fa2");
  EXPECT_EQ(titan.attention_kernel("hopper").id, "fa2");
  EXPECT_NEAR(titan.attention_fraction("hopper"), 3.5 / (989.0 / 333 + 2.5 * 989.0 / 318), 1e-3);
  EXPECT_NEAR(megatron.attention_fraction("hopper"), 3.5 / (989.0 / 529 + 2.5 * 989.0 / 518), 1e-3);
  const Gpu h100 = *Catalog::builtin().find("h100-sxm");
  EXPECT_NEAR(EfficiencyTable::builtin().for_gpu(h100, megatron).attention_fraction, megatron.attention_fraction("hopper"), 1e-9);
}

// FlashAttention-2 abstract: flash-attn 1.x reaches "only 25-40%" of an A100's peak; gpuplan takes
// the top, as it takes the top of FA2's own range, and keeps FA2's ratio on a Hopper card.
TEST(Stacks, FlashAttentionOneTakesTheTopOfItsPublishedRange) {
  const StackCatalog& c = StackCatalog::builtin();
  auto fa1 = c.with_attention_kernel(*c.find("deepspeed"), "fa1", "attention_kernel");
  ASSERT_TRUE(fa1.ok());
  EXPECT_DOUBLE_EQ(fa1->attention_fraction("ampere"), 0.40);
  const double fa2_ampere = c.find("torchtitan")->attention_fraction("ampere");
  const double fa2_hopper = c.find("torchtitan")->attention_fraction("hopper");
  EXPECT_NEAR(fa1->attention_fraction("hopper"), 0.40 / fa2_ampere * fa2_hopper, 1e-3);
}

// FlashAttention-2 abstract: FA2 is about 2x FlashAttention-1, whose Triton port llm-foundry ran
// until March 2024. Overriding a stack's kernel applies on every architecture; FA3 is Hopper only.
TEST(Stacks, AttentionKernelOverrideReplacesTheStacksKernel) {
  const StackCatalog& c = StackCatalog::builtin();
  auto old = c.with_attention_kernel(*c.find("llm-foundry"), "flash-triton", "attention_kernel");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->attention_kernel("hopper").id, "flash-triton");
  EXPECT_NEAR(old->attention_fraction("ampere"), c.find("llm-foundry")->attention_fraction("ampere") / 2, 1e-9);
  auto fa3 = c.with_attention_kernel(*c.find("torchtitan"), "fa3", "attention_kernel");
  ASSERT_TRUE(fa3.ok());
  auto fa3_on_a100 = check_attention_runs_on(*fa3, "ampere", "attention_kernel", "ampere GPUs");
  ASSERT_TRUE(fa3_on_a100.has_value());
  EXPECT_EQ(fa3_on_a100->field, "attention_kernel");
  EXPECT_FALSE(check_attention_runs_on(*fa3, "hopper", "attention_kernel", "hopper GPUs").has_value());
  auto typo = c.with_attention_kernel(*c.find("torchtitan"), "fa4", "--attention-kernel");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().message.find("fa3"), std::string::npos);
}

TEST(Stacks, DefaultsFollowTheTask) {
  EXPECT_EQ(default_stack_id(Task::pretrain), "megatron");
  EXPECT_EQ(default_stack_id(Task::lora), "hf");
  EXPECT_EQ(default_stack_id(Task::qlora), "hf");
  // torchtitan llama3_8b.toml: activation_checkpoint mode 'selective', option 'op'.
  EXPECT_EQ(StackCatalog::builtin().find("torchtitan")->default_recompute.mode, Recompute::op);
}

TEST(Stacks, FileErrorsNameTheField) {
  const char* kernel = "[[attention_kernel]]\nid = \"k\"\nname = \"k\"\nsource = \"s\"\nsource_date = \"d\"\n"
                       "fraction = { ampere = 0.5 }\n";
  const char* recipe = "[[fp8_recipe]]\nid = \"r\"\nname = \"r\"\nprecision = \"fp8\"\narchitectures = [\"hopper\"]\n"
                       "source = \"s\"\nsource_date = \"d\"\n";
  auto stack = [](const std::string& extra) {
    return std::string("[[stack]]\nid = \"x\"\nname = \"x\"\nsource = \"s\"\nsource_date = \"d\"\n") + extra;
  };
  auto ok = StackCatalog::from_toml(std::string(kernel) + recipe + stack("attention = { default = \"k\" }\n"), "t");
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  auto bad_kernel = StackCatalog::from_toml(std::string(kernel) + recipe + stack("attention = { default = \"fa9\" }\n"), "t");
  ASSERT_FALSE(bad_kernel.ok());
  EXPECT_NE(bad_kernel.error().field.find("attention.default"), std::string::npos);
  auto bad_recompute = StackCatalog::from_toml(
      std::string(kernel) + recipe + stack("attention = { default = \"k\" }\ndefault_recompute = \"some\"\n"), "t");
  ASSERT_FALSE(bad_recompute.ok());
  EXPECT_NE(bad_recompute.error().field.find("default_recompute"), std::string::npos);
  auto no_measurement = StackCatalog::from_toml(
      std::string(kernel) + recipe + stack("attention = { default = \"k\", hopper = \"k\" }\n"), "t");
  ASSERT_FALSE(no_measurement.ok());
  auto bad_fraction = StackCatalog::from_toml(
      "[[attention_kernel]]\nid = \"k\"\nname = \"k\"\nsource = \"s\"\nsource_date = \"d\"\nfraction = { ampere = 1.5 }\n", "t");
  ASSERT_FALSE(bad_fraction.ok());
  auto bad_backward_bytes = StackCatalog::from_toml(
      std::string(kernel) + recipe + "backward_input_bytes_per_element = -2\n" + stack("attention = { default = \"k\" }\n"), "t");
  ASSERT_FALSE(bad_backward_bytes.ok());
  EXPECT_NE(bad_backward_bytes.error().field.find("backward_input_bytes_per_element"), std::string::npos);
  auto bad_projections = StackCatalog::from_toml(
      std::string(kernel) + recipe + stack("attention = { default = \"k\" }\nseparate_projections = \"yes\"\n"), "t");
  ASSERT_FALSE(bad_projections.ok());
  EXPECT_NE(bad_projections.error().field.find("separate_projections"), std::string::npos);
  for (const char* eager : {"eager_attention_bytes_per_score = 33\n", "eager_attention_bytes_per_score = { forward = 33 }\n",
                            "eager_attention_bytes_per_score = { forward = 33, backward = -1 }\n",
                            "eager_attention_bytes_per_score = { forward = 33, backward = 37, sideways = 1 }\n"}) {
    auto bad_eager = StackCatalog::from_toml(std::string(kernel) + recipe + stack(std::string("attention = { default = \"k\" }\n") + eager), "t");
    ASSERT_FALSE(bad_eager.ok()) << eager;
    EXPECT_NE(bad_eager.error().field.find("eager_attention_bytes_per_score"), std::string::npos) << eager;
  }
  for (const char* window : {"zero3_prefetch_params = -1.0\n", "zero3_prefetch_hidden_squares = \"auto\"\n"}) {
    auto bad_window = StackCatalog::from_toml(std::string(kernel) + recipe + stack(std::string("attention = { default = \"k\" }\n") + window), "t");
    ASSERT_FALSE(bad_window.ok()) << window;
    EXPECT_NE(bad_window.error().field.find("zero3_prefetch"), std::string::npos) << window;
  }
  for (const char* host : {"host_layer_pass_s = -0.001\n", "host_layer_pass_s = 5.0\n", "host_adapter_pass_s = \"fast\"\n",
                           "host_adapter_pass_s = -1e-5\n"}) {
    auto bad_host = StackCatalog::from_toml(std::string(kernel) + recipe + stack(std::string("attention = { default = \"k\" }\n") + host), "t");
    ASSERT_FALSE(bad_host.ok()) << host;
    EXPECT_NE(bad_host.error().field.find("host_"), std::string::npos) << host;
  }
  for (const char* copies : {"qlora_dequantized_copies = 0\n", "qlora_dequantized_copies = 9\n", "qlora_dequantized_copies = 1.5\n"}) {
    auto bad_copies = StackCatalog::from_toml(std::string(kernel) + recipe + stack(std::string("attention = { default = \"k\" }\n") + copies), "t");
    ASSERT_FALSE(bad_copies.ok()) << copies;
    EXPECT_NE(bad_copies.error().field.find("qlora_dequantized_copies"), std::string::npos) << copies;
  }
}

TEST(Recompute, ParsesEveryN) {
  auto r = parse_recompute("every:4");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->mode, Recompute::every);
  EXPECT_EQ(r->every, 4);
  EXPECT_EQ(to_string(*r), "every:4");
  for (const char* bad : {"every:", "every:0", "every:x", "every:99999", "every", "sometimes"})
    EXPECT_FALSE(parse_recompute(bad).has_value()) << bad;
}

}  // namespace gpuplan
