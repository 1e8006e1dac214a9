// What every gpuplan subcommand shares: the data files (built-in or overridden by flags), the
// --json switch, and the one way errors leave the program (one line on stderr, exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "hardware/catalog.h"
#include "hardware/efficiency.h"
#include "hardware/platform.h"
#include "hardware/prices.h"
#include "memory/headroom.h"
#include "util/status.h"

namespace gpuplan::cli {

inline constexpr int kExitUsage = 2;

struct DataFlags {
  std::string catalog_path, prices_path, calibration_path;
};

// The data a command works from; loaded on first use.
class Context {
 public:
  explicit Context(const DataFlags& f) : flags_(f) {}
  Result<const Catalog*> catalog();
  Result<const PriceBook*> prices();
  Result<const EfficiencyTable*> efficiency();

 private:
  const DataFlags& flags_;
  std::optional<Catalog> catalog_;
  std::optional<PriceBook> prices_;
  std::optional<EfficiencyTable> efficiency_;
};

// --headroom FRACTION on memory, plan and advise: the share of each card's memory a plan must leave
// free. `value` starts as NaN and stays so when the flag is absent.
inline constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();
void add_headroom_flag(CLI::App& sub, double& value);
// The flag's value, or the platform data's default with its source.
Result<Headroom> resolve_headroom(double value, const Platform& platform);

// Prints "gpuplan: error: <field>: <message>" and returns the usage exit code.
int fail(const Error& e);

// Parses one command line and runs it; returns the exit code. Never exits the process.
int run_cli(int argc, char** argv);

// Prints `j` (indented, invalid UTF-8 replaced) and returns 0; or, when a number in it is NaN or
// infinite (which JSON cannot hold and would print as null), fails naming that field and `input`.
int print_json(const nlohmann::json& j, const std::string& input);

// The last check before an estimate is shown: each figure must be finite, non-negative and at most
// `max`. The error names the figure and the input that produced it.
struct Figure {
  const char* name;
  double value;
  double max = 1e30;
};
Status check_figures(std::initializer_list<Figure> figures, const std::string& input);
// Seconds beyond the age of the universe (4.4e17 s) are not an answer.
inline constexpr double kMaxSeconds = 4.4e17;
// Nor are bytes per GPU beyond an exabyte (1e18, millions of times the largest card); the bound
// also keeps the figure exact when JSON prints it as an integer.
inline constexpr double kMaxBytes = 1e18;

// A subcommand: its name, one-line help, and how it adds itself to the parser. `run` is set by
// `setup` and called after parsing.
struct Command {
  const char* name;
  const char* help;
  std::function<void(CLI::App& sub, Context& ctx, std::function<int()>& run)> setup;
};

std::vector<Command> catalog_commands();  // gpus, models
std::vector<Command> memory_commands();   // memory
std::vector<Command> perf_commands();     // train, infer, roofline, predict
std::vector<Command> validate_commands(); // validate, fit
std::vector<Command> advise_commands();   // plan, cost, advise
std::vector<Command> profile_commands();  // profile, doctor, bench
std::vector<Command> serve_commands();    // serve

}  // namespace gpuplan::cli
