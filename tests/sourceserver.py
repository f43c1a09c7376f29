"""A loopback HTTP server that plays recorded responses of paper sources and injects faults.

Routes map a path to a recorded body (or to a function of the query string, for paged APIs).
Faults are queued per path and used up one request at a time:

    "429:2"      429 Too Many Requests with Retry-After: 2
    "503"        503 Service Unavailable (no Retry-After);  "503:1" with Retry-After: 1
    "cut"        200 with the full Content-Length, but only half the body, then the connection closes
    "slow:S"     wait S seconds before answering (past the client's read timeout when S is larger)
    "malformed"  200 with a body that is not what the service sends (half a JSON document, HTML)
    "reset"      close the connection without any answer

Attacks on the client (each ends when the client hangs up, or after `ATTACK_SECONDS`):

    "huge:N"             200 with Content-Length N, then zeros as fast as the client reads
    "endless"            200, chunked, 64 KiB chunks that never end
    "trickle-headers:S"  the status line and headers one byte every S seconds
    "trickle-body:S"     the headers at once (a Content-Length), then the body one byte every S seconds
    "trickle-chunks:S"   chunked, one one-byte chunk every S seconds, never the last chunk
    "redirect:URL"       302 to URL (another port, another scheme: what a hostile source may answer)
    "same"               the answer of the previous request to this path again (a page that repeats)
"""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

ATTACK_SECONDS = 60.0

Route = bytes | Callable[[dict[str, list[str]]], "tuple[int, dict[str, str], bytes] | bytes"]


@dataclass
class Seen:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    status: int = 0
    started: float = 0.0  # time.monotonic() when the request arrived and when its answer was sent
    ended: float = 0.0


@dataclass
class SourceServer:
    routes: dict[str, Route] = field(default_factory=dict)
    faults: dict[str, list[str]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    content_type: dict[str, str] = field(default_factory=dict)
    last_body: dict[str, bytes] = field(default_factory=dict)
    latency: float = 0.0  # seconds every answer waits before it starts (a distant server)
    in_flight: int = 0
    max_in_flight: int = 0  # the most requests it answered at once

    def start(self) -> SourceServer:
        server = self
        self._count = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                with server._count:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                parts = urlsplit(self.path)
                rec = Seen(parts.path, parse_qs(parts.query), dict(self.headers.items()), started=time.monotonic())
                server.seen.append(rec)
                try:
                    if server.latency:
                        time.sleep(server.latency)
                    self._get(parts, rec)
                finally:
                    rec.ended = time.monotonic()
                    with server._count:
                        server.in_flight -= 1

            def _get(self, parts: Any, rec: Seen) -> None:
                queue = server.faults.get(parts.path) or server.faults.get("*") or []
                fault = queue.pop(0) if queue else ""
                name, _, arg = fault.partition(":")
                if name == "reset":
                    rec.status = -1
                    self.close_connection = True
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                if name == "slow":
                    time.sleep(float(arg or 5))
                if name in ("429", "503"):
                    headers = {"Retry-After": arg} if arg else {}
                    return self._send(int(name), headers, b"busy", rec)
                if name in ("huge", "endless", "trickle-headers", "trickle-body", "trickle-chunks"):
                    return self._attack(name, arg, rec)
                if name == "redirect":
                    return self._send(302, {"Location": arg}, b"moved", rec)
                if name == "same" and parts.path in server.last_body:
                    return self._send(200, {}, server.last_body[parts.path], rec)
                route = server.routes.get(parts.path)
                if route is None:
                    return self._send(404, {}, b"not found", rec)
                status, headers, body = 200, {}, route
                if callable(route):
                    out = route(rec.query)
                    status, headers, body = out if isinstance(out, tuple) else (200, {}, out)
                etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                headers = {"ETag": etag, **headers}
                if status == 200 and self.headers.get("If-None-Match") == etag:
                    return self._send(304, {"ETag": etag}, b"", rec)
                if name == "malformed":
                    body = body[: len(body) // 3] or b"<html>oops</html>"
                if name == "cut":
                    rec.status = 200
                    self.send_response(200)
                    self.send_header("Content-Type", server.content_type.get(parts.path, "application/json"))
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                if status == 200:
                    server.last_body[parts.path] = body
                self._send(status, headers, body, rec)

            def _attack(self, name: str, arg: str, rec: Seen) -> None:
                rec.status = 200
                self.close_connection = True
                end = time.monotonic() + ATTACK_SECONDS
                gap = float(arg or 1)
                try:
                    if name == "trickle-headers":
                        for b in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 10_000:
                            if time.monotonic() > end:
                                return
                            self.wfile.write(bytes([b]))
                            self.wfile.flush()
                            time.sleep(gap)
                        return
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    if name == "huge":
                        self.send_header("Content-Length", arg)
                    elif name == "trickle-body":
                        self.send_header("Content-Length", "100000")
                    else:
                        self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    self.wfile.flush()
                    block = b"0" * 65536
                    sent = 0
                    while time.monotonic() < end:
                        if name == "huge":
                            if sent >= int(arg):
                                return
                            piece = block[: int(arg) - sent]
                            self.wfile.write(piece)
                            sent += len(piece)
                        elif name == "endless":
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                        elif name == "trickle-body":
                            self.wfile.write(b"[")
                            self.wfile.flush()
                            time.sleep(gap)
                        else:
                            self.wfile.write(b"1\r\n[\r\n")
                            self.wfile.flush()
                            time.sleep(gap)
                except OSError:  # the client hung up: the attack is over
                    return

            def _send(self, status: int, headers: dict[str, str], body: bytes, rec: Seen) -> None:
                rec.status = status
                self.send_response(status)
                self.send_header("Content-Type", server.content_type.get(rec.path, "application/json"))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if body:
                    self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client that gave up: expected here
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def hits(self, path: str) -> list[Seen]:
        return [s for s in self.seen if s.path == path]


def slow_smtp(gap: float) -> tuple[tuple[socket.socket, threading.Event], int]:
    """An SMTP server that greets one byte every `gap` seconds (each recv well within any read
    timeout, the whole greeting never). Returns ((listener, stop event), port); set the event and
    close the listener to end it."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            for b in b"220 slow.example ESMTP " + b"x" * 100_000:
                if stop.is_set():
                    return
                try:
                    conn.sendall(bytes([b]))
                except OSError:
                    return
                stop.wait(gap)

    threading.Thread(target=serve, daemon=True).start()
    return (listener, stop), listener.getsockname()[1]
