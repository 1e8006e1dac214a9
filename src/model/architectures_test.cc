// Parameter counts of mixture-of-experts and new architectures from their real config.json files
// (tests/fixtures/configs, sources in SOURCES.md there) against what each publisher states, and the
// reader's refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "model/gguf.h"
#include "model/hf_config.h"
#include "model/presets.h"
#include "model/resolve.h"

namespace gpuplan {

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/configs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<ModelSpec> read(const std::string& name, ReadOptions o = {}) { return parse_hf_config(fixture(name), name, o); }

struct Published {
  const char* fixture;
  double total, active;     // parameters as published
  double active_tolerance;  // the published figure's rounding: half a unit of its last digit, relative
  bool active_excludes_input_embedding;
  const char* source;
};

// Totals must match within 0.5%. Active counts are published to two or three digits; they must
// match within that rounding (and within 0.5% where three digits are given).
const Published kPublished[] = {
    {"mixtral-8x7b.json", 46.7e9, 12.9e9, 0.005, false,
     "Mistral AI, 'Mixtral of experts' (2023-12-11): 46.7B total, 12.9B per token"},
    {"qwen3-30b-a3b.json", 30.5e9, 3.3e9, 0.1 / 3.3, false,
     "Qwen/Qwen3-30B-A3B model card: 30.5B in total and 3.3B activated"},
    {"qwen3-235b-a22b.json", 235e9, 22e9, 0.5 / 22, false,
     "Qwen/Qwen3-235B-A22B model card: 235B in total and 22B activated"},
    {"qwen3-8b.json", 8.2e9, 8.2e9, 0.05 / 8.2, false, "Qwen/Qwen3-8B model card: 8.2B parameters"},
    {"qwen2-57b-a14b.json", 57.4e9, 14e9, 0.5 / 14, false,
     "Qwen/Qwen2-57B-A14B model card (57B, 14B activated); Hugging Face safetensors count 57.4B"},
    {"qwen1.5-moe-a2.7b.json", 14.3e9, 2.7e9, 0.05 / 2.7, false,
     "Qwen blog 'Qwen1.5-MoE' (2024-03-28): 14.3B parameters in total, 2.7B activated"},
    {"deepseek-v3.json", 671e9, 36.6e9, 0.005, true,
     "DeepSeek-V3 README_WEIGHTS.md: main model 671B, 36.6B activated including the 0.9B output head"},
    {"deepseek-v2.5.json", 236e9, 21e9, 0.5 / 21, true,
     "DeepSeek-V2 paper (arXiv 2405.04434) abstract: 236B total, 21B activated per token"},
    {"deepseek-v2-lite.json", 15.7e9, 2.4e9, 0.1 / 2.4, true,
     "DeepSeek-V2 paper, appendix B: DeepSeek-V2-Lite 15.7B total, 2.4B activated (two digits, truncated)"},
    {"deepseek-moe-16b.json", 16.4e9, 2.8e9, 0.05 / 2.8, false,
     "DeepSeekMoE paper (arXiv 2401.06066): DeepSeekMoE 16B, 16.4B total, 2.8B activated"},
    {"gpt-oss-120b.json", 116.83e9, 5.13e9, 0.005, true,
     "OpenAI gpt-oss model card (2025-08-05), table 1: 116.83B total, 5.13B active (embedding excluded)"},
    {"gpt-oss-20b.json", 20.91e9, 3.61e9, 0.005, true,
     "OpenAI gpt-oss model card (2025-08-05), table 1: 20.91B total, 3.61B active (embedding excluded)"},
    {"phi-3.5-moe.json", 41.9e9, 6.6e9, 0.05 / 6.6, false,
     "Phi-3 technical report (arXiv 2404.14219): Phi-3.5-MoE 41.9B total, 6.6B active"},
    {"olmoe-1b-7b.json", 6.92e9, 1.3e9, 0.05 / 1.3, false,
     "OLMoE paper (arXiv 2409.02060): 6.9B total (6.92B on Hugging Face), 1.3B active"},
    {"gemma-3-1b.json", 999885952, 999885952, 0.005, false,
     "google/gemma-3-1b-it, Hugging Face safetensors count: 999,885,952"},
};

}  // namespace

TEST(Architectures, FifteenPublishedTotalsWithinHalfAPercent) {
  int matched = 0;
  for (const Published& p : kPublished) {
    auto m = read(p.fixture);
    ASSERT_TRUE(m.ok()) << p.fixture << ": " << m.error().to_string();
    const double err = std::fabs(m->total_parameters() / p.total - 1);
    EXPECT_LT(err, 0.005) << p.fixture << ": counted " << m->total_parameters() << ", published " << p.total
                          << " (" << p.source << ")";
    matched += err < 0.005;
  }
  EXPECT_GE(matched, 15);
}

TEST(Architectures, ActiveCountsWithinThePublishedRounding) {
  for (const Published& p : kPublished) {
    auto m = read(p.fixture);
    ASSERT_TRUE(m.ok()) << p.fixture;
    double active = static_cast<double>(m->active_parameters());
    if (p.active_excludes_input_embedding) active -= static_cast<double>(m->parameters().embedding);
    // DeepSeek publishes V2-Lite's 2.45B as "2.4B" and Qwen Qwen3-30B-A3B's 3.35B as "3.3B".
    const bool truncated = std::string(p.fixture) == "deepseek-v2-lite.json" || std::string(p.fixture) == "qwen3-30b-a3b.json";
    const double err = truncated ? (active - p.active) / p.active : std::fabs(active / p.active - 1);
    EXPECT_LE(err, std::max(p.active_tolerance, 0.005) + 1e-9)
        << p.fixture << ": active " << active << ", published " << p.active << " (" << p.source << ")";
  }
}

TEST(Architectures, DeepSeekV3ReadsLatentAttentionDenseLayersAndMtp) {
  auto m = read("deepseek-v3.json");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->is_mla());
  EXPECT_EQ(m->moe_layers, 58);  // first_k_dense_replace = 3 of 61
  EXPECT_EQ(m->shared_experts, 1);
  EXPECT_EQ(m->expert_width(), 2048);
  EXPECT_EQ(m->head_dim, 192);  // qk_nope 128 + qk_rope 64
  // The cache keeps the 512-wide latent and the 64-wide shared RoPE key per token and layer.
  EXPECT_EQ(m->kv_cache_elements_per_layer(), 576);
  // DeepSeek-V3 README_WEIGHTS.md: the MTP module has 11.5B unique parameters.
  EXPECT_NEAR(m->mtp_parameters() / 1e9, 11.5, 0.15);
  EXPECT_TRUE(m->router_score_bias);
}

TEST(Architectures, Qwen2MoeHasAGatedSharedExpert) {
  auto m = read("qwen2-57b-a14b.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->shared_experts, 1);
  EXPECT_EQ(m->shared_width(), 20480);
  EXPECT_TRUE(m->shared_expert_gate);
  EXPECT_EQ(m->expert_width(), 2560);
}

TEST(Architectures, QwenMoeSparseStepAndMlpOnlyLayersMakeDenseLayers) {
  std::string cfg = fixture("qwen3-30b-a3b.json");
  cfg.replace(cfg.find("\"decoder_sparse_step\": 1"), 24, "\"decoder_sparse_step\": 2");
  cfg.replace(cfg.find("\"mlp_only_layers\": []"), 21, "\"mlp_only_layers\": [1]");
  auto m = parse_hf_config(cfg, "c.json");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  // Layers 1, 3, 5, ... are sparse with step 2; layer 1 is forced dense: 23 of 48.
  EXPECT_EQ(m->moe_layers, 23);
  EXPECT_EQ(m->dense_layers(), 25);
}

TEST(Architectures, GptOssHasSinksExpertBiasesAndAlternatingWindows) {
  auto m = read("gpt-oss-20b.json");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->attention_sinks);
  EXPECT_TRUE(m->expert_bias);
  EXPECT_TRUE(m->quant_experts_only);  // quantization_config mxfp4 keeps attention in bf16
  EXPECT_EQ(m->sliding_window, 128);
  EXPECT_EQ(m->sliding_layers, 12);
}

TEST(Architectures, Llama4ChunksThreeLayersInFourAndSharesAnExpert) {
  auto m = read("llama-4-scout-17b-16e.json");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->chunked_window);
  EXPECT_EQ(m->sliding_window, 8192);
  EXPECT_EQ(m->sliding_layers, 36);
  EXPECT_EQ(m->shared_experts, 1);
  EXPECT_EQ(m->expert_width(), 8192);
  EXPECT_EQ(m->intermediate, 16384);  // intermediate_size_mlp, for dense layers
  // Meta: Llama 4 Scout, 17B active parameters (the vision tower is not in this text config).
  EXPECT_NEAR(m->active_parameters() / 1e9, 17, 0.5);
}

TEST(Architectures, Llama4MaverickInterleavesDenseAndSparseLayers) {
  std::string cfg = fixture("llama-4-scout-17b-16e.json");
  auto root = nlohmann::json::parse(cfg);
  root.erase("moe_layers");
  root["interleave_moe_layer_step"] = 2;
  root["num_local_experts"] = 128;
  auto m = parse_hf_config(root.dump(), "maverick.json");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->moe_layers, 24);
  // Meta: Llama 4 Maverick, 400B total, 17B active (text model; the vision tower adds under 1B).
  EXPECT_NEAR(m->total_parameters() / 1e9, 400, 2);
  EXPECT_NEAR(m->active_parameters() / 1e9, 17, 0.5);
}

TEST(Architectures, Gemma3KeepsOneGlobalLayerInSix) {
  auto m = read("gemma-3-1b.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->sliding_layers, 22);  // 26 - 26/6
  EXPECT_EQ(m->traits.qk_norm, 1);
}

TEST(Architectures, MultimodalConfigsReadTheTextModelAndSaySo) {
  auto inner = nlohmann::json::parse(fixture("gemma-3-1b.json"));
  nlohmann::json root = {{"model_type", "gemma3"}, {"text_config", inner}, {"vision_config", {{"hidden_size", 1152}}}};
  auto m = parse_hf_config(root.dump(), "gemma3.json");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->family, "gemma3_text");
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_NE(m->notes[0].find("vision"), std::string::npos);
}

// ---- Refusals ------------------------------------------------------------------------------

TEST(Architectures, UnknownArchitectureIsRefusedNamingItsKeys) {
  auto m = read("minimax-m1.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().field, "minimax-m1.json: model_type");
  EXPECT_NE(m.error().message.find("minimax_m1"), std::string::npos);
  EXPECT_NE(m.error().message.find("attn_type_list"), std::string::npos);
  EXPECT_NE(m.error().message.find("--assume-dense"), std::string::npos);
}

TEST(Architectures, HybridLinearAttentionModelsAreRefused) {
  for (const char* f : {"qwen3-next-80b-a3b.json", "qwen3.5-35b-a3b.json"}) {
    auto m = read(f);
    ASSERT_FALSE(m.ok()) << f;
    EXPECT_NE(m.error().message.find("linear_"), std::string::npos) << m.error().to_string();
  }
}

TEST(Architectures, RenamedExpertKeysOnAKnownFamilyAreRefused) {
  auto m = read("deepseek-v3-renamed-keys.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().field.find("num_routed_experts"), std::string::npos);
  EXPECT_NE(m.error().field.find("num_shared_experts"), std::string::npos);
}

TEST(Architectures, ExpertsOnADenseFamilyAreRefused) {
  auto m = parse_hf_config(R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 100, "num_experts": 8})", "c.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().field, "c.json: num_experts");
}

TEST(Architectures, MambaLayerTypesAreRefused) {
  auto m = parse_hf_config(R"({"model_type": "mistral", "num_hidden_layers": 2, "hidden_size": 64,
    "intermediate_size": 128, "num_attention_heads": 4, "vocab_size": 100,
    "layer_types": ["mamba", "full_attention"]})", "c.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().field.find("layer_types=mamba"), std::string::npos);
}

TEST(Architectures, AssumeDenseReadsARefusedConfigAndSaysSo) {
  auto m = read("minimax-m1.json", ReadOptions{true});
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_TRUE(m->assumed_dense);
  EXPECT_FALSE(m->is_moe());
  ASSERT_FALSE(m->notes.empty());
  EXPECT_NE(m->notes[0].find("--assume-dense"), std::string::npos);
  // A config the reader understands is not marked.
  auto ok = read("mixtral-8x7b.json", ReadOptions{true});
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE(ok->assumed_dense);
  EXPECT_TRUE(ok->is_moe());
}

// ---- Presets -------------------------------------------------------------------------------

TEST(Architectures, PresetsMatchTheirConfigFiles) {
  const struct {
    const char* preset;
    const char* fixture;
  } pairs[] = {{"mixtral-8x7b", "mixtral-8x7b.json"},     {"qwen3-30b-a3b", "qwen3-30b-a3b.json"},
               {"qwen3-235b-a22b", "qwen3-235b-a22b.json"}, {"deepseek-v3", "deepseek-v3.json"},
               {"deepseek-v2-lite", "deepseek-v2-lite.json"}, {"gpt-oss-20b", "gpt-oss-20b.json"},
               {"gpt-oss-120b", "gpt-oss-120b.json"},     {"qwen2-57b-a14b", "qwen2-57b-a14b.json"},
               {"llama-4-scout", "llama-4-scout-17b-16e.json"}, {"phi-3.5-moe", "phi-3.5-moe.json"},
               {"olmoe-1b-7b", "olmoe-1b-7b.json"},       {"qwen3-8b", "qwen3-8b.json"},
               {"gemma-3-1b", "gemma-3-1b.json"}};
  for (const auto& p : pairs) {
    auto preset = Presets::builtin().find(p.preset);
    ASSERT_TRUE(preset.ok()) << p.preset;
    auto cfg = read(p.fixture);
    ASSERT_TRUE(cfg.ok()) << p.fixture;
    // Equal but for biases some abridged fixtures leave out (Phi-3.5-MoE: 0.36M).
    EXPECT_NEAR(preset->total_parameters() / static_cast<double>(cfg->total_parameters()), 1, 1e-4) << p.preset;
    EXPECT_NEAR(preset->active_parameters() / static_cast<double>(cfg->active_parameters()), 1, 1e-4) << p.preset;
    EXPECT_EQ(preset->kv_cache_elements_per_layer(), cfg->kv_cache_elements_per_layer()) << p.preset;
    EXPECT_EQ(preset->sliding_layers, cfg->sliding_layers) << p.preset;
  }
}


TEST(Architectures, ShapesBeyondAnyRealModelAreRefusedNotOverflowed) {
  // 65,536 experts of width 2^22 in 60,000 layers would overflow int64 parameter sums.
  auto m = parse_hf_config(R"({"model_type": "qwen3_moe", "num_hidden_layers": 60000, "hidden_size": 16384,
    "intermediate_size": 4096, "moe_intermediate_size": 4194304, "num_attention_heads": 128,
    "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 1000, "num_experts": 65536,
    "num_experts_per_tok": 8})", "huge.json");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("beyond any real model"), std::string::npos) << m.error().to_string();
}


namespace {

// A .safetensors file holding `tensors` (name, dtype, shape, bytes per element), zero-filled.
void write_safetensors(const std::string& path, const std::vector<std::tuple<std::string, std::string, std::vector<int64_t>, int>>& tensors) {
  nlohmann::json h = nlohmann::json::object();
  uint64_t off = 0;
  for (const auto& [name, dtype, shape, eb] : tensors) {
    uint64_t n = eb;
    for (int64_t d : shape) n *= static_cast<uint64_t>(d);
    h[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {off, off + n}}};
    off += n;
  }
  const std::string text = h.dump();
  std::ofstream out(path, std::ios::binary);
  uint64_t len = text.size();
  out.write(reinterpret_cast<const char*>(&len), 8);
  out << text << std::string(off, '\0');
}

}  // namespace

TEST(Architectures, SafetensorsCountMxfp4BlocksAsTwoWeightsAByteAndLeaveMtpLayersOut) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuplan_arch_mxfp4";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "config.json") << R"({"model_type": "gpt_oss", "num_hidden_layers": 2, "hidden_size": 64,
    "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "vocab_size": 100, "num_local_experts": 4, "num_experts_per_tok": 2, "sliding_window": 8,
    "layer_types": ["sliding_attention", "full_attention"], "max_position_embeddings": 256})";
  write_safetensors((dir / "model.safetensors").string(),
                    {{"model.layers.0.mlp.experts.gate_up_proj_blocks", "U8", {4, 128, 2, 16}, 1},
                     {"model.layers.0.mlp.experts.gate_up_proj_scales", "U8", {4, 128, 2}, 1},
                     {"model.layers.2.eh_proj.weight", "BF16", {8, 8}, 2}});
  auto m = resolve_model(dir.string());
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  // 4 x 128 x 2 x 16 bytes of packed FP4 = 32,768 weights; the scales are not weights; layer 2 of
  // a 2-layer model is an MTP module's.
  EXPECT_EQ(*m->tensor_parameters, 32768);
  std::filesystem::remove_all(dir);
}

namespace {
struct Gguf {
  std::string kv, infos;
  uint64_t n_kv = 0, n_t = 0;
  template <class T>
  static void put(std::string& s, T v) { s.append(reinterpret_cast<const char*>(&v), sizeof v); }
  static void str(std::string& s, const std::string& x) { put<uint64_t>(s, x.size()); s += x; }
  void u32(const std::string& k, uint32_t v) { str(kv, k); put<uint32_t>(kv, 4); put(kv, v); ++n_kv; }
  void s(const std::string& k, const std::string& v) { str(kv, k); put<uint32_t>(kv, 8); str(kv, v); ++n_kv; }
  void tensor(const std::string& name, std::vector<uint64_t> dims) {
    str(infos, name);
    put<uint32_t>(infos, static_cast<uint32_t>(dims.size()));
    for (auto d : dims) put(infos, d);
    put<uint32_t>(infos, 1);  // F16
    put<uint64_t>(infos, 0);
    ++n_t;
  }
  std::string bytes() const {
    std::string out = "GGUF";
    put<uint32_t>(out, 3);
    put(out, n_t);
    put(out, n_kv);
    return out + kv + infos;
  }
};

Gguf qwen3moe() {
  Gguf g;
  g.s("general.architecture", "qwen3moe");
  g.u32("qwen3moe.block_count", 4);
  g.u32("qwen3moe.embedding_length", 64);
  g.u32("qwen3moe.feed_forward_length", 192);
  g.u32("qwen3moe.attention.head_count", 4);
  g.u32("qwen3moe.attention.head_count_kv", 2);
  g.u32("qwen3moe.attention.key_length", 16);
  g.u32("qwen3moe.context_length", 256);
  g.u32("qwen3moe.expert_count", 8);
  g.u32("qwen3moe.expert_used_count", 2);
  g.u32("qwen3moe.expert_feed_forward_length", 32);
  g.tensor("token_embd.weight", {64, 100});
  return g;
}
}  // namespace

TEST(Architectures, GgufExpertKeysAreRead) {
  const std::string f = qwen3moe().bytes();
  auto h = parse_gguf_header(f, f.size(), "q.gguf");
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  auto m = model_from_gguf(*h, "q.gguf");
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->family, "qwen3_moe");
  EXPECT_EQ(m->experts, 8);
  EXPECT_EQ(m->experts_per_token, 2);
  EXPECT_EQ(m->expert_width(), 32);
  EXPECT_EQ(m->moe_layers, 4);
}

TEST(Architectures, GgufStateSpaceKeysAndUnknownArchitecturesAreRefused) {
  Gguf g = qwen3moe();
  g.u32("qwen3moe.ssm.state_size", 128);
  std::string f = g.bytes();
  auto h = parse_gguf_header(f, f.size(), "q.gguf");
  ASSERT_TRUE(h.ok());
  auto m = model_from_gguf(*h, "q.gguf");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().field.find("qwen3moe.ssm.state_size"), std::string::npos);
  EXPECT_TRUE(model_from_gguf(*h, "q.gguf", ReadOptions{true}).ok());

  Gguf r;
  r.s("general.architecture", "rwkv7");
  r.u32("rwkv7.block_count", 2);
  f = r.bytes();
  h = parse_gguf_header(f, f.size(), "r.gguf");
  ASSERT_TRUE(h.ok());
  m = model_from_gguf(*h, "r.gguf");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("unknown architecture 'rwkv7'"), std::string::npos);
}

}  // namespace gpuplan
