#!/usr/bin/python3
"""A local HTTP server for sfx's upload tests.

    /usr/bin/python3 Tests/http/upload-server.py DIRECTORY

Binds 127.0.0.1 on an ephemeral port and prints that port on its first line of standard output.
Each PUT or POST is stored in DIRECTORY as request-N.json (method, path, headers) and
request-N.body (the body's bytes, chunked transfer decoded). The answer is 201 "stored", or,
for a path /status/NNN, that status with a two-line body, so tests see how failures are told.
Other paths misbehave:

  /silent/...    the body is read, and no answer ever comes (the connection stays open)
  /slow/...      the body is read 64 KiB every 50 ms; "started" is written in DIRECTORY once
                 its first bytes are in
  /headers/...   the answer has a 10 MB header line

It ends when standard input closes (the test process ended) or on SIGTERM.
"""
import http.server
import json
import os
import sys
import threading
import time


class Handler(http.server.BaseHTTPRequestHandler):
    counter = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def slow_body(self):
        length = int(self.headers.get("Content-Length", "0"))
        data = b""
        while len(data) < length:
            piece = self.rfile.read(min(65536, length - len(data)))
            if not piece:
                break
            if not data:
                open(os.path.join(sys.argv[1], "started"), "w").close()
            data += piece
            time.sleep(0.05)
        return data

    def store(self):
        data = self.slow_body() if self.path.startswith("/slow/") else self.body()
        if self.path.startswith("/silent/"):
            time.sleep(3600)
            return
        if self.path.startswith("/headers/"):
            self.send_response(201)
            self.send_header("X-Padding", "a" * 10_000_000)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with Handler.lock:
            Handler.counter += 1
            n = Handler.counter
        base = os.path.join(sys.argv[1], "request-%d" % n)
        fd = os.open(base + ".body", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        fd = os.open(base + ".json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"method": self.command, "path": self.path,
                       "headers": {k.lower(): v for k, v in self.headers.items()}}, f)
        if self.path.startswith("/status/"):
            status = int(self.path.split("/")[2])
            answer = b"rejected by the test server\nsecond line\n"
        else:
            status = 201
            answer = b"stored\n"
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_PUT = store
    do_POST = store


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
