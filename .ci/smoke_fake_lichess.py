#!/usr/bin/env python3
"""A minimal lichess stand-in for the Docker smoke test (.ci/docker-smoke.sh).

It answers the start-up calls of `atomic-bot lichess` (token test, account, ongoing games) and
keeps the event stream open with a keep-alive newline every second, like lichess does every 6-7
seconds, so that the bot reaches its idle, connected state and writes its heartbeat. Standard
library only; binds 127.0.0.1 on a free port and writes the port to the file given as argv[1].
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ACCOUNT = {
    "id": "smokebot",
    "username": "SmokeBot",
    "title": "BOT",
    "perfs": {"atomic": {"games": 0, "rating": 1500, "rd": 350, "prog": 0, "prov": True}},
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 (signature from the base class)
        sys.stderr.write("fake-lichess: " + (format % args) + "\n")

    def send_json(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def stream_keepalives(self):
        # No Content-Length: the body ends when the connection closes, as with lichess streams.
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            while True:
                self.wfile.write(b"\n")
                self.wfile.flush()
                time.sleep(1)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/api/account":
            self.send_json(200, ACCOUNT)
        elif path == "/api/account/playing":
            self.send_json(200, {"nowPlaying": [], "nbMyTurn": 0})
        elif path == "/api/stream/event" or path.startswith("/api/bot/game/stream/"):
            self.stream_keepalives()
        elif path == "/api/bot/online":
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_json(404, {"error": "Not found."})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode(errors="replace") if length else ""
        path = self.path.split("?", 1)[0]
        if path == "/api/token/test":
            tokens = [t.strip() for t in body.split(",") if t.strip()]
            self.send_json(200, {t: {"userId": "smokebot", "scopes": "bot:play", "expires": None} for t in tokens})
        else:
            self.send_json(200, {"ok": True})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(sys.argv[1], "w", encoding="ascii") as f:
        f.write(str(server.server_address[1]))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
