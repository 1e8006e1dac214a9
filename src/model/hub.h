// Hugging Face Hub ids (`org/name[@revision]`) as --model: the architecture from the repo's
// config.json and exact parameter counts and dtypes from its safetensors headers, never the weights.
// Looked up offline first (the local Hugging Face cache, then gpuplan's own cache of headers), else
// fetched with HTTP range reads and cached on disk. Errors say plainly when the hub cannot be
// reached or the repo is gated.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/safetensors.h"
#include "net/http_client.h"
#include "util/status.h"

namespace gpuplan {

struct HubId {
  std::string repo;      // "meta-llama/Llama-3.1-8B"
  std::string revision;  // "main" unless given after '@'
  bool explicit_revision = false;
};

// nullopt when `arg` is not hub-id shaped (one '/', names of [A-Za-z0-9._-], not "." or "..").
std::optional<HubId> parse_hub_id(std::string_view arg);

struct HubOptions {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT
  std::string token;                                // HF_TOKEN, or the token file huggingface_hub writes
  std::string hf_cache;                             // HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub
  std::string gpuplan_cache;                        // XDG_CACHE_HOME/gpuplan/hub or ~/.cache/gpuplan/hub
  bool offline = false;                             // HF_HUB_OFFLINE=1
  double timeout_s = 30;
};
HubOptions hub_options_from_env();

// What gpuplan needs of a repo at one commit.
struct HubSnapshot {
  std::string origin;       // where it came from, for messages ("meta-llama/X@main (hub cache)")
  std::string config_text;  // config.json
  std::string local_dir;    // set when the local Hugging Face cache holds the whole model
  std::vector<TensorInventory> shards;  // one per safetensors file, from its header
};

// `http` may be null when offline; it is only used when no cache holds the snapshot.
Result<HubSnapshot> fetch_hub_snapshot(const HubId& id, const HubOptions& o, HttpClient* http);

}  // namespace gpuplan
