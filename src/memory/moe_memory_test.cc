// Memory of mixture-of-experts and latent-attention models: weights and KV cache against the
// figures serving engines print when they load a model, and how expert parallelism, latent
// attention and expert-only quantisation change the per-GPU terms.
#include <gtest/gtest.h>

#include <cmath>

#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "memory/memory_model.h"
#include "model/presets.h"
#include "util/units.h"

namespace gpuplan {

namespace {

Efficiency eff() { return EfficiencyTable::builtin().for_gpu(*Catalog::builtin().find("h100-sxm")); }

Workload serving(Precision p, int64_t tp, int64_t seq, int64_t sequences = 1) {
  Workload w;
  w.task = Task::infer;
  w.precision = p;
  w.par.tp = tp;
  w.seq = seq;
  w.micro_batch = sequences;
  return w;
}

MemoryEstimate estimate(const char* preset, const Workload& w) {
  const ModelSpec m = *Presets::builtin().find(preset);
  EXPECT_FALSE(w.validate(m).has_value()) << preset;
  return estimate_memory(m, w, eff());
}

struct EngineLog {
  const char* what;
  const char* preset;
  Workload w;
  double published_gib;  // weights, or KV cache
  bool kv;
  const char* source;
};

}  // namespace

// Weights and KV cache as engines report them at load time. Each row is one log line.
TEST(MoeMemory, WeightsAndKvMatchEngineLoadLogsWithinFivePercent) {
  const EngineLog logs[] = {
      {"Qwen3-30B-A3B bf16, vLLM TP 4", "qwen3-30b-a3b", serving(Precision::bf16, 4, 128), 14.2474, false,
       "vllm-project/vllm#17327: 'Model loading took 14.2474 GiB' on each of 4 workers"},
      {"Qwen3-30B-A3B Q4_K_M, llama.cpp", "qwen3-30b-a3b", serving(Precision::q4_k_m, 1, 128), 17.35, false,
       "ggml-org/llama.cpp#13217: 'file size = 17.35 GiB (4.88 BPW)'"},
      {"gpt-oss-120b MXFP4 MoE, llama.cpp", "gpt-oss-120b", serving(Precision::mxfp4, 1, 128), 59.02, false,
       "ggml-org/llama.cpp#15253: 'file type = MXFP4 MoE', 'file size = 59.02 GiB (4.34 BPW)'"},
      {"DeepSeek-R1 FP8, vLLM TP 8", "deepseek-v3", serving(Precision::fp8, 8, 128), 79.41, false,
       "HabanaAI/vllm-fork#809: 'Pre-loading model weights on hpu:0 took 79.41 GiB of device memory' (TP 8)"},
      {"DeepSeek-V2-Lite bf16, vLLM", "deepseek-v2-lite", serving(Precision::bf16, 1, 128), 29.3010, false,
       "vllm-project/vllm#4650: 'Loading model weights took 29.3010 GB' (vLLM prints GiB)"},
      // KV: 2 sequences x 131,072 cells on the 18 full-attention layers, f16 (the 18 window
      // layers keep a separate 90 MiB cache padded to 1,280 cells, outside this line).
      {"gpt-oss-120b KV, llama.cpp f16, 2 x 131072 tokens", "gpt-oss-120b", serving(Precision::mxfp4, 1, 131072, 2),
       (9216.0 + 90.0) / 1024, true,
       "ollama/ollama#16480: 'size = 9216.00 MiB (131072 cells, 18 layers, 2/2 seqs)' + SWA 'size = 90.00 MiB'"},
      {"Qwen3-30B-A3B KV, SGLang bf16, 122420 tokens", "qwen3-30b-a3b", serving(Precision::bf16, 1, 122420), 11.20, true,
       "kvcache-ai/ktransformers#1971 (SGLang): 'KV Cache is allocated. #tokens: 122420, K size: 5.60 GB, V size: 5.60 GB'"},
  };
  int within = 0;
  for (const EngineLog& l : logs) {
    const MemoryEstimate e = estimate(l.preset, l.w);
    const double got = (l.kv ? e.kv_cache : e.weights) / kGiB;
    const double err = got / l.published_gib - 1;
    EXPECT_LT(std::fabs(err), 0.05) << l.what << ": " << got << " GiB, published " << l.published_gib << " ("
                                    << l.source << ")";
    within += std::fabs(err) < 0.05;
  }
  EXPECT_EQ(within, 7);
}

// vLLM pads gpt-oss's MXFP4 expert matrices to multiples of 256 for its kernels (2,880 -> 3,072),
// which gpuplan does not model: the estimate is the checkpoint's bytes, 6% under what vLLM holds.
TEST(MoeMemory, VllmPaddingOfMxfp4ExpertsIsAKnownMiss) {
  // vllm-project/vllm#33155: gpt-oss-120b on one H100, 'Model loading took 64.38 GiB memory'.
  const double got = estimate("gpt-oss-120b", serving(Precision::mxfp4, 1, 128)).weights / kGiB;
  EXPECT_NEAR(got / 64.38, 0.94, 0.02);
}

TEST(MoeMemory, LatentAttentionCachesTheLatentWholeOnEveryTensorParallelRank) {
  // DeepSeek-V3: 61 layers x (512 latent + 64 RoPE key) x 2 B = 70,272 B per token, on each of
  // the TP ranks (vLLM's MLA backends do not split the latent).
  for (int64_t tp : {1, 8}) {
    const MemoryEstimate e = estimate("deepseek-v3", serving(Precision::fp8, tp, 1000));
    EXPECT_NEAR(e.kv_cache, 61.0 * 576 * 2 * 1000, 1) << "tp " << tp;
  }
  // Without latent attention the cache would hold 128 heads x (192 + 128) per layer: 71x more.
}

TEST(MoeMemory, ExpertParallelismSpreadsRoutedExpertsAndZeroShardsTheirReplicas) {
  const ModelSpec m = *Presets::builtin().find("qwen3-30b-a3b");
  Workload w;
  w.task = Task::pretrain;
  w.seq = 4096;
  w.par.dp = 8;
  w.par.zero = 1;
  const double experts = static_cast<double>(m.parameters().routed_experts);
  const MemoryEstimate dp_only = estimate_memory(m, w, eff());
  w.par.ep = 8;
  ASSERT_FALSE(w.validate(m).has_value());
  const MemoryEstimate ep8 = estimate_memory(m, w, eff());
  // bf16 weights: each GPU keeps 1/8 of the experts instead of all of them.
  EXPECT_NEAR(dp_only.weights - ep8.weights, experts * 2 * 7 / 8, experts * 0.01);
  // ZeRO-1 shards optimizer states over dp 8; with ep 8 the experts have one replica, so their
  // (already 1/8) states are not sharded further: the same bytes either way for the experts.
  EXPECT_NEAR(dp_only.optimizer, ep8.optimizer, dp_only.optimizer * 0.01);
}

TEST(MoeMemory, ExpertOnlyCheckpointsKeepTheRestIn16Bit) {
  // gpt-oss-20b's MXFP4 covers the experts; attention, router and embeddings stay bf16, as in
  // the checkpoint (model.safetensors.index.json total_size 13,761,264,768 bytes).
  const ModelSpec m = *Presets::builtin().find("gpt-oss-20b");
  const ParameterCounts pc = m.parameters();
  const double expected = pc.routed_experts * 4.25 / 8 + (pc.total() - pc.routed_experts) * 2.0;
  const MemoryEstimate e = estimate("gpt-oss-20b", serving(Precision::mxfp4, 1, 128));
  EXPECT_NEAR(e.weights / expected, 1, 0.01);
  EXPECT_NEAR(e.weights / 13761264768.0, 1, 0.02);
}

TEST(MoeMemory, SlidingAndChunkedLayersCapTheirCache) {
  // Llama 4 Scout: 36 of 48 layers attend within 8,192-token chunks.
  const ModelSpec m = *Presets::builtin().find("llama-4-scout");
  const double per_token_layer = 2.0 * 8 * 128 * 2;
  const MemoryEstimate e = estimate("llama-4-scout", serving(Precision::bf16, 1, 100000));
  EXPECT_NEAR(e.kv_cache, per_token_layer * (12 * 100000.0 + 36 * 8192.0), 1);
  EXPECT_TRUE(m.chunked_window);
}

}  // namespace gpuplan
