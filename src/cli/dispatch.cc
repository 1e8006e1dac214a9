// The command table and dispatch: parses flags, runs one subcommand, returns its exit code. Kept
// apart from main() so the CLI fuzzer can run whole command lines in-process.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "cli/help.h"
#include "util/suggest.h"
#include "util/terminal.h"
#include "util/version.h"

namespace gpuplan::cli {

namespace {

// `gpuplan help [CMD]`, `gpuplan completion SHELL` and the man page: the CLI describing itself.
std::vector<Command> self_commands(CLI::App& app) {
  return {
      {"help", "Show the help of a command: gpuplan help memory",
       [&app](CLI::App& sub, Context&, std::function<int()>& run) {
         auto words = std::make_shared<std::vector<std::string>>();
         sub.add_option("command", *words, "the command (and subcommand) to describe");
         sub.callback([&app, &run, words] {
           run = [&app, words] {
             if (words->empty()) return fmt::print("{}", app.help()), 0;
             std::string path = fmt::format("{}", fmt::join(*words, " "));
             CLI::App* c = find_command(app, path);
             if (!c) {
               std::vector<std::string> names;
               for (CLI::App* s : app.get_subcommands({})) names.push_back(s->get_name());
               return fail(make_error(path, "unknown command" + did_you_mean(path, names) + "; `gpuplan --help` lists them"));
             }
             fmt::print("{}", c->help());
             return 0;
           };
         });
       }},
      {"completion", "Print a shell completion script: bash, zsh or fish",
       [&app](CLI::App& sub, Context&, std::function<int()>& run) {
         auto shell = std::make_shared<std::string>();
         sub.add_option("shell", *shell, "bash, zsh or fish")->required();
         sub.callback([&app, &run, shell] {
           run = [&app, shell] {
             auto s = completion_script(app, *shell);
             if (!s) return fail(s.error());
             fmt::print("{}", *s);
             return 0;
           };
         });
       }},
      {"manpage", "Print the man page, gpuplan(1), in roff (make install puts it in share/man/man1)",
       [&app](CLI::App& sub, Context&, std::function<int()>& run) {
         sub.group("");  // for packaging, not for people
         sub.callback([&app, &run] { run = [&app] { return fmt::print("{}", man_page(app)), 0; }; });
       }},
  };
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"gpuplan: plan GPU hardware for AI training and inference, from first principles"};
  app.set_version_flag("-V,--version", version_line());
  app.require_subcommand(1);
  app.fallthrough();  // --catalog/--prices/--calibration also work after the subcommand
  app.footer("Run `gpuplan help COMMAND` for a command's flags and examples.");
  DataFlags flags;
  std::string color = "auto";
  app.add_option("--catalog", flags.catalog_path, "GPU catalog TOML replacing the built-in one")->option_text("FILE");
  app.add_option("--prices", flags.prices_path, "price TOML replacing the built-in one")->option_text("FILE");
  app.add_option("--calibration", flags.calibration_path, "efficiency overrides (from `gpuplan bench`) or a `gpuplan profile` summary.json")->option_text("FILE");
  app.add_option("--color", color, "colour in text output: auto (on a terminal, unless NO_COLOR is set), always or never")
      ->capture_default_str();
  Context ctx(flags);

  std::vector<Command> commands;
  for (auto* group : {&catalog_commands, &memory_commands, &perf_commands, &validate_commands, &advise_commands, &profile_commands, &serve_commands})
    for (auto& c : (*group)()) commands.push_back(std::move(c));
  for (auto& c : self_commands(app)) commands.push_back(std::move(c));
  std::function<int()> run;
  std::vector<std::string> names;
  for (auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    c.setup(*sub, ctx, run);
    names.push_back(c.name);
    for (CLI::App* s : std::vector<CLI::App*>{sub}) {
      if (std::string ex = examples_for(c.name); !ex.empty()) s->footer(ex);
      for (CLI::App* nested : s->get_subcommands({}))
        if (std::string ex = examples_for(std::string(c.name) + " " + nested->get_name()); !ex.empty()) nested->footer(ex);
    }
  }
  accept_count_suffixes(app);

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
    // A mistyped flag explains most parse failures ("--modle" makes --model look missing).
    if (auto unknown = unknown_flag(app, argc, argv)) return fail(*unknown);
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    // CLI11 says "--batch: <why>" for a value it refused: keep the flag as the field.
    if (const size_t colon = what.find(": "); what.rfind("--", 0) == 0 && colon != std::string::npos)
      return fail(make_error(what.substr(0, colon), what.substr(colon + 2)));
    return fail(make_error("usage", what + " (see --help)"));
  }
  auto style = detect_terminal_style(1, color);
  if (!style) return fail(style.error());
  set_output_style(*style);
  return run ? run() : kExitUsage;
}

}  // namespace gpuplan::cli
