// The flags that describe a workload (task, precision, batch, parallelism, ...), shared by the
// commands that take one, and their conversion into a checked Workload.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "hardware/gpu.h"
#include "model/model.h"
#include "stack/stack.h"
#include "util/status.h"
#include "workload/workload.h"

namespace gpuplan::cli {

struct WorkloadFlags {
  std::string model;
  std::string task = "full", precision = "bf16", optimizer = "adamw";
  std::string recompute;  // empty: the stack's default (none without a stack)
  std::string stack;      // empty: default_stack_id(task)
  std::string loss;       // empty: the stack's default
  int64_t loss_chunk_tokens = 0;  // 0: the loss scheme's own chunking
  std::string fp8_recipe; // empty: the stack's first
  std::string attention_kernel;  // empty: the stack's kernel for the GPU's architecture
  std::string tp_overlap;        // on, off or empty (the stack's)
  std::string grad_reduce;       // fp32, bf16 or empty (the stack's): bf16 training's gradient buffers
  int64_t cp = 1, shard_group = 0;
  bool no_reshard_after_forward = false;
  bool no_master_weights = false;
  bool no_double_quant = false;
  std::string flash = "on", kv_precision;
  int64_t batch = 1, seq = 0, grad_accum = 1, lora_rank = 16;
  std::string lora_targets;  // empty: every linear module
  int64_t gpus = 1, tp = 1, pp = 1, dp = 0, virtual_stages = 1;
  int64_t ep = 0;               // 0 = 1 (plan: searched for MoE models)
  double capacity_factor = 0;   // MoE token-dropping capacity; 0 = dropless
  bool assume_dense = false;
  int zero = 0;
  bool offload_optimizer = false, no_sequence_parallel = false;
  bool optimizer_in_backward = false, paged_optimizer = false;
};

void add_workload_flags(CLI::App& sub, WorkloadFlags& f);
// --stack, --loss, --fp8-recipe and --attention-kernel, for the commands that model training (memory, train, plan).
void add_stack_flag(CLI::App& sub, WorkloadFlags& f);

// Lines every output about `m` must carry: what the reader assumed or left out (--assume-dense,
// an uncounted vision tower).
std::vector<std::string> model_caveats(const ModelSpec& m);
// Prints model_caveats(m), one "note: ..." line each.
void print_model_caveats(const ModelSpec& m);

// The first flag given that only a training estimate reads (--stack, --recompute, --zero, ...), or
// "": the commands that model inference refuse them rather than ignore them.
std::string training_only_flag(const WorkloadFlags& f);

// Resolves --model and checks every flag; errors name the flag.
Result<std::pair<ModelSpec, Workload>> build_workload(const WorkloadFlags& f);
// The same for generation, whose sequence (f.seq) is --prompt plus --output: a sequence error
// names --prompt, and an encoder model is refused.
Result<std::pair<ModelSpec, Workload>> build_generation_workload(const WorkloadFlags& f);

// The --stack record (or the task's usual one), with its defaults applied to what the flags left
// open (recomputation, loss); checks that it offers --fp8-recipe (or any recipe, with fp8).
Result<Stack> apply_stack(const WorkloadFlags& f, Workload& w);
// Fails, naming --attention-kernel, when the stack's attention kernel has no figure for the GPU's
// architecture (FlashAttention-3 is Hopper only).
Status check_attention_kernel(const Stack& stack, const Gpu& gpu);

}  // namespace gpuplan::cli
