// What build this is: the release version, the git commit it was built from and that commit's date
// (baked in at build time by cmake/version.cmake). Reports and `gpuplan --version` show them.
#pragma once

#include <string>

namespace gpuplan {

extern const char* const kVersion;     // "0.1.0"
extern const char* const kCommit;      // "1a2b3c4d5e6f", "...-dirty", or "unknown" outside git
extern const char* const kCommitDate;  // "2026-12-02"

// "gpuplan 0.1.0 (commit 1a2b3c4d5e6f, 2026-12-02)"
std::string version_line();

}  // namespace gpuplan
