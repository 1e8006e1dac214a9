#include "workload/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "util/limits.h"

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
constexpr Named<Recompute> kRecompute[] = {{Recompute::none, "none"},
                                           {Recompute::selective, "selective"},
                                           {Recompute::op, "op"},
                                           {Recompute::every, "every"},
                                           {Recompute::full, "full"}};

constexpr Named<Loss> kLoss[] = {{Loss::standard, "standard"}, {Loss::chunked, "chunked"}, {Loss::fused, "fused"},
                                 {Loss::compiled, "compiled"}};

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
std::optional<Loss> parse_loss(const std::string& s) { return parse(kLoss, s); }
std::string to_string(Loss l) { return name(kLoss, l); }
std::vector<std::string> loss_names() {
  std::vector<std::string> out;
  for (const auto& e : kLoss) out.emplace_back(e.name);
  return out;
}
std::string loss_choices() {
  const std::vector<std::string> n = loss_names();
  std::string s;
  for (size_t i = 0; i < n.size(); ++i) s += (i == 0 ? "" : i + 1 == n.size() ? " or " : ", ") + n[i];
  return s;
}
std::optional<RecomputeSpec> parse_recompute(const std::string& s) {
  if (s.rfind("every:", 0) == 0) {
    const std::string n = s.substr(6);
    if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const int64_t every = std::stoll(n);
    if (every < 1 || every > 1024) return std::nullopt;
    return RecomputeSpec{Recompute::every, every};
  }
  auto r = parse(kRecompute, s);
  if (!r || *r == Recompute::every) return std::nullopt;
  return RecomputeSpec{*r, 0};
}
std::string memory_band_class(Task t) {
  switch (t) {
    case Task::qlora: return "qlora";
    case Task::lora: return "lora";
    case Task::pretrain:
    case Task::full: return "full";
    case Task::infer: return "";
  }
  return "";
}

std::string to_string(Task t) { return name(kTasks, t); }
std::string to_string(Optimizer o) { return name(kOptimizers, o); }
std::string to_string(Recompute r) { return name(kRecompute, r); }
std::string to_string(const RecomputeSpec& r) {
  return r.mode == Recompute::every ? fmt::format("every:{}", r.every) : to_string(r.mode);
}

double Workload::recomputed_layer_fraction() const {
  if (recompute == Recompute::full) return 1;
  if (recompute == Recompute::every) return 1.0 / static_cast<double>(recompute_every);
  return 0;
}

ExpertLayout expert_layout(const Parallelism& p) {
  ExpertLayout l;
  l.ep = std::max<int64_t>(1, p.ep);
  const int64_t stage = p.tp * p.dp;
  l.etp = std::max<int64_t>(1, std::min(p.tp, stage / l.ep));
  l.replicas = std::max<int64_t>(1, stage / l.shards());
  return l;
}

Precision Workload::activation_precision() const {
  if (precision == Precision::fp32 || precision == Precision::tf32) return Precision::fp32;
  if (precision == Precision::fp16) return Precision::fp16;
  return Precision::bf16;
}

Status Workload::check_loss_chunk() const {
  if (loss_chunk_tokens < 0 || loss_chunk_tokens > limits::kMaxSeq)
    return make_error("--loss-chunk-tokens", fmt::format("must be between 0 and {}, got {}", limits::kMaxSeq, loss_chunk_tokens));
  if (loss_chunk_tokens > 0 && (loss == Loss::standard || loss == Loss::compiled)) return make_error("--loss-chunk-tokens", "applies to --loss chunked or fused");
  return std::nullopt;
}

Status Workload::validate(const ModelSpec& m) const {
  if (micro_batch <= 0) return make_error("--batch", fmt::format("must be at least 1, got {}", micro_batch));
  if (micro_batch > limits::kMaxBatch) return make_error("--batch", fmt::format("{} is absurd", micro_batch));
  if (seq <= 0) return make_error("--seq", fmt::format("must be at least 1, got {}", seq));
  if (seq > limits::kMaxSeq) return make_error("--seq", fmt::format("{} tokens is absurd", seq));
  if (grad_accum <= 0) return make_error("--grad-accum", fmt::format("must be at least 1, got {}", grad_accum));
  if (grad_accum > limits::kMaxGradAccum)
    return make_error("--grad-accum", fmt::format("{} micro-batches a step is absurd (the limit is {})", grad_accum,
                                                  limits::kMaxGradAccum));
  if (optimizer_in_backward && grad_accum != 1)
    return make_error("--optimizer-in-backward", "steps as each gradient arrives, so it needs --grad-accum 1");
  if (optimizer_in_backward && offload_optimizer)
    return make_error("--optimizer-in-backward", "give it or --offload-optimizer, not both");
  if (paged_optimizer && offload_optimizer) return make_error("--paged-optimizer", "give it or --offload-optimizer, not both");
  if (auto s = check_loss_chunk()) return s;
  if (lora_rank <= 0 || lora_rank > 65536)
    return make_error("--lora-rank", fmt::format("must be between 1 and 65536, got {}", lora_rank));
  if (!double_quant && task != Task::qlora) return make_error("--no-double-quant", "needs --task qlora (the 4-bit weights it describes)");
  if (!lora_targets.all()) {
    if (task != Task::lora && task != Task::qlora) return make_error("--lora-targets", "needs --task lora or qlora");
    if (!lora_targets.any()) return make_error("--lora-targets", "names no module");
    if (m.is_mla()) return make_error("--lora-targets", "only all-linear is modelled for multi-head latent attention");
  }
  if (recompute == Recompute::every && (recompute_every < 1 || recompute_every > 1024))
    return make_error("--recompute", fmt::format("every:N needs N from 1 to 1024, got {}", recompute_every));
  if (par.tp <= 0) return make_error("--tp", "must be at least 1");
  if (par.pp <= 0) return make_error("--pp", "must be at least 1");
  if (par.dp <= 0) return make_error("--gpus", "must be a multiple of tp x pp");
  // Each degree is bounded before the product is taken, so it cannot overflow.
  for (const auto& [name, v] : {std::pair{"--tp", par.tp}, std::pair{"--pp", par.pp}, std::pair{"--dp", par.dp},
                                std::pair{"--ep", par.ep}})
    if (v > limits::kMaxGpus) return make_error(name, fmt::format("{} is more than {} GPUs", v, limits::kMaxGpus));
  if (par.gpus() > limits::kMaxGpus)
    return make_error("--gpus", fmt::format("tp x pp x dp = {} is more than {} GPUs", par.gpus(), limits::kMaxGpus));
  // Sequences per optimizer step: bounded so that tokens per step (x seq) stay exact in int64.
  if (training() && micro_batch * grad_accum * par.dp > limits::kMaxGlobalBatch)
    return make_error("--grad-accum", fmt::format("micro-batch {} x grad-accum {} x dp {} sequences a step is absurd (the limit is {})",
                                                  micro_batch, grad_accum, par.dp, limits::kMaxGlobalBatch));
  if (par.zero < 0 || par.zero > 3) return make_error("--zero", fmt::format("must be 0 to 3, got {}", par.zero));
  if (m.heads % par.tp != 0)
    return make_error("--tp", fmt::format("{} does not divide the model's {} attention heads", par.tp, m.heads));
  if (par.pp > m.layers)
    return make_error("--pp", fmt::format("{} stages for {} layers", par.pp, m.layers));
  if (par.virtual_stages <= 0 || par.virtual_stages > m.layers || par.pp * par.virtual_stages > m.layers)
    return make_error("--virtual-stages", "pp x virtual stages must not exceed the layers");
  if (task == Task::qlora && precision != Precision::bf16 && precision != Precision::fp16)
    return make_error("--precision", "QLoRA computes in bf16 or fp16 over NF4 weights");
  if (training() && (precision == Precision::int8 || is_weight_only(precision)))
    return make_error("--precision", to_string(precision) + " is a weight format for inference or QLoRA, not a training precision");
  if (par.ep <= 0) return make_error("--ep", fmt::format("must be at least 1, got {}", par.ep));
  if (par.cp <= 0 || par.cp > 1024) return make_error("--cp", fmt::format("must be between 1 and 1024, got {}", par.cp));
  if (par.cp > 1 && seq % (2 * par.cp) != 0)
    return make_error("--cp", fmt::format("{} x 2 must divide the sequence of {} tokens (load-balanced ring attention)", par.cp, seq));
  if (par.cp > 1 && !training()) return make_error("--cp", "context parallelism is modelled for training only");
  if (par.shard_group < 0 || (par.shard_group > 0 && par.dp % par.shard_group != 0))
    return make_error("--shard-group", fmt::format("{} must divide the {} data-parallel replicas", par.shard_group, par.dp));
  if (par.shard_group > 0 && par.zero == 0)
    return make_error("--shard-group", "hybrid sharding needs ZeRO/FSDP (--zero 1 to 3)");
  if (par.ep > 1 && !m.is_moe())
    return make_error("--ep", "expert parallelism needs a mixture-of-experts model; this one is dense");
  if (par.ep > 1 && (par.tp * par.dp) % par.ep != 0)
    return make_error("--ep", fmt::format("{} must divide the tp x dp = {} GPUs of a pipeline stage", par.ep,
                                          par.tp * par.dp));
  if (par.ep > 1 && m.experts % par.ep != 0)
    return make_error("--ep", fmt::format("{} does not divide the model's {} experts", par.ep, m.experts));
  if (!(moe_capacity_factor == 0 || (moe_capacity_factor >= 1 && moe_capacity_factor <= 64)))
    return make_error("--capacity-factor", fmt::format("must be 0 (dropless) or between 1 and 64, got {}", moe_capacity_factor));
  if (par.attention_dp) {
    if (task != Task::infer) return make_error("--attention-dp", "is a serving layout (--task infer)");
    if (!m.is_moe()) return make_error("--attention-dp", "is modelled for mixture-of-experts models; this one is dense");
    if (par.tp < 2) return make_error("--attention-dp", "needs --tp 2 or more: attention runs data-parallel over the tp GPUs");
    if (par.pp > 1) return make_error("--attention-dp", "is modelled without pipeline stages (--pp 1)");
    if (par.ep != par.tp)
      return make_error("--ep", fmt::format("attention data parallelism spreads the experts over the {} GPUs: --ep {}", par.tp, par.tp));
  }
  if (task == Task::infer && m.traits.encoder && kv_precision)
    return make_error("--kv-precision", "encoder models keep no KV cache");
  return std::nullopt;
}

}  // namespace gpuplan
