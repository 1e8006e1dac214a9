// libFuzzer target: whole command lines through run_cli(), in-process. The input picks a
// subcommand, its flags (read from the CLI's own command table via `gpuplan completion bash`) and
// their values (edge numbers, random numbers, enumerated words, files of every odd kind, random
// bytes). Every run must end with exit 0 and only finite, sane figures on stdout, or exit 2 and one
// "gpuplan: error:" line on stderr; a crash, an escaped exception, a sanitizer report or a run past
// libFuzzer's -timeout is a finding.
//
// Safety: commands that start processes, load libraries, listen or write files at a user-named
// place (profile, doctor, bench, serve) are never chosen; `advise --html` always writes into the
// fuzzer's own temporary folder; the hub is offline.
#include <fmt/format.h>
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/common.h"

namespace {

// The commands the fuzzer may run: each reads files at most, and prints.
const std::set<std::string> kSafeCommands = {"gpus",     "models",  "stacks", "memory", "train", "infer", "roofline",
                                             "predict", "validate", "plan",   "cost",   "advise"};

// An anonymous in-memory file standing in for stdout or stderr. Only the C streams are replaced,
// not file descriptors 1 and 2, so libFuzzer's and the sanitizers' reports still reach the terminal.
struct Captured {
  int fd = -1;
  FILE* file = nullptr;
};

Captured capture(const char* name) {
  Captured c;
  c.fd = memfd_create(name, 0);
  c.file = c.fd >= 0 ? fdopen(c.fd, "w+") : nullptr;
  if (!c.file) std::abort();
  return c;
}

// What was written since the last call; empties the file for the next run.
std::string drain(const Captured& c) {
  std::fflush(c.file);
  struct stat st {};
  fstat(c.fd, &st);
  std::string text(static_cast<size_t>(st.st_size), '\0');
  if (st.st_size > 0 && pread(c.fd, text.data(), text.size(), 0) < 0) std::abort();
  if (ftruncate(c.fd, 0) != 0) std::abort();
  std::rewind(c.file);
  return text;
}

struct Env {
  std::string dir;
  std::map<std::string, std::vector<std::string>> flags;   // command -> its flags
  std::map<std::string, std::vector<std::string>> words;   // flag -> the words it takes
  std::vector<std::string> files;                          // file-ish values, all inside `dir`
  Captured out{}, err{};
};
Env* env = nullptr;

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

int run(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int rc = gpuplan::cli::run_cli(static_cast<int>(args.size()), argv.data());
  return rc;
}

// Reads each command's flags and each flag's words from the bash completion script, so the
// fuzzer follows the command table as it changes.
void learn_flags() {
  run({"gpuplan", "completion", "bash"});
  const std::string script = drain(env->out);
  drain(env->err);
  size_t pos = 0;
  while (pos < script.size()) {
    size_t end = script.find('\n', pos);
    if (end == std::string::npos) end = script.size();
    const std::string line = script.substr(pos, end - pos);
    pos = end + 1;
    const size_t paren = line.find(") ");
    const size_t q1 = line.find('\''), q2 = line.rfind('\'');
    if (paren == std::string::npos || q1 == std::string::npos || q2 <= q1) continue;
    std::string key = line.substr(0, paren);
    key.erase(0, key.find_first_not_of(' '));
    std::vector<std::string> items;
    std::string list = line.substr(q1 + 1, q2 - q1 - 1) + " ";
    for (size_t a = 0, b; (b = list.find(' ', a)) != std::string::npos; a = b + 1)
      if (b > a) items.push_back(list.substr(a, b - a));
    if (line.find(" words=") != std::string::npos && kSafeCommands.count(key)) {
      std::vector<std::string> fl;
      for (const auto& f : items)
        if (f.rfind("--", 0) == 0 && f != "--help" && f != "--version") fl.push_back(f);
      env->flags[key] = fl;
    } else if (key.rfind("--", 0) == 0 && line.find("compgen -W") != std::string::npos) {
      env->words[key] = items;
    }
  }
  if (env->flags.size() < 10 || !env->words.count("--model")) {
    std::fprintf(stderr, "fuzz_cli: could not read the command table from `gpuplan completion bash`\n");
    std::abort();
  }
}

void make_files() {
  const std::string& d = env->dir;
  const std::string cfg =
      R"({"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 256})";
  write_file(d + "/config.json", cfg);
  mkdir((d + "/model").c_str(), 0700);
  write_file(d + "/model/config.json", cfg);
  write_file(d + "/profile.json",
             R"({"schema_version": 1, "steps": {"count": 12, "median_s": 35.58, "p90_s": 35.9},
                 "gpus": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "memory_total_bytes": 85899345920}],
                 "workload": {"model": "mpt-7b", "task": "pretrain", "precision": "bf16", "micro_batch": 16, "seq": 4096,
                              "gpus": 8, "grad_accum": 2, "recompute": "full"}})");
  write_file(d + "/workload.toml",
             "name = \"fuzz\"\n[[training]]\nname = \"ft\"\nmodel = \"llama-3.1-8b\"\ntask = \"qlora\"\ntokens = 1e8\n"
             "deadline_days = 7\n[budget]\nusd = 5000\n");
  write_file(d + "/calibration.toml", "[gpu.h100-sxm]\nmatmul_max_fraction = 0.5\n");
  write_file(d + "/validation.toml",
             "[[shape]]\nid = \"s\"\nname = \"GPT 1.7B\"\nfamily = \"gpt2\"\nlayers = 24\nhidden = 2304\nintermediate = 9216\n"
             "heads = 24\nvocab = 51200\nmax_position = 2048\nsource = \"x\"\n\n[[training]]\nwhat = \"w\"\n"
             "publication = \"p\"\nmodel = \"s\"\ngpu = \"a100-80gb-sxm\"\ntp = 1\npp = 1\ngpus = 32\nglobal_batch = 512\n"
             "micro_batch = 4\nseq = 2048\nprecision = \"fp16\"\nrecompute = \"full\"\nmetric = \"tflops_per_gpu\"\n"
             "published = 137\nsource = \"x\"\n");
  write_file(d + "/empty.json", "");
  write_file(d + "/garbage.gguf", "GGUF\x03\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff");
  write_file(d + "/m\xff\xfe.json", cfg);
  mkfifo((d + "/fifo.json").c_str(), 0600);
  mkfifo((d + "/fifo.toml").c_str(), 0600);
  mkdir((d + "/dir.json").c_str(), 0700);
  env->files = {d + "/config.json", d + "/model", d + "/profile.json", d + "/workload.toml", d + "/calibration.toml",
                d + "/validation.toml",
                d + "/empty.json", d + "/garbage.gguf", d + "/m\xff\xfe.json", d + "/fifo.json", d + "/fifo.toml",
                d + "/dir.json", d + "/missing.json", d, "/dev/zero"};
}

// A value for `flag`: mostly plausible, often hostile.
std::string value_for(FuzzedDataProvider& p, const std::string& flag) {
  static const char* kEdges[] = {"0", "1", "-1", "2", "8", "nan", "inf", "-inf", "1e300", "1e309", "-1e300", "5e-324",
                                 "0x10", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                 "4294967296", "2147483648", "1048576", "1048577", "1.5", "2B", "128k", "4Ki", "1e16",
                                 "", " ", "1..8", "8..16384", "1..1048576", "0..0", "every:2", "every:0"};
  switch (p.ConsumeIntegralInRange<int>(0, 9)) {
    case 0:
    case 1:
      if (auto w = env->words.find(flag); w != env->words.end() && !w->second.empty())
        return w->second[p.ConsumeIntegralInRange<size_t>(0, w->second.size() - 1)];
      [[fallthrough]];
    case 2:
    case 3:
      return kEdges[p.ConsumeIntegralInRange<size_t>(0, std::size(kEdges) - 1)];
    case 4:
      return std::to_string(p.ConsumeIntegral<int64_t>());
    case 5:
      return std::to_string(p.ConsumeIntegralInRange<int64_t>(0, 4096));
    case 6:
      return fmt::format("{}", p.ConsumeFloatingPoint<double>());
    case 7:
      return env->files[p.ConsumeIntegralInRange<size_t>(0, env->files.size() - 1)];
    default:
      return p.ConsumeRandomLengthString(24);
  }
}

// Whether `out` holds a figure no estimate should print: inf or nan as a word (not after a slash: a
// table may wrap a source's address as ".../gen-ai/inf" + "erence"), a wrapped int64, or an
// exponent of 100 or more. Returns the offending text, or "".
std::string insane_figure(const std::string& out) {
  auto alnum = [&](size_t i) { return i < out.size() && std::isalnum(static_cast<unsigned char>(out[i])); };
  auto digit = [&](size_t i) { return i < out.size() && std::isdigit(static_cast<unsigned char>(out[i])); };
  for (const char* bad : {"inf", "nan"})
    for (size_t i = out.find(bad); i != std::string::npos; i = out.find(bad, i + 1))
      if ((i == 0 || (!alnum(i - 1) && out[i - 1] != '/')) && !alnum(i + 3)) return bad;
  if (out.find("-9223372036854775808") != std::string::npos) return "-9223372036854775808";
  for (size_t i = out.find("e+"); i != std::string::npos; i = out.find("e+", i + 1))
    if (digit(i + 2) && digit(i + 3) && digit(i + 4)) return out.substr(i - std::min<size_t>(i, 8), 16);
  return "";
}

// The command line as a shell would take it back (each argument quoted).
std::string command_line(const std::vector<std::string>& args) {
  std::string line = "gpuplan";
  for (size_t i = 1; i < args.size(); ++i) line += " '" + args[i] + "'";
  return line;
}

[[noreturn]] void finding(const std::vector<std::string>& args, const std::string& what, const std::string& text) {
  dprintf(2, "fuzz_cli: %s\n  command: %s\n  output: %.2000s\n", what.c_str(), command_line(args).c_str(), text.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  env = new Env;
  char dir[] = "/tmp/gpuplan-fuzz-cli-XXXXXX";
  if (!mkdtemp(dir)) std::abort();
  env->dir = dir;
  // --html and any cache land in the temporary folder; nothing reaches a network. (No chdir:
  // libFuzzer reads its corpus folders, given relative to the start, after this returns.)
  setenv("HOME", dir, 1);
  setenv("XDG_CACHE_HOME", dir, 1);
  setenv("GPUPLAN_CACHE", dir, 1);
  setenv("HF_HUB_OFFLINE", "1", 1);
  setenv("HF_ENDPOINT", "http://127.0.0.1:9", 1);
  setenv("NO_COLOR", "1", 1);
  setenv("COLUMNS", "100", 1);
  env->out = capture("stdout");
  env->err = capture("stderr");
  stdout = env->out.file;
  stderr = env->err.file;
  learn_flags();
  make_files();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  std::vector<std::string> commands;
  for (const auto& [c, f] : env->flags) commands.push_back(c);
  const std::string cmd = commands[p.ConsumeIntegralInRange<size_t>(0, commands.size() - 1)];
  const std::vector<std::string>& flags = env->flags[cmd];
  std::vector<std::string> args = {"gpuplan", cmd};
  // Most runs name a known model and GPU so that the estimate itself runs, not only its refusal.
  if (p.ConsumeBool() && std::count(flags.begin(), flags.end(), "--model")) {
    const auto& models = env->words["--model"];
    args.insert(args.end(), {"--model", p.ConsumeBool() ? models[p.ConsumeIntegralInRange<size_t>(0, models.size() - 1)]
                                                        : env->files[0]});
  }
  if (p.ConsumeBool() && std::count(flags.begin(), flags.end(), "--gpu"))
    args.insert(args.end(), {"--gpu", p.ConsumeBool() ? "h100-sxm" : env->words["--gpu"][p.ConsumeIntegralInRange<size_t>(0, env->words["--gpu"].size() - 1)]});
  if (cmd == "predict") args.insert(args.end(), {"--from", env->dir + "/profile.json"});
  // Scoring the built-in tables takes a minute under the fuzzer's instrumentation (the unit tests
  // score them under the sanitizers): `validate` gets a one-row table, or any other file.
  if (cmd == "validate")
    args.insert(args.end(), {"--table", p.ConsumeBool() ? env->dir + "/validation.toml"
                                                        : env->files[p.ConsumeIntegralInRange<size_t>(0, env->files.size() - 1)]});
  const int n = p.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < n && !flags.empty(); ++i) {
    const std::string flag = flags[p.ConsumeIntegralInRange<size_t>(0, flags.size() - 1)];
    if (flag == "--html") {
      args.insert(args.end(), {"--html", env->dir + "/report.html"});
    } else if (flag == "--json" || flag == "--markdown" || flag == "--offload-optimizer" || flag == "--no-sequence-parallel" ||
               flag == "--assume-dense") {
      args.push_back(flag);
    } else {
      args.insert(args.end(), {flag, value_for(p, flag)});
    }
  }
  if (cmd == "advise" && p.ConsumeBool()) args.push_back(env->dir + "/workload.toml");
  // To see which command line an input (say a slow one) runs.
  if (std::getenv("FUZZ_CLI_ECHO")) dprintf(2, "fuzz_cli: %s\n", command_line(args).c_str());
  const int rc = run(args);
  const std::string out = drain(env->out), err = drain(env->err);
  if (rc == 0) {
    if (auto bad = insane_figure(out); !bad.empty()) finding(args, "exit 0 with an insane figure: " + bad, out);
  } else if (rc == gpuplan::cli::kExitUsage) {
    if (err.rfind("gpuplan: error: ", 0) != 0 || err.find('\n') + 1 != err.size())
      finding(args, "exit 2 without exactly one 'gpuplan: error:' line", err);
  } else {
    finding(args, fmt::format("exit {}", rc), err);
  }
  return 0;
}
