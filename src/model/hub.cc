#include "model/hub.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "util/text_file.h"
#include "util/utf8.h"

namespace gpuplan {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 96 || s == "." || s == ".." || s.front() == '-') return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  return true;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string home_cache() {
  if (auto x = env("XDG_CACHE_HOME"); !x.empty()) return x;
  if (auto h = env("HOME"); !h.empty()) return h + "/.cache";
  return "";
}

// "models--org--name", the folder the Hugging Face cache keeps a repo in.
std::string repo_folder(const std::string& repo) {
  std::string f = "models--" + repo;
  const size_t slash = f.find('/');
  return f.replace(slash, 1, "--");
}

bool is_commit(const std::string& rev) {
  if (rev.size() != 40) return false;
  for (char c : rev)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// The commit `rev` points to in a cache laid out like the Hugging Face one (refs/<rev> holds it).
std::string commit_in(const fs::path& repo_dir, const std::string& rev) {
  if (is_commit(rev)) return rev;
  // Through InputFile, like every file gpuplan reads: a FIFO or a huge file there cannot stall it.
  auto ref = read_text_file((repo_dir / "refs" / rev).string(), "hub cache ref", 4096);
  if (!ref) return "";
  std::string commit = *ref;
  while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
  return is_commit(commit) ? commit : "";
}

Result<TensorInventory> inventory_from(const std::string& header, uint64_t file_size, const std::string& origin) {
  std::string prefix(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) prefix[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return parse_safetensors_header(prefix + header, file_size, origin);
}

Result<std::vector<std::string>> index_files(const std::string& text, const std::string& origin) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    return make_error(origin, "must be JSON with a weight_map object");
  std::set<std::string> names;
  for (const auto& v : j["weight_map"]) {
    if (!v.is_string()) return make_error(origin + ": weight_map", "values must be file names");
    const std::string n = v.get<std::string>();
    if (!valid_name(n)) return make_error(origin + ": weight_map", "file '" + valid_utf8(n) + "' is not a plain file name");
    names.insert(n);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

// The local Hugging Face cache: a snapshot with config.json and every safetensors file it names.
std::optional<HubSnapshot> from_hf_cache(const HubId& id, const HubOptions& o) {
  if (o.hf_cache.empty()) return std::nullopt;
  const fs::path repo_dir = fs::path(o.hf_cache) / repo_folder(id.repo);
  const std::string commit = commit_in(repo_dir, id.revision);
  if (commit.empty()) return std::nullopt;
  const fs::path snap = repo_dir / "snapshots" / commit;
  std::error_code ec;
  if (!fs::exists(snap / "config.json", ec)) return std::nullopt;
  auto config = read_text_file((snap / "config.json").string(), "config");
  if (!config) return std::nullopt;
  HubSnapshot s;
  s.origin = fmt::format("{}@{} (local Hugging Face cache)", id.repo, commit.substr(0, 12));
  s.config_text = *config;
  if (fs::exists(snap / "model.safetensors.index.json", ec)) {
    auto text = read_text_file((snap / "model.safetensors.index.json").string(), "safetensors index");
    if (!text) return std::nullopt;
    auto names = index_files(*text, "index");
    if (!names) return std::nullopt;
    for (const auto& n : *names)
      if (!fs::exists(snap / n, ec)) return std::nullopt;  // partly downloaded: headers come from elsewhere
  }
  s.local_dir = snap.string();
  return s;
}

fs::path gpuplan_repo_dir(const HubId& id, const HubOptions& o) { return fs::path(o.gpuplan_cache) / repo_folder(id.repo); }

std::optional<HubSnapshot> from_gpuplan_cache(const HubId& id, const HubOptions& o) {
  if (o.gpuplan_cache.empty()) return std::nullopt;
  const fs::path repo_dir = gpuplan_repo_dir(id, o);
  const std::string commit = commit_in(repo_dir, id.revision);
  if (commit.empty()) return std::nullopt;
  const fs::path snap = repo_dir / "snapshots" / commit;
  auto config = read_text_file((snap / "config.json").string(), "config");
  auto headers = read_text_file((snap / "headers.json").string(), "headers");
  if (!config || !headers) return std::nullopt;
  auto j = json::parse(*headers, nullptr, false);
  if (j.is_discarded() || !j.is_array()) return std::nullopt;
  HubSnapshot s;
  s.origin = fmt::format("{}@{} (gpuplan's hub cache)", id.repo, commit.substr(0, 12));
  s.config_text = *config;
  for (const auto& f : j) {
    if (!f.is_object() || !f.contains("name") || !f.contains("size") || !f.contains("header") || !f["size"].is_number_unsigned() ||
        !f["header"].is_string())
      return std::nullopt;
    auto inv = inventory_from(f["header"].get<std::string>(), f["size"].get<uint64_t>(), s.origin + ": " + f["name"].get<std::string>());
    if (!inv) return std::nullopt;
    s.shards.push_back(std::move(inv).value());
  }
  return s;
}

void write_atomically(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) return;
  }
  fs::rename(tmp, path, ec);
}

class HubFetcher {
 public:
  HubFetcher(const HubId& id, const HubOptions& o, HttpClient& http) : id_(id), o_(o), http_(http) {}

  Result<HubSnapshot> fetch() {
    auto config = get("config.json", {}, 16 << 20);
    if (!config) return config.error();
    if (config->status == 404)
      return make_error("--model", fmt::format("{} has no config.json at revision {} on {} (is it a model repo?)", id_.repo, id_.revision, o_.endpoint));
    if (config->status != 200) return status_error(*config);
    commit_ = config->headers.count("x-repo-commit") && is_commit(config->headers["x-repo-commit"])
                  ? config->headers["x-repo-commit"]
                  : (is_commit(id_.revision) ? id_.revision : "");
    HubSnapshot s;
    s.origin = fmt::format("{}@{} ({})", id_.repo, commit_.empty() ? id_.revision : commit_.substr(0, 12), o_.endpoint);
    s.config_text = config->body;
    std::vector<std::string> files;
    auto index = get("model.safetensors.index.json", {}, 64 << 20);
    if (!index) return index.error();
    if (index->status == 200) {
      auto names = index_files(index->body, id_.repo + ": model.safetensors.index.json");
      if (!names) return names.error();
      files = *names;
    } else if (index->status == 404) {
      files = {"model.safetensors"};
    } else {
      return status_error(*index);
    }
    json cached = json::array();
    for (const auto& f : files) {
      auto shard = header_of(f);
      if (!shard) return shard.error();
      if (!shard->second.empty()) {  // a repo without safetensors (e.g. only .bin or .gguf) has config counts only
        auto inv = inventory_from(shard->second, shard->first, id_.repo + ": " + f);
        if (!inv) return inv.error();
        s.shards.push_back(std::move(inv).value());
        cached.push_back({{"name", f}, {"size", shard->first}, {"header", shard->second}});
      }
    }
    if (!o_.gpuplan_cache.empty() && !commit_.empty()) {
      const fs::path repo_dir = gpuplan_repo_dir(id_, o_);
      write_atomically(repo_dir / "snapshots" / commit_ / "config.json", s.config_text);
      write_atomically(repo_dir / "snapshots" / commit_ / "headers.json", json_text(cached));
      write_atomically(repo_dir / "refs" / id_.revision, commit_);
    }
    return s;
  }

 private:
  std::string url(const std::string& file) const {
    return fmt::format("{}/{}/resolve/{}/{}", o_.endpoint, id_.repo, commit_.empty() ? id_.revision : commit_, file);
  }

  Result<HttpResponse> get(const std::string& file, std::vector<std::string> headers, size_t max_bytes) {
    if (!o_.token.empty()) headers.push_back("Authorization: Bearer " + o_.token);
    auto r = http_.get(url(file), headers, max_bytes);
    if (!r)
      return make_error("--model", fmt::format("cannot reach {} for {} ({}); it is not in the local Hugging Face cache ({}): "
                                               "connect, or download it first (`huggingface-cli download {} config.json`)",
                                               o_.endpoint, id_.repo, r.error().message, o_.hf_cache, id_.repo));
    return r;
  }

  Error status_error(const HttpResponse& r) const {
    if (r.status == 401 || r.status == 403) {
      if (o_.token.empty())
        return make_error("--model", fmt::format("{} is gated, private or missing (HTTP {}): set HF_TOKEN to a token that can read it", id_.repo, r.status));
      return make_error("--model", fmt::format("HF_TOKEN cannot read {} (HTTP {}): accept the model's licence on its page, or use a token with access", id_.repo, r.status));
    }
    if (r.status == 404) return make_error("--model", fmt::format("{} at revision {} is not on {}", id_.repo, id_.revision, o_.endpoint));
    return make_error("--model", fmt::format("{} answered HTTP {} for {}", o_.endpoint, r.status, id_.repo));
  }

  // (file size, JSON header) of one safetensors file by two range reads; ("", 0) when it is absent.
  Result<std::pair<uint64_t, std::string>> header_of(const std::string& file) {
    auto head = get(file, {"Range: bytes=0-7"}, 1 << 16);
    if (!head) return head.error();
    if (head->status == 404) return std::pair<uint64_t, std::string>{0, ""};
    if (head->status != 206) {
      if (head->status == 200) return make_error("--model", fmt::format("{} ignored the range request for {}; gpuplan reads only headers, never weights", o_.endpoint, file));
      return status_error(*head);
    }
    const std::string& range = head->headers["content-range"];  // "bytes 0-7/123456"
    const size_t slash = range.rfind('/');
    char* end = nullptr;
    const unsigned long long size = slash == std::string::npos ? 0 : std::strtoull(range.c_str() + slash + 1, &end, 10);
    if (head->body.size() != 8 || size < 8 || !end || *end != '\0')
      return make_error("--model", fmt::format("{}: {} sent a malformed range response (Content-Range '{}')", file, o_.endpoint, valid_utf8(range)));
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(head->body[static_cast<size_t>(i)]);
    if (n > kMaxSafetensorsHeader || n > size - 8)
      return make_error(id_.repo + ": " + file, fmt::format("safetensors header length {} is absurd for a {}-byte file", n, size));
    if (n == 0) return std::pair<uint64_t, std::string>{size, "{}"};
    auto body = get(file, {fmt::format("Range: bytes=8-{}", 8 + n - 1)}, n + 1);
    if (!body) return body.error();
    if (body->status != 206 || body->body.size() != n)
      return make_error(id_.repo + ": " + file, fmt::format("could not read its {}-byte header (HTTP {})", n, body->status));
    return std::pair<uint64_t, std::string>{size, body->body};
  }

  const HubId& id_;
  const HubOptions& o_;
  HttpClient& http_;
  std::string commit_;
};

}  // namespace

std::optional<HubId> parse_hub_id(std::string_view arg) {
  HubId id;
  const size_t at = arg.find('@');
  if (at != std::string_view::npos) {
    id.revision = std::string(arg.substr(at + 1));
    id.explicit_revision = true;
    arg = arg.substr(0, at);
    if (!valid_name(id.revision)) return std::nullopt;
  } else {
    id.revision = "main";
  }
  const size_t slash = arg.find('/');
  if (slash == std::string_view::npos || arg.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  if (!valid_name(arg.substr(0, slash)) || !valid_name(arg.substr(slash + 1))) return std::nullopt;
  id.repo = std::string(arg);
  return id;
}

HubOptions hub_options_from_env() {
  HubOptions o;
  if (auto e = env("HF_ENDPOINT"); !e.empty()) o.endpoint = e;
  while (!o.endpoint.empty() && o.endpoint.back() == '/') o.endpoint.pop_back();
  const std::string cache = home_cache();
  const std::string hf_home = !env("HF_HOME").empty() ? env("HF_HOME") : (cache.empty() ? "" : cache + "/huggingface");
  o.hf_cache = !env("HF_HUB_CACHE").empty() ? env("HF_HUB_CACHE")
               : !env("HUGGINGFACE_HUB_CACHE").empty() ? env("HUGGINGFACE_HUB_CACHE")
               : (hf_home.empty() ? "" : hf_home + "/hub");
  o.gpuplan_cache = !env("GPUPLAN_CACHE").empty() ? env("GPUPLAN_CACHE") + "/hub" : (cache.empty() ? "" : cache + "/gpuplan/hub");
  o.token = !env("HF_TOKEN").empty() ? env("HF_TOKEN") : env("HUGGING_FACE_HUB_TOKEN");
  if (o.token.empty()) {
    const std::string path = !env("HF_TOKEN_PATH").empty() ? env("HF_TOKEN_PATH") : (hf_home.empty() ? "" : hf_home + "/token");
    if (!path.empty())
      if (auto token = read_text_file(path, "Hugging Face token", 64 << 10)) o.token = token->substr(0, token->find('\n'));
    while (!o.token.empty() && std::isspace(static_cast<unsigned char>(o.token.back()))) o.token.pop_back();
  }
  const std::string off = env("HF_HUB_OFFLINE");
  o.offline = off == "1" || off == "true" || off == "TRUE" || off == "yes";
  return o;
}

Result<HubSnapshot> fetch_hub_snapshot(const HubId& id, const HubOptions& o, HttpClient* http) {
  if (auto s = from_hf_cache(id, o)) return *s;
  if (auto s = from_gpuplan_cache(id, o)) return *s;
  if (o.offline || !http)
    return make_error("--model", fmt::format("{}@{} is not in the local Hugging Face cache ({}) and HF_HUB_OFFLINE is set", id.repo,
                                             id.revision, o.hf_cache));
  return HubFetcher(id, o, *http).fetch();
}

}  // namespace gpuplan
