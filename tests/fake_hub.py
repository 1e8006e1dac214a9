#!/usr/bin/env python3
"""A local stand-in for the Hugging Face Hub, for tests (no network): serves ROOT/<org>/<name>/<file>
at /<org>/<name>/resolve/<rev>/<file> with Range support and an X-Repo-Commit header, answers 401
for repos listed in ROOT/gated.txt unless the request carries `Authorization: Bearer good-token`,
and logs every request (method, path, Range) to ROOT/requests.log. Prints its port on stdout.
A GET of a .safetensors file without a Range header is answered 500: gpuplan must never download
weights."""
import http.server, os, re, sys, threading

root = sys.argv[1]
commit = "0123456789abcdef0123456789abcdef01234567"

class Hub(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        with open(os.path.join(root, "requests.log"), "a") as log:
            log.write(f"GET {self.path} range={self.headers.get('Range')}\n")
        m = re.fullmatch(r"/([\w.-]+)/([\w.-]+)/resolve/([\w.-]+)/([\w.-]+)", self.path)
        if not m:
            return self.send_error(404)
        org, name, rev, file = m.groups()
        repo = f"{org}/{name}"
        gated = open(os.path.join(root, "gated.txt")).read().split() if os.path.exists(os.path.join(root, "gated.txt")) else []
        if repo in gated and self.headers.get("Authorization") != "Bearer good-token":
            return self.send_error(401 if not self.headers.get("Authorization") else 403)
        path = os.path.join(root, org, name, file)
        if rev not in ("main", commit) or not os.path.isfile(path):
            return self.send_error(404)
        data = open(path, "rb").read()
        rng = self.headers.get("Range")
        if file.endswith(".safetensors") and not rng:
            return self.send_error(500, "a full weights download was requested")
        if rng:
            a, b = re.fullmatch(r"bytes=(\d+)-(\d+)", rng).groups()
            a, b = int(a), min(int(b), len(data) - 1)
            body = data[a:b + 1]
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {a}-{b}/{len(data)}")
        else:
            body = data
            self.send_response(200)
        self.send_header("X-Repo-Commit", commit)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
print(server.server_address[1], flush=True)
# Bounded: a forgotten server stops by itself.
threading.Timer(float(os.environ.get("FAKE_HUB_SECONDS", "120")), server.shutdown).start()
server.serve_forever()
