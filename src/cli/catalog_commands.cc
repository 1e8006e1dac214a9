// `gpuplan gpus`, `gpuplan models`, `gpuplan stacks` and `gpuplan engines`: what the catalogs hold.
#include <fmt/format.h>

#include "cli/common.h"
#include "engine/engine.h"
#include "hardware/fabric.h"
#include "model/presets.h"
#include "stack/stack.h"
#include "report/json_report.h"
#include "report/table.h"
#include "util/units.h"

namespace gpuplan::cli {

namespace {

struct GpusFlags {
  std::string tier;
  double min_memory_gb = 0;
  bool json = false;
};

int run_gpus(Context& ctx, const GpusFlags& f) {
  if (!f.tier.empty() && f.tier != "datacenter" && f.tier != "workstation" && f.tier != "consumer")
    return fail(make_error("--tier", "must be datacenter, workstation or consumer, not '" + f.tier + "'"));
  if (f.min_memory_gb < 0) return fail(make_error("--min-memory", "must not be negative"));
  auto catalog = ctx.catalog();
  if (!catalog) return fail(catalog.error());
  auto prices = ctx.prices();
  if (!prices) return fail(prices.error());
  std::vector<const Gpu*> shown;
  for (const auto& g : (*catalog)->gpus())
    if ((f.tier.empty() || to_string(g.tier) == f.tier) && g.memory_bytes / 1e9 >= f.min_memory_gb)
      shown.push_back(&g);
  if (f.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const Gpu* g : shown) {
      nlohmann::json j = to_json(*g);
      const GpuPrice* p = (*prices)->find(g->id);
      j["purchase_usd"] = p && p->purchase_usd() ? nlohmann::json(*p->purchase_usd()) : nlohmann::json(nullptr);
      nlohmann::json purchase = nlohmann::json::array(), cloud = nlohmann::json::array();
      if (p) {
        for (const auto& b : p->purchase)
          purchase.push_back({{"condition", b.condition}, {"usd", b.usd}, {"kind", b.kind}, {"source", b.source}, {"date", b.date}});
        for (const auto& c : p->cloud)
          cloud.push_back({{"provider", c.provider}, {"class", c.provider_class}, {"mode", to_string(c.mode)},
                           {"usd_per_gpu_hour", c.usd_per_gpu_hour}, {"basis", c.basis}, {"date", c.date}});
      }
      j["purchase"] = purchase;
      j["cloud"] = cloud;
      arr.push_back(j);
    }
    return print_json(arr, "--catalog");
  }
  TextTable t({"id", "name", "tier", "memory", "bandwidth", "bf16/fp16", "fp8", "fp4", "TDP", "link", "cloud $/h", "buy"});
  t.align_right({3, 4, 5, 6, 7, 8, 9, 10, 11});
  for (const Gpu* g : shown) {
    const GpuPrice* p = (*prices)->find(g->id);
    const auto cloud = p ? p->cheapest_cloud() : std::nullopt;
    const double half = g->bf16_flops > 0 ? g->bf16_flops : g->fp16_flops;
    t.add_row({g->id, g->name, to_string(g->tier),
               fmt::format("{:.0f} GB {}", g->memory_bytes / 1e9, g->memory_type),
               fmt::format("{:.0f} GB/s", g->memory_bw_Bps / 1e9),
               fmt::format("{:.0f} TF", half / 1e12),
               g->fp8_flops > 0 ? fmt::format("{:.0f} TF", g->fp8_flops / 1e12) : "-",
               g->fp4_flops > 0 ? fmt::format("{:.0f} TF", g->fp4_flops / 1e12) : "-",
               fmt::format("{:.0f} W", g->tdp_w),
               g->has_nvlink() ? fmt::format("{:.0f} GB/s{}", g->interconnect_Bps / 1e9,
                                             g->nvlink_domain_gpus > 0 ? fmt::format(" x{}", g->nvlink_domain_gpus) : "")
                               : "PCIe only",
               cloud ? fmt::format("{:.2f}", cloud->usd_per_gpu_hour) : "-",
               p && p->purchase_usd() ? format_usd(*p->purchase_usd()) : "-"});
  }
  fmt::print("{}", t.render());
  fmt::print("Dense tensor peaks (no sparsity); bf16/fp16 with FP32 accumulate. Sources: `gpuplan gpus --json`.\n");
  return 0;
}

int run_models(bool json) {
  const auto& presets = Presets::builtin();
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& m : presets.models()) arr.push_back(to_json(m));
    return print_json(arr, "models");
  }
  TextTable t({"id", "name", "parameters", "active", "layers", "hidden", "heads/kv", "vocab", "context"});
  t.align_right({2, 3, 4, 5, 6, 7, 8});
  for (const auto& m : presets.models())
    t.add_row({m.id, m.name, format_count(static_cast<double>(m.total_parameters())),
               m.is_moe() ? format_count(static_cast<double>(m.active_parameters())) : "",
               std::to_string(m.layers), std::to_string(m.hidden),
               fmt::format("{}/{}", m.heads, m.kv_heads), std::to_string(m.vocab),
               std::to_string(m.max_position)});
  fmt::print("{}", t.render());
  fmt::print("Any Hugging Face config.json, model directory (with safetensors) or .gguf file works as --model too.\n");
  return 0;
}

nlohmann::json stack_json(const Stack& s) {
  nlohmann::json attention = nlohmann::json::object();
  for (const auto& [arch, k] : s.attention) attention[arch] = {{"kernel", k.id}, {"fraction_of_peak", k.fraction_on(arch)}};
  nlohmann::json recipes = nlohmann::json::array();
  for (const auto& r : s.fp8_recipes) recipes.push_back(r.id);
  return {{"id", s.id},
          {"name", s.name},
          {"covers", s.covers},
          {"attention", attention},
          {"fused_elementwise", s.fused_elementwise},
          {"separate_projections", s.separate_projections},
          {"default_recompute", to_string(s.default_recompute)},
          {"default_loss", s.default_loss},
          {"op_recompute_matmul_share", s.op_recompute_matmul_share},
          {"overlap", {{"dp_grads", s.overlap_dp_grads}, {"param_gather", s.overlap_param_gather}, {"tp", s.overlap_tp}}},
          {"fp8_recipes", recipes},
          {"fp8_param_all_gather", s.fp8_param_all_gather},
          {"master_weights", s.master_weights},
          {"bf16_grads_in_fp32", s.bf16_grads_in_fp32},
          {"fused_optimizer", s.fused_optimizer},
          {"autocast_fp32_weights", s.autocast_fp32_weights},
          // null: flash off still runs one fused scale-mask-softmax kernel
          {"eager_attention_bytes_per_score", s.eager_score_forward_bytes > 0
               ? nlohmann::json{{"forward", s.eager_score_forward_bytes}, {"backward", s.eager_score_backward_bytes}}
               : nlohmann::json(nullptr)},
          {"fsdp", {{"keep_gathered_under_pp", s.keep_gathered_under_pp},
                    {"pp_defers_grad_reduce", s.pp_defers_grad_reduce},
                    {"accumulation_defers_grad_reduce", s.accumulation_defers_grad_reduce},
                    {"frozen_weights_get_grads", s.frozen_weights_get_grads}}},
          {"quantized_base_keeps_input", s.quantized_base_keeps_input},
          {"qlora_quantizes_lm_head", s.qlora_quantizes_lm_head},
          {"qlora_dequantized_copies", s.qlora_dequantized_copies},
          {"host_optimizer_fraction", s.host_optimizer_fraction},
          {"host_layer_pass_s", s.host_layer_pass_s},
          {"host_adapter_pass_s", s.host_adapter_pass_s},
          {"zero3_persistence_threshold", s.zero3_persistence_threshold},
          {"zero3_module_hooks", s.zero3_module_hooks},
          {"partitioned_grads_reduce_each_micro_batch", s.partitioned_grads_reduce_each_micro_batch},
          {"zero3_prefetch_params", s.zero3_prefetch_params},
          {"zero3_prefetch_hidden_squares", s.zero3_prefetch_hidden_squares},
          {"source", s.source},
          {"source_date", s.source_date}};
}

int run_stacks(bool json) {
  const StackCatalog& c = StackCatalog::builtin();
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& s : c.stacks()) arr.push_back(stack_json(s));
    return print_json(arr, "stacks");
  }
  TextTable t({"id", "name", "attention (ampere/hopper/blackwell)", "fused", "recompute", "loss", "overlaps", "fp8"});
  for (const auto& s : c.stacks()) {
    std::string overlaps;
    for (auto [on, what] : {std::pair{s.overlap_dp_grads, "grads"}, std::pair{s.overlap_param_gather, "gathers"},
                            std::pair{s.overlap_tp, "tp"}})
      if (on) overlaps += (overlaps.empty() ? "" : ",") + std::string(what);
    std::string recipes;
    for (const auto& r : s.fp8_recipes) recipes += (recipes.empty() ? "" : ",") + r.id;
    t.add_row({s.id, s.name,
               fmt::format("{}/{}/{}", s.attention_kernel("ampere").id, s.attention_kernel("hopper").id,
                           s.attention_kernel("blackwell").id),
               s.fused_elementwise ? "yes" : "no", to_string(s.default_recompute), s.default_loss,
               overlaps.empty() ? "-" : overlaps, recipes.empty() ? "-" : recipes});
  }
  fmt::print("{}", t.render());
  fmt::print("Default: megatron for pretrain, hf for full/lora/qlora fine-tuning. Sources: `gpuplan stacks --json`.\n");
  fmt::print("Attention kernels (--attention-kernel ID), share of the 16-bit peak a training step gets from them:\n");
  for (const AttentionKernel& k : c.kernels()) {
    std::string shares;
    for (const auto& [arch, f] : k.fraction) shares += fmt::format("{}{} {:g}", shares.empty() ? "" : ", ", arch, f);
    fmt::print("  {:<13} {} ({})\n", k.id, k.name, shares);
  }
  return 0;
}

nlohmann::json format_table_json(const FormatTable& t) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [arch, formats] : t.by_architecture)
    for (const auto& [f, v] : formats) j[arch][f] = v;
  return j;
}

nlohmann::json memory_reserve_json(const Engine::MemoryReserve& r) {
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& b : r.buckets)
    buckets.push_back({{"below_gib", b.below_gib}, {"prefill_tokens", b.prefill_tokens}, {"graph_seqs", b.graph_seqs},
                       {"graph_seqs_tp4", b.graph_seqs_tp4}});
  return {{"base_mib", r.base_mib}, {"per_prefill_token_mib", r.per_prefill_token_mib}, {"per_graph_seq_mib", r.per_graph_seq_mib},
          {"per_gpu_mib", r.per_gpu_mib}, {"floor_mib", r.floor_mib}, {"floor_above_gib", r.floor_above_gib}, {"buckets", buckets}};
}

int run_engines(bool json) {
  const EngineCatalog& c = EngineCatalog::builtin();
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& e : c.engines())
      arr.push_back({{"id", e.id}, {"name", e.name},
                     {"decode_bandwidth", format_table_json(e.decode_bandwidth)},
                     {"prefill_matmul", format_table_json(e.prefill_matmul)},
                     {"weight_memory_relative", format_table_json(e.weight_memory_relative)},
                     {"full_kv_families", e.full_kv_families},
                     {"profile_sampler_bytes_per_logit", e.profile_sampler_bytes_per_logit},
                     {"memory_reserve", e.memory_reserve.buckets.empty() ? nlohmann::json(nullptr) : memory_reserve_json(e.memory_reserve)},
                     {"attention_relative", e.attention_relative},
                     {"step_overhead_s", e.step_overhead_s}, {"request_overhead_s", e.request_overhead_s},
                     {"frontend_seq_step_s", e.frontend_seq_step_s}, {"frontend_request_s", e.frontend_request_s},
                     {"prefill_first", e.prefill_first},
                     {"seqs_per_context_of_kv", e.seqs_per_context_of_kv}, {"max_num_seqs_floor", e.max_num_seqs_floor},
                     {"cuda_graphs", e.cuda_graphs}, {"graph_kernel_overhead_s", e.graph_kernel_overhead_s},
                     {"continuous_batching", e.continuous_batching}, {"chunked_prefill", e.chunked_prefill},
                     {"max_batched_tokens", e.max_batched_tokens}, {"max_num_seqs", e.max_num_seqs},
                     {"small_gpu", e.large_gpu_min_gib > 0 || !e.large_gpu_exclude.empty()
                                       ? nlohmann::json{{"below_memory_gib", e.large_gpu_min_gib},
                                                        {"or_gpu_ids_containing", e.large_gpu_exclude},
                                                        {"max_batched_tokens", e.limits_on(Gpu{}).max_batched_tokens},
                                                        {"max_num_seqs", e.limits_on(Gpu{}).max_num_seqs}}
                                       : nlohmann::json(nullptr)},
                     {"format_architectures", e.format_architectures.empty() ? nlohmann::json(nullptr)
                                                                              : nlohmann::json(e.format_architectures)},
                     {"unmodelled_moe_backends", [&] {
                        nlohmann::json a = nlohmann::json::array();
                        for (const auto& u : e.unmodelled_moe_backends)
                          a.push_back({{"backend", u.backend}, {"format", u.format}, {"architectures", u.architectures}});
                        return a;
                      }()},
                     {"time_scale_fitted", e.time_scale},
                     {"prefix_caching", e.prefix_caching}, {"gpu_memory_utilization", e.gpu_memory_utilization},
                     {"kv_block_tokens", e.kv_block_tokens}, {"profile_run_peak", e.profile_run_peak},
                     {"reserve_output_kv", e.reserve_output_kv}, {"gemm_fp16_accumulate", e.gemm_fp16_accumulate},
                     {"moe_cuda_graphs", e.moe_cuda_graphs},
                     {"prompt_dequantize", e.prompt_dequantize},
                     {"prompt_dequantize_architectures", e.prompt_dequantize_architectures},
                     {"dequantize_min_rows", e.dequantize_min_rows},
                     {"ubatch_tokens", e.ubatch_tokens},
                     {"eager_attention_bytes_per_score", e.eager_score_bytes},
                     {"moe_expert_launches_one_token", e.moe_expert_launches_one_token},
                     {"moe_expert_launches_batch", e.moe_expert_launches_batch},
                     {"moe_call_overhead_s", e.moe_call_overhead_s},
                     {"mla_decode_overhead_s", e.mla_decode_overhead_s},
                     {"looped_expert_launches_one_token", e.looped_expert_launches_one_token},
                     {"looped_expert_launches_batch", e.looped_expert_launches_batch},
                     {"scalar_f16_matvec_hbm_slowdown", e.scalar_f16_matvec_hbm_slowdown},
                     {"quantized_matvec_latency_bound", e.quantized_matvec_latency_bound},
                     {"prefill_matmul_fitted", e.prefill_matmul_fitted},
                     {"prefill_matmul_scale_fitted", e.prefill_matmul_fitted ? nlohmann::json(e.prefill_matmul_scale) : nlohmann::json(nullptr)},
                     {"quantized_matvec_gbps_per_sm_fitted",
                      e.quantized_matvec_sm_Bps > 0 ? nlohmann::json(e.quantized_matvec_sm_Bps / 1e9) : nlohmann::json(nullptr)},
                     {"attention_dp", e.attention_dp}, {"attention_dp_dense_tp", e.attention_dp_dense_tp},
                     {"attention_dp_gather", e.attention_dp_gather},
                     {"attention_dp_limits_per_gpu", e.attention_dp_limits_per_gpu},
                     {"autoscale_metric", e.autoscale_metric}, {"notes", e.notes},
                     {"source", e.source}, {"source_date", e.source_date}});
    return print_json(arr, "engines");
  }
  TextTable t({"id", "name", "batching", "KV budget", "block", "token budget", "CUDA graphs", "step overhead", "fitted time x"});
  for (const auto& e : c.engines())
    t.add_row({e.id, e.name, e.continuous_batching ? std::string(e.chunked_prefill ? "continuous, chunked prefill" : "continuous") +
                                            (e.reserve_output_kv ? ", reserves output KV" : "")
                                      : std::string("static"),
               e.memory_reserve.buckets.empty() ? fmt::format("{:.0f}%", e.gpu_memory_utilization * 100)
                                                : std::string("card less a reserve"),
               std::to_string(e.kv_block_tokens),
               std::to_string(e.max_batched_tokens), e.cuda_graphs ? "yes" : "no", format_seconds(e.step_overhead_s),
               fmt::format("{:.2f}", e.time_scale)});
  fmt::print("{}", t.render());
  fmt::print("Default: {}. Figures and their sources: `gpuplan engines --json`. \"fitted time x\" multiplies the engine's\n"
             "step and request times (data/fitted.toml, fitted on published serving runs by `gpuplan fit`).\n", kDefaultEngineId);
  return 0;
}

int run_fabrics(bool json) {
  const FabricCatalog& c = FabricCatalog::builtin();
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& f : c.fabrics())
      arr.push_back({{"id", f.id}, {"name", f.name}, {"nic_gbps", f.nic_gbps}, {"nics_per_node", f.nics_per_node},
                     {"node_gbps", f.nic_gbps * static_cast<double>(f.nics_per_node)}, {"source", f.source},
                     {"source_date", f.source_date}});
    return print_json(arr, "fabrics");
  }
  TextTable t({"id", "name", "NIC Gbit/s", "NICs/node", "node Gbit/s"});
  t.align_right({2, 3, 4});
  for (const auto& f : c.fabrics())
    t.add_row({f.id, f.name, fmt::format("{:.0f}", f.nic_gbps), fmt::format("{}", f.nics_per_node),
               fmt::format("{:.0f}", f.nic_gbps * static_cast<double>(f.nics_per_node))});
  fmt::print("{}", t.render());
  fmt::print("Each GPU gets the node's aggregate over its GPUs; collectives across nodes run hierarchically. Sources: --json.\n");
  return 0;
}

}  // namespace

std::vector<Command> catalog_commands() {
  return {
      {"gpus", "List the GPUs in the catalog with specs and prices",
       [](CLI::App& sub, Context& ctx, std::function<int()>& run) {
         auto f = std::make_shared<GpusFlags>();
         sub.add_option("--tier", f->tier, "datacenter, workstation or consumer");
         sub.add_option("--min-memory", f->min_memory_gb, "only GPUs with at least this many GB");
         sub.add_flag("--json", f->json, "JSON output");
         sub.callback([&ctx, &run, f] { run = [&ctx, f] { return run_gpus(ctx, *f); }; });
       }},
      {"models", "List the built-in model presets with parameter counts",
       [](CLI::App& sub, Context&, std::function<int()>& run) {
         auto json = std::make_shared<bool>(false);
         sub.add_flag("--json", *json, "JSON output");
         sub.callback([&run, json] { run = [json] { return run_models(*json); }; });
       }},
      {"stacks", "List the software stacks (kernels, fusion, recompute and overlap defaults, FP8 recipes)",
       [](CLI::App& sub, Context&, std::function<int()>& run) {
         auto json = std::make_shared<bool>(false);
         sub.add_flag("--json", *json, "JSON output");
         sub.callback([&run, json] { run = [json] { return run_stacks(*json); }; });
       }},
      {"engines", "List the serving engines (batching, KV-cache budget, kernel efficiencies, fixed costs)",
       [](CLI::App& sub, Context&, std::function<int()>& run) {
         auto json = std::make_shared<bool>(false);
         sub.add_flag("--json", *json, "JSON output");
         sub.callback([&run, json] { run = [json] { return run_engines(*json); }; });
       }},
      {"fabrics", "List the named inter-node fabrics for --fabric (NIC rate, NICs per node, sources)",
       [](CLI::App& sub, Context&, std::function<int()>& run) {
         auto json = std::make_shared<bool>(false);
         sub.add_flag("--json", *json, "JSON output");
         sub.callback([&run, json] { run = [json] { return run_fabrics(*json); }; });
       }},
  };
}

}  // namespace gpuplan::cli
