#include "workload/precision.h"

#include <cctype>

namespace gpuplan {

namespace {

// Llama-3-8B's parameter count (safetensors metadata), the model llama.cpp sizes its GGUF types on.
constexpr double kLlama3_8bParameters = 8030261248.0;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Bits per weight of a GGUF type from llama.cpp's own table (tools/quantize/quantize.cpp,
// QUANT_OPTIONS): a file size in GiB on Llama-3-8B, or a stated bpw.
constexpr double from_gib(double gib) { return gib * kGiB * 8 / kLlama3_8bParameters; }

struct Entry {
  Precision p;
  const char* name;
  double bits;        // per stored weight, scales included
  bool weight_only;
};

const Entry kTable[] = {
    {Precision::fp32, "fp32", 32, false},
    {Precision::tf32, "tf32", 32, false},
    {Precision::bf16, "bf16", 16, false},
    {Precision::fp16, "fp16", 16, false},
    {Precision::fp8, "fp8", 8, false},
    {Precision::int8, "int8", 8, false},
    {Precision::int4, "int4", 4.5, true},
    {Precision::nf4, "nf4", 4.127, true},
    {Precision::fp4, "fp4", 4.5, true},
    {Precision::nvfp4, "nvfp4", 4.5, true},
    {Precision::mxfp4, "mxfp4", 4.25, true},
    {Precision::q4_0, "q4_0", from_gib(4.34), true},     // " 4.34G, +0.4685 ppl @ Llama-3-8B"
    {Precision::q4_1, "q4_1", from_gib(4.78), true},     // " 4.78G"
    {Precision::q5_0, "q5_0", from_gib(5.21), true},     // " 5.21G"
    {Precision::q5_1, "q5_1", from_gib(5.65), true},     // " 5.65G"
    {Precision::q8_0, "q8_0", from_gib(7.96), true},     // " 7.96G"
    {Precision::q3_k_s, "q3_k_s", from_gib(3.41), true}, // " 3.41G"
    {Precision::q3_k_m, "q3_k_m", from_gib(3.74), true}, // " 3.74G"
    {Precision::q3_k_l, "q3_k_l", from_gib(4.03), true}, // " 4.03G"
    {Precision::q4_k_s, "q4_k_s", from_gib(4.37), true}, // " 4.37G"
    {Precision::q4_k_m, "q4_k_m", from_gib(4.58), true}, // " 4.58G"
    {Precision::q5_k_s, "q5_k_s", from_gib(5.21), true}, // " 5.21G"
    {Precision::q5_k_m, "q5_k_m", from_gib(5.33), true}, // " 5.33G"
    {Precision::q6_k, "q6_k", from_gib(6.14), true},     // " 6.14G"
    {Precision::iq2_xxs, "iq2_xxs", 2.06, true},         // " 2.06 bpw quantization"
    {Precision::iq2_xs, "iq2_xs", 2.31, true},           // " 2.31 bpw"
    {Precision::iq3_xxs, "iq3_xxs", 3.06, true},         // " 3.06 bpw"
    {Precision::iq3_s, "iq3_s", 3.44, true},             // " 3.44 bpw"
    {Precision::iq3_m, "iq3_m", 3.66, true},             // " 3.66 bpw quantization mix"
    {Precision::iq4_nl, "iq4_nl", 4.50, true},           // " 4.50 bpw non-linear quantization"
    {Precision::iq4_xs, "iq4_xs", 4.25, true},           // " 4.25 bpw non-linear quantization"
};

const Entry& entry(Precision p) {
  for (const auto& e : kTable)
    if (e.p == p) return e;
  return kTable[2];
}

}  // namespace

std::optional<Precision> parse_precision(std::string_view s) {
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& e : kTable)
    if (lower == e.name) return e.p;
  // GGUF's names for its unquantised file types (llama.cpp's LLAMA_FTYPE_ALL_F32 and MOSTLY_F16,
  // shown as F32 and F16 in file names and llama-bench tables).
  if (lower == "f16") return Precision::fp16;
  if (lower == "f32") return Precision::fp32;
  return std::nullopt;
}

std::string to_string(Precision p) { return entry(p).name; }

std::vector<std::string> precision_names() {
  std::vector<std::string> out;
  for (const auto& e : kTable) out.push_back(e.name);
  return out;
}

double bytes_per_value(Precision p) { return entry(p).bits / 8.0; }

Precision compute_precision(Precision p) { return entry(p).weight_only ? Precision::bf16 : p; }

bool is_weight_only(Precision p) { return entry(p).weight_only; }

bool is_fp4(Precision p) { return p == Precision::fp4 || p == Precision::nvfp4 || p == Precision::mxfp4; }

bool is_gguf_mix(Precision p) { return p >= Precision::q4_0; }

bool is_kv_precision(Precision p) {
  return !is_weight_only(p) ? p != Precision::tf32 : p == Precision::q8_0 || p == Precision::q4_0;
}

}  // namespace gpuplan
