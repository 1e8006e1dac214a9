#include "workload/precision.h"

namespace gpuplan {

namespace {
struct Entry {
  Precision p;
  const char* name;
};
constexpr Entry kNames[] = {{Precision::fp32, "fp32"}, {Precision::tf32, "tf32"},
                            {Precision::bf16, "bf16"}, {Precision::fp16, "fp16"},
                            {Precision::fp8, "fp8"},   {Precision::int8, "int8"},
                            {Precision::int4, "int4"}, {Precision::nf4, "nf4"}};
}  // namespace

std::optional<Precision> parse_precision(std::string_view s) {
  for (const auto& e : kNames)
    if (s == e.name) return e.p;
  return std::nullopt;
}

std::string to_string(Precision p) {
  for (const auto& e : kNames)
    if (p == e.p) return e.name;
  return "?";
}

std::vector<std::string> precision_names() {
  std::vector<std::string> out;
  for (const auto& e : kNames) out.push_back(e.name);
  return out;
}

double bytes_per_value(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4.0;
    case Precision::bf16:
    case Precision::fp16: return 2.0;
    case Precision::fp8:
    case Precision::int8: return 1.0;
    case Precision::int4: return 4.5 / 8.0;
    case Precision::nf4: return 4.127 / 8.0;
  }
  return 2.0;
}

Precision compute_precision(Precision p) {
  switch (p) {
    case Precision::int4:
    case Precision::nf4: return Precision::bf16;
    default: return p;
  }
}

bool is_weight_only(Precision p) { return p == Precision::int4 || p == Precision::nf4; }

}  // namespace gpuplan
