// Writing the files gpuplan produces (reports, profile summaries). A symbolic link in the last
// component of the path is never followed (a planted link cannot redirect the write onto another
// file), only regular files are replaced, new files get mode 0666 less the umask, and every failed
// write (a full disk, a lost mount) is an Error naming the path and the reason.
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace gpuplan {

// Writes `content` to `path` (created or truncated). `field` names the flag in errors ("--html").
Status write_output_file(const std::string& path, std::string_view content, const std::string& field);

// Writes `content` as `name` inside the open directory `dir_fd` atomically: into a new temporary
// file beside it, then renamed over `name`, so a reader sees the old file or the whole new one and
// a failed write leaves no partial file. `shown` is the path used in errors.
Status write_file_atomic(int dir_fd, const std::string& name, std::string_view content, const std::string& shown,
                         const std::string& field);

// Every byte of [p, p+n) to `fd`, retrying short writes and EINTR. Returns 0 or the errno.
int write_fully(int fd, const char* p, size_t n);

}  // namespace gpuplan
