#include "util/version.h"

#include <fmt/format.h>

namespace gpuplan {

std::string version_line() { return fmt::format("gpuplan {} (commit {}, {})", kVersion, kCommit, kCommitDate); }

}  // namespace gpuplan
