// One accelerator as the catalog describes it: datasheet peaks (dense), memory, power, links.
// Every figure comes from data/gpus.toml, where each row cites its source and date.
#pragma once

#include <string>

#include "workload/precision.h"

namespace gpuplan {

enum class Tier { datacenter, workstation, consumer };
std::string to_string(Tier t);

struct Gpu {
  std::string id;            // "h100-sxm"
  std::string vendor;        // "NVIDIA"
  std::string name;          // "H100 SXM5 80GB"
  Tier tier = Tier::datacenter;
  std::string architecture;  // "hopper"; keys efficiency.toml
  std::string compute_capability;  // "9.0"; empty for non-NVIDIA
  std::string form_factor;
  double memory_bytes = 0;   // decimal GB x 1e9, as marketed
  std::string memory_type;
  double memory_bw_Bps = 0;
  // Dense peaks in FLOP/s (OP/s for int8); 0 where the hardware has no such path.
  double fp64_flops = 0, fp32_flops = 0, tf32_flops = 0, fp16_flops = 0, bf16_flops = 0,
         fp8_flops = 0, int8_ops = 0, fp4_flops = 0;
  double fp16_acc16_flops = 0;  // GeForce FP16-accumulate rate (twice the FP32-accumulate one)
  double tdp_w = 0;
  std::string interconnect;     // "NVLink 4", "none"
  double interconnect_Bps = 0;  // bidirectional per GPU; 0 = none (PCIe only)
  int pcie_gen = 0;
  int nvlink_domain_gpus = 0;   // GPUs one NVLink domain joins (72 in a GB200 NVL72 rack); 0 = the node
  int launch_year = 0;
  // Streaming multiprocessors enabled on the product (NVIDIA); 0 where the catalog has none. Kernels
  // that keep few bytes in flight stream at a rate per SM, not at the card's bandwidth.
  int sm_count = 0;
  // Scale-out NIC line rate per GPU in the part's reference node (DGX/HGX, NVL72 tray), bits/s; 0
  // where the catalog has none. A plan that names no network runs over the node the part ships in.
  double node_network_bps = 0;
  std::string confidence, source, source_date, notes;

  // Peak dense throughput for matmuls in precision p, FLOP/s; 0 if unsupported.
  // Weight-only formats compute at their compute precision; tf32 falls back to fp32 where absent.
  double peak_matmul_flops(Precision p) const;
  // The precision a GEMM with weights in `p` multiplies in here. NVFP4 checkpoints quantise weights
  // and activations (ModelOpt's W4A4), so their GEMMs run on the FP4 tensor cores where the card
  // has some (Blackwell); other weight-only formats, and NVFP4 elsewhere, are dequantised to 16-bit.
  Precision gemm_precision(Precision p) const;
  bool has_nvlink() const { return interconnect_Bps > 0; }
  // Host link bandwidth per direction, bytes/s (PCIe x16).
  double pcie_Bps() const;
};

}  // namespace gpuplan
