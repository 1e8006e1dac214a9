// Numeric precisions: how many bytes a value takes in memory and which tensor-core rate computes it.
// Weight-only formats (int4, nf4) store weights compactly but compute in 16-bit.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

enum class Precision { fp32, tf32, bf16, fp16, fp8, int8, int4, nf4 };

std::optional<Precision> parse_precision(std::string_view s);
std::string to_string(Precision p);
std::vector<std::string> precision_names();

// Bytes per stored value, including quantisation scales:
// int8 is 1 byte plus a per-row scale (negligible); int4 is bitsandbytes' default 4-bit format,
// blocksize 64 with an fp32 absmax per block: 4 + 32/64 = 4.5 bits; nf4 is QLoRA's NF4 with double
// quantisation: 4 + 0.127 bits (Dettmers et al. 2023, section 3, "Double Quantization").
double bytes_per_value(Precision p);

// The precision the matmuls run in when weights are stored as `p`.
Precision compute_precision(Precision p);

// True for formats that only quantise weights (activations and KV stay 16-bit).
bool is_weight_only(Precision p);

}  // namespace gpuplan
