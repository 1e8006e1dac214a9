#include "model/hf_config.h"

#include <gtest/gtest.h>

#include "model/presets.h"

namespace gpuplan {

// Copied from https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json
constexpr const char* kLlama31_8b = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096,
  "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 131072,
  "mlp_bias": false, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "transformers_version": "4.43.0.dev0", "use_cache": true, "vocab_size": 128256})";

// Copied from https://huggingface.co/google/gemma-2-9b/blob/main/config.json (abridged to the
// fields that matter; the rest do not change the shape).
constexpr const char* kGemma2_9b = R"({
  "architectures": ["Gemma2ForCausalLM"], "head_dim": 256, "hidden_size": 3584,
  "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "gemma2",
  "num_attention_heads": 16, "num_hidden_layers": 42, "num_key_value_heads": 8,
  "sliding_window": 4096, "vocab_size": 256000, "query_pre_attn_scalar": 256})";

// Copied from https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json (abridged): it carries a
// sliding window but disables it.
constexpr const char* kQwen25_7b = R"({
  "hidden_size": 3584, "intermediate_size": 18944, "max_position_embeddings": 131072,
  "max_window_layers": 28, "model_type": "qwen2", "num_attention_heads": 28,
  "num_hidden_layers": 28, "num_key_value_heads": 4, "sliding_window": 131072,
  "tie_word_embeddings": false, "use_sliding_window": false, "vocab_size": 152064})";

// Copied from https://huggingface.co/openai-community/gpt2/blob/main/config.json (abridged).
constexpr const char* kGpt2 = R"({"model_type": "gpt2", "n_ctx": 1024, "n_embd": 768, "n_head": 12,
  "n_inner": null, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257})";

TEST(HfConfig, ReadsLlama31_8bExactly) {
  auto m = parse_hf_config(kLlama31_8b, "config.json");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->total_parameters(), 8030261248);
  EXPECT_EQ(m->kv_heads, 8);
  EXPECT_EQ(m->head_dim, 128);
  EXPECT_FALSE(m->tied_embeddings);
  EXPECT_EQ(m->sliding_window, 0);
}

TEST(HfConfig, GemmaHasExplicitHeadDimAndAlternatingWindows) {
  auto m = parse_hf_config(kGemma2_9b, "config.json");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->head_dim, 256);  // not hidden / heads = 224
  EXPECT_EQ(m->sliding_window, 4096);
  EXPECT_EQ(m->sliding_layers, 21);
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_EQ(m->total_parameters(), Presets::builtin().find("gemma-2-9b")->total_parameters());
}

TEST(HfConfig, DisabledSlidingWindowIsIgnored) {
  auto m = parse_hf_config(kQwen25_7b, "config.json");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->sliding_window, 0);
  EXPECT_EQ(m->total_parameters(), 7615616512);  // Qwen/Qwen2.5-7B model card: 7.62B
}

TEST(HfConfig, Gpt2NullInnerMeansFourTimesHidden) {
  auto m = parse_hf_config(kGpt2, "config.json");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->intermediate, 3072);
  EXPECT_EQ(m->total_parameters(), 124439808);
}

TEST(HfConfig, MalformedJsonIsAOneLineError) {
  auto m = parse_hf_config("{\"model_type\": \"llama\",", "bad.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().field, "bad.json");
  EXPECT_EQ(m.error().message, "malformed JSON");
}

TEST(HfConfig, WrongTypeNamesTheKey) {
  auto m = parse_hf_config(R"({"model_type": "llama", "num_hidden_layers": "thirty-two"})", "c.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().field, "c.json: num_hidden_layers");
}

TEST(HfConfig, NegativeAndAbsurdSizesAreRejected) {
  auto neg = parse_hf_config(R"({"model_type":"llama","num_hidden_layers":-2,"hidden_size":64,
    "intermediate_size":128,"num_attention_heads":4,"vocab_size":100})", "c.json");
  ASSERT_FALSE(neg.ok());
  EXPECT_EQ(neg.error().field, "c.json: num_hidden_layers");
  auto huge = parse_hf_config(R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":1e15,
    "intermediate_size":128,"num_attention_heads":4,"vocab_size":100})", "c.json");
  ASSERT_FALSE(huge.ok());
}

TEST(HfConfig, MissingFieldIsNamed) {
  auto m = parse_hf_config(R"({"model_type":"llama","num_hidden_layers":2,"hidden_size":64,
    "num_attention_heads":4,"vocab_size":100})", "c.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().field, "c.json: intermediate_size");
}

}  // namespace gpuplan
