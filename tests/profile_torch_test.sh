#!/usr/bin/env bash
# End to end: `gpuplan profile` over a real PyTorch training script on the CPU (Debian's
# python3-torch): steps and epochs found, CPU and RSS sampled, exit code passed through, and the
# child killed cleanly on SIGINT.
set -u
bin="$1"
root="$2"
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$py" -c "import torch" 2>/dev/null; then echo "python3-torch not installed: skipped"; exit 77; fi
script="$root/tests/fixtures/train_cpu.py"
pass=0
fail=0
check() {
  if python3 -c "import json,sys; d=json.load(open('$tmp/out/summary.json')); sys.exit(0 if ($2) else 1)"; then
    pass=$((pass + 1))
  else
    echo "FAIL $1"; head -c 1500 "$tmp/out/summary.json"; fail=$((fail + 1))
  fi
}

"$bin" profile --out "$tmp/out" -- "$py" "$script" --steps 30 --epochs 2 >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
[ "$rc" -eq 0 ] && pass=$((pass + 1)) || { echo "FAIL exit code $rc"; cat "$tmp/stderr"; fail=$((fail + 1)); }
grep -q "step 30 loss" "$tmp/stdout" && pass=$((pass + 1)) || { echo "FAIL output not passed through"; fail=$((fail + 1)); }
check steps_detected "d['steps']['count'] == 30 and d['steps']['median_s'] > 0 and d['steps']['p90_s'] >= d['steps']['median_s']"
check epochs_detected "len(d['epochs']) == 2 and all(e['duration_s'] > 0 for e in d['epochs'])"
check cpu_sampled "d['host']['cpu_percent_mean'] > 20"
check rss_sampled "d['host']['rss_peak_bytes'] > 50 * 2**20"
check no_gpu_said_plainly "d['gpu_unavailable'] is not None and d['gpu_unavailable'].startswith('no NVIDIA driver found')"

rm -rf "$tmp/out"
"$bin" profile --out "$tmp/out" -- "$py" "$script" --steps 2 --exit 5 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 5 ] && pass=$((pass + 1)) || { echo "FAIL exit code passthrough: $rc"; fail=$((fail + 1)); }

# SIGINT goes to the child; nothing survives; gpuplan reports the child's fate.
rm -rf "$tmp/out"
"$bin" profile --out "$tmp/out" -- "$py" "$script" --steps 100000 --epochs 1 >/dev/null 2>&1 &
gp=$!
for _ in $(seq 1 150); do grep -q '"step"' "$tmp/out/trace.jsonl" 2>/dev/null && break; sleep 0.2; done
kill -INT "$gp"
wait "$gp"
rc=$?
sleep 0.5
if pgrep -f "train_cpu.py --steps 100000" >/dev/null; then
  echo "FAIL child still running after SIGINT"; pkill -9 -f "train_cpu.py --steps 100000"; fail=$((fail + 1))
else
  pass=$((pass + 1))
fi
# Python exits 130 on an uncaught KeyboardInterrupt; a signal death reads as 128 + 2 as well.
[ "$rc" -eq 130 ] && pass=$((pass + 1)) || { echo "FAIL SIGINT exit code $rc"; fail=$((fail + 1)); }
check summary_after_sigint "d['exit_code'] == 130 and d['steps']['count'] >= 1"
if ps -eo stat,cmd | grep -v grep | grep "train_cpu" | grep -q '^Z'; then echo "FAIL zombie left"; fail=$((fail + 1)); else pass=$((pass + 1)); fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
