"""`paperatlas bench http`: concurrent clients against a real `paperatlas serve` on loopback.

Prints requests/s and p50/p90/p99 latency for /search.json beside two baselines measured
in the same run: /healthz on the same server (the HTTP stack alone) and Library.search
called in-process (the search alone, no HTTP). Every loop is bounded in time and count,
and only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlencode

MAX_REQUESTS = 1_000_000  # a hard cap besides the time limit


@dataclass
class Result:
    name: str
    clients: int
    seconds: float
    requests: int = 0
    errors: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    server_cpu_ms: float | None = None  # CPU time the server process spent, per request
    client_cpu_ms: float | None = None  # CPU time of this (client) process, per request
    latencies_ms: list[float] = field(default_factory=list, repr=False)

    def summary(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ms)

        def pct(p: float) -> float:
            return round(lat[min(len(lat) - 1, int(p / 100 * len(lat)))], 2) if lat else float("nan")

        d = {k: v for k, v in asdict(self).items() if k != "latencies_ms"}
        for k in ("server_cpu_ms", "client_cpu_ms"):
            d[k] = round(d[k], 2) if d[k] is not None else None
        d.update(
            rps=round(self.requests / self.seconds, 1) if self.seconds else 0.0,
            p50_ms=pct(50),
            p90_ms=pct(90),
            p99_ms=pct(99),
            max_ms=round(lat[-1], 2) if lat else float("nan"),
            mean_ms=round(statistics.fmean(lat), 2) if lat else float("nan"),
        )
        d["seconds"] = round(self.seconds, 2)
        return d


def make_queries(titles: list[str], n: int, seed: int) -> list[str]:
    """Realistic short queries: a 2-4 word span of a random title (distinct, so caches rarely help)."""
    rng = random.Random(seed)
    words = [re.findall(r"[A-Za-z][A-Za-z0-9-]+", t) for t in titles]
    words = [w for w in words if len(w) >= 2]
    out: list[str] = []
    seen: set[str] = set()
    tries = 0
    while len(out) < n and tries < n * 20:
        tries += 1
        w = rng.choice(words)
        k = rng.randint(2, min(4, len(w)))
        s = rng.randint(0, len(w) - k)
        q = " ".join(w[s : s + k]).lower()
        if q not in seen:
            seen.add(q)
            out.append(q)
    return out


# -- a minimal keep-alive HTTP/1.1 client (httpx would cost more CPU than the server) ---------
async def _request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str) -> int:
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = 0
    chunked = False
    for line in lines[1:]:
        k, _, v = line.partition(":")
        k = k.strip().lower()
        if k == "content-length":
            length = int(v)
        elif k == "transfer-encoding" and "chunked" in v.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status


def _stat(pid: int | str) -> list[str]:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _proc_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process and its children (`--workers`); Linux /proc, else None."""
    try:
        pids = {pid}
        for p in os.listdir("/proc"):
            if p.isdigit():
                try:
                    if int(_stat(p)[1]) == pid:
                        pids.add(int(p))
                except (OSError, IndexError, ValueError):
                    continue
        ticks = 0
        for p in pids:
            try:
                fields = _stat(p)
                ticks += int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                continue
        return ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None


async def _load(
    port: int, name: str, paths: list[str], clients: int, seconds: float, server_pid: int | None = None
) -> Result:
    res = Result(name, clients, seconds)
    s0 = _proc_cpu_seconds(server_pid) if server_pid else None
    c0 = time.process_time()
    deadline = time.perf_counter() + seconds
    counter = iter(range(MAX_REQUESTS))

    async def client(i: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            j = i
            while time.perf_counter() < deadline and next(counter, None) is not None:
                path = paths[j % len(paths)]
                j += clients
                t0 = time.perf_counter()
                try:
                    status = await _request(reader, writer, path)
                except (asyncio.IncompleteReadError, ConnectionError):
                    res.errors += 1
                    writer.close()
                    reader, writer = await asyncio.open_connection("127.0.0.1", port)
                    continue
                res.latencies_ms.append((time.perf_counter() - t0) * 1000)
                res.requests += 1
                res.statuses[status] = res.statuses.get(status, 0) + 1
                if status != 200:
                    res.errors += 1
        finally:
            writer.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(clients)))
    res.seconds = time.perf_counter() - t0
    if res.requests:
        res.client_cpu_ms = (time.process_time() - c0) * 1000 / res.requests
        s1 = _proc_cpu_seconds(server_pid) if server_pid else None
        if s0 is not None and s1 is not None:
            res.server_cpu_ms = (s1 - s0) * 1000 / res.requests
    return res


def _in_process(db: str, queries: list[str], mode: str, per_page: int, seconds: float) -> Result:
    """The same searches through Library.search, one after another, no HTTP."""
    from paperatlas.library import Library
    from paperatlas.web.serve import tune_for_serving

    tune_for_serving()  # the server's settings, so the two measure the same search
    res = Result("Library.search in-process (1 thread)", 1, seconds)
    with Library(db) as lib:
        lib.search(queries[-1], mode, per_page)  # build indexes, load the model
        deadline = time.perf_counter() + seconds
        t_start = time.perf_counter()
        c_start = time.process_time()
        for q in queries:
            if time.perf_counter() >= deadline:
                break
            t0 = time.perf_counter()
            lib.search(q, mode, per_page)
            res.latencies_ms.append((time.perf_counter() - t0) * 1000)
            res.requests += 1
        res.seconds = time.perf_counter() - t_start
        res.server_cpu_ms = (time.process_time() - c_start) * 1000 / max(1, res.requests)
    return res


def start_server(
    db: str,
    *serve_args: str,
    host: str | None = "127.0.0.1",
    env: dict[str, str] | None = None,
    cwd: str | None = None,
    timeout: float = 120.0,
) -> tuple[subprocess.Popen[str], int]:
    """`paperatlas --db DB serve --port 0 SERVE_ARGS...`: the process and its port, once it prints
    a 127.0.0.1 URL (benchmarks and the browser tests both start servers this way). `host=None`
    leaves --host to serve's default, which must then be loopback for the server to count as up."""
    where = ["--host", host] if host is not None else []
    cmd = [sys.executable, "-m", "paperatlas", "--db", db, "serve", *where, "--port", "0", *serve_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd)
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        m = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
        if m:
            return proc, int(m.group(1))
    proc.kill()
    raise RuntimeError(f"paperatlas serve did not start: {proc.stdout.read() if proc.stdout else ''}")


def stop_server(proc: subprocess.Popen[str]) -> None:
    """Stop a server from `start_server`: terminate, and kill it if it has not exited in 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _wait_idle(pid: int, limit: float = 180.0, window: float = 1.0) -> float:
    """Wait until the server (and its workers) stop using CPU: `serve` warms its indexes and
    builds the recommendation features in the background after start-up (~10 s of CPU per
    worker at 8k papers), which would otherwise be measured as search cost. Returns the wait."""
    t0 = time.monotonic()
    last = _proc_cpu_seconds(pid)
    while last is not None and time.monotonic() - t0 < limit:
        time.sleep(window)
        now = _proc_cpu_seconds(pid)
        if now is None or now - last < 0.05 * window:
            break
        last = now
    return time.monotonic() - t0


def bench_http(
    db: str,
    clients: int = 8,
    seconds: float = 10.0,
    mode: str = "hybrid",
    per_page: int = 10,
    n_queries: int = 20000,
    seed: int = 0,
    workers: int = 1,
) -> dict[str, Any]:
    """Run the three measurements; returns their summaries (and prints nothing)."""
    from paperatlas.library import Library

    # other work on the machine skews every figure; say how busy it was
    load_before = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    with Library(db) as lib:
        titles = [p.title for p in lib.papers()]
        papers = lib.count()
    queries = make_queries(titles, n_queries, seed)
    search_paths = ["/search.json?" + urlencode({"q": q, "mode": mode, "per_page": per_page}) for q in queries]
    base = _in_process(db, queries, mode, per_page, seconds)
    proc, port = start_server(db, "--read-only", "--workers", str(workers))
    try:
        warmed_s = _wait_idle(proc.pid)

        async def run() -> list[Result]:
            # a warm-up, so process start, connection set-up and first-query costs are not measured
            await _load(port, "warm-up", search_paths[-400:], clients, 3.0)
            health = await _load(port, "GET /healthz (HTTP stack only)", ["/healthz"], clients, seconds, proc.pid)
            search = await _load(
                port, f"GET /search.json ({mode}, {per_page} hits)", search_paths, clients, seconds, proc.pid
            )
            return [health, search]

        # in a thread of its own: works even when the caller already runs an event loop
        box: list[list[Result]] = []
        t = threading.Thread(target=lambda: box.append(asyncio.run(run())))
        t.start()
        t.join()
        if not box:
            raise RuntimeError("the load generator failed; see the traceback above")
        health, search = box[0]
    finally:
        stop_server(proc)
    return {
        "library": {"papers": papers, "path": db},
        "cpus": os.cpu_count(),
        "server_processes": workers,
        "server_warm_up_s": round(warmed_s, 1),
        "load_average": load_before,
        "queries": f"{len(queries)} distinct 2-4 word spans of random titles (seed {seed}); "
        "each request takes the next one, so the query-embedding cache rarely helps",
        "results": [r.summary() for r in (base, health, search)],
    }
