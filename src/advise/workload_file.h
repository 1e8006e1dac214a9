// The workload file (TOML) a team writes once: training jobs, inference services and constraints
// (budget, tiers, cloud or on-prem, power price, lifetime, busy hours). Every key is checked; an
// error names the key. See examples/ for the layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "hardware/gpu.h"
#include "hardware/prices.h"
#include "model/model.h"
#include "planner/serving_planner.h"
#include "stack/stack.h"
#include "util/status.h"
#include "workload/workload.h"

namespace gpuplan {

struct TrainingJob {
  std::string name;
  ModelSpec model;
  Workload workload;         // task, precision, optimizer, seq, flash attention, LoRA rank
  Stack stack;               // `stack = "id"`, else the task's usual stack (default_stack_id)
  int64_t global_batch = 0;  // sequences per step; 0 = planner default
  double tokens = 0;         // tokens processed by one run (epochs x dataset tokens)
  std::optional<double> deadline_s;
  int64_t runs = 1;          // how many times the job runs over the hardware's lifetime
};

struct InferenceService {
  std::string name;
  ModelSpec model;
  Workload workload;  // weight and KV precision
  ServiceTarget target;
  Engine engine;      // `engine = "id"`, else vLLM
  AttentionDpChoice attention_dp = AttentionDpChoice::automatic;  // `attention_dp = "auto" | "on" | "off"`
};

// Ways to get GPUs: the rental modes of prices.h and "buy".
std::vector<std::string> all_modes();

struct Constraints {
  std::optional<double> budget_capex_usd, budget_monthly_usd;
  std::vector<Tier> tiers = {Tier::datacenter, Tier::workstation, Tier::consumer};
  std::vector<std::string> modes = all_modes();  // "cloud" in a file means every rental mode
  std::vector<std::string> provider_classes;      // restrict rentals to these classes (empty = all)
  std::vector<std::string> gpus;  // restrict to these catalog ids (empty = all)
  int64_t max_gpus = 64;
  // When owned: hours a month each card is busy beyond the listed jobs and services (other work
  // the team runs); 0 = only the listed work.
  double busy_hours_per_month = 0;
  OwnershipCosts own;

  bool allows(const std::string& mode) const;
  bool allows_rental() const;
  bool allows_class(const std::string& provider_class) const;
};

struct AdviseRequest {
  std::string name;
  std::vector<TrainingJob> training;
  std::vector<InferenceService> inference;
  Constraints constraints;
};

// `today_days` is the date deadlines are checked against, in days since 1970-01-01.
// `defaults` supplies the ownership costs the file may override.
Result<AdviseRequest> parse_workload_file(std::string_view text, const std::string& origin, int64_t today_days,
                                          const OwnershipCosts& defaults);

}  // namespace gpuplan
