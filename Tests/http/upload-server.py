#!/usr/bin/python3
"""A local HTTP server for sfx's upload tests.

    /usr/bin/python3 Tests/http/upload-server.py DIRECTORY [--late SECONDS]

Binds 127.0.0.1 on an ephemeral port and prints that port on its first line of standard output
(with --late, it prints a port that refuses connections and listens on it only after SECONDS).
Each PUT or POST is stored in DIRECTORY as request-N.json (method, path, headers, and for
multipart bodies the parts' names and form fields in order) and request-N.body (the body's
bytes, chunked transfer decoded). The answer is 201 "stored", or, for a path /status/NNN, that
status with a two-line body, so tests see how failures are told. Services that check what they
get, like object stores do:

  /form/...      a form upload (as Qiniu's): 400 unless the multipart body has the fields
                 `token` and `key` and a part `file`, the file part last; 401 unless token is
                 "secret-token"
  /presigned/... a presigned PUT signed for the Content-Type in the query's `signed-type`
                 (audio/mp4 if none): 403 SignatureDoesNotMatch for any other Content-Type
  /flaky/...     503 with Retry-After: 0 for the first two requests to the path, then 201; the
                 requests to the path are counted in DIRECTORY/count-NAME (NAME: the last part)

Other paths misbehave:

  /silent/...    the body is read, and no answer ever comes (the connection stays open)
  /slow/...      the body is read 64 KiB every 50 ms; "started" is written in DIRECTORY once
                 its first bytes are in
  /headers/...   the answer has a 10 MB header line
  /answer/N/...  201 with a body of N bytes (byte i is i mod 251)

It ends when standard input closes (the test process ended) or on SIGTERM.
"""
import http.server
import json
import os
import socket
import sys
import threading
import time
import urllib.parse


def multipart(content_type, data):
    """The parts of a multipart/form-data body, in order: (name, filename or None, bytes)."""
    boundary = None
    for piece in content_type.split(";")[1:]:
        key, _, value = piece.strip().partition("=")
        if key == "boundary":
            boundary = value.strip('"').encode()
    if not content_type.startswith("multipart/form-data") or not boundary:
        return None
    parts = []
    chunks = data.split(b"--" + boundary)
    if len(chunks) < 3 or not chunks[-1].startswith(b"--"):
        return None
    for chunk in chunks[1:-1]:
        if not chunk.startswith(b"\r\n") or not chunk.endswith(b"\r\n"):
            return None
        head, sep, body = chunk[2:-2].partition(b"\r\n\r\n")
        if not sep:
            return None
        name, filename = None, None
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if line.lower().startswith("content-disposition:"):
                for item in line.split(";")[1:]:
                    key, _, value = item.strip().partition("=")
                    value = value[1:-1].replace('\\"', '"').replace("\\\\", "\\") if value.startswith('"') else value
                    if key == "name":
                        name = value
                    elif key == "filename":
                        filename = value
        parts.append((name, filename, body))
    return parts


class Handler(http.server.BaseHTTPRequestHandler):
    counter = 0
    lock = threading.Lock()
    paths = {}

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
        if self.path.startswith("/answer/"):
            size = int(self.path.split("/")[2])
            answer = (bytes(range(251)) * (size // 251 + 1))[:size]
            self.send_response(201)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(size))
            self.end_headers()
            self.wfile.write(answer)
            return
        with Handler.lock:
            Handler.counter += 1
            n = Handler.counter
            path = self.path.split("?")[0]
            Handler.paths[path] = seen = Handler.paths.get(path, 0) + 1
        base = os.path.join(sys.argv[1], "request-%d" % n)
        fd = os.open(base + ".body", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        parts = multipart(self.headers.get("Content-Type", ""), data) if self.command == "POST" else None
        record = {"method": self.command, "path": self.path,
                  "headers": {k.lower(): v for k, v in self.headers.items()}}
        if parts is not None:
            record["parts"] = [name for name, _, _ in parts]
            record["fields"] = [[name, body.decode("utf-8", "replace")] for name, filename, body in parts if filename is None]
        fd = os.open(base + ".json", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(record, f)
        extra = {}
        if self.path.startswith("/status/"):
            status = int(self.path.split("/")[2])
            answer = b"rejected by the test server\nsecond line\n"
        elif self.path.startswith("/form/"):
            status, answer = self.form(parts)
        elif self.path.startswith("/presigned/"):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            signed = query.get("signed-type", ["audio/mp4"])[0]
            if self.headers.get("Content-Type") == signed:
                status, answer = 200, b""
            else:
                status, answer = 403, b"SignatureDoesNotMatch: signed for Content-Type %s, got %s\n" % (
                    signed.encode(), self.headers.get("Content-Type", "none").encode())
        elif self.path.startswith("/flaky/"):
            name = path.rstrip("/").split("/")[-1]
            with open(os.path.join(sys.argv[1], "count-" + name), "w") as f:
                f.write(str(seen))
            if seen <= 2:
                status, answer = 503, b"busy, try again\n"
                extra["Retry-After"] = "0"
            else:
                status, answer = 201, b"stored\n"
        else:
            status = 201
            answer = b"stored\n"
        self.send_response(status)
        for key, value in extra.items():
            self.send_header(key, value)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def form(self, parts):
        """A form upload's answer: 400 for a body without token, key and a last part file."""
        if parts is None:
            return 400, b"not a multipart/form-data body\n"
        names = [name for name, _, _ in parts]
        for required in ("token", "key", "file"):
            if required not in names:
                return 400, b"missing field %s\n" % required.encode()
        if names[-1] != "file" or parts[-1][1] is None:
            return 400, b"the file must be the last part\n"
        token = [body for name, _, body in parts if name == "token"][0]
        if token != b"secret-token":
            return 401, b"bad token\n"
        return 200, b'{"key": "%s"}\n' % [body for name, _, body in parts if name == "key"][0]

    do_PUT = store
    do_POST = store


def main():
    if "--late" in sys.argv:
        delay = float(sys.argv[sys.argv.index("--late") + 1])
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        print(port, flush=True)
        time.sleep(delay)
        http.server.ThreadingHTTPServer.allow_reuse_address = True
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    else:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
