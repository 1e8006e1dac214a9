// The data files of data/ as compiled into the binary (see cmake/embed_data.cmake).
#pragma once

#include <string_view>

namespace gpuplan::data {

// The contents of data/<name> (e.g. "gpus.toml"), or an empty view if there is no such file.
std::string_view embedded_file(std::string_view name);

}  // namespace gpuplan::data
