"""`paperatlas bench http` end to end on a tiny library (a second per measurement)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import EXAMPLES

from paperatlas import Library
from paperatlas_lab.bench.http import bench_http, make_queries


def test_make_queries_are_distinct_title_spans() -> None:
    titles = ["Low-rank adapters for protein language models", "Diffusion models for protein design", "x"]
    qs = make_queries(titles, 30, seed=1)
    assert len(qs) == len(set(qs)) and qs
    assert all(2 <= len(q.split()) <= 4 and any(q in t.lower() for t in titles) for q in qs)
    assert make_queries(titles, 30, seed=1) == qs


@pytest.mark.parametrize("workers", [1, 2])  # 2: `serve --workers 2`, one process per core
def test_bench_http_measures_search_and_baselines(tmp_path: Path, workers: int) -> None:
    db = tmp_path / "bench.db"
    with Library(db, embedder="hashing") as lib:
        lib.ingest(EXAMPLES)
        lib.embed()
    out = bench_http(str(db), clients=2, seconds=1.0, n_queries=200, workers=workers)
    names = [r["name"] for r in out["results"]]
    assert names[0].startswith("Library.search") and "healthz" in names[1] and "search.json" in names[2]
    for r in out["results"]:
        assert r["requests"] > 0 and r["errors"] == 0, r
        assert r["p50_ms"] <= r["p99_ms"] <= r["max_ms"]
    assert out["library"]["papers"] == 29 and out["server_processes"] == workers
    assert out["results"][2]["server_cpu_ms"] > 0  # the server's (and its workers') CPU was measured


def test_serve_workers_refuse_a_port_already_served(tmp_path: Path) -> None:
    """`serve --workers N` shares its port between its own workers only (SO_REUSEPORT would
    otherwise let a second server join the port silently)."""
    import subprocess
    import sys
    import urllib.request

    from paperatlas_lab.bench.http import start_server

    db = tmp_path / "w.db"
    with Library(db, embedder="hashing") as lib:
        lib.ingest(EXAMPLES)
    proc, port = start_server(str(db), "--read-only", "--workers", "2")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as r:
            assert r.status == 200
        second = subprocess.run(
            [sys.executable, "-m", "paperatlas", "--db", str(db), "serve", "--workers", "2", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1 and "already in use" in second.stderr
    finally:
        proc.terminate()
        proc.wait(20)
