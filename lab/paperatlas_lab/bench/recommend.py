"""`paperatlas bench recommend`: latency of recommendations for a reader with 100 likes.

Runs the whole Library path (feedback from SQLite, profile sync, scoring, explanations,
loading the papers) on a copy of an embedded library, warm (features built once, as
in the web app) and cold (first call builds the TF-IDF features), with the svm baseline
measured in the same run.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import click
import numpy as np


def _copy(src: str, dst: str) -> None:
    from paperatlas.library import Library

    with Library(src) as lib:
        lib.store.copy_to(dst)


def bench_recommend(
    db: str | Path, likes: int = 100, dislikes: int = 20, repeats: int = 20, seed: int = 0
) -> dict[str, Any]:
    from paperatlas.library import Library

    with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as tmp:
        path = os.path.join(tmp, "lib.db")
        _copy(str(db), path)
        lib = Library(path)
        try:
            ids = [p.id for p in lib.papers()]
            n_vec = sum(lib.store.vector_models().values())
            rng = np.random.default_rng(seed)
            pick = [ids[i] for i in rng.choice(len(ids), likes + dislikes, replace=False)]
            lib.readers.set_feedback("bench", pick[:likes], "like")
            lib.readers.set_feedback("bench", pick[likes:], "dislike")
            t = time.perf_counter()
            lib.recommend.for_reader("bench", limit=20)
            cold = time.perf_counter() - t
            out: dict[str, Any] = {
                "papers": len(ids),
                "vectors": n_vec,
                "likes": likes,
                "dislikes": dislikes,
                "repeats": repeats,
                "cold_first_call_s": round(cold, 3),
            }
            # free-text preferences too, so every part of the default recommender runs
            lib.recommend.edit_profile("bench", preferences="more theory, fewer benchmark papers")
            for method in ("default", "svm"):
                times = []
                for _ in range(repeats if method == "default" else max(3, repeats // 4)):
                    t = time.perf_counter()
                    hits = lib.recommend.for_reader("bench", limit=20, method=method)
                    times.append(time.perf_counter() - t)
                out[method] = {
                    "median_ms": round(1000 * statistics.median(times), 1),
                    "min_ms": round(1000 * min(times), 1),
                    "n": len(times),
                    "returned": len(hits),
                }
            out["svm_over_default"] = round(out["svm"]["median_ms"] / max(out["default"]["median_ms"], 1e-9), 1)
            out["target_ms"] = 200
            return out
        finally:
            lib.close()


@click.command("recommend")
@click.argument("db", type=click.Path(exists=True, dir_okay=False))
@click.option("--likes", default=100, show_default=True)
@click.option("--repeats", default=20, show_default=True, help="Warm calls; the median is reported.")
def bench_recommend_cmd(db: str, likes: int, repeats: int) -> None:
    """Median latency of `recommend` for a reader with 100 likes (warm), beside the svm baseline.

    DB: an embedded library (it is copied, never written).

    Example:

        paperatlas bench recommend venue-copy.db --repeats 30
    """
    import json

    click.echo(json.dumps(bench_recommend(db, likes, repeats=repeats), indent=2))
