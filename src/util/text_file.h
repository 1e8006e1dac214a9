// Opening and reading files the user named. Only regular files are read: a FIFO, socket, device or
// directory given where a file belongs is refused at once (opened non-blocking, then checked, so a
// FIFO never hangs the program), sizes are capped before anything is read, and every I/O failure is
// a one-line Error naming the path. `what` names the file in errors ("config", "workload file").
#pragma once

#include <cstdint>
#include <string>

#include "util/limits.h"
#include "util/status.h"

namespace gpuplan {

// An open regular file, read by offset. Move-only; closes on destruction.
class InputFile {
 public:
  static Result<InputFile> open(const std::string& path, const std::string& what);
  InputFile(InputFile&& o) noexcept
      : fd_(o.fd_), size_(o.size_), path_(std::move(o.path_)), what_(std::move(o.what_)) {
    o.fd_ = -1;
  }
  InputFile& operator=(InputFile&&) = delete;
  InputFile(const InputFile&) = delete;
  ~InputFile();

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Up to `n` bytes from `offset` (fewer only at the end of the file).
  Result<std::string> read(uint64_t offset, uint64_t n) const;

 private:
  InputFile(int fd, uint64_t size, std::string path, std::string what)
      : fd_(fd), size_(size), path_(std::move(path)), what_(std::move(what)) {}
  int fd_;
  uint64_t size_;
  std::string path_, what_;
};

// The whole file, refused when it is larger than `max_bytes`.
Result<std::string> read_text_file(const std::string& path, const std::string& what,
                                   uint64_t max_bytes = limits::kMaxTextFileBytes);

// Whether `path` names a directory (following links); false for anything else or nothing.
bool is_directory(const std::string& path);

}  // namespace gpuplan
