#include "planner/autoscale.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "util/units.h"

namespace gpuplan {

namespace {

// Lower-case letters, digits and '-', starting and ending alphanumeric, at most 63 characters.
std::string dns_label(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "inference" : out;
}

void yaml_into(const nlohmann::json& j, int indent, std::string& out);

std::string scalar(const nlohmann::json& j) {
  if (j.is_string()) return j.dump();  // a JSON string is a valid YAML double-quoted scalar
  return j.dump();
}

void yaml_into(const nlohmann::json& j, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if ((v.is_object() || v.is_array()) && !v.empty()) {
        out += pad + k + ":\n";
        yaml_into(v, indent + 2, out);
      } else {
        out += pad + k + ": " + (v.is_object() ? "{}" : v.is_array() ? "[]" : scalar(v)) + "\n";
      }
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (v.is_object() && !v.empty()) {
        std::string item;
        yaml_into(v, indent + 2, item);
        out += pad + "- " + item.substr(static_cast<size_t>(indent) + 2);
      } else {
        out += pad + "- " + scalar(v) + "\n";
      }
    }
  } else {
    out += pad + scalar(j) + "\n";
  }
}

}  // namespace

AutoscalePolicy autoscale_policy(const std::string& service, const ServingOption& option, const Engine& engine,
                                 double scale_at) {
  AutoscalePolicy p;
  p.name = dns_label(service);
  p.min_replicas = std::max<int64_t>(1, option.replicas_min);
  p.max_replicas = std::max(p.min_replicas, option.replicas_peak);
  p.metric = engine.autoscale_metric;
  p.scale_at = scale_at;
  p.capacity_in_flight = std::max(1.0, option.in_flight_at_capacity);
  p.target_in_flight = std::max(1.0, std::floor(scale_at * p.capacity_in_flight));
  return p;
}

nlohmann::json hpa_manifest(const AutoscalePolicy& p) {
  // Kubernetes custom-metric names cannot hold ':', which Prometheus names use; a
  // prometheus-adapter rule exposes the gauge under the name with ':' turned into '_'.
  std::string metric = p.metric;
  std::replace(metric.begin(), metric.end(), ':', '_');
  return {{"apiVersion", "autoscaling/v2"},
          {"kind", "HorizontalPodAutoscaler"},
          {"metadata", {{"name", p.name}, {"labels", {{"app.kubernetes.io/managed-by", "gpuplan"}}}}},
          {"spec",
           {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", p.name}}},
            {"minReplicas", p.min_replicas},
            {"maxReplicas", p.max_replicas},
            {"metrics", nlohmann::json::array({{{"type", "Pods"},
                                                {"pods",
                                                 {{"metric", {{"name", metric}}},
                                                  {"target", {{"type", "AverageValue"},
                                                              {"averageValue", fmt::format("{:.0f}", p.target_in_flight)}}}}}}})},
            {"behavior",
             {{"scaleDown", {{"stabilizationWindowSeconds", 300}}},
              {"scaleUp", {{"stabilizationWindowSeconds", 0}}}}}}}};
}

std::string autoscaler_document(const std::string& service, const std::string& gpu_id, const ServingOption& o,
                                const ServiceTarget& t, const Engine& engine, double scale_at) {
  const AutoscalePolicy p = autoscale_policy(service, o, engine, scale_at);
  return fmt::format("---\n# {}: {} x {} per replica (TP {}), {} to {} replicas for {:.3g} to {:.3g} requests/s.\n"
                     "# Scales on {} (requests in flight per replica) at {:.0f}, {:.0f}% of the {:.1f} one replica holds\n"
                     "# at {:.3g} requests/s, the most that meets p99 TTFT {} and TPOT {}.\n",
                     service, o.tp, gpu_id, o.tp, p.min_replicas, p.max_replicas, t.average_rps, t.peak_rps, p.metric,
                     p.target_in_flight, scale_at * 100, p.capacity_in_flight, o.replica_rps, format_seconds(t.ttft_s),
                     format_seconds(t.tpot_s)) +
         to_yaml(hpa_manifest(p));
}

std::string to_yaml(const nlohmann::json& j) {
  std::string out;
  yaml_into(j, 0, out);
  return out;
}

}  // namespace gpuplan
