#include "perf/expert_parallel.h"

namespace gpuplan {

void set_expert_layout(const ModelSpec& m, const Workload& w, const Efficiency& eff, ForwardShape& s) {
  if (!m.is_moe()) return;
  const ExpertLayout xl = expert_layout(w.par);
  s.ep = static_cast<double>(xl.ep);
  s.etp = static_cast<double>(xl.etp);
  s.moe_load = eff.moe_load(w.moe_capacity_factor);
}

ExpertAllToAll expert_all_to_all(const ModelSpec& m, const Workload& w, const ForwardShape& s, const Gpu& gpu,
                                 const Efficiency& eff, const Cluster& cluster) {
  ExpertAllToAll a;
  const ExpertLayout xl = expert_layout(w.par);
  if (!m.is_moe() || xl.ep <= 1) return a;
  const Link link = group_link(gpu, eff, cluster, xl.ep, xl.etp);
  a.link = link.name;
  // Each rank sends its token copies (top-k per token, at the busiest rank's load) to the ranks
  // holding their experts, and receives the results back: two all-to-alls of copies x hidden.
  const double copies = s.tokens * s.etp / s.tp * m.experts_per_token * s.moe_load;
  const double bytes = copies * m.hidden * s.act_bytes;
  const double sparse = static_cast<double>(m.moe_layers) / m.layers;
  a.per_layer_forward_s = 2 * sparse * all_to_all_time(bytes, xl.ep, xl.etp, gpu, eff, cluster);
  return a;
}

}  // namespace gpuplan
