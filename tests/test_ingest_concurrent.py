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
    return "".join(json.dumps({"id": f"c/{i}", "title": f"Paper number {i} on topic {i % 17}",
                               "abstract": f"We study problem {i} with method {i % 5} and report result {i * 7}.",
                               "venue": "ConcConf", "year": 2026}) + "\n" for i in range(lo, hi))


def _start(db: Path, path: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PAPERATLAS_INGEST_BATCH": "100", "PAPERATLAS_EMBEDDER": "hashing"}
    return subprocess.Popen([sys.executable, "-m", "paperatlas", "--db", str(db), "ingest", "--json", *extra,
                             str(path)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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
