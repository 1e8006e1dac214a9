// Autoscaling a service: the replica range its daily load needs (the average-load count to the
// peak count the serving planner found), the engine's gauge of requests in flight to scale on, the
// per-replica value to hold it at, and that policy as a Kubernetes HorizontalPodAutoscaler
// (autoscaling/v2) manifest.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "planner/serving_planner.h"

namespace gpuplan {

struct AutoscalePolicy {
  std::string name;  // Kubernetes object name (DNS-1123 label)
  int64_t min_replicas = 1, max_replicas = 1;
  std::string metric;      // the engine's Prometheus gauge of requests in flight
  double target_in_flight = 1;  // per replica: `scale_at` of the in-flight count at capacity
  double capacity_in_flight = 1;
  double scale_at = 0.8;
};

// `scale_at`: the share of a replica's capacity (the in-flight requests at the highest rate that
// meets the p99 targets) at which to add replicas. REQUIRES: option.ok().
AutoscalePolicy autoscale_policy(const std::string& service, const ServingOption& option, const Engine& engine,
                                 double scale_at);

// The policy as an autoscaling/v2 HorizontalPodAutoscaler for a Deployment of the same name.
nlohmann::json hpa_manifest(const AutoscalePolicy& p);

// The policy's manifest as one YAML document ("---" first), preceded by comments that say what it
// holds: the replica's GPUs, the replica range for the target's rates, and the metric's target.
std::string autoscaler_document(const std::string& service, const std::string& gpu_id, const ServingOption& option,
                                const ServiceTarget& target, const Engine& engine, double scale_at);

// Block-style YAML of a JSON value (maps, lists, scalars; strings double-quoted).
std::string to_yaml(const nlohmann::json& j);

}  // namespace gpuplan
