#include "model/hub.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace gpuplan {

TEST(HubId, ReadsOrgNameAndRevision) {
  auto id = parse_hub_id("meta-llama/Llama-3.1-8B@v1.0");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->repo, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(id->revision, "v1.0");
  EXPECT_TRUE(id->explicit_revision);
  EXPECT_EQ(parse_hub_id("Qwen/Qwen2.5-7B")->revision, "main");
}

TEST(HubId, RefusesWhatCannotBeARepo) {
  for (const char* bad : {"gpt2", "a/b/c", "../x", "org/..", "org/", "/name", "org/name@", "org/na me", "org/name@x/y", "-o/x"})
    EXPECT_FALSE(parse_hub_id(bad)) << bad;
}

TEST(Presets, MatchIdsRegardlessOfCase) {
  auto m = Presets::builtin().find("Llama-3.1-8B");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->id, "llama-3.1-8b");
}

TEST(Presets, HubIdsOfPresetModelsMapToThePreset) {
  EXPECT_EQ(Presets::builtin().find("meta-llama/Llama-3.1-70B")->id, "llama-3.1-70b");
  EXPECT_EQ(Presets::builtin().find("openai-community/gpt2")->id, "gpt2");
  EXPECT_EQ(Presets::builtin().find("mistralai/mistral-7b-instruct-v0.1")->id, "mistral-7b");
  EXPECT_FALSE(Presets::builtin().find("meta-llama/Llama-3.1-8B@main"));
}

}  // namespace gpuplan
