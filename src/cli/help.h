// Everything the CLI says about itself, generated from the one command table (CLI11's app): the
// examples under each `--help`, `gpuplan help CMD`, "unknown flag (did you mean ...?)", the shell
// completions and the man page. Adding a command or a flag updates all of them.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "util/status.h"

namespace gpuplan::cli {

// The examples shown under `gpuplan CMD --help` and in the man page ("" when there are none).
std::string examples_for(const std::string& command);

// The subcommand named `path` ("memory", "profile merge"), or nullptr.
CLI::App* find_command(CLI::App& app, const std::string& path);

// When argv holds a long flag the command does not know, the error to show instead of CLI11's:
// "--taks: unknown flag for `gpuplan memory` (did you mean --task?)".
std::optional<Error> unknown_flag(CLI::App& app, int argc, const char* const* argv);

// Size suffixes ("2B", "128k") on every numeric flag, converted before CLI11 reads the number;
// an empty value, and a real number that is not finite, are refused there.
void accept_count_suffixes(CLI::App& app);

// Shell completion scripts: `shell` is bash, zsh or fish.
Result<std::string> completion_script(CLI::App& app, const std::string& shell);

// The man page, gpuplan(1), in roff.
std::string man_page(CLI::App& app);

}  // namespace gpuplan::cli
