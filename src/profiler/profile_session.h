// `gpuplan profile`: runs the team's command as a child (its output passed through unchanged, its
// exit code returned), samples GPUs and the host at an interval while it runs, detects steps and
// epochs, streams every sample to a trace file flushed each second, and ends with summary.json and
// a diagnosis. Signals reach the child and nothing it started outlives gpuplan (supervisor.h);
// the files are whole even on a full disk, in a folder of the run's own (run_folder.h).
#pragma once

#include <nlohmann/json.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "profiler/gpu_sampler.h"
#include "profiler/host_sampler.h"
#include "util/status.h"

namespace gpuplan {

// One sampling round as it happens, for live consumers (the Prometheus endpoint).
struct LiveSample {
  double t_s = 0;
  const HostSample& host;
  const std::vector<GpuSample>& gpus;
  const std::vector<GpuDevice>& devices;
  const std::vector<std::pair<double, int64_t>>& steps;  // (time, step number) seen so far
};

struct ProfileOptions {
  std::vector<std::string> argv;
  double interval_s = 0.1;
  std::string out_dir;  // new or empty folder; empty: a new gpuplan-profile/<date>-<time>
  std::string step_regex, epoch_regex;
  std::string nvml_library = "libnvidia-ml.so.1";
  nlohmann::json workload;  // what the run is (model, batch, ...), recorded for `gpuplan predict`
  std::optional<double> predicted_step_s;  // shown against the measured step time
  int child_stdout_fd = 1;  // where the child's stdout goes (2 when gpuplan's stdout carries JSON)
  std::function<void(const LiveSample&)> on_sample;  // called after each sampling round
};

struct ProfileOutcome {
  int exit_code = 0;  // the command's
  std::string out_dir;  // where trace.jsonl and summary.json are
  nlohmann::json summary;
  std::vector<Error> write_errors;  // the trace or summary could not be written (a full disk)
};

// Fails only before the child starts (bad options, output folder unusable, command not runnable).
Result<ProfileOutcome> run_profile(const ProfileOptions& opt);

// Parses "100ms", "0.5s", "2s" or a bare number of seconds.
Result<double> parse_interval(const std::string& s);

}  // namespace gpuplan
