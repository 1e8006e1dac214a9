#!/usr/bin/env bash
# `gpuplan profile` under faults, on the real binary with real signals: its output closed (`| head`),
# every catchable signal sent to it, a child that escapes its process group, bytes that are not
# UTF-8, a catastrophic regex, a full disk, a reused or shared --out folder, a symlink planted where
# it writes, the umask, and other processes loading the machine. After each case nothing the
# command started may still run. Every sleep the commands start is `sleep 4711N`, so survivors can
# be found (and ended, by their pid) without touching anything else on the machine.
# Usage: profile_faults_test.sh GPUPLAN SOURCE_DIR [CASE]
set -u
# Job control: background jobs get their own process group and keep SIGINT and SIGQUIT (a
# non-interactive shell would start them ignored, and gpuplan keeps ignored signals ignored).
set -m
bin="$1"
root="$2"
tmp=$(mktemp -d)
burners=()
cleanup() {
  for p in $(pgrep -fx 'sleep 4711[0-9]' 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
  for p in "${burners[@]}"; do kill -9 "$p" 2>/dev/null; done
  if mountpoint -q "$tmp/full" 2>/dev/null; then umount "$tmp/full"; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $1"; [ -f "$tmp/err" ] && tail -5 "$tmp/err"; fail=$((fail + 1)); }

# survivors: the command's sleeps still running (must be none).
survivors() { pgrep -fx 'sleep 4711[0-9]' | tr '\n' ' '; }
no_survivors() {
  local s
  s=$(survivors)
  if [ -z "$s" ]; then ok; else bad "$1: left running: $s"; for p in $s; do kill -9 "$p"; done; fi
}
# summary_has DIR EXPR: summary.json parses and EXPR (python, d = summary) holds.
summary_has() {
  python3 - "$1/summary.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
# trace_whole DIR: every line of trace.jsonl is a whole JSON record.
trace_whole() {
  python3 - "$1/trace.jsonl" <<'PY'
import json, sys
data = open(sys.argv[1], 'rb').read()
assert data == b'' or data.endswith(b'\n'), 'torn last line'
for line in data.splitlines():
    json.loads(line)
PY
}
# wait_for FILE TEXT: until FILE holds TEXT (10 s at most).
wait_for() {
  for _ in $(seq 1 100); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# ---- Output closed by its reader: no SIGPIPE death, summary written, the command ended. ------------
case_closed_output() {
  start=$SECONDS
  "$bin" profile --out "$tmp/head" -- sh -c 'echo a; sleep 1; echo b; sleep 47110' 2>"$tmp/err" | head -1 >"$tmp/head.out"
  [ "$(cat "$tmp/head.out")" = a ] && ok || bad "head -1 got the first line"
  [ $((SECONDS - start)) -lt 15 ] && ok || bad "head -1: gpuplan returned promptly"
  grep -q '== gpuplan profile' "$tmp/err" && ok || bad "head -1: gpuplan lived to print its report"
  # The command meets the broken pipe at its next write, as it would without gpuplan: sh dies of SIGPIPE.
  summary_has "$tmp/head" "d['exit_code'] == 141" && ok || bad "head -1: summary written with the command's exit code"
  no_survivors "head -1"
}

# ---- Signals sent to gpuplan: forwarded, summary written, nothing orphaned. ----------------------
case_signals() {
  # A non-interactive sh ignores INT and QUIT in its background jobs, so `sleep &` outlives sh unless
  # gpuplan ends it.
  for sig in INT QUIT TERM HUP; do
    num=$(kill -l "$sig")
    "$bin" profile --out "$tmp/sig-$sig" -- sh -c 'sleep 47111 & echo ready; wait' >"$tmp/out" 2>"$tmp/err" &
    gp=$!
    wait_for "$tmp/out" ready || bad "$sig: command did not start"
    kill -s "$sig" "$gp"
    wait "$gp"
    rc=$?
    [ "$rc" = $((128 + num)) ] && ok || bad "SIG$sig: exit $rc, expected $((128 + num)) (the command's death by the forwarded signal)"
    summary_has "$tmp/sig-$sig" "d['exit_code'] == 128 + $num" && ok || bad "SIG$sig: summary written"
    no_survivors "SIG$sig"
  done
  # SIGUSR1 (a checkpoint request) reaches the command, which decides what to do; its exit code is
  # returned, also with an argument that is not UTF-8.
  "$bin" profile --out "$tmp/usr1" -- sh -c 'trap "echo got-usr1; exit 42" USR1; sleep 47112 & echo ready; wait' $'\xff\xfe' \
    >"$tmp/out" 2>"$tmp/err" &
  gp=$!
  wait_for "$tmp/out" ready || bad "USR1: command did not start"
  kill -USR1 "$gp"
  wait "$gp"
  rc=$?
  [ "$rc" = 42 ] && grep -q got-usr1 "$tmp/out" && ok || bad "SIGUSR1 forwarded to the command (exit $rc)"
  summary_has "$tmp/usr1" "d['exit_code'] == 42" && ok || bad "SIGUSR1: summary written"
  no_survivors "SIGUSR1"
  "$bin" profile --out "$tmp/utf8" -- sh -c 'exit 7' $'caf\xe9' >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 7 ] && summary_has "$tmp/utf8" "d['exit_code'] == 7 and 'caf' in d['command']" && ok || bad "non-UTF-8 argument: exit $rc, expected 7"
}

# ---- A child that leaves the process group and session is still ended. ---------------------------
case_escapee() {
  start=$SECONDS
  "$bin" profile --out "$tmp/setsid" -- sh -c 'setsid sleep 47113 & setsid sleep 47114 >/dev/null 2>&1 </dev/null & sleep 0.3; exit 5' \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 5 ] && ok || bad "setsid: exit $rc, expected 5"
  [ $((SECONDS - start)) -lt 15 ] && ok || bad "setsid: gpuplan returned promptly"
  no_survivors "setsid escapee"
}

# ---- Marker descriptor: bytes that are not UTF-8 do not abort. --------------------------------------
case_marker_bytes() {
  "$bin" profile --out "$tmp/marker" -- sh -c 'printf "step \377\n" >&3; printf "step 2\n" >&3; printf "\377\376\n" >&3; exit 3' \
    >"$tmp/out" 2>"$tmp/err"
  rc=$?
  [ "$rc" = 3 ] && ok || bad "marker with invalid UTF-8: exit $rc, expected 3"
  summary_has "$tmp/marker" "d['steps']['count'] >= 2" && trace_whole "$tmp/marker" && ok || bad "marker with invalid UTF-8: summary and trace whole"
}

# ---- Regular expressions: linear time whatever the pattern; invalid ones refused. -------------------
case_regex() {
  start=$SECONDS
  timeout 60 "$bin" profile --out "$tmp/regex" --epoch-regex '(x*)*y' --step-regex '(\d+)*\d*!' -- \
    sh -c 'x=$(head -c 4096 /dev/zero | tr "\0" x); d=$(head -c 4096 /dev/zero | tr "\0" 7); for i in $(seq 1 20); do echo "$x"; echo "$d"; done' \
    >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" = 0 ] && [ $((SECONDS - start)) -lt 15 ] && ok || bad "catastrophic regex on 4,096-byte lines: exit $rc after $((SECONDS - start)) s"
  "$bin" profile --out "$tmp/regex2" --step-regex '(a)\1' -- true >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- '--step-regex: invalid regular expression' "$tmp/err" && ok ||
    bad "a backreference is refused in one line (exit $rc)"
}

# ---- Ctrl-C while the command ignores SIGINT: the run still ends within a second or so. -------------
case_ctrl_c() {
  "$bin" profile --out "$tmp/ignint" -- sh -c 'trap "" INT; sleep 47115 & echo ready; wait; wait' >"$tmp/out" 2>"$tmp/err" &
  gp=$!
  wait_for "$tmp/out" ready || bad "ignored INT: command did not start"
  t0=$(date +%s.%N)
  kill -INT "$gp"
  wait "$gp"
  t1=$(date +%s.%N)
  python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 3 else 1)" && ok || bad "SIGINT ignored by the command: gpuplan took $(python3 -c "print(round($t1 - $t0, 2))") s"
  [ -f "$tmp/ignint/summary.json" ] && ok || bad "SIGINT ignored by the command: summary written"
  no_survivors "SIGINT ignored"
}

# ---- A command that reads the terminal: it gets it; Ctrl-C ends the run. ----------------------------
case_terminal() {
  if python3 "$root/tests/profile_terminal_test.py" "$bin" "$tmp/tty"; then ok; else bad "terminal: see above"; fi
  no_survivors "terminal"
}

# ---- A full disk: trace lines whole, no partial summary, the error said and in the exit status. -----
case_full_disk() {
  mkdir -p "$tmp/full"
  if mount -t tmpfs -o size=64k tmpfs "$tmp/full" 2>/dev/null; then
    "$bin" profile --interval 10ms --out "$tmp/full/run" -- \
      sh -c 'i=0; while [ $i -lt 1500 ]; do echo "step $i padding padding padding padding padding padding" >&3; i=$((i+1)); done; sleep 1.2' \
      >/dev/null 2>"$tmp/err"
    rc=$?
    [ "$rc" = 1 ] && ok || bad "full disk: exit $rc, expected 1"
    grep -q 'No space left on device' "$tmp/err" && ok || bad "full disk: ENOSPC said on stderr"
    trace_whole "$tmp/full/run" && ok || bad "full disk: trace holds whole lines only"
    if [ -e "$tmp/full/run/summary.json" ]; then summary_has "$tmp/full/run" "True" && ok || bad "full disk: partial summary.json"; else ok; fi
    [ -z "$(ls -A "$tmp/full/run" | grep -v -x -e trace.jsonl -e summary.json)" ] && ok || bad "full disk: temporary file left behind"
    umount "$tmp/full"
  else
    echo "note: cannot mount a tmpfs here; the full-disk case is skipped"
  fi
}

# ---- --out: a fresh folder per run, locked; never beside an earlier summary. -------------------------
case_fresh_out() {
  mkdir -p "$tmp/used" && echo '{}' >"$tmp/used/summary.json"
  "$bin" profile --out "$tmp/used" -- true >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" = 2 ] && grep -q -- '--out: .* already holds files' "$tmp/err" && [ "$(cat "$tmp/used/summary.json")" = '{}' ] && ok ||
    bad "a non-empty --out is refused (exit $rc)"
  "$bin" profile --out "$tmp/shared" -- sh -c 'echo ready; sleep 47116' >"$tmp/out" 2>/dev/null &
  gp=$!
  wait_for "$tmp/out" ready || bad "lock: first run did not start"
  "$bin" profile --out "$tmp/shared" -- true >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" = 2 ] && grep -q 'in use by another gpuplan profile' "$tmp/err" && ok || bad "a second run into a folder in use is refused (exit $rc)"
  kill -TERM "$gp"
  wait "$gp"
  no_survivors "lock"
  # A run killed outright leaves its trace; the re-run cannot put a new trace beside it.
  "$bin" profile --out "$tmp/killed" -- sh -c 'echo ready; exec sleep 47117' >"$tmp/out" 2>/dev/null &
  gp=$!
  wait_for "$tmp/out" ready
  kill -KILL "$gp"
  wait "$gp" 2>/dev/null
  no_survivors "gpuplan killed by SIGKILL (the command follows it)"
  "$bin" profile --out "$tmp/killed" -- true >/dev/null 2>"$tmp/err"
  [ $? = 2 ] && [ ! -e "$tmp/killed/summary.json" ] && ok || bad "re-run into a killed run's folder is refused"
  mkdir -p "$tmp/cwd"
  (cd "$tmp/cwd" && "$bin" profile -- true 2>"$tmp/err1" >/dev/null && "$bin" profile -- true 2>"$tmp/err2" >/dev/null)
  [ "$(ls "$tmp/cwd/gpuplan-profile" | wc -l)" = 2 ] && grep -q 'summary: gpuplan-profile/' "$tmp/err1" && ok ||
    bad "without --out each run gets a new gpuplan-profile/<date>-<time> folder"
}

# ---- Symlinks planted where gpuplan writes are not followed; the summary's mode follows the umask. --
case_symlinks() {
  echo precious >"$tmp/victim"
  ln -s "$tmp/victim" "$tmp/link.json"
  "$bin" profile --out "$tmp/sl" --json-out "$tmp/link.json" -- true >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" != 0 ] && grep -q 'symbolic link' "$tmp/err" && [ "$(cat "$tmp/victim")" = precious ] && ok || bad "--json-out through a symlink (exit $rc)"
  mkdir -p "$tmp/planted" && ln -s "$tmp/victim" "$tmp/planted/summary.json"
  "$bin" profile --out "$tmp/planted" -- true >/dev/null 2>"$tmp/err"
  [ $? = 2 ] && [ "$(cat "$tmp/victim")" = precious ] && ok || bad "--out holding a planted summary.json link"
  ln -s "$tmp/victim" "$tmp/link.html"
  "$bin" advise --html "$tmp/link.html" >/dev/null 2>"$tmp/err"
  rc=$?
  [ "$rc" = 2 ] && grep -q -- '--html: .*symbolic link' "$tmp/err" && [ "$(cat "$tmp/victim")" = precious ] && ok || bad "advise --html through a symlink (exit $rc)"
  (umask 077 && "$bin" profile --out "$tmp/private" -- true >/dev/null 2>&1)
  [ "$(stat -c %a "$tmp/private/summary.json")" = 600 ] && ok || bad "umask 077: summary.json mode $(stat -c %a "$tmp/private/summary.json")"
  (umask 022 && "$bin" profile --out "$tmp/public" -- true >/dev/null 2>&1)
  [ "$(stat -c %a "$tmp/public/summary.json")" = 644 ] && ok || bad "umask 022: summary.json mode $(stat -c %a "$tmp/public/summary.json")"
}

# ---- Other processes loading the machine are not blamed on the run. ---------------------------------
case_host_load() {
  n=$(nproc)
  [ "$n" -gt 64 ] && n=64
  for _ in $(seq 1 "$n"); do
    bash -c 'while :; do :; done' &
    burners+=($!)
  done
  "$bin" profile --interval 200ms --out "$tmp/load" -- sleep 2 >/dev/null 2>"$tmp/err"
  for p in "${burners[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  burners=()
  summary_has "$tmp/load" "'CPU-bound' not in [f['finding'] for f in d['diagnosis']] and d['host']['cpu_percent_mean'] < 20" && ok ||
    bad "host load outside the tree is not called CPU-bound"
  summary_has "$tmp/load" "'host shared with other load' in [f['finding'] for f in d['diagnosis']] and d['host']['other_load_cores_mean'] > 0.5" && ok ||
    bad "host load outside the tree is reported as distorting the measurement"
  grep -q 'host shared with other load' "$tmp/err" && ok || bad "host load said in the report"
}

# One case (a CTest test each) or, without a name, all of them.
cases="${3:-closed_output signals escapee marker_bytes regex ctrl_c terminal full_disk fresh_out symlinks host_load}"
for c in $cases; do "case_$c"; done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
