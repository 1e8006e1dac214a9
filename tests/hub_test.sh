#!/usr/bin/env bash
# Hugging Face Hub ids as --model, run as a user would: against a local server with the hub's URL
# layout (tests/fake_hub.py; no network), the local Hugging Face cache, gpuplan's own header cache,
# gated repos and an unreachable hub.
set -u
bin="$1"
root="$2"
pass=0
fail=0
tmp=$(mktemp -d)
hub="$tmp/hub"
mkdir -p "$hub"
trap 'kill "$hub_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/home/.cache"
unset HF_HOME HF_HUB_CACHE HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_HUB_OFFLINE GPUPLAN_CACHE

ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# A two-shard model (tiny llama: 2 layers, hidden 64) with an index, like a real sharded upload.
python3 - "$hub" <<'PY'
import json, os, struct, sys
hub = sys.argv[1]
def shard(path, tensors):
    header, off, blobs = {"__metadata__": {"format": "pt"}}, 0, b""
    for name, dtype, shape in tensors:
        n = 1
        for d in shape: n *= d
        size = n * {"BF16": 2, "F32": 4}[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + size]}
        off += size
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"\0" * off)
config = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "intermediate_size": 128,
          "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100,
          "max_position_embeddings": 256, "tie_word_embeddings": True}
for repo in ("tiny-org/tiny-llama", "gated-org/tiny-llama"):
    d = os.path.join(hub, repo); os.makedirs(d)
    json.dump(config, open(os.path.join(d, "config.json"), "w"))
    shard(os.path.join(d, "model-00001-of-00002.safetensors"), [("model.embed_tokens.weight", "BF16", [100, 64])])
    shard(os.path.join(d, "model-00002-of-00002.safetensors"), [("model.norm.weight", "F32", [64])])
    json.dump({"metadata": {}, "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                                               "model.norm.weight": "model-00002-of-00002.safetensors"}},
              open(os.path.join(d, "model.safetensors.index.json"), "w"))
open(os.path.join(hub, "gated.txt"), "w").write("gated-org/tiny-llama\n")
PY
python3 "$root/tests/fake_hub.py" "$hub" >"$tmp/port" 2>"$tmp/hub.log" &
hub_pid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
export HF_ENDPOINT="http://127.0.0.1:$(cat "$tmp/port")"

# Fetched from the hub: exact counts from both shards' headers (6400 BF16 + 64 F32), weights never read.
if "$bin" memory --model tiny-org/tiny-llama --json >"$tmp/out" 2>"$tmp/err" &&
   python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if d['model']['tensor_parameters'] == 6464 else 1)"; then ok
else bad "hub fetch gives exact counts"; cat "$tmp/err"; head -c 400 "$tmp/out"; fi
if grep -q "safetensors range=None" "$hub/requests.log"; then bad "weights were downloaded"; else ok; fi
grep -q "range=bytes=0-7" "$hub/requests.log" && ok || bad "headers read by range requests"

# Cached on disk: a second run works with the hub gone (offline), from gpuplan's header cache.
before=$(wc -l <"$hub/requests.log")
HF_HUB_OFFLINE=1 "$bin" memory --model tiny-org/tiny-llama >"$tmp/out" 2>"$tmp/err" && ok || { bad "offline from gpuplan's cache"; cat "$tmp/err"; }
[ "$(wc -l <"$hub/requests.log")" -eq "$before" ] && ok || bad "offline run reached the hub"
[ -f "$XDG_CACHE_HOME/gpuplan/hub/models--tiny-org--tiny-llama/refs/main" ] && ok || bad "cache has refs/main"

# The local Hugging Face cache (HF_HOME layout), found first, with no hub at all.
snap="$tmp/hf/hub/models--local-org--cached-llama/snapshots/0123456789abcdef0123456789abcdef01234567"
mkdir -p "$snap" "$tmp/hf/hub/models--local-org--cached-llama/refs"
cp "$hub/tiny-org/tiny-llama/"* "$snap/"
printf 0123456789abcdef0123456789abcdef01234567 >"$tmp/hf/hub/models--local-org--cached-llama/refs/main"
if HF_HOME="$tmp/hf" HF_ENDPOINT=http://127.0.0.1:9 "$bin" memory --model local-org/cached-llama --json >"$tmp/out" 2>"$tmp/err" &&
   python3 -c "import json,sys; d=json.load(open('$tmp/out')); sys.exit(0 if d['model']['tensor_parameters'] == 6464 else 1)"; then ok
else bad "local HF cache"; cat "$tmp/err"; fi
HF_HUB_CACHE="$tmp/hf/hub" HF_HUB_OFFLINE=1 "$bin" memory --model local-org/cached-llama@0123456789abcdef0123456789abcdef01234567 >/dev/null 2>"$tmp/err" \
  && ok || { bad "HF_HUB_CACHE with a commit revision"; cat "$tmp/err"; }

check() {  # check NAME EXPECTED_EXIT STDERR_PATTERN -- ARGS... (env set by the caller)
  local name="$1" want="$2" pattern="$3"
  shift 4
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" -ne "$want" ] || { [ -n "$pattern" ] && ! grep -qE -- "$pattern" "$tmp/err"; } || { [ "$want" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -ne 1 ]; }; then
    bad "$name (exit $got)"; cat "$tmp/err"; return
  fi
  ok
}
# Gated: a one-line error saying what to do; with the token it works.
check gated_without_token 2 "gated-org/tiny-llama is gated, private or missing \(HTTP 401\): set HF_TOKEN" -- memory --model gated-org/tiny-llama
HF_TOKEN=wrong check gated_wrong_token 2 "HF_TOKEN cannot read gated-org/tiny-llama \(HTTP 403\)" -- memory --model gated-org/tiny-llama
HF_TOKEN=good-token check gated_with_token 0 "" -- memory --model gated-org/tiny-llama
check missing_repo 2 "no-org/no-model" -- memory --model no-org/no-model
# Offline (nothing listens on port 9): one line naming the hub and the cache.
HF_ENDPOINT=http://127.0.0.1:9 check unreachable_hub 2 "cannot reach http://127.0.0.1:9 for other-org/x .*not in the local Hugging Face cache" -- memory --model other-org/x
HF_HUB_OFFLINE=1 check offline_not_cached 2 "other-org/x@main is not in the local Hugging Face cache .* HF_HUB_OFFLINE" -- memory --model other-org/x
check bad_revision_chars 2 "unknown model" -- memory --model 'org/name@bad rev'

# Presets: case-insensitive ids, and hub ids of preset models map to the preset without the hub.
HF_ENDPOINT=http://127.0.0.1:9 check preset_any_case 0 "" -- memory --model Llama-3.1-8B
HF_ENDPOINT=http://127.0.0.1:9 check hub_id_of_preset 0 "" -- memory --model meta-llama/Llama-3.1-8B
HF_ENDPOINT=http://127.0.0.1:9 "$bin" memory --model META-LLAMA/llama-3.1-8b-instruct --json >"$tmp/out" 2>&1 &&
  python3 -c "import json,sys; sys.exit(0 if json.load(open('$tmp/out'))['model']['id'] == 'llama-3.1-8b' else 1)" && ok || bad "instruct hub id maps to the preset"

echo "hub tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
