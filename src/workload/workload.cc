#include "workload/workload.h"

#include <fmt/format.h>

namespace gpuplan {

namespace {
template <class E>
struct Named {
  E value;
  const char* name;
};
constexpr Named<Task> kTasks[] = {{Task::pretrain, "pretrain"}, {Task::full, "full"},
                                  {Task::lora, "lora"}, {Task::qlora, "qlora"},
                                  {Task::infer, "infer"}};
constexpr Named<Optimizer> kOptimizers[] = {{Optimizer::adamw, "adamw"},
                                            {Optimizer::adamw8bit, "adamw8bit"},
                                            {Optimizer::sgd, "sgd"},
                                            {Optimizer::adafactor, "adafactor"},
                                            {Optimizer::lion, "lion"}};
constexpr Named<Recompute> kRecompute[] = {
    {Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}};

template <class E, size_t N>
std::optional<E> parse(const Named<E> (&table)[N], const std::string& s) {
  for (const auto& e : table)
    if (s == e.name) return e.value;
  return std::nullopt;
}
template <class E, size_t N>
std::string name(const Named<E> (&table)[N], E v) {
  for (const auto& e : table)
    if (v == e.value) return e.name;
  return "?";
}
}  // namespace

std::optional<Task> parse_task(const std::string& s) { return parse(kTasks, s); }
std::optional<Optimizer> parse_optimizer(const std::string& s) { return parse(kOptimizers, s); }
std::optional<Recompute> parse_recompute(const std::string& s) { return parse(kRecompute, s); }
std::string to_string(Task t) { return name(kTasks, t); }
std::string to_string(Optimizer o) { return name(kOptimizers, o); }
std::string to_string(Recompute r) { return name(kRecompute, r); }

Precision Workload::activation_precision() const {
  if (precision == Precision::fp32 || precision == Precision::tf32) return Precision::fp32;
  if (precision == Precision::fp16) return Precision::fp16;
  return Precision::bf16;
}

Status Workload::validate(const ModelSpec& m) const {
  if (micro_batch <= 0) return make_error("--batch", fmt::format("must be at least 1, got {}", micro_batch));
  if (micro_batch > (1 << 20)) return make_error("--batch", fmt::format("{} is absurd", micro_batch));
  if (seq <= 0) return make_error("--seq", fmt::format("must be at least 1, got {}", seq));
  if (seq > (int64_t{1} << 24)) return make_error("--seq", fmt::format("{} tokens is absurd", seq));
  if (grad_accum <= 0) return make_error("--grad-accum", fmt::format("must be at least 1, got {}", grad_accum));
  if (lora_rank <= 0 || lora_rank > 65536)
    return make_error("--lora-rank", fmt::format("must be between 1 and 65536, got {}", lora_rank));
  if (par.tp <= 0) return make_error("--tp", "must be at least 1");
  if (par.pp <= 0) return make_error("--pp", "must be at least 1");
  if (par.dp <= 0) return make_error("--gpus", "must be a multiple of tp x pp");
  if (par.zero < 0 || par.zero > 3) return make_error("--zero", fmt::format("must be 0 to 3, got {}", par.zero));
  if (m.heads % par.tp != 0)
    return make_error("--tp", fmt::format("{} does not divide the model's {} attention heads", par.tp, m.heads));
  if (par.pp > m.layers)
    return make_error("--pp", fmt::format("{} stages for {} layers", par.pp, m.layers));
  if (par.virtual_stages <= 0 || par.pp * par.virtual_stages > m.layers)
    return make_error("--virtual-stages", "pp x virtual stages must not exceed the layers");
  if (task == Task::qlora && precision != Precision::bf16 && precision != Precision::fp16)
    return make_error("--precision", "QLoRA computes in bf16 or fp16 over NF4 weights");
  if (training() && (precision == Precision::int8 || precision == Precision::int4 || precision == Precision::nf4))
    return make_error("--precision", to_string(precision) + " is a weight format for inference or QLoRA, not a training precision");
  if (task == Task::infer && m.traits.encoder && kv_precision)
    return make_error("--kv-precision", "encoder models keep no KV cache");
  return std::nullopt;
}

}  // namespace gpuplan
