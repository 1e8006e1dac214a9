// Platform facts as data: per GPU architecture the data types it really has and how long its
// toolchain supports it; per library and training stack where it runs; what each stack's parallelism
// offers; how bought cards are housed; licence limits and peer-to-peer links. Read from
// data/platform.toml, where every fact cites its source and date; the advisor, the planner and
// `gpuplan doctor` take the parsed record the way they take a Gpu.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <toml++/toml.h>

#include "hardware/gpu.h"
#include "util/status.h"
#include "workload/workload.h"

namespace gpuplan {

struct ArchitectureFacts {
  std::string id, vendor;
  std::string platform;            // "cuda", "rocm" or "gaudi"
  std::string compute_capability;  // "8.0"; a gfx target for AMD; empty for Gaudi
  std::vector<std::string> dtypes;  // tensor-core data types: fp32 tf32 fp16 bf16 fp8 fp4 int8
  bool legacy = false;              // its toolchain is ending support
  std::string cuda_last;            // the last CUDA major series that supports it, if support ended
  std::string note, source, date;

  // Whether matmuls in `p` run natively (weight-only formats need their compute type).
  bool has(Precision p) const;
  bool has(const std::string& dtype) const;
};

enum class SoftwareStatus { supported, experimental, unsupported, unknown };
std::string to_string(SoftwareStatus s);

struct SoftwareRun {
  std::string platform;
  SoftwareStatus status = SoftwareStatus::supported;
  std::string min_compute_capability, max_compute_capability;  // CUDA only; empty = any
  std::string since, date, source;
};

struct Software {
  std::string id, name;
  std::vector<SoftwareRun> runs;
};

// Where one software stands on one GPU, with the sentence that says why.
struct SoftwareVerdict {
  SoftwareStatus status = SoftwareStatus::unknown;
  std::string reason;  // for people: "bitsandbytes runs on AMD ROCm since v0.50 (2026, ...)"
  std::string source;
  bool usable() const { return status == SoftwareStatus::supported || status == SoftwareStatus::experimental; }
};

// The parallelism a training stack really offers.
struct StackSupport {
  std::string stack;
  bool tp = false, pp = false;
  std::vector<int> zero = {0};
  int pp_max_zero = 0;
  bool offload_optimizer = false;
  int64_t max_gpus = 0;  // 0 = no limit
  std::string source;

  // Empty when the stack runs this split; otherwise why not, in words.
  std::string why_not(const Workload& w) const;
};

// What houses bought cards: a GPU server or a workstation.
struct NodeClass {
  std::string id, name;
  std::vector<std::string> matches;  // substrings of the catalog's form_factor
  std::vector<Tier> tiers;
  int64_t gpus_per_node = 8;
  int64_t purchase_unit_gpus = 1;
  std::string needs;  // what buying the cards entails, for people ("" = nothing special)
  double host_memory_bytes = 0;
  double host_memory_Bps = 0;
  double host_watts = 0;  // the host's own peak draw (CPUs, memory, fans, drives)
  std::string source;
};

struct Licence {
  std::string id, vendor;
  Tier tier = Tier::consumer;
  std::string forbids;  // "datacenter"
  std::string text, source, date;
};

struct OfficeLimits {
  int64_t max_boxes = 2;
  double circuit_w = 1440;
  std::string max_boxes_source, circuit_source;
};

class Platform {
 public:
  static Result<Platform> from_toml(std::string_view text, const std::string& origin);
  static const Platform& builtin();

  const ArchitectureFacts* architecture(const std::string& id) const;
  const Software* software(const std::string& id) const;
  // Where `software_id` stands on `gpu`; unknown when the data has no record for its platform.
  SoftwareVerdict software_on(const std::string& software_id, const Gpu& gpu) const;
  const StackSupport* stack_support(const std::string& stack_id) const;
  // The node classes that can house `gpu`, in the data's order (an office box first where one fits).
  std::vector<const NodeClass*> nodes_for(const Gpu& gpu) const;
  const Licence* licence_for(const Gpu& gpu) const;
  // Whether cards exchange data directly over PCIe (CUDA peer-to-peer).
  bool peer_to_peer(const Gpu& gpu) const;
  // GPUs one NVLink domain joins: a bridge joins 2, a switch the whole node; 1 without NVLink.
  static int64_t nvlink_domain(const Gpu& gpu, int64_t gpus_per_node);
  // Whether tensor parallelism of degree `tp` has a direct link between the cards (NVLink within
  // its domain, or peer-to-peer over PCIe). Without one, every layer's traffic crosses host memory.
  bool direct_link_for_tp(const Gpu& gpu, int64_t tp, int64_t gpus_per_node) const;

  const OfficeLimits& office() const { return office_; }
  double default_headroom_fraction() const { return headroom_fraction_; }
  const std::string& headroom_source() const { return headroom_source_; }
  // Costs closer than this share are a tie, broken by the fewest GPUs.
  double cost_tie_fraction() const { return cost_tie_fraction_; }
  const std::string& cost_tie_source() const { return cost_tie_source_; }
  const std::vector<ArchitectureFacts>& architectures() const { return architectures_; }
  const std::vector<Software>& software_list() const { return software_; }
  const std::vector<StackSupport>& stack_supports() const { return stacks_; }
  const std::vector<NodeClass>& nodes() const { return nodes_; }

 private:
  static Result<Platform> from_table(const toml::table& doc, const std::string& origin);
  std::vector<ArchitectureFacts> architectures_;
  std::vector<Software> software_;
  std::vector<StackSupport> stacks_;
  std::vector<NodeClass> nodes_;
  std::vector<Licence> licences_;
  struct P2p {
    std::string vendor;
    Tier tier;
    bool p2p;
  };
  std::vector<P2p> p2p_;
  OfficeLimits office_;
  double headroom_fraction_ = 0.1;
  std::string headroom_source_;
  double cost_tie_fraction_ = 0;
  std::string cost_tie_source_;
};

// "8.6" as 86; 0 when empty or not a number.
int compute_capability_number(const std::string& cc);

}  // namespace gpuplan
