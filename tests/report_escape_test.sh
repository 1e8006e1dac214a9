#!/usr/bin/env bash
# Reports escape what they print: a GPU id from a user catalog (--catalog/--prices) carrying a
# terminal colour code, an OSC 8 hyperlink, a <script> and a Markdown link must reach text output
# without control characters and Markdown output as literal text. (The HTML report's case runs in
# headless Chromium: tests/html_render_test.sh.)
set -u
bin="$1"
root="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
python3 - "$root" "$tmp" <<'PY'
import json, sys
root, tmp = sys.argv[1], sys.argv[2]
evil = json.dumps("rtx-4090\u001b[31mRED\u001b]8;;http://evil\u0007link\u001b]8;;\u0007<script>x</script>[a](http://evil)|cell")
for name in ('gpus.toml', 'prices.toml'):
    text = open(f'{root}/data/{name}').read()
    assert '"rtx-4090"' in text, name
    open(f'{tmp}/{name}', 'w').write(text.replace('"rtx-4090"', evil))
PY
for cmd in "gpus" "advise" "advise --markdown"; do
  # shellcheck disable=SC2086
  "$bin" --catalog "$tmp/gpus.toml" --prices "$tmp/prices.toml" $cmd >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" = 0 ] && grep -q 'rtx-4090' "$tmp/out" && ! grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/out"; then
    pass=$((pass + 1))
  else
    echo "FAIL $cmd: exit $rc, or control characters reached the output"; fail=$((fail + 1))
  fi
done
if python3 - "$tmp/out" <<'PY'
import re, sys
md = open(sys.argv[1]).read()
assert 'rtx-4090' in md
assert not re.search(r'(?<!\\)<script', md), 'raw HTML in the Markdown'
assert not re.search(r'(?<!\\)\[a(?<!\\)\]\(', md), 'a live Markdown link'
assert 'link\\<script\\>x\\</script\\>\\[a\\](http://evil)\\|cell' in md, 'the id is not shown literally'
PY
then pass=$((pass + 1)); else echo "FAIL advise --markdown escapes the id"; fail=$((fail + 1)); fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
