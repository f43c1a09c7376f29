"""A hostile OpenAI-compatible endpoint on loopback: the standing attack on the language-model layer.

It answers `GET /v1/models` and `POST /v1/chat/completions` in the shape a real llama.cpp / LM Studio
server answers (a `chat.completion` object with `choices[0].message.content`, `usage` counts, and for
`stream` a text/event-stream of `chat.completion.chunk` objects ending in `data: [DONE]`; the model
listed by its GGUF file path, as llama-cpp-python's server lists a model given by `--model`; see
tests/llm/README.md for where the shape comes from), and in each `mode` breaks it the way a hostile or
broken server would:

- ok: a well-behaved answer (`text`, streamed word by word when asked);
- huge: a `content` of `size` bytes (default 4 MiB; 60 MiB in the bench);
- endless: a stream that never ends (until the client goes);
- trickle: headers, then one byte every `every` seconds, forever;
- bigcite: a citation number of 5,000 digits;
- fakeids: bracketed paper ids that were never retrieved;
- ansi: clear-screen, a window title (OSC 0), a hyperlink (OSC 8), a clipboard write (OSC 52), a bell,
  a carriage-return overwrite;
- malformed-usage / malformed-content / malformed-chunk / malformed-delta: fields of the wrong type
  (`usage: "x"`, `content: {"a": 1}`, a streamed chunk `[1, 2]`, `delta.content: 5`).

`requests` counts chat requests; `open` counts chat connections still being answered, so a test can
see that the client closed them (the server's writes fail once it has)."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode

from ports import free_port

MODEL_PATH = "/home/someone/.cache/paperatlas/models/qwen2.5-1.5b-instruct-q4_k_m.gguf"
ANSI = (
    "\x1b[2J\x1b[H\x1b]0;owned\x07Low-rank adapters \x1b]8;;http://evil.example/\x1b\\cut cost\x1b]8;;\x1b\\ "
    "\x1b]52;c;cm0gLXJmIH4=\x07\x07by 90% [1].\rOVERWRITTEN"
)
MODES = (
    "ok",
    "huge",
    "endless",
    "trickle",
    "bigcite",
    "fakeids",
    "ansi",
    "malformed-usage",
    "malformed-content",
    "malformed-chunk",
    "malformed-delta",
)


def completion(content: Any, usage: Any = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-6f1e0c2b",
        "object": "chat.completion",
        "created": 1733400000,
        "model": MODEL_PATH,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": usage if usage is not None else {"prompt_tokens": 212, "completion_tokens": 14, "total_tokens": 226},
    }


def chunk(content: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-6f1e0c2b",
        "object": "chat.completion.chunk",
        "created": 1733400000,
        "model": MODEL_PATH,
        "choices": [{"index": 0, "delta": {"content": content}, "logprobs": None, "finish_reason": None}],
    }


class HostileEndpoint:
    """`HostileEndpoint(mode).start()`; `.url` is its API base; `.stop()` ends it."""

    def __init__(self, mode: str = "ok", text: str = "Low-rank adapters cut the cost of fine-tuning [1].") -> None:
        assert mode in MODES, mode
        self.mode = mode
        self.text = text
        self.size = 4 * 1024 * 1024
        self.every = 0.5
        self.requests = 0
        self.open = 0
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def start(self) -> HostileEndpoint:
        ep = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                if self.path.rstrip("/").endswith("/models"):
                    data = {"object": "list", "data": [{"id": MODEL_PATH, "object": "model", "owned_by": "me"}]}
                    self._send(200, json.dumps(data).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:  # noqa: N802
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                with ep._lock:
                    ep.requests += 1
                    ep.open += 1
                    ep.bodies.append(body)
                try:
                    self._answer(bool(body.get("stream")))
                except OSError:
                    pass  # the client closed the connection: what a cancelled request looks like here
                finally:
                    with ep._lock:
                        ep.open -= 1

            def _events(self, pieces: Any, pause: float = 0.0) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for p in pieces:
                    data = f"data: {json.dumps(p)}\n\n".encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                    if pause:
                        time.sleep(pause)
                end = b"data: [DONE]\n\n"
                self.wfile.write(f"{len(end):x}\r\n".encode() + end + b"\r\n0\r\n\r\n")

            def _answer(self, stream: bool) -> None:
                mode = ep.mode
                if mode == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "1000000")
                    self.end_headers()
                    while True:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(ep.every)
                if mode == "endless":
                    piece = "and so on, "

                    def forever() -> Any:
                        while True:
                            yield chunk(piece)

                    self._events(forever(), pause=0.001)
                    return
                text: Any = {
                    "bigcite": "Adapters are cheap [" + "9" * 5000 + "] and [1].",
                    "fakeids": "Adapters are cheap [1], see also [2106.00001] and [h12abcd99ef] and [sic].",
                    "ansi": ANSI,
                    "huge": "x" * ep.size,
                    "malformed-content": {"a": 1},
                }.get(mode, ep.text)
                if stream and mode == "malformed-chunk":
                    self._events([chunk("Adapters"), [1, 2]])
                    return
                if stream and mode == "malformed-delta":
                    self._events([chunk("Adapters"), chunk(5)])
                    return
                if stream and isinstance(text, str):
                    words = text.split(" ")
                    self._events([chunk(w + (" " if i < len(words) - 1 else "")) for i, w in enumerate(words)])
                    return
                usage = "x" if mode == "malformed-usage" else None
                self._send(200, json.dumps(completion(text, usage)).encode())

        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class WebServer:
    """paperatlas's web app under uvicorn on a free loopback port, as `serve` runs it."""

    def __init__(self, lib: Any) -> None:
        import uvicorn

        from paperatlas.web import create_app

        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        cfg = uvicorn.Config(create_app(lib, owner_signin=True), host="127.0.0.1", port=self.port, log_level="error")
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.05)
        self.csrf = self._csrf()

    def _csrf(self) -> str:
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request("GET", "/")
        r = c.getresponse()
        r.read()
        cookie = next(v for k, v in r.getheaders() if k.lower() == "set-cookie" and v.startswith("pa_csrf="))
        c.close()
        return cookie.split(";")[0].split("=", 1)[1]

    def post(
        self,
        path: str,
        form: dict[str, str],
        headers: dict[str, str] | None = None,
        timeout: float = 120,
        method: str = "POST",
    ) -> tuple[int, bytes]:
        """The status and body of a form request (`method` GET: the form as the query string)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        body = urlencode({**form, "csrf": self.csrf})
        h = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"pa_csrf={self.csrf}",
            "Accept": "application/json",
            **(headers or {}),
        }
        # the whole answer within `timeout` (a stream that never ends keeps every single read short)
        gave_up = threading.Event()

        def give_up() -> None:
            gave_up.set()
            if c.sock is not None:
                try:
                    c.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        timer = threading.Timer(timeout, give_up)
        timer.start()
        try:
            if method == "GET":
                c.request("GET", f"{path}?{body}", headers=h)
            else:
                c.request("POST", path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            if gave_up.is_set():
                raise TimeoutError(f"no whole answer within {timeout} s") from None
            raise
        finally:
            timer.cancel()
            c.close()
        if gave_up.is_set():
            raise TimeoutError(f"no whole answer within {timeout} s")
        return r.status, data

    def abandon(self, path: str, form: dict[str, str], after: float, method: str = "POST") -> None:
        """Send the request, wait `after` seconds, then close the connection without reading."""
        s = socket.create_connection(("127.0.0.1", self.port))
        body = urlencode({**form, "csrf": self.csrf}).encode()
        if method == "GET":
            s.sendall(f"GET {path}?{body.decode()} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode())
        else:
            s.sendall(
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nCookie: pa_csrf={self.csrf}\r\n"
                f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
        time.sleep(after)
        s.close()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
