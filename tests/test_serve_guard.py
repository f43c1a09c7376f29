"""The served app bounds its connections: slow-header clients are cut at the header deadline and
connections beyond the cap are closed at once, so they cannot exhaust the process's file descriptors
(measured on loopback with a real `paperatlas serve`: its open descriptors from /proc)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from paperatlas_lab.bench.http import start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent
N_SLOW = 300  # slow-header connections: far over the cap, far under the machine's descriptor limit
CAP = 40
DEADLINE = 2.0
ENV = {
    **os.environ,
    "PAPERATLAS_EMBEDDER": "hashing",
    "PAPERATLAS_SERVE_MAX_CONNECTIONS": str(CAP),
    "PAPERATLAS_SERVE_HEADER_TIMEOUT": str(DEADLINE),
}

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts descriptors in /proc")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def closed_by_server(s: socket.socket) -> bool:
    s.settimeout(0.05)
    try:
        return s.recv(1) == b""
    except (TimeoutError, BlockingIOError):
        return False
    except OSError:  # reset: closed too
        return True


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = tmp_path_factory.mktemp("guard") / "lib.db"
    env = ENV
    subprocess.run(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "ingest", str(ROOT / "examples" / "neurips-2026.txt")],
        env=env,
        check=True,
        capture_output=True,
    )
    proc, port = start_server(str(db), env=env, cwd=str(ROOT), timeout=90)
    try:
        yield proc, port
    finally:
        stop_server(proc)


def start_mcp(db: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "paperatlas", "--db", str(db), "mcp", "--http", str(port), "--read-only"]
    proc = subprocess.Popen(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, port
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the MCP HTTP server did not start"
            time.sleep(0.2)


def test_the_mcp_http_server_is_guarded_too(served):
    proc, port = served
    mcp, mport = start_mcp(Path(proc.args[proc.args.index("--db") + 1]), ENV)
    try:
        time.sleep(1)  # its first connection (the start-up probe) is gone
        slow_header_attack(mcp, mport, "/mcp")
    finally:
        mcp.terminate()
        mcp.wait(10)


def test_slow_header_connections_are_capped_then_cut(served):
    proc, port = served
    with httpx.Client(timeout=60) as c:  # warm: the first page loads what the server keeps
        assert c.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
    slow_header_attack(proc, port, "/healthz")


def slow_header_attack(proc: subprocess.Popen, port: int, path: str) -> None:
    base = open_fds(proc.pid)
    slow = []
    try:
        for _ in range(N_SLOW):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # and never the end of the headers
            slow.append(s)
        time.sleep(0.5)
        held = open_fds(proc.pid) - base
        print(f"\n{path}: slow-header connections: {N_SLOW}; server descriptors held: {held} (cap {CAP})")
        assert held <= CAP + 5, held  # without the cap: one descriptor per connection, N_SLOW of them
        deadline = time.monotonic() + DEADLINE + 10
        while time.monotonic() < deadline and not all(closed_by_server(s) for s in slow):
            time.sleep(0.2)
        assert all(closed_by_server(s) for s in slow)  # the ones kept were cut at the header deadline
        assert open_fds(proc.pid) - base <= 2
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:  # and the server answers again
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
            assert s.recv(12).startswith(b"HTTP/1.1 ")
    finally:
        for s in slow:
            s.close()


def test_a_keep_alive_connection_serves_many_requests_within_the_deadline(served):
    _, port = served
    with httpx.Client(timeout=60) as c:
        for _ in range(3):
            assert c.get(f"http://127.0.0.1:{port}/healthz").status_code == 200
            time.sleep(DEADLINE / 4)
