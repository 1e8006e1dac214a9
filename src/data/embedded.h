// The data files of data/ as compiled into the binary (see cmake/embed_data.cmake).
#pragma once

#include <string>
#include <string_view>

#include "util/status.h"

namespace gpuplan::data {

// The contents of data/<name> (e.g. "gpus.toml"), or an empty view if there is no such file.
std::string_view embedded_file(std::string_view name);

// The built-in files are checked by the test suite, so failing to parse one is a build defect, not a
// user error: it is reported and the process aborts.
[[noreturn]] void builtin_data_defect(const std::string& message);

template <class T>
T builtin_or_abort(Result<T> r) {
  if (!r) builtin_data_defect(r.error().to_string());
  return std::move(r).value();
}

}  // namespace gpuplan::data
