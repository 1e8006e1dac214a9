#include "profiler/run_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "util/output_file.h"
#include "util/utf8.h"

namespace gpuplan {

namespace {

// Whether the directory open at `fd` holds anything besides . and ..
bool has_entries(int fd) {
  const int copy = ::dup(fd);
  if (copy < 0) return true;
  DIR* d = ::fdopendir(copy);
  if (!d) {
    ::close(copy);
    return true;
  }
  bool any = false;
  while (dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) any = true;
  ::closedir(d);
  return any;
}

// A new folder under `base` named after the current time, with -2, -3, ... if taken.
Result<std::string> new_run_folder(const std::string& base) {
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  if (ec) return make_error("--out", fmt::format("cannot create {}: {}", valid_utf8(base), ec.message()));
  const std::time_t now = std::time(nullptr);
  std::tm utc {};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  for (int n = 1; n < 1000; ++n) {
    const std::string p = base + "/" + stamp + (n > 1 ? fmt::format("-{}", n) : "");
    if (::mkdir(p.c_str(), 0777) == 0) return p;
    if (errno != EEXIST) return make_error("--out", fmt::format("cannot create {}: {}", valid_utf8(p), std::strerror(errno)));
  }
  return make_error("--out", "cannot find a free run folder name under " + valid_utf8(base));
}

}  // namespace

Result<std::unique_ptr<RunFolder>> RunFolder::open(const std::string& out) {
  std::unique_ptr<RunFolder> f(new RunFolder());
  if (out.empty()) {
    auto p = new_run_folder("gpuplan-profile");
    if (!p) return p.error();
    f->path_ = *p;
    f->created_ = true;
  } else {
    f->path_ = out;
    std::error_code ec;
    f->created_ = std::filesystem::create_directories(out, ec);
    if (ec) return make_error("--out", fmt::format("cannot create {}: {}", valid_utf8(out), ec.message()));
  }
  const std::string shown = valid_utf8(f->path_);
  f->dir_fd_ = ::open(f->path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (f->dir_fd_ < 0) return make_error("--out", fmt::format("cannot open {}: {}", shown, std::strerror(errno)));
  // The lock lasts as long as the descriptor, so a crashed run never leaves a stale lock behind.
  if (::flock(f->dir_fd_, LOCK_EX | LOCK_NB) != 0)
    return make_error("--out", fmt::format("{} is in use by another gpuplan profile; give each run its own folder", shown));
  if (has_entries(f->dir_fd_))
    return make_error("--out", fmt::format("{} already holds files (an earlier profile?); name a new or empty folder, or "
                                           "leave out --out for a new gpuplan-profile/<date>-<time> folder", shown));
  f->trace_fd_ = ::openat(f->dir_fd_, "trace.jsonl", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (f->trace_fd_ < 0)
    return make_error("--out", fmt::format("cannot write {}/trace.jsonl: {}", shown, std::strerror(errno)));
  return f;
}

RunFolder::~RunFolder() {
  if (trace_fd_ >= 0) ::close(trace_fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

void RunFolder::trace_line(const std::string& line) {
  if (!trace_error_.empty()) return;
  pending_ += line;
  pending_ += '\n';
}

void RunFolder::flush() {
  if (pending_.empty() || !trace_error_.empty()) return;
  const int err = write_fully(trace_fd_, pending_.data(), pending_.size());
  if (err == 0) {
    trace_bytes_ += static_cast<long long>(pending_.size());
  } else {
    // A torn line would make the trace unreadable from there: cut back to the last whole one.
    if (::ftruncate(trace_fd_, static_cast<off_t>(trace_bytes_)) != 0) {
      // Nothing more can be done; the reader skips a last line that does not parse.
    }
    trace_error_ = fmt::format("cannot write {}: {}", valid_utf8(trace_path()), std::strerror(err));
  }
  pending_.clear();
}

Status RunFolder::write_summary(const std::string& text) {
  return write_file_atomic(dir_fd_, "summary.json", text, path_ + "/summary.json", "--out");
}

void RunFolder::discard() {
  if (trace_fd_ >= 0) {
    ::close(trace_fd_);
    trace_fd_ = -1;
    ::unlinkat(dir_fd_, "trace.jsonl", 0);
  }
  if (created_) ::rmdir(path_.c_str());
}

}  // namespace gpuplan
