"""Benchmarks of scale, each against its baseline in the same run:

- `bench ray`: papers/s of embedding on 1..N local Ray workers against the raw model in this
  process (one thread and N threads), and what that means for 2.7M abstracts on N nodes;
- `bench store`: ingest, search and write latency of a PostgreSQL library against a SQLite file,
  on the same papers.
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from paperatlas import settings

ARXIV_ABSTRACTS = 2_700_000


def _texts(file: Path, n: int) -> list[str]:
    from paperatlas.models import Paper

    out: list[str] = []
    opener = gzip.open if file.suffix == ".gz" else open
    with opener(file, "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            out.append(Paper("x", r.get("title", ""), r.get("abstract", "")).text)
            if len(out) >= n:
                break
    return out


def bench_ray(file: Path, n: int, workers: list[int], nodes: list[int]) -> dict[str, Any]:
    from paperatlas.embed.base import EMBEDDERS
    from paperatlas.embed.ray_runner import connect, throughput

    texts = _texts(file, n)
    res: dict[str, Any] = {"papers": len(texts), "cpus": os.cpu_count(), "raw": {}, "ray": {}}
    for threads in sorted({1, max(workers)}):
        settings.put("embed_threads", threads)
        emb = EMBEDDERS.create("minilm")
        emb.embed(texts[:2])  # load the model before timing
        t0 = time.perf_counter()
        emb.embed(texts, batch_size=32)
        res["raw"][f"{threads}_thread"] = round(len(texts) / (time.perf_counter() - t0), 2)
    settings.put("embed_threads", None)
    ray = connect("local", max(workers))
    try:
        for w in workers:
            res["ray"][f"{w}_workers"] = round(throughput(texts, "local", w), 2)
    finally:
        ray.shutdown()
    base = res["raw"]["1_thread"]
    res["ratio_vs_raw_1_thread"] = {k: round(v / base, 2) for k, v in res["ray"].items()}
    # 2.7M abstracts: one worker per core, the measured per-worker rate, N nodes of this machine's size
    per_worker = res["ray"][f"{max(workers)}_workers"] / max(workers)
    cores = os.cpu_count() or 1
    res["arxiv_2_7m_hours"] = {
        f"{k}_nodes_x_{c}_cores": round(ARXIV_ABSTRACTS / (per_worker * c * k) / 3600, 1)
        for k in nodes
        for c in sorted({cores, 16})
    }
    res["per_worker_papers_s"] = round(per_worker, 2)
    return res


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench_store(file: Path, pg_url: str, n: int, queries: int = 30) -> dict[str, Any]:
    """The same work on a SQLite file and on the PostgreSQL database `pg_url` (which must be empty)."""
    from paperatlas.library import Library
    from paperatlas.store import redact
    from paperatlas.store.vector_cache import VectorCache

    tmp = Path(tempfile.mkdtemp(prefix="paperatlas-bench-store-"))
    src = tmp / "papers.jsonl"
    with (
        gzip.open(file, "rt", encoding="utf-8") if file.suffix == ".gz" else open(file, encoding="utf-8") as f,
        open(src, "w", encoding="utf-8") as out,
    ):
        rows = [json.loads(line) for _, line in zip(range(n), f)]
        out.writelines(json.dumps(r) + "\n" for r in rows)
    words = [r.get("title", "").split()[:3] for r in rows[:queries]]
    qs = [" ".join(w) for w in words if w]
    res: dict[str, Any] = {"papers": len(rows), "queries": len(qs)}
    with settings.temporarily("cache_dir", str(tmp / "cache")):
        for name, url in (("sqlite", str(tmp / "lib.db")), ("postgresql", pg_url)):
            # each store its own empty vector cache: the second must not read the first one's vectors
            with Library(url, embedder="hashing", vector_cache=VectorCache(tmp / f"{name}-vectors.sqlite")) as lib:
                if lib.count():
                    raise ValueError(f"{redact(url)} already holds papers: give bench store an empty database")
                r: dict[str, Any] = {}
                r["ingest_s"] = round(_timed(lambda: lib.ingest([src])), 2)
                r["ingest_papers_s"] = round(len(rows) / r["ingest_s"], 1)
                r["reingest_s"] = round(_timed(lambda: lib.ingest([src])), 2)
                r["embed_hashing_s"] = round(_timed(lib.embed), 2)
                r["first_search_s"] = round(_timed(lambda: lib.search(qs[0], mode="hybrid", limit=10)), 2)
                for mode in ("keyword", "hybrid"):
                    lat = [1000 * _timed(lambda q=q: lib.search(q, mode=mode, limit=10)) for q in qs]
                    r[f"{mode}_search_ms_median"] = round(statistics.median(lat), 2)
                ids = [p.id for p in lib.papers(limit=50)]
                lat = [1000 * _timed(lambda pid=pid: lib.readers.set_feedback("bench", [pid], "like")) for pid in ids]
                r["like_ms_median"] = round(statistics.median(lat), 2)
                lat = [1000 * _timed(lambda pid=pid: lib.get(pid)) for pid in ids]
                r["get_paper_ms_median"] = round(statistics.median(lat), 3)
                res[name] = r
    res["postgresql_over_sqlite"] = {
        k: round(res["postgresql"][k] / res["sqlite"][k], 2) for k in res["sqlite"] if res["sqlite"][k]
    }
    return res
