#include "report/json_report.h"

#include <cmath>

namespace gpuplan {

using nlohmann::json;

namespace {
json bytes(double b) { return static_cast<int64_t>(std::llround(b)); }
json tflops_or_null(double flops) { return flops > 0 ? json(flops / 1e12) : json(nullptr); }
}  // namespace

json to_json(const Gpu& g) {
  return {{"id", g.id},
          {"vendor", g.vendor},
          {"name", g.name},
          {"tier", to_string(g.tier)},
          {"architecture", g.architecture},
          {"compute_capability", g.compute_capability.empty() ? json(nullptr) : json(g.compute_capability)},
          {"sm_count", g.sm_count > 0 ? json(g.sm_count) : json(nullptr)},
          {"node_network_gbps", g.node_network_bps > 0 ? json(g.node_network_bps / 1e9) : json(nullptr)},
          {"form_factor", g.form_factor},
          {"memory_gb", g.memory_bytes / 1e9},
          {"memory_type", g.memory_type},
          {"memory_bandwidth_gbyte_s", g.memory_bw_Bps / 1e9},
          {"fp64_tflops", tflops_or_null(g.fp64_flops)},
          {"fp32_tflops", tflops_or_null(g.fp32_flops)},
          {"tf32_tflops", tflops_or_null(g.tf32_flops)},
          {"fp16_tflops", tflops_or_null(g.fp16_flops)},
          {"bf16_tflops", tflops_or_null(g.bf16_flops)},
          {"fp8_tflops", tflops_or_null(g.fp8_flops)},
          {"int8_tops", tflops_or_null(g.int8_ops)},
          {"fp4_tflops", tflops_or_null(g.fp4_flops)},
          {"fp16_acc16_tflops", tflops_or_null(g.fp16_acc16_flops)},
          {"tdp_w", g.tdp_w},
          {"interconnect", g.interconnect},
          {"interconnect_gbyte_s", g.interconnect_Bps / 1e9},
          {"pcie_gen", g.pcie_gen},
          {"nvlink_domain_gpus", g.nvlink_domain_gpus > 0 ? json(g.nvlink_domain_gpus) : json(nullptr)},
          {"launch_year", g.launch_year},
          {"confidence", g.confidence},
          {"source", g.source},
          {"source_date", g.source_date}};
}

json to_json(const ModelSpec& m) {
  const ParameterCounts pc = m.parameters();
  json j = {{"id", m.id},
            {"name", m.name},
            {"family", m.family},
            {"parameters", pc.total()},
            {"active_parameters", m.active_parameters()},
            {"layers", m.layers},
            {"hidden", m.hidden},
            {"intermediate", m.intermediate},
            {"heads", m.heads},
            {"kv_heads", m.kv_heads},
            {"head_dim", m.head_dim},
            {"vocab", m.vocab},
            {"max_position", m.max_position},
            {"tied_embeddings", m.tied_embeddings},
            {"glu", m.traits.glu},
            {"experts", m.experts},
            {"experts_per_token", m.experts_per_token},
            {"sliding_window", m.sliding_window},
            {"sliding_layers", m.sliding_layers},
            {"window", m.sliding_window > 0 ? json(m.chunked_window ? "chunked" : "sliding") : json(nullptr)},
            {"moe_layers", m.is_moe() ? m.moe_layers : 0},
            {"expert_intermediate", m.is_moe() ? m.expert_width() : 0},
            {"shared_experts", m.shared_experts},
            {"latent_attention", m.is_mla() ? json{{"q_lora_rank", m.q_lora_rank}, {"kv_lora_rank", m.kv_lora_rank},
                                                   {"qk_rope_head_dim", m.qk_rope_dim}, {"qk_nope_head_dim", m.qk_nope_dim},
                                                   {"v_head_dim", m.v_head_dim}} : json(nullptr)},
            {"kv_cache_elements_per_token_layer", m.kv_cache_elements_per_layer()},
            {"mtp_parameters", pc.mtp},
            {"assumed_dense", m.assumed_dense},
            {"notes", m.notes},
            {"source", m.source}};
  if (m.tensor_parameters) {
    j["tensor_parameters"] = *m.tensor_parameters;
    j["tensor_bytes"] = bytes(*m.tensor_bytes);
    j["tensor_dtype"] = m.tensor_dtype;
  }
  return j;
}

json to_json(const Workload& w) {
  return {{"task", to_string(w.task)},
          {"precision", to_string(w.precision)},
          {"optimizer", to_string(w.optimizer)},
          {"micro_batch", w.micro_batch},
          {"seq", w.seq},
          {"recompute", to_string(w.recompute_spec())},
          {"grad_accum", w.grad_accum},
          {"flash_attention", w.flash_attention},
          {"lora_rank", w.lora_rank},
          {"lora_targets", to_string(w.lora_targets)},
          {"double_quant", w.double_quant},
          {"kv_precision", to_string(w.kv())},
          {"offload_optimizer", w.offload_optimizer},
          {"gpus", w.par.gpus()},
          {"tp", w.par.tp},
          {"pp", w.par.pp},
          {"dp", w.par.dp},
          {"ep", w.par.ep},
          {"cp", w.par.cp},
          {"shard_group", w.par.shard_group > 0 ? json(w.par.shard_group) : json(nullptr)},
          {"reshard_after_forward", w.par.reshard_after_forward},
          {"loss", to_string(w.loss)},
          {"moe_capacity_factor", w.moe_capacity_factor > 0 ? json(w.moe_capacity_factor) : json(nullptr)},
          {"zero", w.par.zero}};
}

json memory_json(const ModelSpec& m, const Workload& w, const MemoryEstimate& e, const Gpu* gpu,
                 const std::optional<FitReport>& fit, const std::optional<Workload>& split) {
  json terms = json::array();
  for (const auto& t : e.terms)
    terms.push_back({{"group", t.group}, {"name", t.name}, {"bytes", bytes(t.bytes)}, {"formula", t.formula}});
  json j = {
      {"schema_version", kSchemaVersion},
      {"model", to_json(m)},
      {"workload", to_json(w)},
      {"per_gpu_bytes", bytes(e.nvidia_smi())},
      {"measure", "nvidia-smi: allocated + allocator reserve + CUDA context + NCCL buffers"},
      {"allocated_bytes", bytes(e.allocated())},
      {"reserved_bytes", bytes(e.reserved())},
      {"breakdown",
       {{"weights", bytes(e.weights)},
        {"gradients", bytes(e.gradients)},
        {"optimizer", bytes(e.optimizer)},
        {"activations", bytes(e.activations)},
        {"kv_cache", bytes(e.kv_cache)},
        {"overhead", bytes(e.overhead())}}},
      {"overhead_detail",
       {{"workspace", bytes(e.workspace)},
        {"allocator_reserve", bytes(e.allocator_reserve)},
        {"cuda_context", bytes(e.cuda_context)},
        {"comm_buffers", bytes(e.comm_buffers)}}},
      {"cpu_offload_bytes", bytes(e.cpu_offload)},
      {"parameters", e.parameters},
      {"active_parameters", m.active_parameters()},
      {"assumed_dense", m.assumed_dense},
      {"notes", m.notes},
      {"trainable_parameters", e.trainable_parameters},
      {"terms", terms},
      {"gpu", gpu ? json(gpu->id) : json(nullptr)},
      {"fits", fit ? json(fit->fits) : json(nullptr)},
      {"max_batch", fit && fit->max_batch ? json(*fit->max_batch) : json(nullptr)},
      {"max_seq", fit && fit->max_seq ? json(*fit->max_seq) : json(nullptr)},
      {"capacity_bytes", fit ? bytes(fit->capacity_bytes) : json(nullptr)},
      {"headroom_bytes", fit ? bytes(fit->headroom_bytes) : json(nullptr)},
  };
  if (split) j["fits_when_split"] = to_json(*split);
  return j;
}

}  // namespace gpuplan
