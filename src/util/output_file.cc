#include "util/output_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/utf8.h"

namespace gpuplan {

namespace {

Error write_error(const std::string& field, const std::string& path, int err) {
  return make_error(field, fmt::format("cannot write {}: {}", valid_utf8(path), std::strerror(err)));
}

}  // namespace

int write_fully(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    if (w == 0) return EIO;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

Status write_output_file(const std::string& path, std::string_view content, const std::string& field) {
  if (path.empty()) return make_error(field, "no file named");
  // O_NONBLOCK: a FIFO planted at the path must not block the open; it is refused below.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == ELOOP)
      return make_error(field, fmt::format("{} is a symbolic link; gpuplan does not write through links (remove it or name "
                                           "the file it points to)", valid_utf8(path)));
    return write_error(field, path, errno);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode))) {
    ::close(fd);
    return make_error(field, fmt::format("{} is not a regular file", valid_utf8(path)));
  }
  int err = 0;
  if (S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) err = errno;
  if (!err) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (!err) err = write_fully(fd, content.data(), content.size());
  if (::close(fd) != 0 && !err) err = errno;
  if (err) return write_error(field, path, err);
  return std::nullopt;
}

Status write_file_atomic(int dir_fd, const std::string& name, std::string_view content, const std::string& shown,
                         const std::string& field) {
  // Mode 0666 through open() so the umask applies (mkstemp would force 0600).
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 100; ++attempt) {
    tmp = fmt::format(".{}.tmp-{}-{}", name, ::getpid(), attempt);
    fd = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) return write_error(field, shown, errno);
  }
  if (fd < 0) return write_error(field, shown, EEXIST);
  int err = write_fully(fd, content.data(), content.size());
  if (!err && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && ::renameat(dir_fd, tmp.c_str(), dir_fd, name.c_str()) != 0) err = errno;
  if (err) {
    ::unlinkat(dir_fd, tmp.c_str(), 0);
    return write_error(field, shown, err);
  }
  return std::nullopt;
}

}  // namespace gpuplan
