#!/usr/bin/env bash
# `gpuplan profile --metrics-port` scraped by the real Prometheus server (Debian's), as a team's
# monitoring would: the fake NVML driver scripts the GPU, Prometheus runs on loopback with a temporary
# config and storage for a bounded time, and its HTTP API must return the scraped DCGM-named series.
set -u
bin="$1"
root="$2"
driver_dir="$3"
prom=$(command -v prometheus || true)
if [ -z "$prom" ]; then echo "prometheus not installed: skipped"; exit 77; fi
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0
fail=0
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
mport=$(free_port)
pport=$(free_port)

# The profiled "training": a step line every 0.2 s for at most 60 s (stopped earlier by the trap).
FAKE_NVML_SCENARIO="$root/tests/scenarios/compute_bound.json" LD_LIBRARY_PATH="$driver_dir" \
  timeout 90 "$bin" profile --interval 100ms --metrics-port "$mport" --metrics-host 127.0.0.1 --out "$tmp/prof" -- \
  bash -c 'for i in $(seq 300); do echo "step $i loss 1.0"; sleep 0.2; done' >"$tmp/profile.out" 2>"$tmp/profile.err" &
pids+=($!)

cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: gpuplan
    static_configs:
      - targets: ["127.0.0.1:$mport"]
YML
timeout 90 "$prom" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$pport" >"$tmp/prom.log" 2>&1 &
pids+=($!)

query() {  # query PROMQL: prints the first sample's value, or nothing
  python3 - "http://127.0.0.1:$pport/api/v1/query" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
try:
    url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
    r = json.load(urllib.request.urlopen(url, timeout=2))["data"]["result"]
    print(r[0]["value"][1] if r else "")
except Exception:
    print("")
PY
}

util=""
for _ in $(seq 60); do
  util=$(query 'DCGM_FI_DEV_GPU_UTIL{job="gpuplan",gpu="0"}')
  step=$(query 'gpuplan_step_time_seconds{job="gpuplan"}')
  tensor=$(query 'DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{job="gpuplan"}')  # GPM needs two samples: comes later
  [ -n "$util" ] && [ -n "$step" ] && [ -n "$tensor" ] && break
  sleep 0.5
done
check() {  # check NAME CONDITION
  if python3 -c "import sys; sys.exit(0 if ($2) else 1)"; then pass=$((pass + 1)); else echo "FAIL $1 ($2)"; fail=$((fail + 1)); fi
}
# The scenario's first reading (tests/scenarios/compute_bound.json): util 99 %, 40e9 bytes used, 690 W, 62 C.
check gpu_util_scraped "'$util' != '' and float('${util:-0}') == 99"
fb=$(query 'DCGM_FI_DEV_FB_USED{job="gpuplan"}')
check fb_used_in_mib "'$fb' != '' and abs(float('${fb:-0}') - 40e9 / 2**20) < 1"
power=$(query 'DCGM_FI_DEV_POWER_USAGE{modelName="NVIDIA H100 80GB HBM3"}')
check power_with_dcgm_labels "'$power' != '' and float('${power:-0}') == 690"
temp=$(query 'DCGM_FI_DEV_GPU_TEMP{job="gpuplan"}')
check gpu_temp "'$temp' != '' and float('${temp:-0}') == 62"
check tensor_active_ratio "'$tensor' != '' and abs(float('${tensor:-0}') - 0.74) < 1e-9"
check step_time_scraped "'$step' != '' and 0.15 < float('${step:-0}') < 1.0"
up=$(query 'up{job="gpuplan"}')
check target_up "'$up' == '1'"
if [ "$fail" -ne 0 ]; then tail -5 "$tmp/prom.log"; tail -5 "$tmp/profile.err"; fi
echo "prometheus scrape: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
