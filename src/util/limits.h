// The largest sizes and counts gpuplan accepts from users, in one place. Each bound sits far above
// anything built or announced today (the reason is beside it), so no real input is refused, and far
// enough below 2^63 that products of bounded values (parameters, tokens per step, bytes) are still
// checked rather than assumed to fit. A value past a bound is an error, not a silent clamp.
#pragma once

#include <cstdint>

namespace gpuplan::limits {

// GPUs in one job or plan: the largest clusters announced hold ~100k-200k GPUs (xAI Colossus,
// 2024).
inline constexpr int64_t kMaxGpus = int64_t{1} << 20;
// Transformer blocks: the deepest published LLMs have ~100-200 (Llama 3.1 405B: 126).
inline constexpr int64_t kMaxLayers = int64_t{1} << 16;
// Hidden width: the widest published is 25,600 (Megatron-LM's 1T configuration; PaLM 540B 18,432).
inline constexpr int64_t kMaxHidden = int64_t{1} << 20;
// MLP width (per expert): the widest published is 73,728 (PaLM 540B; Llama 405B 53,248).
inline constexpr int64_t kMaxIntermediate = int64_t{1} << 22;
// Attention heads: at most a few hundred in published models (Llama 405B: 128).
inline constexpr int64_t kMaxHeads = int64_t{1} << 16;
// Vocabulary: the largest in use are ~256k tokens (Gemma: 256,000; Gemma 3: 262,144).
inline constexpr int64_t kMaxVocab = int64_t{1} << 24;
// Routed experts per layer: the most in a released model is 384 (Kimi K2); 65,536 leaves room for
// research on fine-grained experts.
inline constexpr int64_t kMaxExperts = int64_t{1} << 16;
// Context length a model advertises: the longest released is 10M tokens (Llama 4 Scout).
inline constexpr int64_t kMaxPosition = int64_t{1} << 30;
// Tokens in one sequence of a workload: 16M, beyond every advertised context window.
inline constexpr int64_t kMaxSeq = int64_t{1} << 24;
// Sequences per micro-batch (or concurrent sequences when serving).
inline constexpr int64_t kMaxBatch = int64_t{1} << 20;
// Micro-batches per optimizer step: real runs use up to a few thousand.
inline constexpr int64_t kMaxGradAccum = int64_t{1} << 20;
// Sequences per optimizer step: the largest published global batches are ~16M tokens / ~8k
// sequences; a billion sequences is far past that.
inline constexpr int64_t kMaxGlobalBatch = int64_t{1} << 30;
// Parameters in a model: the largest published are ~1.6T (Switch-C) and ~1T (Kimi K2).
inline constexpr int64_t kMaxParameters = int64_t{1} << 50;  // ~1.1e15
// Tokens in a training run or dataset: the largest published runs use ~36T (Qwen3) tokens.
inline constexpr double kMaxTokens = 1e16;
// Epochs over a dataset.
inline constexpr double kMaxEpochs = 1e6;
// Bytes gpuplan reads from one user-named text file (config, workload, profile summary, TOML):
// real ones are KBs; a larger file is the wrong file (a weight shard, a log).
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{64} << 20;
// Bytes read for a GGUF header: headers hold the tokenizer (a few MB).
inline constexpr uint64_t kMaxGgufHeaderBytes = uint64_t{256} << 20;

}  // namespace gpuplan::limits
