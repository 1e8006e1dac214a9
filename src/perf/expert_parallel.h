// Expert parallelism in the performance model: how a workload's expert layout and routing load
// shape one forward (ForwardShape), and the all-to-all that sends token copies to the ranks
// holding their experts and back.
#pragma once

#include <string>

#include "hardware/efficiency.h"
#include "hardware/gpu.h"
#include "model/model.h"
#include "perf/comm.h"
#include "perf/operations.h"
#include "workload/workload.h"

namespace gpuplan {

// Fills the shape's expert-parallel layout and routing load from the workload and efficiencies.
void set_expert_layout(const ModelSpec& m, const Workload& w, const Efficiency& eff, ForwardShape& s);

// Expert parallelism's all-to-all traffic per layer (dispatch + combine of one forward), on the
// link the EP group crosses: NVLink inside an NVLink domain (72 GPUs in a GB200 NVL72), the
// network beyond it.
struct ExpertAllToAll {
  double per_layer_forward_s = 0;  // averaged over all layers (dense layers send nothing)
  std::string link = "none";
};
ExpertAllToAll expert_all_to_all(const ModelSpec& m, const Workload& w, const ForwardShape& s, const Gpu& gpu,
                                 const Efficiency& eff, const Cluster& cluster);

}  // namespace gpuplan
