"""A real OpenAI-compatible model server on loopback for the LLM tests: llama-cpp-python's server
(from .venv-llm, installed by .ci/install-llm) running the Gemma 3 270M fixture, and a forwarding
proxy in front of it that counts requests and injects faults.

The fixture model is a base model (it loops and echoes): the tests check the protocol, the cache,
citations and errors, never the quality of its text (`paperatlas bench llm` measures that with
the 1.5B model)."""

from __future__ import annotations

import http.client
import os
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ports import free_port

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("PAPERATLAS_CACHE") or Path.home() / ".cache" / "paperatlas")
FIXTURE_MODEL = CACHE / "models" / "gemma-3-270m-q4_k_m.gguf"


def server_python() -> Path | None:
    """The python that has llama_cpp.server ($PAPERATLAS_LLM_PYTHON, else the clone's .venv-llm)."""
    env = os.environ.get("PAPERATLAS_LLM_PYTHON")
    cand = Path(env) if env else ROOT / ".venv-llm" / "bin" / "python"
    return cand if cand.exists() else None


def missing() -> str | None:
    """Why the server cannot start here (None: it can)."""
    if server_python() is None:
        return "no llama.cpp server (.venv-llm): run .ci/install-llm"
    if not FIXTURE_MODEL.exists():
        return f"no fixture model at {FIXTURE_MODEL}: run .ci/install-llm"
    return None


class LlamaServer:
    """`python -m llama_cpp.server` on a free loopback port, stopped by stop()."""

    # The fixture is a base model: under its own (Gemma) chat template it ends every turn at once (an
    # empty answer); the plain alpaca layout ("### Instruction: ... ### Response:") makes it write text.
    def __init__(
        self, model: Path = FIXTURE_MODEL, n_ctx: int = 2048, threads: int = 2, chat_format: str = "alpaca"
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = open(os.devnull, "w")  # noqa: SIM115 - closed in stop()
        py = server_python()
        assert py is not None
        self.proc = subprocess.Popen(
            [
                str(py),
                "-m",
                "llama_cpp.server",
                "--model",
                str(model),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(n_ctx),
                "--n_threads",
                str(threads),
                "--chat_format",
                chat_format,
                "--verbose",
                "False",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited with {self.proc.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("llama.cpp server did not answer within 120 s")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@dataclass
class Proxy:
    """Forwards every request to `upstream` (host:port) and counts them; `faults` is a queue of
    what the next requests get instead: "503", "500", "reset" (connection closed, no answer),
    "malformed" (200 with half a JSON document), "slow:S" (S seconds before forwarding)."""

    upstream_port: int
    faults: list[str] = field(default_factory=list)
    seen: list[dict[str, Any]] = field(default_factory=list)

    def start(self) -> Proxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                proxy.seen.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body}
                )
                fault = proxy.faults.pop(0) if proxy.faults else ""
                name, _, arg = fault.partition(":")
                if name == "reset":
                    self.close_connection = True
                    self.connection.close()
                    return
                if name in ("503", "500", "401", "404"):
                    data = b'{"error": {"message": "injected fault"}}'
                    self.send_response(int(name))
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if name == "malformed":
                    data = b'{"choices": [{"mess'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if name == "slow":
                    time.sleep(float(arg))
                up = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=300)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                up.request(self.command, self.path, body=body or None, headers=headers)
                r = up.getresponse()
                self.send_response(r.status)
                chunked = r.getheader("Transfer-Encoding", "").lower() == "chunked" or not r.getheader("Content-Length")
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(k, v)
                if chunked:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    while piece := r.read1(65536):
                        self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    data = r.read()
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                up.close()

            do_GET = do_POST = _forward

        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        return [s for s in self.seen if s["path"].endswith("/chat/completions")]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
