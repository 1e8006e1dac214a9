#include "util/text_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/units.h"

namespace gpuplan {

namespace {

// Why a file of this type is not read, or nullptr for a regular file.
const char* refusal(mode_t mode) {
  if (S_ISREG(mode)) return nullptr;
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "is a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device";
  return "is not a regular file";
}

}  // namespace

Result<InputFile> InputFile::open(const std::string& path, const std::string& what) {
  if (path.empty()) return make_error(what, "no file named");
  // stat first: opening some devices has side effects; then open without blocking (a FIFO with no
  // writer would block open() forever) and check again on the descriptor, which is what is read.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return make_error(path, fmt::format("cannot open {}: {}", what, std::strerror(errno)));
  if (const char* why = refusal(st.st_mode))
    return make_error(path, fmt::format("{} {}, not a file", what, why));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return make_error(path, fmt::format("cannot open {}: {}", what, std::strerror(errno)));
  if (::fstat(fd, &st) != 0 || refusal(st.st_mode)) {
    ::close(fd);
    return make_error(path, fmt::format("{} changed while being opened", what));
  }
  return InputFile(fd, static_cast<uint64_t>(st.st_size), path, what);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::string> InputFile::read(uint64_t offset, uint64_t n) const {
  if (offset >= size_) return std::string();
  n = std::min(n, size_ - offset);
  std::string buf(n, '\0');
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got =
        ::pread(fd_, buf.data() + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return make_error(path_, fmt::format("cannot read {}: {}", what_, std::strerror(errno)));
    if (got == 0) break;  // the file shrank while being read
    done += static_cast<uint64_t>(got);
  }
  buf.resize(done);
  return buf;
}

Result<std::string> read_text_file(const std::string& path, const std::string& what,
                                   uint64_t max_bytes) {
  auto f = InputFile::open(path, what);
  if (!f) return f.error();
  if (f->size() > max_bytes)
    return make_error(path, fmt::format("{} is larger than {}; is it the right file?", what,
                                        format_bytes(static_cast<double>(max_bytes))));
  return f->read(0, f->size());
}

bool is_directory(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace gpuplan
