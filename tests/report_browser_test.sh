#!/usr/bin/env bash
# `gpuplan advise --html` for three example workloads (deadlines, budgets, a service), each report
# checked in headless Chromium from the laid-out DOM (tests/browser/report_test.mjs).
set -u
bin="$1"
root="$2"
command -v chromium >/dev/null || { echo "chromium not installed: skipped"; exit 77; }
[ -d "$root/tests/browser/node_modules/puppeteer-core" ] || { echo "run 'npm ci' in tests/browser (make deps does): skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
run() {  # name, workload file, expectations...
  local name="$1" file="$2"; shift 2
  "$bin" advise "$file" --html "$tmp/$name.html" >/dev/null 2>"$tmp/$name.err" || { echo "FAIL: advise $file"; cat "$tmp/$name.err"; fail=1; return; }
  node "$root/tests/browser/report_test.mjs" "$tmp/$name.html" "$@" || { echo "FAIL: $name"; fail=1; }
}
run qlora "$root/examples/qlora-7b-small-team.toml" deadline budget band
run pretrain "$root/examples/pretrain-405b.toml" deadline band
run chat "$root/examples/chat-service-8b.toml"
exit $fail
