#include "util/text_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpuplan {

Result<std::string> read_text_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return make_error(path, "cannot open " + what);
  if (size > max_bytes)
    return make_error(path, fmt::format("{} is larger than {} MiB; is it the right file?", what, max_bytes >> 20));
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(path, "cannot open " + what);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace gpuplan
