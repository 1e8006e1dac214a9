#!/usr/bin/env bash
# Renders `gpuplan advise --html` in headless Chromium and checks the page drew its charts:
# the screenshot must exist and hold many colours (a blank or broken page has a handful). Then a
# user catalog whose GPU id carries a <script> and an onerror handler: both must render as text.
set -u
bin="$1"
root="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then echo "chromium not installed: skipped"; exit 77; fi
"$bin" advise --html "$tmp/report.html" >/dev/null || { echo "FAIL: advise --html"; exit 1; }
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$tmp/profile" \
  --window-size=1000,2200 --screenshot="$tmp/shot.png" "file://$tmp/report.html" >"$tmp/log" 2>&1
[ -s "$tmp/shot.png" ] || { echo "FAIL: no screenshot"; cat "$tmp/log"; exit 1; }
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$tmp/profile2" \
  --dump-dom "file://$tmp/report.html" >"$tmp/dom.html" 2>"$tmp/log2"
python3 - "$tmp/shot.png" "$tmp/dom.html" <<'PY' || exit 1
import sys, zlib, struct
png = open(sys.argv[1], 'rb').read()
assert png[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
pos, idat, w, h, ctype = 8, b'', 0, 0, 0
while pos < len(png):
    n, = struct.unpack('>I', png[pos:pos+4]); kind = png[pos+4:pos+8]; body = png[pos+8:pos+8+n]; pos += 12 + n
    if kind == b'IHDR': w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    if kind == b'IDAT': idat += body
raw = zlib.decompress(idat)
bpp = 4 if ctype == 6 else 3
colours = set()
stride = w * bpp + 1
for y in range(0, h, 7):
    row = raw[y*stride+1:(y+1)*stride]
    for x in range(0, w, 5):
        colours.add(row[x*bpp:x*bpp+3])  # filter bytes make this approximate, which is enough
dom = open(sys.argv[2]).read()
assert dom.count('<svg') == 3, 'expected three charts in the rendered DOM'
assert len(colours) > 40, f'screenshot looks blank ({len(colours)} colours)'
print(f'rendered {w}x{h}, {len(colours)} colours, 3 charts: 1 passed, 0 failed')
PY

# XSS: a GPU id from --catalog (and its --prices row) holding markup that would run if unescaped.
python3 - "$root" "$tmp" <<'PY'
import json, sys
root, tmp = sys.argv[1], sys.argv[2]
evil = json.dumps("rtx-4090<script>document.documentElement.setAttribute('data-xss','script')</script>"
                  "<img src=x onerror=\"document.documentElement.setAttribute('data-xss','onerror')\">")
for name in ('gpus.toml', 'prices.toml'):
    text = open(f'{root}/data/{name}').read()
    assert '"rtx-4090"' in text, name
    open(f'{tmp}/{name}', 'w').write(text.replace('"rtx-4090"', evil))
PY
"$bin" --catalog "$tmp/gpus.toml" --prices "$tmp/prices.toml" advise --html "$tmp/xss.html" >/dev/null 2>"$tmp/xss.err" ||
  { echo "FAIL: advise --html with the crafted catalog"; cat "$tmp/xss.err"; exit 1; }
grep -q 'rtx-4090&lt;script&gt;' "$tmp/xss.html" || { echo "FAIL: the crafted id is not in the report (test does not test)"; exit 1; }
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$tmp/profile3" \
  --dump-dom "file://$tmp/xss.html" >"$tmp/xss-dom.html" 2>"$tmp/log3"
python3 - "$tmp/xss-dom.html" <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
assert dom.count('<svg') == 3, 'the report did not render'
assert not re.search(r'<html[^>]*data-xss', dom), 'injected script or onerror handler ran'
assert '<img' not in dom and '<script' not in dom, 'injected markup became elements'
assert dom.count('&lt;script&gt;') >= 2, 'the id is not shown as text'
print('crafted catalog id rendered as text: 1 passed, 0 failed')
PY
