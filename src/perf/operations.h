// The operations of one transformer forward pass on one GPU (GEMMs with their shapes, attention,
// norms and element-wise work, embedding and LM head), each with FLOPs and bytes moved.
// Training, inference and the roofline command all count work from this one list.
#pragma once

#include <vector>

#include "model/model.h"
#include "perf/roofline.h"
#include "workload/workload.h"

namespace gpuplan {

struct ForwardShape {
  double tokens = 0;       // tokens in this forward on this GPU (batch x new tokens)
  double sequences = 1;    // sequences in the batch
  double kv_len = 0;       // keys each query attends to (context length)
  bool causal_halving = true;  // fused causal attention skips the masked half
  double tp = 1;
  bool sequence_parallel = false;
  bool flash = true;
  // Unfused attention's element-wise chain over the scores, bytes per score element forward and
  // backward (Stack::eager_score_*_bytes); 0: one fused softmax kernel.
  double score_forward_bytes = 0, score_backward_bytes = 0;
  bool lm_head_all_tokens = true;  // training: logits for every token; inference: last token only
  // An encoder fine-tuned for a task (BERT for classification or QA spans) swaps its MLM head for
  // a small task head: no vocabulary logits, as the memory model has it too.
  bool lm_head = true;
  double weight_bytes = 2;   // per weight in the block linears
  double other_weight_bytes = 2;
  double act_bytes = 2;
  double kv_bytes = 2;       // per KV element read by attention
  bool kv_cache_read = false;  // decode reads K and V from the cache
  // Decode under a kernel with one thread block per query head (TensorRT-LLM's masked MHA before
  // XQA): the share of each further query head's read of its KV head's cache that reaches DRAM
  // (0: each KV head read once; 1: once per query head).
  double per_query_head_kv_share = 0;
  // Mixture of experts: the expert-parallel layout (ep ranks, each expert split etp ways) and the
  // busiest rank's load relative to a balanced share (imbalance, or the capacity factor).
  double ep = 1, etp = 1, moe_load = 1;
  double expert_weight_bytes = 0;  // per routed-expert weight; 0 = weight_bytes
  // Kernels launched per touched expert for each expert matmul, where the engine loops over the
  // experts (0: one grouped GEMM runs all of a layer's experts).
  double expert_launches = 0;
  // What the engine's fused-MoE call costs beyond its weights, FLOPs and launches, per MoE layer,
  // and its latent-attention decode kernel beyond its cache reads and FLOPs, per layer.
  double moe_call_overhead_s = 0, mla_decode_overhead_s = 0;
  // Attention data parallelism over the tp GPUs (1: none): attention, norms and the LM head run
  // with every head on the busiest GPU's whole requests, ceil(sequences / attention_dp) of them
  // and their tokens; the routed experts
  // see all `tokens`; the dense MLPs are replicated on the local tokens or (dense_tp) split over
  // the group for all of them.
  double attention_dp = 1;
  bool dense_tp = false;
  // This shape as its attention (and, with dense replicated, its dense MLPs) sees it.
  ForwardShape local() const;
  // LoRA/QLoRA training: the rank of the adapters on every block linear (0: none).
  double lora_rank = 0;
  LoraTargets lora_targets;
};

// Routed experts one GPU runs in one MoE layer, and the token copies they process: with few
// tokens (decode) not every expert is chosen. `group_tokens` distinct tokens each pick top-k of E
// uniformly: E (1 - (1 - k/E)^tokens) experts are touched (the expected count under balanced
// routing, which the routers' balancing losses aim for).
struct ExpertWork {
  double experts_touched = 0;  // on this GPU
  double token_copies = 0;     // routed (token, expert) pairs on this GPU
};
ExpertWork expert_work(const ModelSpec& m, const ForwardShape& s);

// Ops of one transformer block (`calls` = 1) for the given shape.
std::vector<Op> block_forward_ops(const ModelSpec& m, const ForwardShape& s);
// Embedding lookup, final norm, LM head (and loss when training).
std::vector<Op> head_forward_ops(const ModelSpec& m, const ForwardShape& s, bool loss);

// Model FLOPs of a forward pass over `tokens` tokens with `kv_len` context, the Megatron-LM
// convention (Narayanan et al. 2021, Eq. 3, generalised to GQA/GLU/MoE): every matmul, attention
// counted without causal halving, LM head included. Used for MFU so figures match papers.
double model_forward_flops(const ModelSpec& m, double tokens, double kv_len);

}  // namespace gpuplan
