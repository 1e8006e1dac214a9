#!/usr/bin/env bash
# `gpuplan serve` on an ephemeral loopback port, driven in headless Chromium (tests/browser/, with
# puppeteer-core from npm over the DevTools protocol). The server is always stopped.
set -u
bin="$1"
root="$2"
browser=$(command -v chromium || true)
if [ -z "$browser" ]; then echo "chromium not installed: skipped"; exit 77; fi
if [ ! -d "$root/tests/browser/node_modules/puppeteer-core" ]; then echo "run 'npm ci' in tests/browser (make deps does): skipped"; exit 77; fi
tmp=$(mktemp -d)
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
timeout 300 "$bin" serve --port 0 --host 127.0.0.1 >"$tmp/serve.out" 2>"$tmp/serve.err" &
server=$!
for _ in $(seq 100); do grep -q http "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/' "$tmp/serve.out")
[ -n "$url" ] || { echo "FAIL: serve did not start"; cat "$tmp/serve.err"; exit 1; }

# The JSON API answers as the CLI does (same figures, same one-line errors as HTTP 400).
fail=0
python3 - "$url" "$bin" <<'PY' || fail=1
import json, subprocess, sys, urllib.error, urllib.request
url, bin = sys.argv[1].rstrip("/") + "/", sys.argv[2]
def post(path, body):
    req = urllib.request.Request(url + path.lstrip("/"), data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r: return r.status, json.load(r)
    except urllib.error.HTTPError as e: return e.code, json.load(e)
cli = json.loads(subprocess.run([bin, "memory", "--model", "llama-3.1-8b", "--task", "qlora", "--gpu", "rtx-4090", "--json"], capture_output=True, text=True).stdout)
status, api = post("/api/memory", {"model": "llama-3.1-8b", "task": "qlora", "gpu": "rtx-4090"})
assert status == 200 and api["per_gpu_bytes"] == cli["per_gpu_bytes"], (status, api.get("per_gpu_bytes"), cli["per_gpu_bytes"])
with urllib.request.urlopen(url + "api/train?model=gpt2&gpu=h100-sxm&tokens=2B", timeout=60) as r:
    assert json.load(r)["step_time_s"] > 0
status, err = post("/api/memory", {"model": "gpt2", "batch": 0})
assert status == 400 and err["field"] == "--batch" and "at least 1" in err["error"], (status, err)
status, err = post("/api/memory", {"model": "gpt2", "html": "/tmp/x"})
assert status == 400 and "not a parameter" in err["error"], err
req = urllib.request.Request(url, headers={"Host": "evil.example:80"})
try:
    urllib.request.urlopen(req, timeout=10); raise SystemExit("foreign Host accepted")
except urllib.error.HTTPError as e:
    assert e.code == 403
print("api: 5 passed, 0 failed")
PY
node "$root/tests/browser/serve_test.mjs" "$url" "$("$bin" memory --model llama-3.1-8b --task full --gpu h100-sxm --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["per_gpu_bytes"] / 2**30)')" || fail=1
exit $fail
