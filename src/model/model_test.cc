#include "model/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/presets.h"

namespace gpuplan {

// Every preset's count from its shape must match the total its publisher states (cited in
// data/models.toml, parameters_source) within 0.5%.
TEST(Presets, ParameterCountsMatchPublishedTotals) {
  const auto& presets = Presets::builtin();
  ASSERT_GE(presets.models().size(), 18u);
  for (const auto& m : presets.models()) {
    ASSERT_TRUE(m.published_parameters) << m.id;
    const double ratio = static_cast<double>(m.total_parameters()) / *m.published_parameters;
    if (!m.published_scope.empty()) {
      // The published total covers more than the language model (Llama 4's vision tower).
      EXPECT_LT(ratio, 1.0) << m.id;
      EXPECT_GT(ratio, 0.97) << m.id;
      continue;
    }
    EXPECT_LT(std::fabs(ratio - 1), 0.005) << m.id << ": counted " << m.total_parameters() << ", published "
                                           << *m.published_parameters << " (" << m.parameters_source << ")";
  }
}

// Published active counts are given to two or three digits; each must match within its rounding:
// half a unit of the last digit given (12.9B: 0.05B), or a whole unit below where the publisher
// truncated (DeepSeek-V2-Lite's 2.45B is "2.4B").
TEST(Presets, ActiveCountsMatchPublishedFigures) {
  int checked = 0;
  for (const auto& m : Presets::builtin().models()) {
    if (!m.published_active_parameters) continue;
    double active = static_cast<double>(m.active_parameters());
    if (m.active_excludes_input_embedding) active -= static_cast<double>(m.parameters().embedding);
    int64_t digits = *m.published_active_parameters;
    double unit = 1;
    while (digits % 10 == 0 && digits > 0) digits /= 10, unit *= 10;
    const double published = static_cast<double>(*m.published_active_parameters);
    const double diff = active - published;
    const bool ok = m.published_active_truncated ? diff >= -1e-9 * published && diff < unit
                                                 : std::fabs(diff) <= std::max(unit / 2, 0.005 * published);
    EXPECT_TRUE(ok) << m.id << ": active " << active << ", published " << published << " ("
                    << m.parameters_source << ")";
    ++checked;
  }
  EXPECT_GE(checked, 12);
}

TEST(Presets, Llama31_8bIsExactly8_03B) {
  // meta-llama/Llama-3.1-8B safetensors metadata: 8,030,261,248 parameters.
  EXPECT_EQ(Presets::builtin().find("llama-3.1-8b")->total_parameters(), 8030261248);
}

TEST(Presets, MixtralActivatesTwoOfEightExperts) {
  const ModelSpec m = *Presets::builtin().find("mixtral-8x7b");
  // Mistral AI's announcement: 46.7B total, 12.9B used per token.
  EXPECT_NEAR(m.active_parameters() / 1e9, 12.9, 0.1);
}

TEST(Presets, RequiredIdsExist) {
  for (const char* id : {"llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-2-7b", "llama-2-13b",
                         "llama-2-70b", "mistral-7b", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b",
                         "gemma-2-9b", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl", "bert-base",
                         "bert-large", "gpt3-175b"})
    EXPECT_TRUE(Presets::builtin().find(id).ok()) << id;
}

TEST(Presets, UnknownModelSuggestsNeighbours) {
  auto r = Presets::builtin().find("llama-3.1-7b");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("llama-3.1-8b"), std::string::npos);
}

TEST(ModelSpec, LoraRank64OnLlama2_7bAllLinears) {
  // r * (d_in + d_out) per matrix: per layer 4 x 64 x 8192 (q,k,v,o) + 3 x 64 x 15104 (MLP).
  const ModelSpec m = *Presets::builtin().find("llama-2-7b");
  EXPECT_EQ(m.lora_parameters(64), 32 * (4 * 64 * 8192 + 3 * 64 * 15104));
}

// PEFT's default for Llama (q_proj and v_proj) at rank 8: 32 x 8 x (4096 + 4096) x 2 = 4,194,304,
// the "trainable params: 4,194,304" PEFT prints for Llama 2 7B; an MLP-only gated model has no
// attention adapters, and a plain MLP has no gate to adapt.
TEST(ModelSpec, LoraTargetsCountOnlyTheAdaptedModules) {
  const ModelSpec m = *Presets::builtin().find("llama-2-7b");
  EXPECT_EQ(m.lora_parameters(8, *parse_lora_targets("q_proj,v_proj")), 4'194'304);
  EXPECT_EQ(m.lora_parameters(8, *parse_lora_targets("q,v")), 4'194'304);
  EXPECT_EQ(m.lora_parameters(8, *parse_lora_targets("mlp")), 32 * 3 * 8 * 15104);
  EXPECT_EQ(m.lora_parameters(8, *parse_lora_targets("attention")) + m.lora_parameters(8, *parse_lora_targets("mlp")),
            m.lora_parameters(8));
  const ModelSpec gpt2 = *Presets::builtin().find("gpt2");
  EXPECT_EQ(gpt2.lora_parameters(8, *parse_lora_targets("gate")), 0);
  EXPECT_EQ(to_string(*parse_lora_targets("all-linear")), "all-linear");
  EXPECT_EQ(to_string(*parse_lora_targets("v_proj,q_proj")), "q,v");
  for (const char* bad : {"", "q,,v", "qkv", "lm_head", "q, v"}) {
    auto t = parse_lora_targets(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.error().field, "--lora-targets");
  }
}

TEST(ModelSpec, ValidateRejectsHeadsThatDoNotDivide) {
  ModelSpec m = *Presets::builtin().find("llama-3.1-8b");
  m.kv_heads = 5;
  auto s = m.validate();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->field, "kv_heads");
}

TEST(ModelSpec, TensorCountsOverrideTheFormulaTotal) {
  ModelSpec m = *Presets::builtin().find("gpt2");
  m.tensor_parameters = 124000000;
  EXPECT_EQ(m.total_parameters(), 124000000);
}

}  // namespace gpuplan
