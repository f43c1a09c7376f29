"""Nothing waits on embedding: an embed computes vectors outside the library's write lock and takes
it per batch, so ingests and likes go on while the model runs; two embeds never compute the same
vectors. Real SQLite files, a real PostgreSQL server, and real processes running the packaged model.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from paperatlas import Library
from paperatlas.embed.hashing import HashingEmbedder
from paperatlas.store.vector_cache import VectorCache

from pgserver import fresh_db_name


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "lib.db")
    return request.getfixturevalue("pg_server").url(fresh_db_name())


def _papers(tag: str, lo: int, hi: int) -> list[dict]:
    # titles no cache has seen: the model must really run
    return [
        {
            "id": f"{tag}-{i}",
            "title": f"Study {tag} {i}: {i * 7919 % 104729} sparse probes of problem {i % 13}",
            "abstract": f"We measure quantity {i * 31} of system {tag} under condition {i % 11}.",
            "venue": "EmbedConf",
            "year": 2026,
        }
        for i in range(lo, hi)
    ]


def _jsonl(path: Path, papers: list[dict]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    return path


class GatedEmbedder(HashingEmbedder):
    """The hashing embedder that waits at a gate inside `embed`, so a test holds an embed mid-model
    for as long as it needs (a double for the model's time only; everything else is real)."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate
        self.inside = threading.Event()
        self.texts = 0

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        self.inside.set()
        assert self.gate.wait(60), "the test never opened the gate"
        self.texts += len(texts)
        return super().embed(texts, batch_size)


def _finish(gate: threading.Event, threads: list[threading.Thread], *libs: Library) -> None:
    """Let every thread end before the libraries close under it (also when an assertion failed)."""
    gate.set()
    for t in threads:
        t.join(120)
    for lib in libs:
        lib.close()


def test_ingest_and_like_go_on_while_the_model_runs(url: str, tmp_path: Path) -> None:
    first = _jsonl(tmp_path / "first.jsonl", _papers("a", 0, 5))
    later = _jsonl(tmp_path / "later.jsonl", _papers("b", 0, 3))
    gate = threading.Event()
    emb = GatedEmbedder(gate)
    a, b = Library(url, embedder=emb, vector_cache=VectorCache(tmp_path / "v.sqlite")), Library(url, embedder="hashing")
    threads: list[threading.Thread] = []
    try:
        a.ingest([first])
        result: dict[str, int] = {}
        embedding = threading.Thread(target=lambda: result.update(n=a.embed()))
        threads.append(embedding)
        embedding.start()
        assert emb.inside.wait(30), "the embed never reached the model"
        ingested = threading.Event()

        def ingest_and_like() -> None:
            b.ingest([later])
            b.readers.set_feedback("me", ["a-1", "b-2"], "like")
            ingested.set()

        writer = threading.Thread(target=ingest_and_like)
        threads.append(writer)
        writer.start()
        # the embed is still inside the model: the ingest and the like must not wait for it
        assert ingested.wait(30), "the ingest waited for the embed"
        assert embedding.is_alive() and result == {}
        assert b.count() == 8 and [p.id for p in b.readers.liked("me")] == ["a-1", "b-2"]
        gate.set()
        embedding.join(60)
        writer.join(30)
        # the papers stored while the model ran are embedded too, each once
        assert result == {"n": 8} and emb.texts == 8
        assert a.store.vector_count(emb.id) == 8
    finally:
        _finish(gate, threads, a, b)


def test_two_embeds_at_once_compute_each_vector_once(url: str, tmp_path: Path) -> None:
    gate = threading.Event()
    ea, eb = GatedEmbedder(gate), GatedEmbedder(gate)
    cache = VectorCache(tmp_path / "v.sqlite")
    a, b = Library(url, embedder=ea, vector_cache=cache), Library(url, embedder=eb, vector_cache=cache)
    threads: list[threading.Thread] = []
    try:
        a.ingest([_jsonl(tmp_path / "p.jsonl", _papers("c", 0, 40))])
        counts: list[int] = []
        threads += [threading.Thread(target=lambda lib=lib: counts.append(lib.embed())) for lib in (a, b)]
        for t in threads:
            t.start()
        assert ea.inside.wait(30) or eb.inside.wait(30)
        time.sleep(0.2)  # give the second embed time to reach the model too, if it could
        gate.set()
        for t in threads:
            t.join(60)
        assert sorted(counts) == [0, 40]
        assert ea.texts + eb.texts == 40
        assert a.store.vector_count(ea.id) == 40
    finally:
        _finish(gate, threads, a, b)


def test_a_text_changed_during_the_embed_is_not_stored_with_the_old_vector(tmp_path: Path) -> None:
    """An ingest that changes a paper while its vector is being made: the stale vector is dropped
    and the next pass embeds the new text."""
    db = str(tmp_path / "lib.db")
    papers = _papers("d", 0, 4)
    gate = threading.Event()
    emb = GatedEmbedder(gate)
    a, b = Library(db, embedder=emb, vector_cache=VectorCache(tmp_path / "v.sqlite")), Library(db, embedder="hashing")
    threads: list[threading.Thread] = []
    try:
        a.ingest([_jsonl(tmp_path / "p.jsonl", papers)])
        embedding = threading.Thread(target=a.embed)
        threads.append(embedding)
        embedding.start()
        assert emb.inside.wait(30)
        papers[2]["abstract"] = "A rewritten abstract about something else entirely."
        b.ingest([_jsonl(tmp_path / "p2.jsonl", papers)])
        gate.set()
        embedding.join(60)
        assert emb.texts == 5  # four, then the changed one again
        want = HashingEmbedder().embed([b.get("d-2").text])[0]
        assert np.allclose(a.vectors(["d-2"])["d-2"], want)
    finally:
        _finish(gate, threads, a, b)


# -- real processes, the packaged model ----------------------------------------------------------------


def _cli(db: Path, *args: str) -> subprocess.Popen[str]:
    # no shared vector cache: every text goes through the model, and the machine's cache is untouched
    env = {**os.environ, "PAPERATLAS_VECTOR_CACHE": "off"}
    env.pop("PAPERATLAS_EMBEDDER", None)
    return subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", str(db), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _vectors(db: Path) -> int:
    c = sqlite3.connect(db, timeout=30)
    try:
        return c.execute("SELECT count(*) FROM vectors").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        c.close()


@pytest.mark.slow
def test_real_processes_ingest_and_like_while_embedding(tmp_path: Path) -> None:
    """`paperatlas embed` of 1,000 papers with the packaged model in one process, a second `embed` at
    the same time, and an `ingest` and a `like` in others: the ingest and the like finish while the
    embeds still run, and every paper gets its vector from exactly one of them."""
    db = tmp_path / "lib.db"
    n, m = 1000, 30
    r = _cli(db, "ingest", "--no-embed", "--json", str(_jsonl(tmp_path / "a.jsonl", _papers("r", 0, n))))
    out, err = r.communicate(timeout=300)
    assert r.returncode == 0, err
    embeds = [_cli(db, "embed"), _cli(db, "embed")]
    deadline = time.monotonic() + 600
    while _vectors(db) == 0 and time.monotonic() < deadline and all(p.poll() is None for p in embeds):
        time.sleep(0.1)  # the first batch is written: the model is loaded and running
    assert all(p.poll() is None for p in embeds), "an embed ended before the first batch was seen"
    ingest = _cli(db, "ingest", "--no-embed", "--json", str(_jsonl(tmp_path / "b.jsonl", _papers("s", 0, m))))
    out, err = ingest.communicate(timeout=600)
    assert ingest.returncode == 0, err
    assert json.loads(out)["new"] == m
    like = _cli(db, "like", "r-3", "s-4")
    _, err = like.communicate(timeout=600)
    assert like.returncode == 0, err
    # both finished while the model was still at work
    assert any(p.poll() is None for p in embeds), "the ingest and the like waited for the embed"
    done = [p.communicate(timeout=900) for p in embeds]
    assert [p.returncode for p in embeds] == [0, 0], [e for _, e in done]
    # "embedded N papers", or "nothing to embed" from the one that found the other had done them all
    embedded = [int(o.split("embedded ")[1].split()[0]) if "embedded " in o else 0 for o, _ in done]
    assert all("embedded " in o or "nothing to embed" in o for o, _ in done), [o for o, _ in done]
    assert sum(embedded) == n + m, embedded  # each paper by one process
    assert _vectors(db) == n + m
