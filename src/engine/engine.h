// Serving engines as data: what vLLM, SGLang, TensorRT-LLM, llama.cpp and Hugging Face transformers
// really do when they generate (how much of the memory bandwidth their decode kernels reach per
// weight format, their GEMM efficiency, fixed per-step and per-request costs, CUDA graphs, how they
// budget and page the KV cache, how they batch). Loaded from data/engines.toml, where every figure
// cites its source and date; estimators and the serving simulator take an Engine like a Gpu.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "util/status.h"
#include "model/model.h"
#include "workload/precision.h"
#include "workload/workload.h"

namespace gpuplan {

// A figure that depends on the GPU architecture and the weight format: looked up by architecture
// (then "default") and within it by format name (then its class "16bit", "8bit", "4bit", then
// "default").
struct FormatTable {
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, double>>>> by_architecture;
  double lookup(const std::string& architecture, Precision p, double fallback) const;
};

struct Engine {
  std::string id, name, source, source_date, notes;

  // Decode weight and KV reads, as a share of the GPU's streaming bandwidth (efficiency.toml
  // memory_max_fraction); 4-bit formats pay their dequantisation here.
  FormatTable decode_bandwidth;
  // Prefill GEMMs, relative to the GPU's cuBLAS-class GEMM efficiency curve.
  FormatTable prefill_matmul;
  // Whether no measurement outside the validation rows gives the engine's prompt GEMMs (its own
  // kernels), so that `gpuplan fit` fits their efficiency relative to that curve; the fitted
  // multiplier (data/fitted.toml, 1: the curve as it is) scales prefill_matmul.
  bool prefill_matmul_fitted = false;
  double prefill_matmul_scale = 1;
  double attention_relative = 1;  // fused attention, relative to the GPU table's figure
  // Prompt GEMMs multiply 16-bit operands (dequantised weights included) with 16-bit accumulation:
  // on cards whose FP16-accumulate rate is faster (GeForce) that rate is their peak.
  bool gemm_fp16_accumulate = false;
  // Prompt GEMMs on quantised weights first dequantise them to FP16 in a buffer for cuBLAS (one
  // read of the stored weights, one FP16 write, per physical batch of ubatch_tokens): always, or
  // on the listed architectures (llama.cpp's before its MMQ kernels became the default).
  bool prompt_dequantize = false;
  std::vector<std::string> prompt_dequantize_architectures;
  // A quantised matmul over at least this many token rows (decode steps of a batch included)
  // expands the weights to 16 bits and runs the 16-bit GEMM on the copy; below it a fused
  // quantised GEMV reads the stored weights (bitsandbytes' matmul_4bit: 2). 0: never.
  int64_t dequantize_min_rows = 0;
  int64_t ubatch_tokens = 0;  // physical batch a prompt is split into (0: the whole prompt at once)
  // Without a fused attention kernel: bytes moved per score element between the QK^T GEMM's write
  // and the AV GEMM's read (conversions, masked softmax); 0: one softmax pass in 16 bits.
  double eager_score_bytes = 0;
  bool dequantizes_prompt(const Gpu& gpu) const;
  // Whether a matmul over `rows` token rows of quantised weights runs on a 16-bit copy by the
  // row rule (dequantize_min_rows); prompts also by the flags above.
  bool dequantizes_rows(double rows) const {
    return dequantize_min_rows > 0 && rows > 1 && rows >= static_cast<double>(dequantize_min_rows);
  }

  double step_overhead_s = 0;     // host cost of one forward step (scheduling, sampling, Python)
  double request_overhead_s = 0;  // fixed cost added to each request's first token
  // The serving frontend's time for one sequence's output in one step (detokenising, streaming):
  // under load a step lasts at least this times the sequences it emits for, where the frontend
  // runs beside the engine and cannot keep up (0: none measured).
  double frontend_seq_step_s = 0;
  // Where it has one (frontend_seq_step_s > 0): the frontend's time to take in one request (parse,
  // tokenise, hand over), fitted (FittedParameters); 0: requests reach the scheduler on arrival.
  double frontend_request_s = 0;
  // The scheduler runs a prefill batch whenever it can form one and decodes only between them
  // (SGLang's get_next_batch_to_run), where others mix both into every step.
  bool prefill_first = false;
  // Where > 0, the sequence limit is sized from the KV cache: this many sequences per model context
  // of cached tokens, at least max_num_seqs_floor and at most max_num_seqs, and at most half the
  // cached tokens (SGLang's max_running_requests when not given).
  double seqs_per_context_of_kv = 0;
  int64_t max_num_seqs_floor = 0;
  bool cuda_graphs = false;       // decode replays captured graphs: launches cost graph_kernel_overhead_s
  bool moe_cuda_graphs = true;    // false: mixture-of-experts models decode without them
  // What one fused-MoE call costs beyond its weights, FLOPs and launches (a measured kernel floor
  // per MoE layer; 0: none measured).
  double moe_call_overhead_s = 0;
  // What its latent-attention (MLA) decode kernel costs beyond its cache reads and FLOPs, per layer
  // and step (a measured floor; 0: none measured).
  double mla_decode_overhead_s = 0;
  // Kernels per routed expert and expert matmul where the engine loops over experts instead of
  // running one grouped GEMM (0): for a forward over one token, and over a batch of them.
  double moe_expert_launches_one_token = 0, moe_expert_launches_batch = 0;
  // The same for the engine's earlier builds that looped over the experts without CUDA graphs
  // (both 0: no such earlier path recorded).
  double looped_expert_launches_one_token = 0, looped_expert_launches_batch = 0;
  bool has_expert_loop() const { return looped_expert_launches_one_token > 0 || looped_expert_launches_batch > 0; }
  // This engine as its expert-looping builds ran mixture-of-experts models.
  Engine with_expert_loop() const;
  // How much slower the 16-bit mat-vec kernel of the engine's earlier builds streamed weights on
  // HBM cards (scalar loads; 1: no such earlier path recorded), and whether this engine is such a
  // build.
  double scalar_f16_matvec_hbm_slowdown = 1;
  bool scalar_f16_matvec = false;
  bool has_scalar_f16_matvec() const { return scalar_f16_matvec_hbm_slowdown > 1; }
  // This engine as those earlier builds decoded 16-bit weights.
  Engine with_scalar_f16_matvec() const;
  // Whether the engine's earlier builds decoded grouped-query attention with one thread block per
  // query head, each reading its KV head's cache whole (TensorRT-LLM's masked MHA kernel before
  // XQA), and whether this engine is such a build. How much of those repeated reads reaches DRAM
  // rather than the L2 cache no measurement gives: data/fitted.toml's share for the engine, set by
  // `gpuplan fit` (1, every read, where none is fitted).
  bool earlier_per_query_head_decode = false;
  bool per_query_head_decode = false;
  double per_query_head_kv_share = 1;
  bool has_per_query_head_decode() const { return earlier_per_query_head_decode; }
  Engine with_per_query_head_decode() const;
  double graph_kernel_overhead_s = 0;
  // Whether the engine's mat-vec kernel for quantised weights is latency-bound: it keeps so few
  // bytes in flight per SM that, where the card's bandwidth per SM is high, it streams at a rate
  // per SM instead of the share above. The rate (bytes/s per SM) is data/fitted.toml's for the
  // engine, set by `gpuplan fit`; 0: no bound.
  bool quantized_matvec_latency_bound = false;
  double quantized_matvec_sm_Bps = 0;
  // Whether that rate can bind for `p` weights on `gpu` (a quantised format, a card with an SM count).
  bool matvec_sm_bound_applies(const Gpu& gpu, Precision p) const;
  // The bytes/s that rate allows `p` weights on `gpu` (0: no bound); decode_efficiency streams at
  // the lower of it and the bandwidth share.
  double matvec_stream_limit_Bps(const Gpu& gpu, Precision p) const;
  // The share of `gpu`'s bandwidth decode streams `p` weights at before that bound, and whether
  // the bound is what sets the stream.
  double decode_stream_share(const Efficiency& gpu_eff, const Gpu& gpu, Precision p) const;
  bool matvec_limit_binds(const Efficiency& gpu_eff, const Gpu& gpu, Precision p) const;

  // Scheduling
  bool continuous_batching = true;  // false: a batch runs to its longest request before the next starts
  bool chunked_prefill = true;
  int64_t max_batched_tokens = 8192;  // tokens one forward step may process
  int64_t max_num_seqs = 256;         // requests in flight at once
  // Defaults that depend on the card: below `large_gpu_min_gib` of memory, or on a GPU whose
  // catalog id contains one of `large_gpu_exclude`, the engine starts with the small limits
  // (0: the same as the large ones).
  double large_gpu_min_gib = 0;
  std::vector<std::string> large_gpu_exclude;
  int64_t small_gpu_max_batched_tokens = 0, small_gpu_max_num_seqs = 0;
  bool prefix_caching = false;        // on by default (the hit rate is the workload's)
  // Admission: false, a request enters when its next chunk fits and running ones are preempted as
  // the cache fills (vLLM); true, it enters only when the cache can hold its prompt and all its
  // output tokens, reserved up front, so nothing is ever preempted (TensorRT-LLM's
  // GUARANTEED_NO_EVICT).
  bool reserve_output_kv = false;

  // Attention data parallelism (Parallelism::attention_dp): whether the engine offers it, whether
  // its dense MLPs stay split over the group (else replicated), and whether each layer gathers the
  // whole batch to every GPU and reduce-scatters it back (else an all-to-all of the routed copies).
  bool attention_dp = false, attention_dp_dense_tp = false, attention_dp_gather = false;
  // Its batch limits then apply to each GPU's own requests (else to the group's together).
  bool attention_dp_limits_per_gpu = false;
  // Why this engine cannot run `m` attention data-parallel, or empty.
  std::string attention_dp_refusal(const ModelSpec& m) const;
  // Lays `w` out attention data-parallel as this engine runs it (experts over ep = tp unless given);
  // fails, naming `field`, where the engine offers no such layout or `m` cannot take it.
  Status use_attention_dp(Workload& w, const ModelSpec& m, const std::string& field) const;
  // The engine as a client of kind `client` meets it: "server" through its API server, as recorded;
  // "offline" driven from Python in its own process (vLLM's benchmark_throughput, LLM.generate),
  // with no frontend between them. Anything else is an error naming `field`.
  Status use_client(const std::string& client, const std::string& field);

  // KV cache
  double gpu_memory_utilization = 0.9;  // share of the card the engine budgets (weights + KV + peak)
  // Where the engine derives that share from a reserve instead (SGLang's mem_fraction_static):
  // share = (card - reserve) / card, reserve = base + per_prefill_token x the card's prefill chunk +
  // per_graph_seq x its CUDA-graph batch limit + per_gpu x (tp x pp), at least floor on cards above
  // floor_above_gib. The chunk and the graph limit come from the card's memory bucket.
  struct MemoryReserve {
    double base_mib = 0, per_prefill_token_mib = 0, per_graph_seq_mib = 0, per_gpu_mib = 0, floor_mib = 0, floor_above_gib = 0;
    struct Bucket {
      double below_gib = 0;
      int64_t prefill_tokens = 0, graph_seqs = 0, graph_seqs_tp4 = 0;  // graph_seqs_tp4: tp >= 4
    };
    std::vector<Bucket> buckets;  // ascending below_gib; empty: no reserve rule
  };
  MemoryReserve memory_reserve;
  // The share of `gpu` this engine budgets at this tensor- and pipeline-parallel size.
  double memory_fraction(const Gpu& gpu, int64_t tp, int64_t pp) const;
  // Weights as the engine holds them (repacked or padded for its kernels) over the checkpoint's,
  // by architecture and weight format; 1 where the table is silent.
  FormatTable weight_memory_relative;
  // Model families (model_type) whose sliding-window layers the engine caches at full length, as
  // it does its global-attention layers.
  std::vector<std::string> full_kv_families;
  int64_t kv_block_tokens = 16;         // paging granularity
  bool profile_run_peak = true;         // reserves the activation peak of a max_batched_tokens step
  // The profile run also samples one token for each of min(max_num_seqs, max_batched_tokens)
  // dummy requests: a logit of the whole vocabulary each, costing this many bytes at the sampler's
  // peak (0: no sampler in the profile). The reserve is the larger of that and the forward's peak.
  double profile_sampler_bytes_per_logit = 0;

  std::string autoscale_metric;  // the Prometheus gauge of requests in flight it exports

  // Multiplies every step and request time: data/fitted.toml's serving time scale for this engine
  // (fitted leave-one-publication-out by `gpuplan fit`), 1 in engines.toml's sourced figures alone.
  double time_scale = 1;

  // Weight formats the engine has kernels for on some architectures only (format -> those
  // architectures), with the source that says so; elsewhere gpuplan refuses rather than guess the
  // speed of a fallback path.
  std::vector<std::pair<std::string, std::vector<std::string>>> format_architectures;
  std::string format_architectures_source;
  // Why this engine cannot be modelled serving `p` weights on `gpu`, or empty.
  std::string unsupported(const Gpu& gpu, Precision p) const;
  // MoE kernel backends a run may select (TensorRT-LLM's moe_config.backend) whose speed gpuplan has
  // no measurement of, for a weight format on some architectures (backend, format, architectures),
  // with the source; gpuplan's figures are the engine's recommended backend's.
  struct UnmodelledMoeBackend {
    std::string backend, format;
    std::vector<std::string> architectures;
    // Whether it covers `p` weights on `gpu`.
    bool applies(const Gpu& gpu, Precision p) const;
  };
  std::vector<UnmodelledMoeBackend> unmodelled_moe_backends;
  std::string unmodelled_moe_backends_source;
  // Why a run on MoE backend `backend` cannot be modelled serving `p` weights on `gpu`, or empty.
  std::string unmodelled_moe_backend(const std::string& backend, const Gpu& gpu, Precision p) const;

  // The token budget per step and the sequence limit the engine starts with on `gpu`.
  struct BatchLimits {
    int64_t max_batched_tokens = 0, max_num_seqs = 0;
  };
  BatchLimits limits_on(const Gpu& gpu) const;
  // The most prompt tokens one forward takes on `gpu`: llama.cpp's physical batch, or the step
  // budget of an engine that chunks prefills; 0: the whole prompt at once.
  int64_t prefill_chunk_tokens(const Gpu& gpu) const;

  // The efficiencies a step of this engine runs at on `gpu` with weights in `p`.
  Efficiency decode_efficiency(const Efficiency& gpu_eff, const Gpu& gpu, Precision p, bool moe = false) const;
  Efficiency prefill_efficiency(const Efficiency& gpu_eff, const Gpu& gpu, Precision p) const;
  // The card as the engine's prompt GEMMs see it (gemm_fp16_accumulate raises its 16-bit peaks).
  Gpu prefill_gpu(const Gpu& gpu) const;
};

class EngineCatalog {
 public:
  static Result<EngineCatalog> from_toml(std::string_view text, const std::string& origin);
  static const EngineCatalog& builtin();

  // Fails with the nearest ids suggested. `field` names the input in errors ("--engine").
  Result<Engine> find(const std::string& id, const std::string& field = "--engine") const;
  const std::vector<Engine>& engines() const { return engines_; }
  std::vector<std::string> ids() const;

 private:
  std::vector<Engine> engines_;
};

// The engine assumed when none is named: vLLM, the most deployed open server.
inline constexpr const char* kDefaultEngineId = "vllm";

}  // namespace gpuplan
