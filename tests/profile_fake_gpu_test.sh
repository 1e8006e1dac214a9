#!/usr/bin/env bash
# `gpuplan profile` against the fake NVML library (built by the tests), loaded through the real
# dlopen path by LD_LIBRARY_PATH, one scripted scenario per diagnosis.
set -u
bin="$1"
root="$2"
driver_dir="$3"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# profile SCENARIO SECONDS [COMMAND...]: runs a command (default: sleep) under the scenario.
profile() {
  local scen="$1" secs="$2"
  shift 2
  local cmd=("$@")
  [ ${#cmd[@]} -eq 0 ] && cmd=(sleep "$secs")
  rm -rf "$tmp/out"
  FAKE_NVML_SCENARIO="$root/tests/scenarios/$scen.json" LD_LIBRARY_PATH="$driver_dir" \
    "$bin" profile --interval 100ms --out "$tmp/out" -- "${cmd[@]}" >"$tmp/stdout" 2>"$tmp/stderr"
  echo $? >"$tmp/rc"
}

expect() {  # expect NAME PYTHON_EXPR (d = summary.json, trace = list of trace records)
  if python3 - "$tmp/out/summary.json" "$tmp/out/trace.jsonl" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
trace = [json.loads(l) for l in open(sys.argv[2])]
findings = [f['finding'] for f in d['diagnosis']]
ok = eval(sys.argv[3])
if not ok:
    print(json.dumps(d['diagnosis'], indent=1)); sys.exit(1)
PY
  then pass=$((pass + 1)); else echo "FAIL $1"; cat "$tmp/stderr" | tail -5; fail=$((fail + 1)); fi
}

profile memory_bound 1.5
expect memory_bound "'memory-bandwidth-bound' in findings and 'memory near capacity' in findings and d['gpus'][0]['name'] == 'NVIDIA H100 80GB HBM3' and d['gpus'][0]['gpm']"
expect memory_bound_evidence "any('DRAM bandwidth 86%' in f['evidence'] for f in d['diagnosis'])"
expect trace_has_gpu_and_host "sum(1 for t in trace if t['type']=='gpu') >= 10 and sum(1 for t in trace if t['type']=='host') >= 10"
expect process_memory "d['gpus'][0]['process_memory_peak_bytes'] > 0 and d['gpus'][0]['energy_j'] > 0"

profile compute_bound 1.5
expect compute_bound "'compute-bound' in findings and 'memory-bandwidth-bound' not in findings"

profile compute_bound_no_gpm 1.0
expect compute_bound_without_gpm "'compute-bound' in findings and 'NVML; no GPM' in [f for f in d['diagnosis'] if f['finding']=='compute-bound'][0]['evidence'] and not d['gpus'][0]['gpm']"

burn='for j in 1 2 3; do ( end=$((SECONDS+3)); while [ $SECONDS -lt $end ]; do :; done ) & done; wait'
profile input_bound 0 bash -c "$burn"
# What the tree asked of the CPUs (time on a core plus time waiting for one) holds on a machine
# other jobs load too; its share of the cores alone does not.
expect input_bound "'input-bound' in findings and d['host']['cpu_percent_mean'] + 100 * d['host']['cpu_wait_cores_mean'] > 100"

profile thermal_throttle 1.0
expect thermal "'thermal throttling' in findings and 'SM clock 1185 of 1980 MHz' in [f for f in d['diagnosis'] if f['finding']=='thermal throttling'][0]['evidence']"

profile power_cap 1.0
expect power "'power-limited' in findings"

profile driver_fault 1.5
expect driver_fault_survived "'driver fault' in findings and 'GPU is lost' in [f for f in d['diagnosis'] if f['finding']=='driver fault'][0]['evidence'] and d['exit_code'] == 0"
expect trace_intact_around_fault "any(t['type']=='gpu' and 'error' not in t for t in trace) and any(t['type']=='gpu' and 'error' in t for t in trace) and trace[-1]['t'] > 1.0"

profile imbalance 1.0
expect imbalance "'multi-GPU imbalance' in findings and len(d['gpus']) == 2"

profile compute_bound 0 bash -c 'echo "step 1"; sleep 0.3; echo "step 2"; sleep 0.3; echo "step 3"; exit 7'
expect exit_code_passes_through "d['exit_code'] == 7 and d['steps']['count'] == 3"
if [ "$(cat "$tmp/rc")" = 7 ] && grep -q "step 2" "$tmp/stdout"; then pass=$((pass + 1)); else echo "FAIL rc/stdout passthrough"; fail=$((fail + 1)); fi

# Marker protocol: the script writes "step" lines to $GPUPLAN_MARKER_FD.
profile compute_bound 0 bash -c 'for i in 1 2 3 4; do echo step >&$GPUPLAN_MARKER_FD; sleep 0.2; done; echo epoch >&$GPUPLAN_MARKER_FD'
expect marker_protocol "d['steps']['count'] == 4 and abs(d['steps']['median_s'] - 0.2) < 0.1 and len(d['epochs']) == 1"

# A profile that records its workload feeds `gpuplan predict` (fit on the profiled H100, predict others).
rm -rf "$tmp/out"
FAKE_NVML_SCENARIO="$root/tests/scenarios/compute_bound.json" LD_LIBRARY_PATH="$driver_dir" \
  "$bin" profile --out "$tmp/out" --model gpt2-medium --task pretrain --batch 8 --seq 1024 --gpu h100-sxm -- \
  bash -c 'for i in 1 2 3 4 5 6; do echo "step $i"; sleep 0.25; done' >/dev/null 2>&1
expect workload_recorded "d['workload']['model'] == 'gpt2-medium' and d['workload']['gpu'] == 'h100-sxm' and 'predicted' in d"
if "$bin" predict --from "$tmp/out/summary.json" --gpu a100-80gb-sxm,rtx-4090,h100-sxm --json >"$tmp/pred.json" 2>"$tmp/pred.err" &&
   python3 -c "
import json; d = json.load(open('$tmp/pred.json')); p = {x['gpu']: x for x in d['predictions']}
assert d['source_gpu'] == 'h100-sxm' and abs(d['measured_step_s'] - 0.25) < 0.08
assert abs(p['h100-sxm']['step_time_s'] / d['measured_step_s'] - 1) < 0.01, 'the fit must reproduce the source'
assert p['a100-80gb-sxm']['step_time_s'] > p['h100-sxm']['step_time_s']
assert all(x['step_time_low_s'] <= x['step_time_s'] <= x['step_time_high_s'] for x in d['predictions'])
"; then pass=$((pass + 1)); else echo "FAIL predict from the fake-driver profile"; cat "$tmp/pred.err"; fail=$((fail + 1)); fi
if "$bin" --calibration "$tmp/out/summary.json" advise --json >"$tmp/adv.json" 2>"$tmp/adv.err" &&
   python3 -c "import json; d = json.load(open('$tmp/adv.json')); assert d['recommendation'] is not None"; then
  pass=$((pass + 1)); else echo "FAIL advise --calibration profile"; cat "$tmp/adv.err"; fail=$((fail + 1)); fi

# No driver: a library path with no NVML.
rm -rf "$tmp/out"
LD_LIBRARY_PATH=/nonexistent "$bin" profile --nvml-lib libnvidia-ml-absent.so.1 --out "$tmp/out" -- bash -c 'echo step 1; sleep 0.3; echo step 2' >/dev/null 2>&1
expect no_driver "d['gpu_unavailable'].startswith('no NVIDIA driver found') and d['gpus'] == [] and d['steps']['count'] == 2 and 'no GPU measured' in findings"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
