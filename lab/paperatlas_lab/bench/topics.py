"""`paperatlas bench topics`: time to build topics + map layout, at the library's size and larger.

* "real": `lib.topics.build` on the --db library itself, end to end (load vectors and texts,
  neighbour graph, clustering, layout, labels, store).
* Larger sizes are synthetic, and the output says so: each paper is a real paper of the
  library drawn with replacement, its vector perturbed (v + 0.3 g / sqrt(d), renormalised,
  g standard normal; about a real nearest-neighbour distance away from its source) and
  its text kept. The pipeline runs on them in memory and the result is stored into a
  scratch library, so every stage a real build runs is timed.
* Baselines measured in the same run, on the same vectors and texts: scikit-learn
  TF-IDF + k-means with the pipeline's k (the evaluation's baseline) and a PCA layout.
* CPU seconds of this process are reported beside wall seconds, with the load average:
  on a shared machine wall time depends on what else runs.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .search import parse_size  # one size syntax for every bench: real, 100k, 1m


def synthesize(vectors: np.ndarray, texts: list[str], n: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """n papers: real ones drawn with replacement, vectors perturbed (see module doc)."""
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(texts), n)
    d = vectors.shape[1]
    x = vectors[pick] + (0.3 / np.sqrt(d)) * rng.standard_normal((n, d)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x.astype(np.float32), [texts[i] for i in pick]


def _baselines(vectors: np.ndarray, texts: list[str], k: int, seed: int) -> dict[str, float]:
    from sklearn.cluster import KMeans
    from sklearn.feature_extraction.text import TfidfVectorizer

    from paperatlas.topics.layout import pca

    t = time.perf_counter()
    m = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2, max_df=0.5).fit_transform(texts)
    KMeans(k, n_init=3, random_state=seed).fit(m)
    tfidf_s = time.perf_counter() - t
    t = time.perf_counter()
    pca(vectors, 2, seed)
    return {"tfidf_kmeans_s": round(tfidf_s, 1), "pca_layout_s": round(time.perf_counter() - t, 2)}


def bench_topics(db: Path, sizes: list[str], seed: int = 0, baseline: bool = True, log: Any = None) -> dict[str, Any]:
    from paperatlas.library import Library
    from paperatlas.topics.pipeline import TopicPipeline

    say = log or (lambda m: None)
    rows: list[dict[str, Any]] = []
    with Library(db) as lib:
        ids, vectors = lib.topics.vectors()
        texts = lib.topics.texts(ids)
        for size in sizes:
            n = parse_size(size)
            row: dict[str, Any] = {"size": size, "load_before": os.getloadavg()[0]}
            cpu, wall = time.process_time(), time.perf_counter()
            if n == 0:
                say(f"real: lib.topics.build on {len(ids)} papers of {db}")
                with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as tmp:
                    # build on a copy, so the benchmark never replaces the library's own topics
                    copy = Path(tmp) / "copy.db"
                    lib.store.copy_to(copy)
                    with Library(copy) as c:
                        cpu, wall = time.process_time(), time.perf_counter()
                        model = c.topics.build(seed=seed)
                row.update(papers=len(ids), data="real")
                x, t = vectors, texts
            else:
                say(f"{size}: synthesising {n} papers from {len(ids)} real ones")
                x, t = synthesize(vectors, texts, n, seed)
                cpu, wall = time.process_time(), time.perf_counter()
                model = TopicPipeline(seed=seed).fit(
                    [f"syn{i:07d}" for i in range(n)], x, t, progress=lambda s: say(f"  {s}")
                )
                ts = time.perf_counter()
                with tempfile.TemporaryDirectory(prefix="paperatlas-bench-") as tmp, Library(Path(tmp) / "s.db") as s:
                    s.topics.save(model)
                model.meta["seconds"]["store"] = round(time.perf_counter() - ts, 3)
                row.update(
                    papers=n,
                    data="synthetic: real papers drawn with replacement, vectors perturbed "
                    "(v + 0.3 g / sqrt(d), renormalised), texts kept",
                )
            row.update(
                wall_s=round(time.perf_counter() - wall, 1),
                cpu_s=round(time.process_time() - cpu, 1),
                stages_s=model.meta["seconds"],
                k=model.meta["k"],
                load_after=os.getloadavg()[0],
            )
            if baseline:
                say(f"  baselines on {len(t)} papers")
                row["baseline"] = _baselines(x, t, int(model.meta["k"]["coarse"]), seed)
            rows.append(row)
            say(f"  {row['wall_s']} s wall, {row['cpu_s']} s CPU")
    return {"db": str(db), "cpus": os.cpu_count(), "results": rows}


def table(res: dict[str, Any]) -> str:
    lines = [f"{res['db']}, {res['cpus']} CPUs"]
    for r in res["results"]:
        st = r["stages_s"]
        stages = ", ".join(f"{k} {v}" for k, v in st.items())
        b = r.get("baseline", {})
        lines.append(
            f"{r['size']:>6} {r['papers']:>7} papers: {r['wall_s']:>6} s wall, {r['cpu_s']:>6} s CPU "
            f"(load {r['load_before']:.1f}->{r['load_after']:.1f}); k {r['k']['coarse']}/{r['k']['fine']}; "
            f"{stages}"
        )
        if b:
            lines.append(
                f"{'':>15} baseline TF-IDF + k-means {b['tfidf_kmeans_s']} s, PCA layout {b['pca_layout_s']} s"
            )
        lines.append(f"{'':>15} data: {r['data']}")
    return "\n".join(lines)
