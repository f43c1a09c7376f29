"""`paperatlas eval zh-floor QUERIES --db LIB`: calibrate and measure the multilingual route's floor
and score scale (search/floor.py: FLOORS and SCALES for multilingual-e5-small-q4).

QUERIES is JSONL (tests/data/zh_queries.jsonl): `{"q", "title", "kind", "split"}` per line; `title`
names the one right paper of a real query and is null for a query with no answer in any ML library
(`kind` "off-domain": 红烧肉的家常做法; "nonsense": 啊啊啊啊啊). Real queries whose paper the library
lacks are left out (and counted), so the same file serves the 29-paper demo and a larger library.

Tuned on `--split` (train), reported on `--report-split` (test, never tuned on):

- gate: the highest cosine (0.005 steps) such that at most `--max-false-empty` of the tuning
  split's real queries have their best match below gate + 0.01 (those would get "no good matches");
- hit cosine: the highest (0.005 steps) such that every right answer of the tuning split, at any
  rank, lies 0.01 above it (the floor cuts no answer the route found);
- scale: 0 at the median best cosine of the tuning split's no-answer queries, 1 at the 75th
  percentile of its right answers' cosines.

Reported before (no floor, min-max fusion: what the route did) and after (the floor and the
calibrated fusion): MRR@10 and hit@10 in hybrid and semantic mode, the false-empty rate (real
queries answered with nothing), the share of no-answer queries answered with nothing, and the
top hit's shown score for both kinds.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np

from paperatlas import settings
from paperatlas.errors import PaperatlasError
from paperatlas.search.floor import Floor, ScoreScale, floor_for, scale_for
from paperatlas.search.query import parse
from .crosslingual import norm_title

MODES = ("hybrid", "semantic")


@dataclass
class ZhQuery:
    q: str
    paper_id: str | None  # None: no right answer
    kind: str
    split: str
    line: int


def load(path: str | Path, lib: Any) -> tuple[list[ZhQuery], int]:
    """The queries usable on this library, and how many real queries were left out (paper absent)."""
    titles: dict[str, str] = {}
    for batch in lib.store.iter_texts():
        for pid, title, _derived, _abstract in batch:
            titles.setdefault(norm_title(title), pid)
    out: list[ZhQuery] = []
    absent = 0
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            q, title, kind, split = str(row["q"]), row["title"], str(row["kind"]), str(row["split"])
        except (ValueError, KeyError, TypeError) as e:
            raise PaperatlasError(
                f'{path}, line {n}: not a {{"q", "title", "kind", "split"}} object ({e})',
                "write one JSON object per line; title null for a query with no answer",
            ) from None
        pid = None
        if title is not None:
            pid = titles.get(norm_title(str(title)))
            if pid is None:
                absent += 1
                continue
        out.append(ZhQuery(q, pid, kind, split, n))
    return out, absent


@dataclass(frozen=True)
class Outcome:
    """How search answered one query: the right paper's rank within the top k (0: not there, or the
    query has none), whether the answer was empty, and the top hit's score."""

    query: ZhQuery
    rank: int
    empty: bool
    top: float


def outcomes(eng: Any, queries: Sequence[ZhQuery], mode: str, k: int = 10, floor: bool = True) -> list[Outcome]:
    """Each query searched as `mode` asks (`eng.rank`, depth 100), floor on or off."""
    out = []
    for z in queries:
        fused, _ = eng.rank(parse(z.q), mode, 100, floor=floor)
        ids = [d for d, _ in fused[:k]]
        r = ids.index(z.paper_id) + 1 if z.paper_id and z.paper_id in ids else 0
        out.append(Outcome(z, r, not fused, fused[0][1] if fused else 0.0))
    return out


def _evidence(lib: Any, queries: Sequence[ZhQuery]) -> list[dict[str, float]]:
    """Per query: the best multilingual cosine in the library and the right answer's cosine."""
    eng = lib.engine
    ml = eng.multilingual_index()
    if ml is None:
        raise PaperatlasError("this library has no multilingual index", "run `paperatlas embed --multilingual`")
    vec = ml[0]
    emb = eng.multilingual_embedder
    out = []
    for z in queries:
        qv = eng.query_vector(z.q, emb)
        best = max((c for _, c in vec.search(qv, 1)), default=-1.0)
        v = vec.vector(z.paper_id) if z.paper_id else None
        right = float(np.asarray(v) @ qv) if v is not None else float("nan")
        out.append({"best": float(best), "right": right})
    return out


def _pct(x: Sequence[float]) -> dict[str, float]:
    a = np.asarray([v for v in x if v == v], dtype=np.float64)
    if not len(a):
        return {}
    return {f"p{q}": round(float(np.percentile(a, q)), 4) for q in (0, 5, 10, 25, 50, 75, 90, 95, 100)}


def _grid(lo: float, hi: float, step: float = 0.005) -> list[float]:
    return [round(lo + i * step, 3) for i in range(int(round((hi - lo) / step)) + 1)]


def tune(
    lib: Any, queries: Sequence[ZhQuery], ev: Sequence[dict[str, float]], max_false_empty: float, margin: float = 0.01
) -> tuple[Floor, ScoreScale]:
    real = [e for z, e in zip(queries, ev) if z.paper_id]
    none = [e for z, e in zip(queries, ev) if not z.paper_id]
    if not real or not none:
        raise PaperatlasError("the tuning split needs real and no-answer queries", "check the split names")
    bests = np.array([e["best"] for e in real])
    # `margin` below the edge the tuning queries allow: a few dozen queries do not pin the edge
    gate = max(g for g in _grid(0.60, 0.95) if np.mean(bests < g + margin) <= max_false_empty)
    # hit cosine: the floor removes no right answer of the tuning split, at any depth (a vague query's
    # answer may rank 12th; cutting it would trade recall for a shorter list)
    rights = [e["right"] for e in real]
    hit = max(h for h in _grid(0.60, gate) if all(c >= h + margin for c in rights))
    low = float(np.median([e["best"] for e in none]))
    high = float(np.percentile([e["right"] for e in real], 75))
    return Floor(gate_cosine=gate, coverage=1.0, hit_cosine=hit), ScoreScale(round(low, 3), round(high, 3))


def measure(
    lib: Any, queries: Sequence[ZhQuery], floor: Floor | None, scale: ScoreScale | None, k: int = 10
) -> dict[str, Any]:
    """MRR@k, hit@k, the false-empty and the emptied shares, and the top hit's score, per mode."""
    eng = lib.engine
    saved = (
        eng.crosslingual_floor_override,
        eng.crosslingual_scale_override,
        eng.settings.crosslingual_fusion,
        eng.settings.floor,
    )
    eng.crosslingual_floor_override, eng.crosslingual_scale_override = floor, scale
    eng.settings.crosslingual_fusion = "calibrated" if scale is not None else "minmax"
    eng.settings.floor = floor is not None
    try:
        out: dict[str, Any] = {}
        for mode in MODES:
            rr, hits, empty_real, empty_none, top_real, top_none = [], [], [], [], [], []
            for o in outcomes(eng, queries, mode, k, floor=floor is not None):
                if o.query.paper_id:
                    rr.append(1 / o.rank if o.rank else 0.0)
                    hits.append(1.0 if o.rank else 0.0)
                    empty_real.append(1.0 if o.empty else 0.0)
                    top_real.append(o.top)
                else:
                    empty_none.append(1.0 if o.empty else 0.0)
                    top_none.append(o.top)
            out[mode] = {
                f"mrr@{k}": round(float(np.mean(rr)), 4) if rr else None,
                f"hit@{k}": round(float(np.mean(hits)), 4) if hits else None,
                "false_empty": round(float(np.mean(empty_real)), 4) if empty_real else None,
                "no_answer_emptied": round(float(np.mean(empty_none)), 4) if empty_none else None,
                "top_score_real_median": round(float(np.median(top_real)), 3) if top_real else None,
                "top_score_no_answer_median": round(float(np.median(top_none)), 3) if top_none else None,
                "real": len(rr),
                "no_answer": len(empty_none),
            }
        return out
    finally:
        (
            eng.crosslingual_floor_override,
            eng.crosslingual_scale_override,
            eng.settings.crosslingual_fusion,
            eng.settings.floor,
        ) = saved


def eval_zh_floor(
    lib: Any, path: str | Path, split: str = "train", report_split: str = "test", max_false_empty: float = 0.0
) -> dict[str, Any]:
    queries, absent = load(path, lib)
    train = [z for z in queries if z.split == split]
    test = [z for z in queries if z.split == report_split]
    ev_train = _evidence(lib, train)
    ev_test = _evidence(lib, test)
    tuned_floor, tuned_scale = tune(lib, train, ev_train, max_false_empty)
    emb_id = lib.engine.multilingual_embedder.id
    shipped = (floor_for(emb_id), scale_for(emb_id))
    report: dict[str, Any] = {
        "library": {"papers": lib.count(), "queries_used": len(queries), "real_queries_absent": absent},
        "distributions": {
            s: {
                "real_best": _pct([e["best"] for z, e in zip(zs, ev) if z.paper_id]),
                "real_right": _pct([e["right"] for z, e in zip(zs, ev) if z.paper_id]),
                "no_answer_best": _pct([e["best"] for z, e in zip(zs, ev) if not z.paper_id]),
            }
            for s, zs, ev in ((split, train, ev_train), (report_split, test, ev_test))
        },
        "tuned": {"floor": asdict(tuned_floor), "scale": asdict(tuned_scale)},
        "shipped": {
            "floor": asdict(shipped[0]) if shipped[0] else None,
            "scale": asdict(shipped[1]) if shipped[1] else None,
        },
    }
    for name, zs in ((split, train), (report_split, test)):
        report[name] = {
            "before": measure(lib, zs, None, None),
            "after_shipped": measure(lib, zs, shipped[0], shipped[1]),
            "after_tuned_here": measure(lib, zs, tuned_floor, tuned_scale),
        }
    report["still_answered_no_answer_queries"] = [z.q for z in test if not z.paper_id and _answered(lib, z.q)]
    return report


def _answered(lib: Any, q: str) -> bool:
    fused, _ = lib.engine.rank(parse(q), "hybrid", 10, floor=True)
    return bool(fused)


@click.command("zh-floor")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--db",
    "db_path",
    envvar=settings.env("db"),
    default="paperatlas.db",
    show_default=True,
    help="Library with a multilingual index (`paperatlas embed --multilingual`).",
)
@click.option("--split", default="train", show_default=True, help="Queries to tune on.")
@click.option("--report-split", default="test", show_default=True, help="Queries to report on (not tuned on).")
@click.option(
    "--max-false-empty",
    type=float,
    default=0.0,
    show_default=True,
    help="Share of the tuning split's real queries the gate may leave with no answer.",
)
def zh_floor_cmd(file: str, db_path: str, split: str, report_split: str, max_false_empty: float) -> None:
    """Calibrate the floor and score scale of Chinese (multilingual) search, and report MRR@10,
    hit@10 and the false-empty rate before and after on the test split (JSON).

    Example:

        paperatlas eval zh-floor tests/data/zh_queries.jsonl --db paperatlas.db
    """
    from paperatlas.library import Library

    with Library(db_path, create=False) as lib:
        click.echo(
            json.dumps(
                eval_zh_floor(lib, file, split, report_split, max_false_empty),
                indent=2,
                ensure_ascii=False,
                default=str,
            )
        )
