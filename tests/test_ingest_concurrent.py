"""Concurrent ingests into one library file: real processes, real SQLite (issue 16 #6).

Ingests into one library take a write lock (waiting with a message), so two ingests of the same or of
overlapping files both finish with the right totals, and papers are embedded once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROUNDS = int(os.environ.get("PAPERATLAS_CONCURRENCY_ROUNDS", "3"))


def _papers(lo: int, hi: int) -> str:
    return "".join(
        json.dumps(
            {
                "id": f"c/{i}",
                "title": f"Paper number {i} on topic {i % 17}",
                "abstract": f"We study problem {i} with method {i % 5} and report result {i * 7}.",
                "venue": "ConcConf",
                "year": 2026,
            }
        )
        + "\n"
        for i in range(lo, hi)
    )


def _start(db: Path, path: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PAPERATLAS_INGEST_BATCH": "100", "PAPERATLAS_EMBEDDER": "hashing"}
    return subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "ingest", "--json", *extra, str(path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _both(db: Path, a: Path, b: Path, *extra: str) -> list[dict]:
    procs = [_start(db, a, *extra), _start(db, b, *extra)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        assert p.returncode == 0, stderr
        assert "Traceback" not in stderr, stderr
        out.append(json.loads(stdout))
    return out


def _count(db: Path, table: str = "papers") -> int:
    c = sqlite3.connect(db)
    try:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        c.close()


@pytest.mark.slow
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_two_ingests_of_the_same_file_both_succeed(tmp_path: Path, round_: int) -> None:
    f = tmp_path / "same.jsonl"
    f.write_text(_papers(0, 1500), encoding="utf-8")
    db = tmp_path / "lib.db"
    r1, r2 = _both(db, f, f, "--no-embed")
    assert r1["new"] + r2["new"] == 1500
    assert r1["unchanged"] + r2["unchanged"] == 1500
    assert _count(db) == 1500


def test_two_processes_creating_one_library_at_once(tmp_path: Path) -> None:
    """Both open a library that does not exist yet: switching it to WAL and its migrations race.
    Before the fix 5 of 50 such processes died ('database is locked', 'table papers_fts already exists')."""
    f = tmp_path / "few.jsonl"
    f.write_text(_papers(0, 20), encoding="utf-8")
    for i in range(8):
        r1, r2 = _both(tmp_path / f"fresh{i}.db", f, f, "--no-embed")
        assert r1["new"] + r2["new"] == 20


@pytest.mark.slow
def test_overlapping_ingests_store_the_union(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_papers(0, 1000), encoding="utf-8")
    b.write_text(_papers(500, 1500), encoding="utf-8")
    db = tmp_path / "lib.db"
    r1, r2 = _both(db, a, b, "--no-embed")
    assert r1["new"] + r2["new"] == 1500
    assert r1["unchanged"] + r2["unchanged"] == 500
    assert _count(db) == 1500


@pytest.mark.slow
def test_disjoint_ingests_embed_each_paper_once(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(_papers(0, 400), encoding="utf-8")
    b.write_text(_papers(400, 800), encoding="utf-8")
    db = tmp_path / "lib.db"
    r1, r2 = _both(db, a, b)
    assert r1["new"] + r2["new"] == 800
    assert r1["embedded"] + r2["embedded"] == 800, (r1["embedded"], r2["embedded"])
    assert _count(db, "vectors") == 800


# -- kill -9 at points of an ingest, then a re-run finishes the job ------------------------------------------
# The first 2,400 real venue papers: every kill point the whole 8,088 reach, at a third of the time.
KILL_PAPERS = 2400
KILL_POINTS = {
    "while reading": ("time", 0.3),  # before the first write
    "after the first batch": ("papers", 200),
    "half-way": ("papers", 1200),
    "near the end": ("papers", 2200),
    "while embedding": ("vectors", 500),
}


@pytest.fixture(scope="module")
def kill_input(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import gzip

    from conftest import VENUE_PAPERS, need

    out = tmp_path_factory.mktemp("kill") / "venue-head.jsonl"
    with gzip.open(need(VENUE_PAPERS), "rt", encoding="utf-8") as fh, out.open("w", encoding="utf-8") as w:
        for i, line in enumerate(fh):
            if i == KILL_PAPERS:
                break
            w.write(line)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_kill_9_then_rerun_finishes_with_every_paper(tmp_path: Path, point: str, kill_input: Path) -> None:
    import signal
    import time

    from paperatlas import Library

    path = kill_input
    db = tmp_path / "lib.db"
    env = {
        **os.environ,
        "PAPERATLAS_INGEST_BATCH": "200",
        "PAPERATLAS_EMBEDDER": "hashing",
        "PAPERATLAS_VECTOR_CACHE": "off",
    }
    cmd = [sys.executable, "-m", "paperatlas", "--db", str(db), "ingest", "--json", str(path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    what, at = KILL_POINTS[point]
    start = time.monotonic()
    while proc.poll() is None and time.monotonic() - start < 300:
        if what == "time" and time.monotonic() - start >= at:
            break
        if what != "time" and db.exists():
            try:
                if _count(db, what) >= at:
                    break
            except sqlite3.OperationalError:
                pass  # the schema is not there yet
        time.sleep(0.005)
    assert proc.poll() is None, f"the ingest ended before the kill point ({point})"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    try:
        before = _count(db)
    except sqlite3.OperationalError:
        before = 0  # killed before the schema was made
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    with Library(db) as lib:
        assert lib.store.execute_script_for_tests("PRAGMA integrity_check")[0][0] == "ok"
        assert lib.count() == KILL_PAPERS
        assert lib.store.execute_script_for_tests("SELECT count(*) FROM papers_fts")[0][0] == KILL_PAPERS
        assert lib.store.vector_count(lib.embedder.id) == KILL_PAPERS
    assert report["new"] == KILL_PAPERS - before
    if os.environ.get("PAPERATLAS_KILL_REPORT"):
        with open(os.environ["PAPERATLAS_KILL_REPORT"], "a", encoding="utf-8") as fh:
            fh.write(
                json.dumps(
                    {
                        "point": point,
                        "papers_at_kill": before,
                        "rerun_new": report["new"],
                        "rerun_unchanged": report["unchanged"],
                        "rerun_embedded": report["embedded"],
                    }
                )
                + "\n"
            )
