#include "perf/offload.h"

#include <algorithm>

#include "hardware/platform.h"

namespace gpuplan {

double offload_optimizer_step_s(const ModelSpec& m, const Workload& w, const Gpu& gpu, int64_t gpus_per_node,
                                double host_optimizer_Bps) {
  const bool peft = w.task == Task::lora || w.task == Task::qlora;
  const double trainable = peft ? static_cast<double>(m.lora_parameters(w.lora_rank, w.lora_targets)) : static_cast<double>(m.total_parameters());
  // Each GPU owns a shard: split by tensor and pipeline parallelism, and by ZeRO over data parallelism.
  const double shard = trainable / static_cast<double>(w.par.tp * w.par.pp) /
                       static_cast<double>(w.par.zero >= 1 ? w.par.dp : 1);
  // 16-bit gradients down, 16-bit weights up: both directions of the GPU's PCIe link at once.
  const double pcie_s = 2.0 * shard / gpu.pcie_Bps();
  // The host's optimizer reads and writes its states (AdamW: fp32 master, two moments: 24 B) and
  // reads the gradient and writes the weight (4 B): 28 B per parameter, as on the GPU.
  double bytes_per_param = 28;
  switch (w.optimizer) {
    case Optimizer::adamw: bytes_per_param = 28; break;
    case Optimizer::adamw8bit: bytes_per_param = 16; break;
    case Optimizer::sgd:
    case Optimizer::lion: bytes_per_param = 20; break;
    case Optimizer::adafactor: bytes_per_param = 16; break;
  }
  const double node_gpus = static_cast<double>(std::min<int64_t>(gpus_per_node, w.par.gpus()));
  const double host_s = host_optimizer_Bps > 0 ? bytes_per_param * shard * node_gpus / host_optimizer_Bps : 0;
  return pcie_s + host_s;
}

namespace {

void add_offload_time(TrainingEstimate& e, double offload_s) {
  if (offload_s <= 0) return;
  // The update moves from the GPU to the host: memory-bound work like the GPU's optimizer, so it
  // joins the memory-bound term the fit scales.
  const double old_step = e.step_time_s;
  const double scale = e.memory_scale > 0 ? e.memory_scale : 1.0;
  e.fit_terms.memory_s += offload_s - e.breakdown.optimizer_s / scale;
  e.step_time_s += offload_s * scale - e.breakdown.optimizer_s;
  e.breakdown.optimizer_s = 0;
  e.breakdown.offload_s += offload_s * scale;
  const double k = old_step / e.step_time_s;
  // The bands are ratios to the estimate: they follow the step, and the rate the other way.
  if (auto& b = e.step_time_s_band) *b = {b->first / k, b->second / k};
  if (auto& b = e.tokens_per_s_band) *b = {b->first * k, b->second * k};
  e.mfu *= k;
  e.hfu *= k;
  e.tokens_per_s = e.tokens_per_step / e.step_time_s;
  if (e.time_to_train_s) {
    const double gpus = *e.gpu_hours / (*e.time_to_train_s / 3600.0);
    e.time_to_train_s = *e.time_to_train_s / k;
    e.gpu_hours = *e.time_to_train_s / 3600.0 * gpus;
  }
}

}  // namespace

double node_host_memory_Bps(const Gpu& gpu) {
  const auto nodes = Platform::builtin().nodes_for(gpu);
  return nodes.empty() ? 0 : nodes.front()->host_memory_Bps;
}

void add_host_optimizer_step(TrainingEstimate& e, const ModelSpec& m, const Workload& w, const Gpu& gpu,
                             const Stack& stack, int64_t gpus_per_node, double host_memory_Bps) {
  if (!w.offload_optimizer) return;
  if (host_memory_Bps <= 0) host_memory_Bps = node_host_memory_Bps(gpu);
  add_offload_time(e, offload_optimizer_step_s(m, w, gpu, gpus_per_node, host_memory_Bps * stack.host_optimizer_fraction));
}

}  // namespace gpuplan
