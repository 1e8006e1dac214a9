// `gpuplan serve`: the calculator and the advisor as a local web page, served by the binary (the
// page is compiled in like data/*.toml). The JSON API under /api/ runs the very commands the CLI
// runs, in a child `gpuplan CMD --json ...` built from the request's parameters, so the two share
// one parser and one set of checks: a bad value gives the same one-line error, as HTTP 400.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "cli/common.h"
#include "cli/help.h"
#include "data/embedded.h"
#include "util/utf8.h"

extern char** environ;

namespace gpuplan::cli {

namespace {

using nlohmann::json;

// Flags an API caller may not pass: they write files or replace the built-in data.
const std::set<std::string> kRefused = {"--html", "--markdown", "--json-out", "--out", "--write-calibration",
                                        "--catalog", "--prices", "--calibration", "--color", "--help"};

struct Child {
  int status = -1;
  std::string out, err;
};

// Runs this binary with `args`, capturing both streams; killed after `timeout_s`.
Child run_self(const std::vector<std::string>& args, double timeout_s) {
  Child c;
  int out[2], err[2];
  if (pipe(out) || pipe(err)) return c;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addclose(&fa, err[0]);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv{const_cast<char*>("gpuplan")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    return c;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(static_cast<int>(timeout_s * 1000));
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, static_cast<int>(left)) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) (i == 0 ? out_open : err_open) = false;
      else (i == 0 ? c.out : c.err).append(buf, static_cast<size_t>(n));
    }
  }
  close(out[0]);
  close(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return c;
}

// The request's parameters (query string, or a JSON object body) as command-line flags of `cmd`.
Result<std::vector<std::string>> flags_from(CLI::App& app, const std::string& cmd, const httplib::Request& req) {
  CLI::App* sub = find_command(app, cmd);
  if (!sub) return make_error("command", "unknown command '" + cmd + "'");
  std::vector<std::pair<std::string, json>> params;
  for (const auto& [k, v] : req.params) params.emplace_back(k, v);
  if (!req.body.empty()) {
    auto body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object()) return make_error("body", "must be a JSON object of parameters");
    for (auto it = body.begin(); it != body.end(); ++it) params.emplace_back(it.key(), it.value());
  }
  std::vector<std::string> args{cmd, "--json"};
  for (const auto& [key, value] : params) {
    std::string flag = "--" + key;
    for (char& ch : flag) ch = ch == '_' ? '-' : ch;
    if (flag == "--json") continue;
    const CLI::Option* o = sub->get_option_no_throw(flag);
    if (!o || kRefused.count(flag)) return make_error(key, "is not a parameter of " + cmd);
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (value.is_null() || text.empty()) continue;  // an empty form field: the command's default
    if (o->get_type_size() == 0) {
      if (text == "true" || text == "1" || text == "on") args.push_back(flag);
      continue;
    }
    args.push_back(flag + "=" + text);  // '=' keeps a value such as "-3" from reading as a flag
  }
  return args;
}

json error_json(const std::string& line) {
  std::string text = line;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const std::string prefix = "gpuplan: error: ";
  if (text.rfind(prefix, 0) == 0) text = text.substr(prefix.size());
  const size_t colon = text.find(": ");
  return {{"error", valid_utf8(text)}, {"field", colon == std::string::npos ? "" : valid_utf8(text.substr(0, colon))}};
}

void reply(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

int run_serve(CLI::App& app, const std::string& host, int port) {
  if (port < 0 || port > 65535) return fail(make_error("--port", fmt::format("must be 0-65535, got {}", port)));
  httplib::Server server;
  // A page on another site may send requests to 127.0.0.1; refusing foreign Host headers stops DNS
  // rebinding from reading the answers.
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    const std::string h = req.get_header_value("Host");
    const std::string name = h.substr(0, h.rfind(':'));
    if (name == "127.0.0.1" || name == "localhost" || name == "[::1]" || h.empty()) return httplib::Server::HandlerResponse::Unhandled;
    res.status = 403;
    res.set_content("gpuplan serve answers only to localhost\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(data::embedded_file("index.html")), "text/html; charset=utf-8");
  });
  auto api = [&app](const std::string& cmd) {
    return [&app, cmd](const httplib::Request& req, httplib::Response& res) {
      auto args = flags_from(app, cmd, req);
      if (!args) return reply(res, 400, json{{"error", args.error().to_string()}, {"field", args.error().field}}.dump());
      const Child c = run_self(*args, 60);
      if (c.status == 0) return reply(res, 200, c.out);
      if (c.status == kExitUsage) return reply(res, 400, error_json(c.err).dump());
      reply(res, 500, json{{"error", c.status < 0 ? "the estimate did not finish" : valid_utf8(c.err)}}.dump());
    };
  };
  for (const char* cmd : {"memory", "train", "infer", "roofline", "cost", "plan", "gpus", "models"}) {
    server.Get(fmt::format("/api/{}", cmd), api(cmd));
    server.Post(fmt::format("/api/{}", cmd), api(cmd));
  }
  // The advisor takes a workload file: here its TOML text, as "workload" in a JSON body; the
  // answer holds the advice and the HTML report with its charts.
  server.Post("/api/advise", [](const httplib::Request& req, httplib::Response& res) {
    auto body = json::parse(req.body, nullptr, false);
    if (body.is_discarded() || !body.is_object() || !body.contains("workload") || !body["workload"].is_string())
      return reply(res, 400, json{{"error", "body: must be {\"workload\": \"<workload TOML>\"}"}, {"field", "workload"}}.dump());
    char dir_template[] = "/tmp/gpuplan-serve-XXXXXX";
    if (!mkdtemp(dir_template)) return reply(res, 500, json{{"error", "cannot create a temporary folder"}}.dump());
    const std::string dir = dir_template;
    std::ofstream(dir + "/workload.toml") << body["workload"].get<std::string>();
    const Child c = run_self({"advise", dir + "/workload.toml", "--json", "--html", dir + "/report.html"}, 120);
    std::string report;
    if (std::ifstream in{dir + "/report.html"}) report.assign(std::istreambuf_iterator<char>(in), {});
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (c.status == kExitUsage) {
      json e = error_json(c.err);
      e["error"] = std::string(e["error"]).replace(0, std::min(e["error"].get<std::string>().size(), dir.size() + 1), "");
      return reply(res, 400, e.dump());
    }
    if (c.status != 0) return reply(res, 500, json{{"error", valid_utf8(c.err)}}.dump());
    auto advice = json::parse(c.out, nullptr, false);
    reply(res, 200, json{{"advice", advice}, {"report_html", valid_utf8(report)}}.dump());
  });
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) return fail(make_error("--port", fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", host, port)));
  fmt::print("gpuplan serve: open http://{}:{}/ (Ctrl-C stops it)\n", host == "0.0.0.0" ? "127.0.0.1" : host, bound);
  std::fflush(stdout);
  server.listen_after_bind();
  return 0;
}

}  // namespace

std::vector<Command> serve_commands() {
  return {{"serve", "The calculator and the advisor as a local web page, with a JSON API under /api/",
           [](CLI::App& sub, Context&, std::function<int()>& run) {
             auto host = std::make_shared<std::string>("127.0.0.1");
             auto port = std::make_shared<int>(8080);
             sub.add_option("--port", *port, "TCP port (0: any free port, printed at start)")->capture_default_str();
             sub.add_option("--host", *host, "address to listen on")->capture_default_str();
             CLI::App* app = sub.get_parent();
             sub.callback([app, &run, host, port] { run = [app, host, port] { return run_serve(*app, *host, *port); }; });
           }}};
}

}  // namespace gpuplan::cli
