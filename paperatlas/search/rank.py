"""One query ranked: its keyword and semantic candidate lists, fused. The one ranking function every
variant of a query goes through (search/expand.py); it never calls itself."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import PaperatlasError
from ..i18n import gettext
from .cjk import has_cjk
from .expand import Reading, keyword_query
from .floor import Floor, ScoreScale, apply_floor
from .fusion import calibrated_convex, convex, rrf
from .query import Query

if TYPE_CHECKING:
    from .settings import SearchSettings
    from .indexes import Indexes

MODES = ("hybrid", "keyword", "semantic")
Lists = dict[str, list[tuple[str, float]]]


@dataclass
class Ranked:
    """A query's fused list, the lists it was fused from, each id's rank in them, the query's vector
    (None when it was not searched by meaning) and whether it went to the multilingual index."""

    fused: list[tuple[str, float]]
    lists: Lists
    ranks: dict[str, dict[str, int]]
    qv: np.ndarray | None
    multilingual: bool


def _complete(ix: Indexes, q: Query, qv: np.ndarray, lists: Lists, vec: Any, vec_pos: dict[str, int]) -> None:
    """Give every candidate its real score in both lists (in place).

    A paper the keyword list ranked 3rd but the semantic list missed (it was 101st) otherwise counts
    as the *worst* semantic match; its actual cosine is one dot product away, and its BM25 one posting
    lookup."""
    kw = ix.keyword_index()
    kw_ids = {pid for pid, _ in lists["keyword"]}
    sem_ids = {pid for pid, _ in lists["semantic"]}
    need_sem = [pid for pid, _ in lists["keyword"] if pid not in sem_ids and pid in vec_pos]
    if need_sem:
        pos = [vec_pos[pid] for pid in need_sem]
        mat = vec.vectors(pos) if hasattr(vec, "vectors") else vec.matrix[pos]
        sims = mat @ np.asarray(qv, dtype=np.float32)
        lists["semantic"] = lists["semantic"] + [(pid, float(s)) for pid, s in zip(need_sem, sims)]
    need_kw = [pid for pid, _ in lists["semantic"] if pid not in kw_ids]
    if need_kw and hasattr(kw, "score_positions"):
        kpos = ix.kw_pos
        have = [pid for pid in need_kw if pid in kpos]
        bm = kw.score_positions(q, [kpos[pid] for pid in have])
        lists["keyword"] = lists["keyword"] + [(pid, float(s)) for pid, s in zip(have, bm)]


def rank_one(
    ix: Indexes,
    settings: SearchSettings,
    q: Query,
    mode: str,
    depth: int,
    allowed: set[str] | None,
    exclude: set[str],
    reading: Reading | None,
    scale: Callable[[], ScoreScale | None],
    qvec: np.ndarray | None = None,
) -> Ranked:
    """`q` ranked in `mode`: keyword candidates (asked with the glossary's English words too), semantic
    ones (a query in CJK script goes to the multilingual index when the library has one), fused.
    `qvec`: the query's vector by the default model when the caller has it; `scale`: the multilingual
    model's calibrated score scale (None: fuse its cosines min-max)."""
    if mode not in MODES:
        raise PaperatlasError(f"unknown search mode {mode!r}", f"use one of: {', '.join(MODES)}")
    lists: Lists = {}
    qv = None
    if mode in ("keyword", "hybrid"):
        kw = ix.keyword_index()
        mask = None if allowed is None and not exclude else ix.mask(ix.kw_pos, len(kw.ids), allowed, exclude)
        lists["keyword"] = kw.search(keyword_query(q, reading), depth, mask)
    ml = ix.multilingual_index() if mode != "keyword" and has_cjk(q.text) else None
    vec: Any = None
    vec_pos: dict[str, int] = {}
    if mode in ("semantic", "hybrid") and ml is not None:
        vec, vec_pos = ml
        qv = ix.query_vector(q.text, ix.multilingual_embedder)
        lists["semantic"] = vec.search(qv, depth, ix.mask(vec_pos, len(vec), allowed, exclude))
    elif mode in ("semantic", "hybrid"):
        vec = ix.vector_index()
        vec_pos = ix.vector_positions()
        if vec is None:
            if mode == "semantic":
                raise PaperatlasError(
                    gettext("this library has no embeddings yet, so it cannot search by meaning"),
                    gettext("run `paperatlas embed`, or search with --mode keyword"),
                )
        elif q.text.strip():
            qv = ix.query_vector(q.text) if qvec is None else qvec
            lists["semantic"] = vec.search(qv, depth, ix.mask(vec_pos, len(vec), allowed, exclude))
    ranks: dict[str, dict[str, int]] = {}
    for name, ranked in lists.items():
        for r, (pid, _) in enumerate(ranked, start=1):
            ranks.setdefault(pid, {})[name] = r
    s = settings
    if len(lists) == 1:
        fused = next(iter(lists.values()))
    elif not lists:
        fused = []
    elif s.fusion == "rrf":
        fused = rrf([lists["keyword"], lists["semantic"]], k=s.rrf_k)
    else:
        if s.complete_scores and qv is not None:
            _complete(ix, q, qv, lists, vec, vec_pos)
        w = s.crosslingual_semantic_weight if ml is not None else s.semantic_weight
        sc = scale() if ml is not None else None
        if sc is not None:
            fused = calibrated_convex(lists["keyword"], lists["semantic"], sc, w)
        else:
            # crosslingual_fusion "minmax" names its own normalisation; English text follows `norm`
            fused = convex(
                [lists["keyword"], lists["semantic"]], [1 - w, w], norm="minmax" if ml is not None else s.norm
            )
    if len(lists) == 1 and "semantic" in lists and ml is not None:
        sc = scale()
        if sc is not None:  # semantic mode: the calibrated score, not e5's crowded cosine
            fused = calibrated_convex([], lists["semantic"], sc, 1.0)
    return Ranked(fused, lists, ranks, qv, ml is not None)


def floored(
    r: Ranked,
    fused: list[tuple[str, float]],
    floor: Floor,
    words: Query,
    coverage: Callable[[Query, list[tuple[str, float]]], float],
) -> list[tuple[str, float]]:
    """`fused` (r's ranking, maybe blended) past the relevance floor. Below the floor's gate cosine the
    floor also reads `coverage`: the best share of `words` a top hit holds (the keyword hits in hybrid,
    the nearest papers in semantic mode)."""
    best = max((c for _, c in r.lists["semantic"]), default=-1.0)
    words_from = r.lists.get("keyword") or r.lists.get("semantic", [])
    cov = coverage(words, words_from) if best < floor.gate_cosine and words.text.strip() else 0.0
    return apply_floor(fused, r.lists, floor, cov)
