#include "cli/help.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "hardware/catalog.h"
#include "model/presets.h"
#include "util/suggest.h"
#include "util/units.h"
#include "util/version.h"

namespace gpuplan::cli {

namespace {

// One example list per command; shown under --help and in the man page.
const std::map<std::string, std::vector<std::string>>& example_table() {
  static const std::map<std::string, std::vector<std::string>> t = {
      {"gpus", {"gpuplan gpus --tier datacenter", "gpuplan gpus --min-memory 48 --json"}},
      {"models", {"gpuplan models", "gpuplan models --json"}},
      {"stacks", {"gpuplan stacks"}},
      {"engines", {"gpuplan engines", "gpuplan engines --json"}},
      {"memory",
       {"gpuplan memory --model llama-3.1-8b --task qlora --recompute full --gpu rtx-4090",
        "gpuplan memory --model meta-llama/Llama-3.1-70B --task full --gpu h100-sxm",
        "gpuplan memory --model llama-3.1-8b --task infer --batch 32 --seq 8k --kv-precision fp8 --gpu h100-sxm",
        "gpuplan memory --model ./my-model/ --task lora --json"}},
      {"train",
       {"gpuplan train --model llama-3.1-8b --gpu h100-sxm --gpus 8 --tokens 2B",
        "gpuplan train --model llama-3.1-70b --gpu h100-sxm --gpus 64 --tp 8 --stack megatron --tokens 1.5T --json"}},
      {"infer",
       {"gpuplan infer --model llama-3.1-8b --gpu l40s --prompt 2k --output 256 --concurrency 16",
        "gpuplan infer --model llama-3.1-70b --gpu h100-sxm --gpus 4 --tp 4 --weight-precision fp8 --json",
        "gpuplan infer --model llama-3.1-8b --gpu h100-sxm --engine vllm --rps 20 --prompt 1k --output 256 --json",
        "gpuplan infer --model llama-3.1-8b --gpu l40s --engine sglang --trace requests.csv",
        "gpuplan infer --model llama-3.1-70b --gpu h100-sxm --tp 2 --users 25 --think-time 0 --prompt 5000 --output 500",
        "gpuplan infer --model llama-3.1-8b --gpu l40s --rps 12 --average-rps 4 --emit k8s > hpa.yaml"}},
      {"roofline", {"gpuplan roofline --model llama-3.1-8b --gpu h100-sxm --task decode"}},
      {"plan",
       {"gpuplan plan --model llama-3.1-70b --gpu h100-sxm --gpus 64 --seq 8k --global-batch 512",
        "gpuplan plan --task infer --model llama-3.1-70b --gpu h100-sxm --engine vllm --rps 20 --average-rps 6 --prompt 2k --output 256",
        "gpuplan plan --task infer --model llama-3.1-8b --gpu l40s --rps 12 --emit k8s > hpa.yaml"}},
      {"cost", {"gpuplan cost --gpu h100-sxm --gpus 8 --hours-per-month 500 --years 3"}},
      {"advise",
       {"gpuplan advise", "gpuplan advise examples/qlora-7b-small-team.toml --html report.html",
        "gpuplan advise my-workload.toml --json"}},
      {"validate", {"gpuplan validate", "gpuplan validate --json"}},
      {"fit", {"gpuplan fit --out data/fitted.toml   # after changing data/validation.toml or the model"}},
      {"profile",
       {"gpuplan profile -- python train.py", "gpuplan profile --json-out run.json --out prof -- torchrun --nproc-per-node 8 train.py",
        "gpuplan profile --metrics-port 9400 -- python train.py   # Prometheus scrapes :9400/metrics",
        "gpuplan profile merge node0/ node1/ node2/ node3/"}},
      {"profile merge", {"gpuplan profile merge prof-node*/", "gpuplan profile merge a/summary.json b/summary.json --json"}},
      {"doctor", {"gpuplan doctor", "gpuplan doctor --json"}},
      {"bench", {"gpuplan bench --write-calibration mygpu.toml", "gpuplan --calibration mygpu.toml train --model gpt2 --gpu rtx-4090"}},
      {"predict", {"gpuplan predict --from prof/summary.json --gpu h100-sxm,l40s   # prof: a profile's --out"}},
      {"serve", {"gpuplan serve   # then open http://127.0.0.1:8080/", "gpuplan serve --port 9000 --host 127.0.0.1"}},
      {"completion",
       {"gpuplan completion bash > ~/.local/share/bash-completion/completions/gpuplan",
        "gpuplan completion zsh > ~/.zfunc/_gpuplan", "gpuplan completion fish > ~/.config/fish/completions/gpuplan.fish"}},
      {"help", {"gpuplan help memory", "gpuplan help profile merge"}},
  };
  return t;
}

std::vector<std::string> long_names(const CLI::App& app) {
  std::vector<std::string> out;
  for (const CLI::App* a = &app; a; a = a->get_parent())
    for (const CLI::Option* o : a->get_options())
      for (const auto& n : o->get_lnames()) out.push_back("--" + n);
  return out;
}

const CLI::Option* option_named(const CLI::App& app, const std::string& flag) {
  for (const CLI::App* a = &app; a; a = a->get_parent())
    if (const CLI::Option* o = a->get_option_no_throw(flag)) return o;
  return nullptr;
}

std::vector<CLI::App*> commands_of(CLI::App& app) {
  std::vector<CLI::App*> out;
  for (CLI::App* s : app.get_subcommands({}))
    if (!s->get_name().empty() && !s->get_group().empty()) out.push_back(s);
  return out;
}

// Values worth completing after a flag.
std::vector<std::string> values_for(const std::string& flag) {
  if (flag == "--task") return {"pretrain", "full", "lora", "qlora", "infer"};
  if (flag == "--precision" || flag == "--weight-precision" || flag == "--kv-precision")
    return {"fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "nf4"};
  if (flag == "--optimizer") return {"adamw", "adamw8bit", "sgd", "adafactor", "lion"};
  if (flag == "--recompute") return {"none", "selective", "op", "full"};
  if (flag == "--color") return {"auto", "always", "never"};
  if (flag == "--flash-attention") return {"on", "off"};
  if (flag == "--tier") return {"datacenter", "workstation", "consumer"};
  if (flag == "--model") return Presets::builtin().ids();
  if (flag == "--gpu") {
    std::vector<std::string> ids;
    for (const auto& g : Catalog::builtin().gpus()) ids.push_back(g.id);
    return ids;
  }
  return {};
}

std::string flag_help(const CLI::Option* o) {
  std::string d = o->get_description();
  for (char& c : d)
    if (c == '\n') c = ' ';
  return d;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string bash_script(CLI::App& app) {
  std::string cases;
  for (CLI::App* c : commands_of(app)) {
    std::vector<std::string> flags = long_names(*c);
    std::vector<std::string> subs;
    for (CLI::App* s : commands_of(*c)) subs.push_back(s->get_name());
    cases += fmt::format("    {}) words={} ;;\n", c->get_name(), shell_quote(fmt::format("{}", fmt::join(subs.empty() ? flags : [&] {
                                                              auto v = subs;
                                                              v.insert(v.end(), flags.begin(), flags.end());
                                                              return v;
                                                            }(), " "))));
  }
  std::string values;
  for (const char* flag : {"--task", "--precision", "--weight-precision", "--kv-precision", "--optimizer", "--recompute",
                           "--color", "--flash-attention", "--tier", "--model", "--gpu"})
    values += fmt::format("    {}) COMPREPLY=($(compgen -W {} -- \"$cur\")); {};;\n", flag,
                          shell_quote(fmt::format("{}", fmt::join(values_for(flag), " "))),
                          std::string(flag) == "--model" ? "COMPREPLY+=($(compgen -f -- \"$cur\")); return " : "return ");
  std::vector<std::string> names;
  for (CLI::App* c : commands_of(app)) names.push_back(c->get_name());
  return fmt::format(R"(# bash completion for gpuplan (generated by `gpuplan completion bash`)
_gpuplan() {{
  local cur prev cmd words i
  cur="${{COMP_WORDS[COMP_CWORD]}}"
  prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  case "$prev" in
{}  esac
  cmd=""
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "${{COMP_WORDS[i]}}" in -*) ;; *) cmd="${{COMP_WORDS[i]}}"; break ;; esac
  done
  if [ -z "$cmd" ]; then
    COMPREPLY=($(compgen -W {} -- "$cur"))
    return
  fi
  case "$cmd" in
{}    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  [ ${{#COMPREPLY[@]}} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
}}
complete -F _gpuplan gpuplan
)",
                     values, shell_quote(fmt::format("{} --help --version", fmt::join(names, " "))), cases);
}

std::string zsh_escape(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\'' ) out += "'\\''";
    else if (c == '[' || c == ']' || c == ':') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

std::string zsh_script(CLI::App& app) {
  std::string commands, cases;
  for (CLI::App* c : commands_of(app)) {
    commands += fmt::format("    '{}:{}'\n", c->get_name(), zsh_escape(c->get_description()));
    std::string specs;
    for (const CLI::Option* o : c->get_options()) {
      if (o->get_lnames().empty()) continue;
      const std::string flag = "--" + o->get_lnames().front();
      const auto vals = values_for(flag);
      std::string action = o->get_type_size() == 0 ? "" : vals.empty() ? ":value:_files" : fmt::format(":value:({})", fmt::join(vals, " "));
      specs += fmt::format(" \\\n        '{}[{}]{}'", flag, zsh_escape(flag_help(o)), action);
    }
    cases += fmt::format("      {})\n        _arguments{} '*:file:_files' ;;\n", c->get_name(), specs);
  }
  return fmt::format(R"(#compdef gpuplan
# zsh completion for gpuplan (generated by `gpuplan completion zsh`)
_gpuplan() {{
  local -a commands
  commands=(
{}  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case "$words[2]" in
{}  esac
}}
_gpuplan "$@"
)",
                     commands, cases);
}

std::string fish_escape(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '\'' ? std::string("\\'") : std::string(1, c);
  return out;
}

std::string fish_script(CLI::App& app) {
  std::vector<std::string> names;
  for (CLI::App* c : commands_of(app)) names.push_back(c->get_name());
  std::string out = "# fish completion for gpuplan (generated by `gpuplan completion fish`)\ncomplete -c gpuplan -f\n";
  for (CLI::App* c : commands_of(app))
    out += fmt::format("complete -c gpuplan -n 'not __fish_seen_subcommand_from {}' -a {} -d '{}'\n", fmt::join(names, " "),
                       c->get_name(), fish_escape(c->get_description()));
  for (CLI::App* c : commands_of(app))
    for (const CLI::Option* o : c->get_options()) {
      if (o->get_lnames().empty()) continue;
      const std::string name = o->get_lnames().front();
      const auto vals = values_for("--" + name);
      out += fmt::format("complete -c gpuplan -n '__fish_seen_subcommand_from {}' -l {} -d '{}'{}\n", c->get_name(), name,
                         fish_escape(flag_help(o)),
                         o->get_type_size() == 0 ? "" : vals.empty() ? " -r -F" : fmt::format(" -x -a '{}'", fmt::join(vals, " ")));
    }
  return out;
}

std::string roff(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

}  // namespace

std::string examples_for(const std::string& command) {
  auto it = example_table().find(command);
  if (it == example_table().end()) return "";
  std::string out = "Examples:\n";
  for (const auto& e : it->second) out += "  " + e + "\n";
  return out;
}

CLI::App* find_command(CLI::App& app, const std::string& path) {
  CLI::App* at = &app;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find(' ', start);
    const std::string word = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
    CLI::App* next = nullptr;
    for (CLI::App* s : commands_of(*at))
      if (s->get_name() == word) next = s;
    if (!next) return nullptr;
    at = next;
    start = end == std::string::npos ? path.size() : end + 1;
  }
  return at == &app ? nullptr : at;
}

std::optional<Error> unknown_flag(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* at = &app;
  std::string path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") return std::nullopt;
    if (arg.rfind("--", 0) == 0) {
      const std::string flag = arg.substr(0, arg.find('='));
      const CLI::Option* o = option_named(*at, flag);
      if (!o) {
        const auto near = nearest_names(flag, long_names(*at), 1);
        return make_error(flag, fmt::format("unknown flag{}; `gpuplan help{}` lists the flags",
                                            near.empty() ? "" : " (did you mean " + near.front() + "?)", path));
      }
      if (o->get_type_size() != 0 && arg.find('=') == std::string::npos) ++i;  // skip its value
      continue;
    }
    if (arg.rfind("-", 0) == 0) continue;
    CLI::App* next = nullptr;
    for (CLI::App* s : commands_of(*at))
      if (s->get_name() == arg) next = s;
    if (next) {
      at = next;
      path += " " + arg;
    } else if (at->get_prefix_command()) {
      return std::nullopt;  // the rest is the profiled command's
    }
  }
  return std::nullopt;
}

void accept_count_suffixes(CLI::App& app) {
  for (CLI::App* c : app.get_subcommands({})) accept_count_suffixes(*c);
  for (CLI::Option* o : app.get_options()) {
    const std::string type = o->get_type_name();
    const bool integral = type.rfind("INT", 0) == 0 || type.rfind("UINT", 0) == 0;
    if (!integral && type.rfind("FLOAT", 0) != 0) continue;
    const std::string name = o->get_name();
    o->transform(
        [integral, name](std::string v) -> std::string {
          // CLI11 reads "" as zero, which several flags take to mean "the default".
          if (v.empty()) throw CLI::ValidationError("needs a number, got an empty value");
          // CLI11 reads and range-checks plain integers itself; every real number goes through
          // parse_count, which refuses NaN, inf and values that overflow a double (1e309).
          if (integral && !std::isalpha(static_cast<unsigned char>(v.back()))) return v;
          auto r = parse_count(v, name);
          if (!r) throw CLI::ValidationError(r.error().message);
          if (integral) {
            if (*r != std::floor(*r) || std::fabs(*r) >= 9e18)
              throw CLI::ValidationError(fmt::format("'{}' must be a whole number", v));
            return fmt::format("{}", static_cast<long long>(*r));
          }
          return fmt::format("{:.17g}", *r);
        },
        "", "count");
  }
}

Result<std::string> completion_script(CLI::App& app, const std::string& shell) {
  if (shell == "bash") return bash_script(app);
  if (shell == "zsh") return zsh_script(app);
  if (shell == "fish") return fish_script(app);
  return make_error("shell", "must be bash, zsh or fish, not '" + shell + "'");
}

std::string man_page(CLI::App& app) {
  std::string out = fmt::format(".TH GPUPLAN 1 \"{}\" \"gpuplan {}\" \"User Commands\"\n", kCommitDate, kVersion);
  out += ".SH NAME\ngpuplan \\- which GPUs to rent or buy for AI training and inference, with the work shown\n";
  out += ".SH SYNOPSIS\n.B gpuplan\n[\\fIGLOBAL FLAGS\\fR] \\fICOMMAND\\fR [\\fIFLAGS\\fR]\n";
  out += ".SH DESCRIPTION\n" + roff(app.get_description()) +
         ". Every estimate prints its per-term breakdown; \\fB\\-\\-json\\fR gives the same figures for scripts.\n";
  out += ".SH GLOBAL FLAGS\n";
  for (const CLI::Option* o : app.get_options())
    if (!o->get_lnames().empty())
      out += fmt::format(".TP\n.B {}\n{}\n", roff(o->get_name()), roff(flag_help(o)));
  out += ".SH COMMANDS\n";
  std::function<void(CLI::App*, const std::string&)> add = [&](CLI::App* c, const std::string& prefix) {
    const std::string name = prefix.empty() ? c->get_name() : prefix + " " + c->get_name();
    out += fmt::format(".SS \"gpuplan {}\"\n{}\n", roff(name), roff(c->get_description()));
    for (const CLI::Option* o : c->get_options()) {
      if (o->get_lnames().empty() && !o->get_positional()) continue;
      out += fmt::format(".TP\n.B {}\n{}\n", roff(o->get_positional() ? o->get_name() : "--" + o->get_lnames().front()),
                         roff(flag_help(o)));
    }
    auto it = example_table().find(name);
    if (it != example_table().end()) {
      out += ".PP\nExamples:\n.RS\n.nf\n";
      for (const auto& e : it->second) out += roff(e) + "\n";
      out += ".fi\n.RE\n";
    }
    for (CLI::App* s : commands_of(*c)) add(s, name);
  };
  for (CLI::App* c : commands_of(app)) add(c, "");
  out += ".SH ENVIRONMENT\n"
         ".TP\n.B HF_HOME, HF_HUB_CACHE\nWhere the local Hugging Face cache is (default ~/.cache/huggingface/hub); hub ids resolve from it first.\n"
         ".TP\n.B HF_TOKEN\nToken for gated or private Hugging Face repositories.\n"
         ".TP\n.B HF_ENDPOINT\nHub address (default https://huggingface.co).\n"
         ".TP\n.B HF_HUB_OFFLINE\nWhen 1, never reach the hub; use the local caches only.\n"
         ".TP\n.B NO_COLOR\nNo colour in the output (as \\-\\-color never).\n"
         ".TP\n.B COLUMNS\nThe width text output fits (default: the terminal's, or 100).\n";
  out += ".SH EXIT STATUS\n0 on success; 2 for a usage or input error (one line on standard error naming the flag or field);"
         " 1 when a check finds a problem (doctor) or on an internal error; profile returns its command's exit status.\n";
  out += ".SH SEE ALSO\nThe README in the gpuplan source tree; \\fBgpuplan help\\fR \\fICOMMAND\\fR.\n";
  return out;
}

}  // namespace gpuplan::cli
