#include <gtest/gtest.h>

#include "planner/autoscale.h"

namespace gpuplan {

namespace {

// The fields the Kubernetes OpenAPI document marks required (kubernetes/kubernetes
// api/openapi-spec/swagger.json, definitions io.k8s.api.autoscaling.v2.*), checked without a network.
void expect_required(const nlohmann::json& obj, std::initializer_list<const char*> keys, const std::string& where) {
  ASSERT_TRUE(obj.is_object()) << where;
  for (const char* k : keys) EXPECT_TRUE(obj.contains(k)) << where << " lacks required " << k;
}

void expect_valid_hpa_v2(const nlohmann::json& m) {
  EXPECT_EQ(m.at("apiVersion"), "autoscaling/v2");
  EXPECT_EQ(m.at("kind"), "HorizontalPodAutoscaler");
  expect_required(m.at("metadata"), {"name"}, "ObjectMeta");
  const auto& spec = m.at("spec");
  expect_required(spec, {"scaleTargetRef", "maxReplicas"}, "HorizontalPodAutoscalerSpec");
  expect_required(spec.at("scaleTargetRef"), {"kind", "name"}, "CrossVersionObjectReference");
  EXPECT_TRUE(spec.at("maxReplicas").is_number_integer());
  EXPECT_GE(spec.at("minReplicas").get<int64_t>(), 1);
  EXPECT_GE(spec.at("maxReplicas").get<int64_t>(), spec.at("minReplicas").get<int64_t>());
  for (const auto& metric : spec.at("metrics")) {
    expect_required(metric, {"type"}, "MetricSpec");
    const std::string type = metric.at("type");
    ASSERT_TRUE(type == "Pods" || type == "Resource" || type == "Object" || type == "External" || type == "ContainerResource");
    if (type == "Pods") {
      expect_required(metric.at("pods"), {"metric", "target"}, "PodsMetricSource");
      expect_required(metric.at("pods").at("metric"), {"name"}, "MetricIdentifier");
      expect_required(metric.at("pods").at("target"), {"type"}, "MetricTarget");
      EXPECT_EQ(metric.at("pods").at("target").at("type"), "AverageValue");
      EXPECT_TRUE(metric.at("pods").at("target").at("averageValue").is_string());  // a Quantity
      EXPECT_EQ(metric.at("pods").at("metric").at("name").get<std::string>().find(':'), std::string::npos);
    }
  }
  // DNS-1123 label: what the API server accepts as a name.
  const std::string name = m.at("metadata").at("name");
  EXPECT_LE(name.size(), 63u);
  for (char c : name) EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-');
}

}  // namespace

TEST(Autoscale, PolicySpansTheAverageToThePeakReplicasAndScalesBeforeCapacity) {
  ServingOption o;
  o.replicas_min = 2;
  o.replicas_peak = 5;
  o.in_flight_at_capacity = 40;
  Engine e;
  e.autoscale_metric = "vllm:num_requests_running";
  const AutoscalePolicy p = autoscale_policy("Chat service (8B)", o, e, 0.8);
  EXPECT_EQ(p.min_replicas, 2);
  EXPECT_EQ(p.max_replicas, 5);
  EXPECT_EQ(p.target_in_flight, 32);
  EXPECT_EQ(p.name, "chat-service-8b");
  expect_valid_hpa_v2(hpa_manifest(p));
}

// The document `--emit k8s` prints: one YAML document whose comments restate the option's numbers.
TEST(Autoscale, TheDocumentIsTheManifestAfterCommentsThatGiveItsNumbers) {
  ServingOption o;
  o.tp = 2;
  o.replicas_min = 1;
  o.replicas_peak = 3;
  o.replica_rps = 4.5;
  o.in_flight_at_capacity = 50;
  ServiceTarget t;
  t.peak_rps = 12;
  t.average_rps = 3;
  Engine e;
  e.autoscale_metric = "sglang:num_running_reqs";
  const std::string doc = autoscaler_document("llama-3.1-70b", "h100-sxm", o, t, e, 0.8);
  const AutoscalePolicy p = autoscale_policy("llama-3.1-70b", o, e, 0.8);
  ASSERT_EQ(doc.rfind("---\n# llama-3.1-70b: 2 x h100-sxm per replica (TP 2), 1 to 3 replicas for 3 to 12 requests/s.", 0), 0u) << doc;
  EXPECT_NE(doc.find("at 40, 80% of the 50.0 one replica holds\n# at 4.5 requests/s"), std::string::npos) << doc;
  const std::string yaml = to_yaml(hpa_manifest(p));
  ASSERT_GE(doc.size(), yaml.size());
  EXPECT_EQ(doc.substr(doc.size() - yaml.size()), yaml);
  expect_valid_hpa_v2(hpa_manifest(p));
}

TEST(Autoscale, YamlIsBlockStyleWithQuotedStrings) {
  const nlohmann::json j = {{"a", {{"b", 1}, {"c", "x:y"}}}, {"l", nlohmann::json::array({{{"k", "v"}, {"n", 2}}, 3})}};
  EXPECT_EQ(to_yaml(j), "a:\n  b: 1\n  c: \"x:y\"\nl:\n  - k: \"v\"\n    n: 2\n  - 3\n");
}

}  // namespace gpuplan
