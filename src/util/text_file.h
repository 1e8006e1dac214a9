// Reading a whole text file the user named, with a size cap so a wrong path (a multi-GB weight
// file, a device) is refused rather than read. `what` names the file in errors ("config").
#pragma once

#include <cstdint>
#include <string>

#include "util/status.h"

namespace gpuplan {

Result<std::string> read_text_file(const std::string& path, const std::string& what,
                                   uint64_t max_bytes = uint64_t{64} << 20);

}  // namespace gpuplan
