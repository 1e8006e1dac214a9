// The command table and dispatch: parses flags, runs one subcommand, returns its exit code. Kept
// apart from main() so the CLI fuzzer can run whole command lines in-process.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "util/suggest.h"

namespace gpuplan::cli {

int run_cli(int argc, char** argv) {
  CLI::App app{"gpuplan: plan GPU hardware for AI training and inference, from first principles"};
  app.set_version_flag("--version", "gpuplan 0.1.0");
  app.require_subcommand(1);
  app.fallthrough();  // --catalog/--prices/--calibration also work after the subcommand
  DataFlags flags;
  app.add_option("--catalog", flags.catalog_path, "GPU catalog TOML replacing the built-in one")->option_text("FILE");
  app.add_option("--prices", flags.prices_path, "price TOML replacing the built-in one")->option_text("FILE");
  app.add_option("--calibration", flags.calibration_path, "efficiency overrides (from `gpuplan bench`) or a `gpuplan profile` summary.json")->option_text("FILE");
  Context ctx(flags);

  std::vector<Command> commands;
  for (auto* group : {&catalog_commands, &memory_commands, &perf_commands, &advise_commands, &profile_commands})
    for (auto& c : (*group)()) commands.push_back(std::move(c));
  std::function<int()> run;
  std::vector<std::string> names;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.setup(*sub, ctx, run);
    names.push_back(c.name);
  }

  // ninja-style: "unknown command 'x' (did you mean 'y'?)" before CLI11's generic message.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string first = argv[1];
    if (std::find(names.begin(), names.end(), first) == names.end())
      return fail(make_error(first, "unknown command" + did_you_mean(first, names) + "; `gpuplan --help` lists them"));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    return fail(make_error("usage", what + " (see --help)"));
  }
  return run ? run() : kExitUsage;
}

}  // namespace gpuplan::cli
