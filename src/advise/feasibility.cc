#include "advise/feasibility.h"

#include <fmt/format.h>

#include <algorithm>

#include "advise/advisor.h"

namespace gpuplan {

namespace {

// Stores `value` under notes/<key> and returns the fact that quotes it.
Fact note(PlatformVerdict& v, const std::string& key, const std::string& value) {
  v.notes[key] = value;
  return fact::text("notes/" + key, value);
}

void reject(PlatformVerdict& v, const char* rule, Sentence why) {
  if (!v.rule.empty()) return;  // the first broken rule is the one reported
  v.rule = rule;
  v.why = std::move(why);
}

void check_dtypes(const AdviseRequest& req, const Gpu& gpu, const ArchitectureFacts& arch, PlatformVerdict& v) {
  for (const TrainingJob& job : req.training) {
    const Precision p = compute_precision(job.workload.precision);
    if (arch.has(p)) continue;
    reject(v, "dtype",
           sentence("{} ({} architecture) has no {} arithmetic, and {} trains in {}; set precision = \"fp16\" in the "
                    "workload to consider it.",
                    {fact::text("gpu_name", gpu.name), note(v, "architecture", arch.id), note(v, "missing_dtype", to_string(p)),
                     note(v, "job", job.name), note(v, "job_dtype", to_string(job.workload.precision))}));
  }
  for (const InferenceService& s : req.inference) {
    const Precision p = compute_precision(s.workload.precision);
    if (arch.has(p)) continue;
    if (p == Precision::bf16 && arch.has(Precision::fp16)) {
      v.caveats.push_back(sentence("{} has no bf16: {} would serve in fp16, which most checkpoints tolerate but some overflow in.",
                                   {fact::text("gpu_name", gpu.name), note(v, "service", s.name)}));
      continue;
    }
    reject(v, "dtype", sentence("{} ({} architecture) has no {} arithmetic for {}.",
                                {fact::text("gpu_name", gpu.name), note(v, "architecture", arch.id),
                                 note(v, "missing_dtype", to_string(p)), note(v, "service", s.name)}));
  }
}

void check_software(const std::vector<std::string>& needed, const std::string& who, const Gpu& gpu, const Platform& platform,
                    PlatformVerdict& v) {
  for (const std::string& id : needed) {
    const SoftwareVerdict sw = platform.software_on(id, gpu);
    const std::string key = "software_" + id;
    if (!sw.usable()) {
      reject(v, "software", sentence("{} needs {}: {}.", {note(v, "needed_by", who), note(v, "software", id), note(v, key, sw.reason)}));
    } else if (sw.status == SoftwareStatus::experimental) {
      v.caveats.push_back(sentence("{} runs only experimentally here: {}. Budget time for rough edges.",
                                   {note(v, "experimental_" + id, id), note(v, key, sw.reason)}));
    }
  }
}

}  // namespace

PlatformVerdict check_platform(const AdviseRequest& req, const Gpu& gpu, const Platform& platform) {
  PlatformVerdict v;
  const ArchitectureFacts* arch = platform.architecture(gpu.architecture);
  if (!arch) {
    reject(v, "platform", sentence("gpuplan has no platform record for the {} architecture of {}, so it cannot say what runs there.",
                                   {note(v, "architecture", gpu.architecture), fact::text("gpu_name", gpu.name)}));
    return v;
  }
  check_dtypes(req, gpu, *arch, v);
  for (const TrainingJob& job : req.training) check_software(required_software(job), job.name, gpu, platform, v);
  for (const InferenceService& s : req.inference) check_software(required_software(s), s.name, gpu, platform, v);
  if (arch->legacy)
    v.caveats.push_back(sentence("{} is at the end of its software support: {}", {fact::text("gpu_name", gpu.name), note(v, "legacy", arch->note)}));
  return v;
}

}  // namespace gpuplan
