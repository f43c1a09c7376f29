"""`paperatlas eval floor DIR`: calibrate the relevance floor (search/floor.py) on data.

Real queries (a BEIR split's queries, e.g. SciFact *train* claims) and queries with no real answer
(random letters, off-domain questions: benchmarks/data/nonsense_queries.txt) are run against the
same corpus. For each query it records what the floor's gate reads: the best cosine of any paper
and the best word coverage of a top keyword hit. It prints both distributions, picks the floor
(tuned on `--split`), then reports on `--report-split` (the test split, never tuned on): the
false-empty rate (real queries answered with nothing), how many nonsense queries still get hits,
and nDCG@10 with and without the floor for hybrid and semantic search.

Picking (a real query must keep its answer; catching nonsense comes second): the coverage
threshold is the lowest of 0.5 / 0.67 / 0.75 / 1.0 that lets no nonsense query through; the gate
cosine is the highest (0.01 steps) that empties at most `--max-false-empty` of the tuning split's
real queries; the hit cosine is the highest on a grid that keeps hybrid nDCG@10 on the tuning split
within 0.0005 of the gate alone. The distributions overlap (SciFact's nutrition claims are close
to cooking questions), so the report lists the nonsense queries that still get answers.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np

from .. import REPO
from paperatlas.errors import PaperatlasError
from paperatlas.search.floor import Floor, floor_for
from paperatlas.search.query import parse
from .beir import canonical_qrels, evaluate, keep_queries, load_beir, query_vectors, run_modes

DEFAULT_NONSENSE = REPO / "benchmarks" / "data" / "nonsense_queries.txt"
COVERAGES = (0.5, 0.67, 0.75, 1.0)
HIT_GRID = (0.0, 0.1, 0.15, 0.2, 0.25)


def read_queries(path: str | Path) -> list[str]:
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]


def evidence(lib: Any, texts: Sequence[str], qvecs: np.ndarray) -> np.ndarray:
    """(n, 2): best cosine and best keyword-hit coverage of each query."""
    return np.array([lib.engine.match_evidence(parse(t), qvecs[i]) for i, t in enumerate(texts)], dtype=np.float64)


def percentiles(x: np.ndarray) -> dict[str, float]:
    if not len(x):
        return {}
    qs = (0, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100)
    return {f"p{q}": round(float(np.percentile(x, q)), 4) for q in qs}


def pick_floor(real: np.ndarray, nonsense: np.ndarray, max_false_empty: float) -> tuple[float, float]:
    """(gate cosine, coverage): coverage that lets no nonsense query through, and the highest
    gate that empties at most `max_false_empty` of the real queries."""
    cov = next((c for c in COVERAGES if not (nonsense[:, 1] >= c).any()), 1.01)
    gate = 0.0
    for t in np.arange(0.0, 1.0, 0.01):
        t = round(float(t), 2)
        lost = float(np.mean(~((real[:, 0] >= t) | (real[:, 1] >= cov))))
        if lost > max_false_empty:
            break
        gate = t
    return gate, cov


def passes(ev: np.ndarray, fl: Floor) -> np.ndarray:
    return (ev[:, 0] >= fl.gate_cosine) | (ev[:, 1] >= fl.coverage)


def eval_floor(
    folder: str | Path,
    split: str = "train",
    report_split: str = "test",
    nonsense_file: str | Path = DEFAULT_NONSENSE,
    max_false_empty: float = 0.0025,
    embedder: str | None = None,
    tune_ids: Sequence[str] | None = None,
) -> dict[str, Any]:
    from paperatlas.library import Library

    tune = load_beir(folder, split)
    if tune_ids is not None:
        # its cosines on claims it trained on are higher than a reader's queries will ever give
        tune = keep_queries(tune, tune_ids, split, "--tune-ids")
    report = load_beir(folder, report_split)
    nonsense = read_queries(nonsense_file)
    out: dict[str, Any] = {
        "dataset": Path(folder).name,
        "split": split,
        "tune_queries": len(tune.queries),
        "report_split": report_split,
        "nonsense_queries": len(nonsense),
        "nonsense_file": str(nonsense_file),
    }
    with tempfile.TemporaryDirectory(prefix="paperatlas-floor-") as tmp:
        lib = Library(Path(tmp) / "floor.db", embedder=embedder)
        try:
            t = time.perf_counter()
            lib.ingest(tune.corpus)
            lib.embed()
            out["embedder"] = lib.embedder.id
            out["setup_s"] = round(time.perf_counter() - t, 1)
            engine = lib.engine
            tq, rq = list(tune.queries.values()), list(report.queries.values())
            tv = query_vectors(lib.embedder, tq, lib.vector_cache)
            rv = query_vectors(lib.embedder, rq, lib.vector_cache)
            nv = query_vectors(lib.embedder, nonsense, lib.vector_cache)
            ev_t, ev_r, ev_n = evidence(lib, tq, tv), evidence(lib, rq, rv), evidence(lib, nonsense, nv)
            out["distributions"] = {
                f"{split} best cosine": percentiles(ev_t[:, 0]),
                "nonsense best cosine": percentiles(ev_n[:, 0]),
                f"{split} coverage": percentiles(ev_t[:, 1]),
                "nonsense coverage": percentiles(ev_n[:, 1]),
            }
            gate, cov = pick_floor(ev_t, ev_n, max_false_empty)
            # the hit cosine: the highest that keeps hybrid nDCG@10 on the tuning split
            tqrels = canonical_qrels(tune.qrels, lib.store.resolve_id)
            engine.settings.floor = True
            base_t = evaluate(run_modes(lib, tune.queries, tv, ["hybrid"])["hybrid"], tqrels)["ndcg@10"]
            tried = {}
            hit = 0.0
            for h in HIT_GRID:
                if h > gate:
                    break
                engine.floor_override = Floor(gate, cov, h)
                tried[h] = evaluate(run_modes(lib, tune.queries, tv, ["hybrid"], floor=True)["hybrid"], tqrels)[
                    "ndcg@10"
                ]
                if tried[h] >= tried[HIT_GRID[0]] - 0.0005:  # the hit cosine costs nothing beyond the gate
                    hit = h
            fl = Floor(gate, cov, hit)
            out["picked"] = {
                "gate_cosine": gate,
                "coverage": cov,
                "hit_cosine": hit,
                f"{split} hybrid ndcg@10 by hit_cosine": {"none": base_t, **tried},
            }
            shipped = floor_for(lib.embedder.id)
            out["shipped"] = shipped.__dict__ if shipped else None
            rqrels = canonical_qrels(report.qrels, lib.store.resolve_id)
            for name, f in (("picked", fl), ("shipped", shipped)):
                if f is None:
                    continue
                engine.floor_override = f
                r: dict[str, Any] = {
                    f"{split} false-empty": _rate(~passes(ev_t, f)),
                    f"{report_split} false-empty": _rate(~passes(ev_r, f)),
                    "nonsense answered": _rate(passes(ev_n, f)),
                    "nonsense answered (queries)": [q for q, ok in zip(nonsense, passes(ev_n, f)) if ok],
                }
                for mode in ("hybrid", "semantic"):
                    off = evaluate(run_modes(lib, report.queries, rv, [mode])[mode], rqrels)["ndcg@10"]
                    on_run = run_modes(lib, report.queries, rv, [mode], floor=True)[mode]
                    on = evaluate(on_run, rqrels)["ndcg@10"]
                    empty = sum(1 for q in report.queries if not on_run.get(q))
                    r[f"{report_split} {mode} ndcg@10"] = {
                        "no floor": off,
                        "floor": on,
                        "delta": round(on - off, 5),
                        "empty answers": empty,
                    }
                out[name + " on " + report_split] = r
        finally:
            lib.close()
    return out


def _rate(mask: np.ndarray) -> dict[str, Any]:
    n = int(len(mask))
    k = int(mask.sum())
    return {"count": k, "of": n, "rate": round(k / n, 4) if n else 0.0}


@click.command("floor")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--split", default="train", show_default=True, help="Real queries to tune the floor on.")
@click.option("--report-split", default="test", show_default=True, help="Real queries to report on (not tuned on).")
@click.option(
    "--nonsense",
    "nonsense_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Queries with no real answer, one per line (default: benchmarks/data/nonsense_queries.txt).",
)
@click.option(
    "--max-false-empty",
    type=float,
    default=0.0025,
    show_default=True,
    help="The gate may empty at most this share of the tuning split's real queries.",
)
@click.option("--embedder", help="Embedding model (default: the shipped default).")
@click.option(
    "--tune-ids",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Tune on these query ids of --split only, one per line ('#' comments), e.g. the claims a "
    "fine-tuned model never saw (benchmarks/train_embedder/scifact_dev_claims.txt).",
)
def floor_cmd(
    folder: str,
    split: str,
    report_split: str,
    nonsense_file: str | None,
    max_false_empty: float,
    embedder: str | None,
    tune_ids: str | None,
) -> None:
    """Calibrate the relevance floor: real vs nonsense queries' best matches, false-empty rate, nDCG.

    Uses the shared vector cache, so only the first run embeds the corpus. Prints JSON.

    Example:

        paperatlas eval floor ../shared/data/scifact --split train --report-split test
    """
    nf = nonsense_file or DEFAULT_NONSENSE
    if not Path(nf).exists():
        raise click.ClickException(f"no nonsense query file at {nf}: pass --nonsense FILE")
    try:
        ids = read_queries(tune_ids) if tune_ids else None
        res = eval_floor(folder, split, report_split, nf, max_false_empty, embedder, ids)
    except PaperatlasError as e:
        raise click.ClickException(str(e)) from None
    click.echo(json.dumps(res, indent=2, ensure_ascii=False))
