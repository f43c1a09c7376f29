"""Stated bounds instead of silent ones: search result counts, the shared vector cache (issue 16 #8)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from paperatlas.cli import cli
from paperatlas.store.vector_cache import VectorCache, default_max_bytes


def test_search_limit_over_the_cap_is_an_error(examples_library, runner: CliRunner) -> None:
    db = examples_library.path
    r = runner.invoke(cli, ["--db", db, "search", "user simulators", "--mode", "keyword", "--limit", "1000000000"])
    assert r.exit_code == 2, r.output
    assert "1000" in r.output and "--limit" in r.output
    r = runner.invoke(cli, ["--db", db, "search", "user simulators", "--mode", "keyword", "--limit", "1000"])
    assert r.exit_code == 0, r.output


def _vec(i: int, dims: int = 32) -> np.ndarray:
    return np.full(dims, i, dtype=np.float32)


def _rows(path: Path) -> int:
    c = sqlite3.connect(path)
    try:
        return c.execute("SELECT count(*) FROM vec").fetchone()[0]
    finally:
        c.close()


def test_vector_cache_evicts_the_least_recently_used(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    per_entry = 32 * 4 + VectorCache.ENTRY_OVERHEAD
    cache = VectorCache(path, max_bytes=100 * per_entry)  # room for 100 vectors of 32 floats
    cache.put_many("m", [(f"h{i}", _vec(i)) for i in range(50)])
    for start in range(50, 300, 50):
        assert len(cache.get_many("m", ["h0", "h1", "h2"])) == 3  # kept warm: used after every write
        cache.put_many("m", [(f"h{i}", _vec(i)) for i in range(start, start + 50)])
    assert _rows(path) <= 100
    got = cache.get_many("m", ["h0", "h1", "h2", "h3", "h299"])
    assert set(got) == {"h0", "h1", "h2", "h299"}  # h3 was never read again, so it went first
    assert float(got["h299"][0]) == 299.0
    cache.close()


def test_vector_cache_bound_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PAPERATLAS_VECTOR_CACHE_MB", "3")
    assert default_max_bytes() == 3 * 1024 * 1024
    assert VectorCache(tmp_path / "v.sqlite").max_bytes == 3 * 1024 * 1024
    monkeypatch.setenv("PAPERATLAS_VECTOR_CACHE_MB", "0")  # 0: no bound
    assert default_max_bytes() is None


def test_an_old_cache_file_gains_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE vec (model TEXT, hash TEXT, v BLOB, PRIMARY KEY (model, hash)) WITHOUT ROWID")
    c.executemany("INSERT INTO vec VALUES ('m', ?, ?)", [(f"o{i}", _vec(i).tobytes()) for i in range(80)])
    c.commit()
    c.close()
    cache = VectorCache(path, max_bytes=50 * (32 * 4 + VectorCache.ENTRY_OVERHEAD))
    assert len(cache.get_many("m", ["o1", "o79"])) == 2
    cache.put_many("m", [("new", _vec(1000))])
    assert _rows(path) <= 50
    assert set(cache.get_many("m", ["o1", "o79", "new"])) == {"o1", "o79", "new"}
    cache.close()
