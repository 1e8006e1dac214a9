// The training performance model: one optimizer step's time from the per-operation costs of each
// micro-batch (forward, backward, recompute), tensor/pipeline/data-parallel communication over the
// right links, the pipeline bubble and the optimizer update; then tokens/s, MFU, HFU and run time.
// A pure function of (model, workload, GPU, efficiencies, cluster).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "perf/roofline.h"
#include "stack/stack.h"
#include "workload/workload.h"

namespace gpuplan {

struct TrainingRun {
  int64_t global_batch = 0;           // sequences per optimizer step; 0 = micro_batch x grad_accum x dp
  std::optional<double> tokens;       // tokens to train on
  // Gradient reduction overlapped with backward; unset = as the stack does it. Set for runs that
  // publish otherwise (Megatron-LM in 2021 did not overlap).
  std::optional<bool> overlap_dp_grads;
  // ZeRO-3 gathers and reduce-scatters each parameter tensor in a collective of its own, and waits
  // for every gather before the compute that needs it. DeepSpeed did so until 0.5.5 (2021-11):
  // `_allgather_param` ran one `all_gather` a parameter after a `torch.cuda.synchronize()`, which
  // PR #1188 replaced ("the async version is not async at all").
  bool gather_each_tensor = false;
  // ZeRO-3's fetch-ahead window in parameter elements (DeepSpeed's stage3_prefetch_bucket_size);
  // unset = the stack's (Stack::zero3_prefetch_window).
  std::optional<double> zero3_prefetch_params;
};

// The fetch-ahead window, in parameter elements, of a ZeRO-3 run under `stack`: the run's, else the
// stack's; none where the stack prefetches whole layers (FSDP).
std::optional<double> zero3_prefetch_window(const ModelSpec& m, const Stack& stack, const TrainingRun& run);

// The element counts of one transformer block's parameter tensors as `stack`'s model code holds
// them: norms, attention and MLP projections (fused or apart), their biases and q/k norms; an MoE
// block (where most blocks are) holds each expert's projections and the router.
std::vector<int64_t> layer_parameter_tensors(const ModelSpec& m, const Stack& stack);

struct StepBreakdown {
  double compute_s = 0;        // compute-bound operations (matmuls at their efficiency)
  double memory_s = 0;         // memory-bound operations (norms, activations, unfused softmax, small GEMMs)
  double overhead_s = 0;       // kernel launch overhead
  double tp_comm_s = 0;        // tensor-parallel collectives (on the critical path)
  double pp_comm_s = 0;        // pipeline sends between stages
  double ep_comm_s = 0;        // expert-parallel all-to-all (dispatch and combine), on the critical path
  double cp_comm_s = 0;        // context-parallel ring attention sends not hidden behind attention
  double dp_comm_exposed_s = 0;  // data-parallel / ZeRO traffic not hidden behind backward
  double dp_comm_total_s = 0;
  double bubble_s = 0;         // pipeline fill and drain
  double optimizer_s = 0;      // the parameter update
  double offload_s = 0;        // optimizer states in CPU memory: PCIe transfers and the host's update (perf/offload.h)
  double host_bound_s = 0;     // the GPU waiting for the host to issue the layers' kernels (FitTerms::host_busy_s)
};

// The unfitted step time split into the three terms data/fitted.toml scales; they sum to the
// step time of the sourced model alone. `gpuplan fit` fits on these.
struct StepTerms {
  double compute_s = 0;  // compute-bound work, with its share of the pipeline bubble
  double memory_s = 0;   // memory-bound work, kernel launches, optimizer update, their bubble share
  double comm_s = 0;     // exposed collectives and sends, their bubble share
  // The parts of comm_s over PCIe and over the inter-node network (the rest over NVLink): stacks
  // hide communication on each differently, so each has its own fitted scale.
  double comm_pcie_s = 0, comm_network_s = 0;
  // Tensor-parallel time inside comm_s that the stack's overlap could hide under the layers' GEMMs;
  // the step takes it off, at the fitted share the stack reaches.
  double tp_hidden_s = 0;
};

struct FitTerms : StepTerms {
  // The host's time issuing the micro-batches' layer kernels (Stack::host_layer_pass_s), against
  // the micro-batches' own part of the terms (their passes, sends and bubble, not the optimizer or
  // the gradients' reduction): where the host's is the longer, the GPU waits for the difference.
  double host_busy_s = 0;
  StepTerms micro;
};

struct TrainingEstimate {
  double step_time_s = 0;
  // From the cross-validated residuals of comparable published runs (fitted.toml); absent when
  // the fit has no band.
  std::optional<std::pair<double, double>> step_time_s_band, tokens_per_s_band;
  FitTerms fit_terms;
  double memory_scale = 1;  // the fitted scale the memory-bound terms ran at (fitted.toml)
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double mfu = 0, hfu = 0;
  double model_flops_per_step = 0, hardware_flops_per_step = 0;
  int64_t micro_batches = 0;       // per replica per step
  int64_t global_batch = 0;
  std::optional<double> time_to_train_s, gpu_hours;
  StepBreakdown breakdown;
  std::string tp_link, dp_link, pp_link, ep_link, cp_link = "none";
  std::string stack;  // the software stack assumed
  double host_layer_pass_s = 0;  // the host's time a layer pass, adapters included (Stack::host_layer_pass_s)
  // What the run does that the estimate leaves out, each a sentence (empty: nothing known).
  std::vector<std::string> not_modelled;
};

// The FP8 recipe a run uses: the workload's, else the stack's first; nullptr when the stack offers
// none (FP8 GEMMs then run without cast costs: an assumption the caller should flag).
const LowPrecisionRecipe* fp8_recipe_of(const Workload& w, const Stack& stack);

// Backward of a GEMM is two GEMMs (input and weight gradients) of the forward's size; a fused
// attention backward does 2.5x the forward's matmul work (FlashAttention-2 paper, section 3.2);
// element-wise backward passes move about twice the bytes, unless the op counts its own.
Op backward_of(const Op& op);

// A low-precision recipe on one GEMM: `forward` and `backward` (the GEMM timed in the recipe's
// precision) slow by the recipe's GEMM throughput and carry its casts; returned is the backward work
// it adds on the input side, which runs as kernels of its own, not under the GEMMs.
OpTime apply_low_precision_recipe(const Op& op, const LowPrecisionRecipe& recipe, const Stack& stack, const Gpu& gpu,
                                  const Efficiency& eff, OpTime& forward, OpTime& backward);

// REQUIRES: w.validate(m) succeeded and w.training(); `eff` resolved for this GPU and stack
// (EfficiencyTable::for_gpu(gpu, stack)).
TrainingEstimate estimate_training(const ModelSpec& m, const Workload& w, const Gpu& gpu, const Efficiency& eff,
                                   const Stack& stack, const Cluster& cluster, const TrainingRun& run);

}  // namespace gpuplan
