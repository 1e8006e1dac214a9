#include "measure/gpu_bench.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "profiler/gpu_sampler.h"

namespace gpuplan {

namespace {

// The few CUDA runtime and cuBLAS entry points used, declared from the public API documentation.
using cudaError_t = int;
using cudaEvent_t = void*;
using cublasHandle_t = void*;
enum { kCudaR32F = 0, kCudaR16F = 2, kCudaR16BF = 14 };
enum { kCublasCompute32F = 68, kCublasCompute32FFastTf32 = 77 };
enum { kCudaMemcpyDeviceToDevice = 3 };

struct Cuda {
  void* rt = nullptr;
  void* blas = nullptr;
  cudaError_t (*malloc)(void**, size_t) = nullptr;
  cudaError_t (*free)(void*) = nullptr;
  cudaError_t (*memset)(void*, int, size_t) = nullptr;
  cudaError_t (*memcpy)(void*, const void*, size_t, int) = nullptr;
  cudaError_t (*sync)() = nullptr;
  cudaError_t (*event_create)(cudaEvent_t*) = nullptr;
  cudaError_t (*event_record)(cudaEvent_t, void*) = nullptr;
  cudaError_t (*event_sync)(cudaEvent_t) = nullptr;
  cudaError_t (*event_elapsed)(float*, cudaEvent_t, cudaEvent_t) = nullptr;
  int (*blas_create)(cublasHandle_t*) = nullptr;
  int (*blas_destroy)(cublasHandle_t) = nullptr;
  int (*gemm_ex)(cublasHandle_t, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                 const void*, void*, int, int, int, int) = nullptr;
};

void* open_first(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

template <class F>
bool bind(void* h, F& out, const char* name) {
  out = reinterpret_cast<F>(dlsym(h, name));
  return out != nullptr;
}

Result<Cuda> load_cuda() {
  Cuda c;
  c.rt = open_first({"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"});
  if (!c.rt) return make_error("bench", "needs the CUDA runtime (libcudart.so), which was not found; install the CUDA toolkit or run where PyTorch's CUDA libraries are on LD_LIBRARY_PATH");
  c.blas = open_first({"libcublas.so", "libcublas.so.13", "libcublas.so.12", "libcublas.so.11"});
  if (!c.blas) return make_error("bench", "needs cuBLAS (libcublas.so), which was not found");
  bool ok = bind(c.rt, c.malloc, "cudaMalloc") && bind(c.rt, c.free, "cudaFree") && bind(c.rt, c.memset, "cudaMemset") &&
            bind(c.rt, c.memcpy, "cudaMemcpy") && bind(c.rt, c.sync, "cudaDeviceSynchronize") &&
            bind(c.rt, c.event_create, "cudaEventCreate") && bind(c.rt, c.event_record, "cudaEventRecord") &&
            bind(c.rt, c.event_sync, "cudaEventSynchronize") && bind(c.rt, c.event_elapsed, "cudaEventElapsedTime") &&
            bind(c.blas, c.blas_create, "cublasCreate_v2") && bind(c.blas, c.blas_destroy, "cublasDestroy_v2") &&
            bind(c.blas, c.gemm_ex, "cublasGemmEx");
  if (!ok) return make_error("bench", "the CUDA runtime or cuBLAS lacks a needed symbol");
  return c;
}

// Seconds per call of f, median of `reps` timed with CUDA events after warm-up.
template <class F>
double time_cuda(const Cuda& c, F&& f, int reps) {
  cudaEvent_t a, b;
  c.event_create(&a);
  c.event_create(&b);
  for (int i = 0; i < 3; ++i) f();
  c.sync();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    c.event_record(a, nullptr);
    f();
    c.event_record(b, nullptr);
    c.event_sync(b);
    float ms = 0;
    c.event_elapsed(&ms, a, b);
    t.push_back(ms / 1000.0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

Result<BenchResult> run_gpu_bench(const Catalog& catalog) {
  BenchResult r;
  auto nvml = open_nvml();
  if (!nvml) return make_error("bench", nvml.error().message);
  const GpuDevice dev = (*nvml)->devices().front();
  r.device_name = dev.name;
  r.catalog_id = catalog.match_device(dev.name, dev.memory_total_bytes).value_or("");
  auto cuda = load_cuda();
  if (!cuda) return cuda.error();
  const Cuda& c = *cuda;
  const Gpu* spec = nullptr;
  Gpu g;
  if (!r.catalog_id.empty()) {
    g = *catalog.find(r.catalog_id);
    spec = &g;
  } else {
    r.notes.push_back(dev.name + " is not in the catalog: no datasheet comparison");
  }
  // GEMMs: m = n = k = 8192 (large enough to reach the best rate on current GPUs).
  const int64_t n = 8192;
  void *A = nullptr, *B = nullptr, *C = nullptr;
  if (c.malloc(&A, n * n * 4) || c.malloc(&B, n * n * 4) || c.malloc(&C, n * n * 4))
    return make_error("bench", "cudaMalloc of 3 x 256 MiB failed");
  c.memset(A, 0, n * n * 4);
  c.memset(B, 0, n * n * 4);
  cublasHandle_t h = nullptr;
  if (c.blas_create(&h) != 0) return make_error("bench", "cublasCreate failed");
  struct P {
    const char* name;
    int type, compute;
    Precision prec;
  };
  const float one = 1, zero = 0;
  for (const P& p : {P{"bf16", kCudaR16BF, kCublasCompute32F, Precision::bf16}, P{"fp16", kCudaR16F, kCublasCompute32F, Precision::fp16},
                     P{"tf32", kCudaR32F, kCublasCompute32FFastTf32, Precision::tf32}}) {
    if (spec && spec->peak_matmul_flops(p.prec) <= 0) continue;
    int status = 0;
    const double s = time_cuda(c, [&] {
      status = c.gemm_ex(h, 0, 0, static_cast<int>(n), static_cast<int>(n), static_cast<int>(n), &one, A, p.type,
                         static_cast<int>(n), B, p.type, static_cast<int>(n), &zero, C, p.type, static_cast<int>(n), p.compute, -1);
    }, 20);
    if (status != 0) {
      r.notes.push_back(fmt::format("{} GEMM not supported here (cuBLAS status {})", p.name, status));
      continue;
    }
    GemmResult gr{p.name, n, 2.0 * n * n * n / s / 1e12, spec ? spec->peak_matmul_flops(p.prec) / 1e12 : 0};
    r.gemm.push_back(gr);
  }
  r.notes.push_back("fp8 GEMMs need cuBLASLt and are not measured yet");
  c.blas_destroy(h);
  // Bandwidth: a 1 GiB device-to-device copy reads and writes every byte.
  const size_t bytes = size_t{1} << 30;
  void *X = nullptr, *Y = nullptr;
  if (c.malloc(&X, bytes) == 0 && c.malloc(&Y, bytes) == 0) {
    const double s = time_cuda(c, [&] { c.memcpy(Y, X, bytes, kCudaMemcpyDeviceToDevice); }, 20);
    r.copy_bandwidth_gbps = 2.0 * static_cast<double>(bytes) / s / 1e9;
    c.free(X);
    c.free(Y);
  }
  if (spec) r.datasheet_bandwidth_gbps = spec->memory_bw_Bps / 1e9;
  c.free(A);
  c.free(B);
  c.free(C);
  return r;
}

std::string calibration_toml(const BenchResult& r) {
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
  std::string out = fmt::format("# Measured by `gpuplan bench` on {} ({}), {}. Use with --calibration.\n", r.device_name,
                                r.catalog_id.empty() ? "not in catalog" : r.catalog_id, date);
  if (r.catalog_id.empty()) return out + "# No catalog entry: nothing to calibrate.\n";
  out += fmt::format("[gpu.{}]\n", r.catalog_id);
  double best = 0;
  for (const auto& g : r.gemm)
    if ((g.precision == "bf16" || g.precision == "fp16") && g.datasheet_tflops > 0) best = std::max(best, g.tflops / g.datasheet_tflops);
  if (best > 0) out += fmt::format("matmul_max_fraction = {:.3f}\n", std::min(1.0, best));
  if (r.datasheet_bandwidth_gbps > 0 && r.copy_bandwidth_gbps > 0)
    out += fmt::format("memory_max_fraction = {:.3f}\n", std::min(1.0, r.copy_bandwidth_gbps / r.datasheet_bandwidth_gbps));
  return out;
}

nlohmann::json bench_json(const BenchResult& r) {
  nlohmann::json g = nlohmann::json::array();
  for (const auto& x : r.gemm)
    g.push_back({{"precision", x.precision}, {"size", x.size}, {"tflops", x.tflops}, {"datasheet_tflops", x.datasheet_tflops},
                 {"fraction", x.datasheet_tflops > 0 ? nlohmann::json(x.tflops / x.datasheet_tflops) : nlohmann::json(nullptr)}});
  return {{"schema_version", 1}, {"device", r.device_name}, {"catalog_id", r.catalog_id}, {"gemm", g},
          {"copy_bandwidth_gbyte_s", r.copy_bandwidth_gbps}, {"datasheet_bandwidth_gbyte_s", r.datasheet_bandwidth_gbps}, {"notes", r.notes}};
}

std::string bench_text(const BenchResult& r) {
  std::string out = fmt::format("{} ({})\n", r.device_name, r.catalog_id.empty() ? "not in catalog" : r.catalog_id);
  for (const auto& g : r.gemm)
    out += fmt::format("  {} GEMM {}^3: {:.1f} TFLOP/s{}\n", g.precision, g.size, g.tflops,
                       g.datasheet_tflops > 0 ? fmt::format(" = {:.0f}% of the {:.1f} datasheet", 100 * g.tflops / g.datasheet_tflops, g.datasheet_tflops) : "");
  out += fmt::format("  device copy: {:.0f} GB/s{}\n", r.copy_bandwidth_gbps,
                     r.datasheet_bandwidth_gbps > 0 ? fmt::format(" = {:.0f}% of the {:.0f} GB/s datasheet", 100 * r.copy_bandwidth_gbps / r.datasheet_bandwidth_gbps, r.datasheet_bandwidth_gbps) : "");
  for (const auto& n : r.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace gpuplan
