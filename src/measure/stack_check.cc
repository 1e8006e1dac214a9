#include "measure/stack_check.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <memory>
#include <regex>

#include "hardware/platform.h"
#include "profiler/gpu_sampler.h"

namespace gpuplan {

namespace {

// First line of a command's output, or "" (commands run with a timeout, output capped).
std::string run_line(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(("timeout 20 " + cmd + " 2>/dev/null").c_str(), "r"), pclose);
  if (!p) return "";
  std::array<char, 4096> buf{};
  std::string out;
  while (std::fgets(buf.data(), buf.size(), p.get())) out += buf.data();
  return out;
}

double version_number(const std::string& v) {
  std::smatch m;
  if (std::regex_search(v, m, std::regex(R"((\d+)\.(\d+))"))) return std::stoi(m[1]) + std::stoi(m[2]) / 100.0;
  return 0;
}

}  // namespace

// The NVIDIA architecture record (data/platform.toml) with the highest compute capability at or
// below the device's: 8.6 reads as Ampere's 8.0, 12.0 as Blackwell RTX.
static const ArchitectureFacts* architecture_for(int major, int minor) {
  const int cc = major * 10 + minor;
  const ArchitectureFacts* best = nullptr;
  for (const auto& a : Platform::builtin().architectures()) {
    if (a.platform != "cuda") continue;
    const int n = compute_capability_number(a.compute_capability);
    if (n > 0 && n <= cc && (!best || n > compute_capability_number(best->compute_capability))) best = &a;
  }
  return best;
}

std::vector<std::string> precisions_for(int major, int minor) {
  const ArchitectureFacts* a = architecture_for(major, minor);
  if (!a) return {"fp32"};
  std::vector<std::string> p;
  for (const char* d : {"fp32", "fp16", "int8", "bf16", "tf32", "fp8", "fp4"})
    if (a->has(std::string(d))) p.push_back(d);
  return p;
}

std::string cuda_version_string(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

void add_compatibility_findings(StackReport& r) {
  for (const auto& g : r.gpus) {
    const bool bf16 = std::find(g.precisions.begin(), g.precisions.end(), "bf16") != g.precisions.end();
    const bool fp8 = std::find(g.precisions.begin(), g.precisions.end(), "fp8") != g.precisions.end();
    r.findings.push_back({bf16 ? "ok" : "warning",
                          fmt::format("{} (compute capability {}): {}", g.name, g.compute_capability,
                                      bf16 ? "bf16 and tf32 tensor cores available"
                                           : "no bf16 (needs compute capability 8.0+): train in fp16 with loss scaling")});
    if (bf16)
      r.findings.push_back({fp8 ? "ok" : "ok", fmt::format("{}: fp8 {}", g.name, fp8 ? "available (Transformer Engine, vLLM fp8)" : "not available (needs 8.9+)")});
    int major = 0, minor = 0;
    std::sscanf(g.compute_capability.c_str(), "%d.%d", &major, &minor);
    if (const ArchitectureFacts* a = architecture_for(major, minor); a && a->legacy)
      r.findings.push_back({"warning", fmt::format("{} ({}): {}", g.name, a->id, a->note)});
    if (g.catalog_id.empty())
      r.findings.push_back({"warning", fmt::format("{} is not in the catalog; predictions need --gpu with a close match", g.name)});
  }
  const double driver = version_number(r.cuda_driver), toolkit = version_number(r.cuda_toolkit);
  if (driver > 0 && toolkit > 0) {
    if (toolkit > driver + 1e-9)
      r.findings.push_back({"error", fmt::format("CUDA toolkit {} is newer than the driver supports ({}): update the driver or use an older toolkit",
                                                 r.cuda_toolkit, r.cuda_driver)});
    else
      r.findings.push_back({"ok", fmt::format("the driver (CUDA {}) covers the toolkit (CUDA {})", r.cuda_driver, r.cuda_toolkit)});
  }
  if (!r.torch.empty()) {
    std::smatch m;
    const bool has_cuda = std::regex_search(r.torch, m, std::regex(R"(cuda (\d+\.\d+))"));
    if (!has_cuda)
      r.findings.push_back({r.gpus.empty() ? "ok" : "warning", "PyTorch is a CPU-only build" + std::string(r.gpus.empty() ? "" : ": install a CUDA build to use the GPU")});
    else if (driver > 0 && version_number(m[1]) > driver + 1e-9)
      r.findings.push_back({"error", fmt::format("PyTorch was built for CUDA {} but the driver supports {}: update the driver", m[1].str(), r.cuda_driver)});
    else if (driver > 0)
      r.findings.push_back({"ok", fmt::format("PyTorch's CUDA {} build runs on this driver", m[1].str())});
  }
}

StackReport check_stack(const std::string& nvml_library, const Catalog& catalog) {
  StackReport r;
  auto s = open_nvml(nvml_library);
  if (s) {
    r.driver_version = (*s)->driver_version();
    if (auto v = (*s)->cuda_driver_version()) r.cuda_driver = cuda_version_string(*v);
    for (const auto& d : (*s)->devices()) {
      StackGpu g;
      g.name = d.name;
      g.compute_capability = d.compute_capability;
      g.memory_bytes = d.memory_total_bytes;
      g.catalog_id = catalog.match_device(d.name, d.memory_total_bytes).value_or("");
      int major = 0, minor = 0;
      std::sscanf(d.compute_capability.c_str(), "%d.%d", &major, &minor);
      g.precisions = precisions_for(major, minor);
      r.gpus.push_back(g);
    }
  } else {
    r.findings.push_back({"error", s.error().message});
  }
  std::smatch m;
  const std::string nvcc = run_line("nvcc --version");
  if (std::regex_search(nvcc, m, std::regex(R"(release (\d+\.\d+))"))) r.cuda_toolkit = m[1];
  // The first interpreter on PATH may be a virtualenv's or pyenv's; the system one may hold torch.
  std::string torch;
  for (const char* py : {"python3", "/usr/bin/python3"}) {
    torch = run_line(std::string(py) +
                     " -c \"import torch; print(torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())\"");
    if (!torch.empty()) break;
  }
  if (!torch.empty()) {
    r.torch = torch.substr(0, torch.find('\n'));
    // "2.3.0 cuda None available False" for CPU builds: normalise for the check above.
    if (r.torch.find("cuda None") != std::string::npos) r.torch = r.torch.substr(0, r.torch.find(" cuda")) + " (CPU only)";
  }
  add_compatibility_findings(r);
  return r;
}

}  // namespace gpuplan
