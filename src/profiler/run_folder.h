// Where one `gpuplan profile` run writes: a folder of its own, locked for the run (flock), holding
// trace.jsonl (whole JSON lines only: a write that fails part-way is cut back to the last complete
// line) and summary.json (written to a temporary file and renamed, so it is whole or absent).
// A folder named with --out must be new or empty, so no earlier summary can sit beside a new trace;
// without --out each run gets a new gpuplan-profile/<date>-<time> folder.
#pragma once

#include <memory>
#include <string>

#include "util/status.h"

namespace gpuplan {

class RunFolder {
 public:
  // `out` is the user's --out, or empty for a new folder under gpuplan-profile/.
  static Result<std::unique_ptr<RunFolder>> open(const std::string& out);
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  const std::string& path() const { return path_; }
  std::string trace_path() const { return path_ + "/trace.jsonl"; }

  // Queues one trace line (without its newline); flush() writes the queue.
  void trace_line(const std::string& line);
  // Writes the queued lines. After the first failure the trace stops growing and stays whole.
  void flush();
  // The first write failure of the trace ("cannot write DIR/trace.jsonl: No space left on device"), or empty.
  const std::string& trace_error() const { return trace_error_; }
  Status write_summary(const std::string& text);
  // Removes what open() created (the command could not be started).
  void discard();

 private:
  RunFolder() = default;
  std::string path_;
  bool created_ = false;
  int dir_fd_ = -1, trace_fd_ = -1;
  std::string pending_, trace_error_;
  long long trace_bytes_ = 0;  // length of the trace's complete lines on disk
};

}  // namespace gpuplan
