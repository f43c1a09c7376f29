"""Time to first search: from starting an ingest (empty library, empty vector cache) to the first
keyword answer and to the first hybrid answer over every paper, and embedding papers/s of the
library's pipeline against the raw model in the same run."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from paperatlas.embed.base import EMBEDDERS
from paperatlas.library import Library
from paperatlas.models import Paper
from paperatlas.store.vector_cache import VectorCache


def _subset(path: Path, limit: int, folder: Path) -> Path:
    """The first `limit` records of a JSONL(.gz) file, as a file of their own."""
    out = folder / f"first{limit}.jsonl"
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f, out.open("w", encoding="utf-8") as w:  # type: ignore[operator]
        for n, line in enumerate(f):
            if n >= limit:
                break
            w.write(line)
    return out


def _raw_papers_per_s(embedder_name: str, texts: list[str], batch_size: int = 64) -> tuple[float, float]:
    """(papers/s, model load s) of a fresh model embedding `texts` directly: no cache, no store."""
    t = time.perf_counter()
    emb = EMBEDDERS.create(embedder_name)
    emb.embed(texts[:2])  # the model loads on first use
    load_s = time.perf_counter() - t
    t = time.perf_counter()
    for s in range(0, len(texts), batch_size):
        emb.embed(texts[s : s + batch_size])
    return len(texts) / (time.perf_counter() - t), load_s


def bench_first_search(
    path: Path,
    query: str = "diffusion models for protein design",
    limit: int | None = None,
    raw_sample: int = 512,
    embedder: str = "minilm",
) -> dict[str, Any]:
    load_before = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    with tempfile.TemporaryDirectory(prefix="paperatlas-first-search-") as d:
        folder = Path(d)
        src = _subset(path, limit, folder) if limit else path
        lib = Library(folder / "lib.db", embedder=embedder, vector_cache=VectorCache(folder / "vectors.sqlite"))
        t0 = time.perf_counter()
        report = lib.ingest(src)
        stored_s = time.perf_counter() - t0
        kw = lib.search(query, mode="keyword", limit=10)
        keyword_s = time.perf_counter() - t0
        papers = lib.count()
        waiting_at_keyword = lib.embedding_status()["waiting"]
        hyb_early = lib.search(query, mode="hybrid", limit=10)  # no vectors yet: keyword only, said so
        t_embed = time.perf_counter()
        embedded = lib.embed()
        embed_s = time.perf_counter() - t_embed
        hyb = lib.search(query, mode="hybrid", limit=10)
        hybrid_s = time.perf_counter() - t0
        status = lib.embedding_status()
        texts = [
            Paper(p.id, p.title, p.abstract, title_derived=p.title_derived).text for p in lib.papers(limit=raw_sample)
        ]
        lib.close()
    raw_pps, raw_load_s = _raw_papers_per_s(embedder, texts)
    load_after = [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None
    return {
        "file": str(path),
        "papers": papers,
        "ingest": report.summary(),
        "embedder": embedder,
        "query": query,
        "stored_s": round(stored_s, 2),
        "first_keyword_answer_s": round(keyword_s, 2),
        "keyword_hits": len(kw),
        "waiting_at_first_keyword_answer": waiting_at_keyword,
        "hybrid_before_embedding_hits": len(hyb_early),
        "embed_s": round(embed_s, 1),
        "embedded": embedded,
        "first_hybrid_answer_over_all_s": round(hybrid_s, 1),
        "hybrid_hits": len(hyb),
        "waiting_after": status["waiting"],
        "pipeline_papers_per_s": round(embedded / embed_s, 2) if embed_s else None,
        "raw_model_papers_per_s": round(raw_pps, 2),
        "raw_model_sample": len(texts),
        "raw_model_load_s": round(raw_load_s, 2),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "load_avg_before": load_before,
        "load_avg_after": load_after,
    }


def main(path: str, **kw: Any) -> str:
    return json.dumps(bench_first_search(Path(path), **kw), indent=2)
