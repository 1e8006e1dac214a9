#!/usr/bin/env bash
# The conventions people expect of a command-line tool, checked on the real binary as a user meets
# them: suggestions for mistyped flags, `help CMD`, --version, count suffixes, colour and width rules,
# completions and man page, `make install`, profile's JSON on stdout, doctor's exit status, and
# `profile merge` across nodes.
set -u
bin="$1"
root="$2"
driver_dir="$3"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ -f "$tmp/err" ] && head -5 "$tmp/err"; fail=$((fail + 1)); }
run() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; echo $? >"$tmp/rc"; }
rc() { cat "$tmp/rc"; }

run memory --taks lora --model gpt2
[ "$(rc)" = 2 ] && grep -qx 'gpuplan: error: --taks: unknown flag (did you mean --task?); `gpuplan help memory` lists the flags' "$tmp/err" && ok || bad "--taks suggests --task"
run memory --modle gpt2
[ "$(rc)" = 2 ] && grep -q -- '--modle: unknown flag (did you mean --model?)' "$tmp/err" && ok || bad "--modle suggests --model"
run help memory
[ "$(rc)" = 0 ] && grep -q -- '--model' "$tmp/out" && grep -q '^Examples:' "$tmp/out" && ok || bad "help memory shows flags and examples"
run help nosuch
[ "$(rc)" = 2 ] && ok || bad "help of an unknown command is an error"
for c in gpus models memory train infer roofline plan cost advise validate profile doctor bench predict serve; do
  "$bin" "$c" --help 2>/dev/null | grep -q '^Examples:' || { bad "$c --help has examples"; continue; }
  ok
done
run -V
[ "$(rc)" = 0 ] && grep -qE '^gpuplan [0-9.]+ \(commit [0-9a-f]{12}(-dirty)?, [0-9]{4}-[0-9]{2}-[0-9]{2}\)$' "$tmp/out" && ok || { bad "-V has commit and date"; cat "$tmp/out"; }
run --version
grep -q 'commit' "$tmp/out" && ok || bad "--version has the commit"

# Count suffixes on numeric flags: 2B tokens is 2e9 tokens.
"$bin" train --model gpt2 --gpu h100-sxm --tokens 2B --json >"$tmp/a" 2>/dev/null
"$bin" train --model gpt2 --gpu h100-sxm --tokens 2000000000 --json >"$tmp/b" 2>/dev/null
[ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b" && ok || bad "--tokens 2B equals 2000000000"
"$bin" memory --model gpt2 --seq 1Ki --json >"$tmp/a" 2>/dev/null && python3 -c "import json; assert json.load(open('$tmp/a'))['workload']['seq'] == 1024" && ok || bad "--seq 1Ki"
run memory --model gpt2 --batch 2x
[ "$(rc)" = 2 ] && grep -q -- "--batch: '2x' is not a number" "$tmp/err" && [ "$(wc -l <"$tmp/err")" = 1 ] && ok || bad "--batch 2x is a one-line error"

# Colour only when asked or on a terminal; NO_COLOR wins over auto; width 100 when not a terminal.
"$bin" memory --model llama-3.1-8b --task qlora --gpu rtx-4090 >"$tmp/plain"
grep -q $'\033' "$tmp/plain" && bad "no colour when piped" || ok
"$bin" --color always memory --model llama-3.1-8b --gpu rtx-4090 | grep -q $'\033\[1m' && ok || bad "--color always"
NO_COLOR=1 script -qc "$bin memory --model gpt2" /dev/null 2>/dev/null | grep -q $'\033\[' && bad "NO_COLOR on a terminal" || ok
run --color sometimes gpus
[ "$(rc)" = 2 ] && grep -q -- "--color: must be auto, always or never" "$tmp/err" && ok || bad "bad --color"
long=0
for args in "memory --model llama-3.1-8b --task qlora --gpu rtx-4090" "train --model llama-3.1-8b --gpu h100-sxm --gpus 8" \
            "validate" "advise"; do
  w=$(env -u COLUMNS $bin $args 2>/dev/null | awk '{ n = length($0); if (n > m) m = n } END { print m + 0 }')
  [ "$w" -le 100 ] || { echo "  $args: $w columns"; long=$((long + 1)); }
done
[ "$long" -eq 0 ] && ok || bad "text fits 100 columns when not a terminal"
"$bin" train --model gpt2 --gpu h100-sxm --gpus 1 | grep -qE '\b1 micro-batches|\b1 GPUs' && bad "plural" || ok

# Completions parse in their shells and complete what the command table holds.
"$bin" completion bash >"$tmp/c.bash" && bash -n "$tmp/c.bash" && ok || bad "bash completion parses"
words=$(bash -c "source '$tmp/c.bash'; COMP_WORDS=(gpuplan mem); COMP_CWORD=1; _gpuplan; echo \${COMPREPLY[*]}")
[ "$words" = memory ] && ok || bad "bash completes 'mem' to memory (got '$words')"
words=$(bash -c "source '$tmp/c.bash'; COMP_WORDS=(gpuplan memory --ta); COMP_CWORD=2; _gpuplan; echo \${COMPREPLY[*]}")
[ "$words" = --task ] && ok || bad "bash completes --ta to --task (got '$words')"
words=$(bash -c "source '$tmp/c.bash'; COMP_WORDS=(gpuplan memory --task ql); COMP_CWORD=3; _gpuplan; echo \${COMPREPLY[*]}")
[ "$words" = qlora ] && ok || bad "bash completes --task values (got '$words')"
if command -v zsh >/dev/null; then "$bin" completion zsh >"$tmp/_gpuplan" && zsh -n "$tmp/_gpuplan" && ok || bad "zsh completion parses"; fi
if command -v fish >/dev/null; then "$bin" completion fish >"$tmp/c.fish" && fish --no-execute "$tmp/c.fish" && ok || bad "fish completion parses"; fi
run completion tcsh
[ "$(rc)" = 2 ] && ok || bad "unknown shell"

# make install PREFIX=... (its copying half, install-files; the build half would relink the binary
# under the other tests): gpuplan on PATH, its man page and completions in place.
build_dir=$(dirname "$bin")
if make -s -C "$root" install-files PREFIX="$tmp/prefix" BUILD="$build_dir" >"$tmp/install.log" 2>&1; then
  PATH="$tmp/prefix/bin:$PATH" gpuplan --version | grep -q commit && ok || bad "installed gpuplan runs from PATH"
  [ -s "$tmp/prefix/share/bash-completion/completions/gpuplan" ] && [ -s "$tmp/prefix/share/zsh/site-functions/_gpuplan" ] &&
    [ -s "$tmp/prefix/share/fish/vendor_completions.d/gpuplan.fish" ] && ok || bad "completions installed"
  if command -v man >/dev/null; then
    MANWIDTH=100 man -l "$tmp/prefix/share/man/man1/gpuplan.1" 2>/dev/null | grep -q 'gpuplan profile merge' && ok || bad "man page renders"
  fi
else
  bad "make install"; cat "$tmp/install.log"
fi

# profile --json: stdout holds only the JSON; the command's own output goes to stderr.
FAKE_NVML_SCENARIO="$root/tests/scenarios/compute_bound.json" LD_LIBRARY_PATH="$driver_dir" \
  "$bin" profile --json --json-out "$tmp/copy.json" --out "$tmp/prof" -- sh -c 'echo "step 1"; echo child-stdout; echo child-stderr >&2' \
  >"$tmp/out" 2>"$tmp/err"
python3 -c "import json; json.load(open('$tmp/out'))" && ok || bad "profile --json stdout is JSON alone"
grep -q child-stdout "$tmp/err" && grep -q child-stderr "$tmp/err" && ok || bad "the child's output went to stderr"
python3 -c "import json; assert json.load(open('$tmp/copy.json'))['command']" && ok || bad "--json-out FILE"

# doctor: a problem found is exit 1, and it says what it is checking.
run doctor --nvml-lib /nonexistent/libnvidia-ml.so.1
[ "$(rc)" = 1 ] && grep -q "checking" "$tmp/err" && grep -q "no NVIDIA driver" "$tmp/out" && ok || bad "doctor exits 1 on a problem"

# profile merge: four nodes, one slow (a straggler) with an idle GPU (imbalance).
python3 - "$tmp" <<'PY'
import json, os, sys
for i, (step, util) in enumerate([(1.00, 97), (1.02, 96), (0.99, 97), (1.31, 58)]):
    d = os.path.join(sys.argv[1], f"node{i}"); os.makedirs(d)
    json.dump({"schema_version": 1, "hostname": f"gpu-node-{i}", "command": "torchrun train.py", "exit_code": 0, "wall_s": 600,
               "steps": {"count": 500, "median_s": step},
               "gpus": [{"index": g, "util_mean": util if g == 0 else 97, "memory_peak_bytes": 70e9} for g in range(8)],
               "diagnosis": [{"finding": "thermal throttling", "evidence": "", "advice": ""}] if i == 3 else []},
              open(os.path.join(d, "summary.json"), "w"))
PY
run profile merge "$tmp"/node0 "$tmp"/node1 "$tmp"/node2 "$tmp"/node3 --json
python3 - "$tmp/out" <<'PY' && ok || bad "profile merge names the straggler and the imbalance"
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["finding"]: x["evidence"] for x in d["diagnosis"]}
assert "gpu-node-3" in f["straggler"] and "30% slower" in f["straggler"], f
assert "gpu-node-3 gpu 0" in f["imbalance"], f
assert "gpu-node-3" in f["only on some nodes: thermal throttling"], f
assert len([x for x in d["diagnosis"] if x["finding"] == "straggler"]) == 1
PY
run profile merge "$tmp"/node0 "$tmp"/node1
[ "$(rc)" = 0 ] && grep -q "No straggler" "$tmp/out" && ok || bad "balanced nodes: no finding"
run profile merge "$tmp"/node0 "$tmp"/missing
[ "$(rc)" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && ok || bad "missing node summary is a one-line error"

echo "cli conventions: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
