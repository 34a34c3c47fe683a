#!/usr/bin/env python3
"""A threaded HTTP/1.1 file server with single-range GET and HEAD support.

For `gdscan bench store --url http://127.0.0.1:PORT/FILE` on machines that
have Python but no web server (the GPU machine): Python's own http.server
ignores Range headers. Standard library only.

    python3 range_server.py --dir DIR --port 8765
"""

import argparse
import os
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    root = "."

    def log_message(self, *args):  # quiet
        pass

    def _file(self):
        path = os.path.realpath(os.path.join(self.root, self.path.split("?")[0].lstrip("/")))
        if not path.startswith(os.path.realpath(self.root)) or not os.path.isfile(path):
            return None, None
        return path, os.stat(path)

    def _headers(self, st):
        self.send_header("ETag", f'"{st.st_mtime_ns:x}-{st.st_size:x}"')
        self.send_header("Last-Modified", self.date_time_string(int(st.st_mtime)))
        self.send_header("Accept-Ranges", "bytes")

    def _not_found(self):
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self):
        path, st = self._file()
        if path is None:
            return self._not_found()
        self.send_response(200)
        self._headers(st)
        self.send_header("Content-Length", str(st.st_size))
        self.end_headers()

    def do_GET(self):
        path, st = self._file()
        if path is None:
            return self._not_found()
        size = st.st_size
        start, end, status = 0, size - 1, 200
        header = self.headers.get("Range")
        if header:
            m = RANGE.match(header.strip())
            if not m or (m.group(1) == "" and m.group(2) == ""):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if m.group(1) == "":  # suffix: the last N bytes
                start = max(0, size - int(m.group(2)))
            else:
                start = int(m.group(1))
                if m.group(2) != "":
                    end = min(int(m.group(2)), size - 1)
            if start >= size or start > end:
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206
        length = end - start + 1
        self.send_response(status)
        self._headers(st)
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(length))
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(start)
            left = length
            while left > 0:
                chunk = f.read(min(left, 1 << 20))
                if not chunk:
                    break
                self.wfile.write(chunk)
                left -= len(chunk)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()
    Handler.root = args.dir
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
