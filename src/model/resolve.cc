#include "model/resolve.h"

#include <cctype>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "model/gguf.h"
#include "model/hf_config.h"
#include "model/hub.h"
#include "model/presets.h"
#include "model/safetensors.h"
#include "util/text_file.h"

namespace gpuplan {

namespace fs = std::filesystem;

namespace {

Result<ModelSpec> from_config(const fs::path& config, const ReadOptions& options) {
  auto text = read_text_file(config.string(), "config");
  if (!text) return text.error();
  return parse_hf_config(*text, config.string(), options);
}

// The layer index in "model.layers.<i>." (or "model.language_model.layers.<i>."), or -1.
int64_t layer_index(const std::string& name) {
  const auto at = name.find("layers.");
  if (at == std::string::npos) return -1;
  int64_t i = 0;
  size_t k = at + 7;
  if (k >= name.size() || !std::isdigit(static_cast<unsigned char>(name[k]))) return -1;
  for (; k < name.size() && std::isdigit(static_cast<unsigned char>(name[k])) && i < (1 << 20); ++k)
    i = i * 10 + (name[k] - '0');
  return i;
}

// Weights a tensor holds: MXFP4 checkpoints (gpt-oss) pack two 4-bit values per U8 in *_blocks and
// keep one U8 exponent per 32 values in *_scales, which are not parameters.
int64_t weights_in(const TensorInfo& t) {
  auto ends_with = [&](const char* s) {
    const std::string suffix(s);
    return t.name.size() >= suffix.size() && t.name.compare(t.name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (t.dtype == "U8" && ends_with("_blocks")) return 2 * t.elements;
  if (t.dtype == "U8" && ends_with("_scales")) return 0;
  return t.elements;
}

// Adds exact counts from the safetensors headers (one inventory per file) to `m`. Tensors of
// layers beyond the model's (DeepSeek-V3's multi-token prediction module is layer 61 of 61) and
// vision towers are not the language model's and are left out.
Status add_inventories(ModelSpec& m, std::vector<TensorInventory> shards) {
  TensorInventory all;
  int64_t parameters = 0;
  double bytes = 0;
  for (auto& inv : shards) {
    for (auto& t : inv.tensors) {
      const bool extra_layer = layer_index(t.name) >= m.layers;
      const bool tower = t.name.find("vision") != std::string::npos || t.name.find("audio") != std::string::npos ||
                         t.name.find("multi_modal_projector") != std::string::npos;
      if (!extra_layer && !tower) parameters += weights_in(t), bytes += t.bytes;
      all.add(std::move(t));
    }
  }
  if (all.tensors.empty()) return std::nullopt;
  m.tensor_parameters = parameters;
  m.tensor_bytes = bytes;
  m.tensor_dtype = all.dominant_dtype;
  return std::nullopt;
}

Status add_tensor_headers(ModelSpec& m, const std::vector<fs::path>& files) {
  std::vector<TensorInventory> shards;
  for (const auto& f : files) {
    auto inv = read_safetensors_file(f.string());
    if (!inv) return inv.error();
    shards.push_back(std::move(inv).value());
  }
  return add_inventories(m, std::move(shards));
}

Result<std::vector<fs::path>> safetensors_in(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  const fs::path index = dir / "model.safetensors.index.json";
  if (fs::exists(index, ec)) {
    auto text = read_text_file(index.string(), "safetensors index");
    if (!text) return text.error();
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      return make_error(index.string(), "must be JSON with a weight_map object");
    std::set<std::string> names;
    for (const auto& v : j["weight_map"]) {
      if (!v.is_string()) return make_error(index.string() + ": weight_map", "values must be file names");
      names.insert(v.get<std::string>());
    }
    for (const auto& n : names) {
      if (n.find('/') != std::string::npos || n.find("..") != std::string::npos)
        return make_error(index.string() + ": weight_map", "file '" + n + "' is outside the model directory");
      if (!fs::exists(dir / n, ec)) return make_error(index.string(), "lists '" + n + "', which is missing");
      files.push_back(dir / n);
    }
    return files;
  }
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".safetensors") files.push_back(it->path());
  if (ec) return make_error(dir.string(), "cannot list the model directory: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

Result<ModelSpec> from_hub(const HubId& id, const ReadOptions& options) {
  const HubOptions o = hub_options_from_env();
  auto http = o.offline ? nullptr : make_curl_client(o.timeout_s);
  auto snap = fetch_hub_snapshot(id, o, http.get());
  if (!snap) return snap.error();
  if (!snap->local_dir.empty()) {
    auto m = resolve_model(snap->local_dir, options);
    if (!m) return m;
    m->id = id.repo;
    return m;
  }
  auto m = parse_hf_config(snap->config_text, snap->origin + ": config.json", options);
  if (!m) return m;
  if (auto s = add_inventories(*m, std::move(snap->shards))) return *s;
  m->id = id.repo;
  return m;
}

}  // namespace

Result<ModelSpec> resolve_model(const std::string& arg, const ReadOptions& options) {
  if (arg.empty()) return make_error("--model", "is empty");
  const Presets& presets = Presets::builtin();
  auto preset = presets.find(arg);
  if (preset) return preset;
  std::error_code ec;
  const fs::path p(arg);
  if (!fs::exists(p, ec)) {
    // Not a file: a Hugging Face Hub id, when it has that shape.
    if (auto hub = parse_hub_id(arg)) return from_hub(*hub, options);
    return preset.error();
  }
  if (fs::is_directory(p, ec)) {
    const fs::path config = p / "config.json";
    if (!fs::exists(config, ec)) return make_error(arg, "model directory has no config.json");
    auto m = from_config(config, options);
    if (!m) return m;
    auto files = safetensors_in(p);
    if (!files) return files.error();
    if (auto s = add_tensor_headers(*m, *files)) return *s;
    m->id = arg;
    return m;
  }
  const std::string ext = p.extension().string();
  if (ext == ".gguf") {
    auto h = read_gguf_file(arg);
    if (!h) return h.error();
    return model_from_gguf(*h, arg, options);
  }
  if (ext == ".safetensors") {
    const fs::path config = p.parent_path().empty() ? fs::path("config.json") : p.parent_path() / "config.json";
    if (!fs::exists(config, ec))
      return make_error(arg, "a .safetensors file needs the model's config.json beside it for the architecture");
    auto m = from_config(config, options);
    if (!m) return m;
    if (auto s = add_tensor_headers(*m, {p})) return *s;
    m->id = arg;
    return m;
  }
  return from_config(p, options);
}

}  // namespace gpuplan
