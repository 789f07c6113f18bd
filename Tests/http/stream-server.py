#!/usr/bin/python3
"""A local HTTP server for sfx's streaming tests: serves the files of one directory on
127.0.0.1 at an ephemeral port, which it prints on its first line of output, and misbehaves on
request, by the first part of the path:

  /normal/NAME   the file, with its Content-Length
  /slow/NAME     the file in 16 KiB pieces, 50 ms apart (320 KB/s)
  /stall/NAME    the first half, then nothing (the connection stays open)
  /drop/NAME     the first half of a body announced whole, then a second later the connection closes
  /missing/NAME  404 Not Found
  /endless/NAME  a WAV (48 kHz mono) whose header claims the largest size, then a tone without
                 end, chunked (no Content-Length), as fast as the client takes it (NAME must exist)
  /paced/NAME    the same, a second of sound every 0.1 s (960 KB/s)
  /headers/NAME  200 with a 10 MB header line, then the file

Usage: stream-server.py DIRECTORY. It stops when its standard input closes.
"""
import http.server
import math
import os
import socketserver
import struct
import sys
import threading
import time

ROOT = os.path.realpath(sys.argv[1])


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        parts = self.path.strip("/").split("/", 1)
        mode, name = (parts + [""])[:2]
        path = os.path.realpath(os.path.join(ROOT, name))
        if mode == "missing" or not path.startswith(ROOT + os.sep) or not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        with open(path, "rb") as f:
            body = f.read()
        if mode in ("endless", "paced"):
            self.endless(body, paced=mode == "paced")
            return
        if mode == "headers":
            self.send_response(200)
            self.send_header("X-Padding", "a" * 10_000_000)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            if mode == "slow":
                for start in range(0, len(body), 16384):
                    self.wfile.write(body[start:start + 16384])
                    self.wfile.flush()
                    time.sleep(0.05)
            elif mode == "stall":
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                time.sleep(3600)
            elif mode == "drop":
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                time.sleep(1)
                self.close_connection = True
            else:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


    def endless(self, body, paced):
        # A 48 kHz mono 16-bit WAV whose RIFF and data sizes are the largest there are, then a
        # 1 kHz tone, a second of it per chunk, for ever.
        header = (b"RIFF" + struct.pack("<I", 0xFFFFFFFF) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 48000, 96000, 2, 16)
                  + b"data" + struct.pack("<I", 0xFFFFFFFF))
        second = b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 1000 * n / 48000))) for n in range(48000))
        self.send_response(200)
        self.send_header("Content-Type", "audio/wav")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(header), header))
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(second), second))
                if paced:
                    self.wfile.flush()
                    time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()


if __name__ == "__main__":
    main()
