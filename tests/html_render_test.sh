#!/usr/bin/env bash
# Renders `gpuplan advise --html` in headless Chromium and checks the page drew its charts:
# the screenshot must exist and hold many colours (a blank or broken page has a handful).
set -u
bin="$1"
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
python3 - "$tmp/shot.png" "$tmp/dom.html" <<'PY'
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
