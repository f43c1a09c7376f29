"""The default search (titles and abstracts) with and without full texts in the library, and the
body search (`search --in body`), timed in one run on the same library.

    .venv/bin/python benchmarks/fulltext_search.py [--rounds N]

The library: the bundled example lists (hashing embedder: the point is what the stored passages cost
the default search, not the model) and the corpus PDFs (tests/data/pdfs) attached to two papers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from paperatlas import Library

ROOT = Path(__file__).resolve().parent.parent
QUERIES = [
    "diffusion models",
    "reinforcement learning from human feedback",
    "graph neural networks",
    "citation recommendation",
    "triplet loss",
    "entity linking",
    "language model alignment",
    "document representation",
]


def timed(fn, rounds: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        for q in QUERIES:
            t0 = time.perf_counter()
            fn(q)
            times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "corpus.jsonl"
        rows = [
            {"id": "graph", "title": "Construction of the Literature Graph in Semantic Scholar", "abstract": "x"},
            {
                "id": "specter",
                "title": "SPECTER: Document-level Representation Learning using Citation-informed Transformers",
                "abstract": "x",
            },
        ]
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        lib = Library(Path(tmp) / "lib.db", embedder="hashing")
        lib.ingest(sorted((ROOT / "examples").glob("*.txt")) + [f])
        lib.embed()
        print(f"library: {lib.count()} papers")
        for mode in ("keyword", "hybrid"):
            p50, p95 = timed(lambda q: lib.search(q, mode=mode, limit=20), args.rounds)
            print(f"default search ({mode}), no full text (baseline): p50 {p50:.2f} ms, p95 {p95:.2f} ms")
        # the body by keyword, as measured before passages had vectors (fulltext_passages.py: hybrid)
        lib.fulltext.add("graph", ROOT / "tests/data/pdfs/N18-3011.pdf", embed=False)
        lib.fulltext.add("specter", ROOT / "tests/data/pdfs/2020.acl-main.207.pdf", embed=False)
        print(f"full text of 2 papers: {lib.fulltext.status()['passages']} passages")
        for mode in ("keyword", "hybrid"):
            p50, p95 = timed(lambda q: lib.search(q, mode=mode, limit=20), args.rounds)
            print(f"default search ({mode}), with full text:          p50 {p50:.2f} ms, p95 {p95:.2f} ms")
        p50, p95 = timed(lambda q: lib.fulltext.hits(q, limit=20), args.rounds)
        print(f"search --in body:                                  p50 {p50:.2f} ms, p95 {p95:.2f} ms")
        lib.close()


if __name__ == "__main__":
    main()
