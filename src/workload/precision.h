// Numeric precisions: how many bytes a value takes in memory and which tensor-core rate computes it.
// Weight-only formats (int4, nf4, the GGUF quantisation mixes) store weights compactly but compute
// in 16-bit; the 4-bit floats (fp4, nvfp4, mxfp4) compute at the FP4 tensor rate where a GPU has
// one (Blackwell) and are dequantised to 16-bit elsewhere.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

enum class Precision {
  fp32, tf32, bf16, fp16, fp8, int8, int4, nf4,
  fp4, nvfp4, mxfp4,
  // GGUF file types by llama.cpp's names (tools/quantize/quantize.cpp).
  q4_0, q4_1, q5_0, q5_1, q8_0, q3_k_s, q3_k_m, q3_k_l, q4_k_s, q4_k_m, q5_k_s, q5_k_m, q6_k,
  iq2_xxs, iq2_xs, iq3_xxs, iq3_s, iq3_m, iq4_nl, iq4_xs,
};

std::optional<Precision> parse_precision(std::string_view s);  // case-insensitive ("Q4_K_M")
std::string to_string(Precision p);
std::vector<std::string> precision_names();

// Bytes per stored value, including quantisation scales:
// int8 is 1 byte plus a per-row scale (negligible); int4 is bitsandbytes' default 4-bit format,
// blocksize 64 with an fp32 absmax per block: 4 + 32/64 = 4.5 bits; nf4 is QLoRA's NF4 with double
// quantisation: 4 + 0.127 bits (Dettmers et al. 2023, section 3, "Double Quantization"); NVFP4 is
// E2M1 with an FP8 E4M3 scale per 16 values: 4 + 8/16 = 4.5 bits (NVIDIA, "Introducing NVFP4",
// 2025); MXFP4 is E2M1 with an E8M0 scale per 32: 4 + 8/32 = 4.25 bits (OCP Microscaling Formats
// v1.0, section 5); fp4 means NVFP4. GGUF types are whole-file averages: see precision.cc.
double bytes_per_value(Precision p);

// The precision the matmuls run in when weights are stored as `p` on hardware without a native
// path for it (4-bit floats run natively where Gpu::peak_matmul_flops finds an FP4 rate).
Precision compute_precision(Precision p);

// True for formats that only quantise weights (activations and KV stay 16-bit).
bool is_weight_only(Precision p);
bool is_fp4(Precision p);   // fp4, nvfp4, mxfp4
// GGUF quantisation mixes: their bits per weight average over the whole file, embeddings and
// output included, so they apply to every weight rather than to the block linears only.
bool is_gguf_mix(Precision p);
// Formats a KV cache can be kept in: fp32, bf16, fp16, fp8, int8, and llama.cpp's q8_0 and q4_0.
bool is_kv_precision(Precision p);

}  // namespace gpuplan
