"""Ingest throughput: first ingest and no-op re-ingest, against plain JSON parsing of the same file."""

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
from paperatlas.library import Library


def _parse_only(path: Path) -> int:
    """The floor: decompress and json-parse every line, nothing else."""
    opener = gzip.open if path.suffix == ".gz" else open
    n = 0
    with opener(path, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        for line in f:
            if line.strip():
                json.loads(line)
                n += 1
    return n


def _first_ingest_one_process(path: Path) -> float:
    """A first ingest with normalising kept in this process (the pre-parallel baseline)."""
    with settings.temporarily("ingest_workers", 1), tempfile.TemporaryDirectory() as d:
        lib = Library(Path(d) / "bench.db")
        t = time.perf_counter()
        lib.ingest(path)
        dt = time.perf_counter() - t
        lib.close()
        return dt


def bench_ingest(path: Path, repeats: int = 3) -> dict[str, Any]:
    first: list[float] = []
    again: list[float] = []
    parse: list[float] = []
    single: list[float] = []
    n = 0
    for _ in range(repeats):
        t = time.perf_counter()
        n = _parse_only(path)
        parse.append(time.perf_counter() - t)
        single.append(_first_ingest_one_process(path))
        with tempfile.TemporaryDirectory() as d:
            lib = Library(Path(d) / "bench.db")
            t = time.perf_counter()
            r = lib.ingest(path)
            first.append(time.perf_counter() - t)
            assert r.new + r.merged == n, r.summary()
            t = time.perf_counter()
            r = lib.ingest(path)
            again.append(time.perf_counter() - t)
            assert r.unchanged == n, r.summary()
            lib.close()
    med = statistics.median
    return {
        "papers": n,
        "repeats": repeats,
        "first_ingest_papers_per_s": round(n / med(first)),
        "reingest_papers_per_s": round(n / med(again)),
        "json_parse_only_papers_per_s": round(n / med(parse)),
        "first_ingest_one_process_papers_per_s": round(n / med(single)),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "first_ingest_s_median": round(med(first), 3),
        "reingest_s_median": round(med(again), 3),
        "first_ingest_vs_parse_ratio": round(med(first) / med(parse), 2),
        "targets": {"first_ingest_papers_per_s": 5000, "reingest_papers_per_s": 20000},
    }
