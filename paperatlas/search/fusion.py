"""Pure fusion functions over ranked lists of (id, score)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Ranked = Sequence[tuple[str, float]]


def rrf(
    lists: Sequence[Ranked], weights: Sequence[float] | None = None, k: int = 60, limit: int | None = None
) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion: score(d) = sum_i w_i / (k + rank_i(d)), ranks from 1."""
    weights = weights or [1.0] * len(lists)
    acc: dict[str, float] = {}
    for w, ranked in zip(weights, lists):
        if w == 0:
            continue
        for r, (pid, _) in enumerate(ranked, start=1):
            acc[pid] = acc.get(pid, 0.0) + w / (k + r)
    out = sorted(acc.items(), key=lambda x: (-x[1], x[0]))
    return out[:limit] if limit else out


def minmax(ranked: Ranked) -> dict[str, float]:
    """Scale scores to [0, 1] within one list (all-equal scores map to 1)."""
    if not ranked:
        return {}
    vals = [s for _, s in ranked]
    lo, hi = min(vals), max(vals)
    span = hi - lo
    return {pid: ((s - lo) / span if span > 0 else 1.0) for pid, s in ranked}


def zscore(ranked: Ranked) -> dict[str, float]:
    """Standardise scores within one list: (s - mean) / std (all-equal scores map to 0)."""
    if not ranked:
        return {}
    vals = [s for _, s in ranked]
    mean = sum(vals) / len(vals)
    std = math.sqrt(sum((v - mean) ** 2 for v in vals) / len(vals))
    return {pid: ((s - mean) / std if std > 0 else 0.0) for pid, s in ranked}


def maxscale(ranked: Ranked) -> dict[str, float]:
    """Divide by the list's best score (negatives count as 0; a list without a positive score maps to 0).

    Unlike min-max, the weakest candidate does not become 0: a semantic list whose cosines all sit
    within a few hundredths of each other stays close together instead of being stretched over
    [0, 1], and a paper's score does not change with how deep the candidate lists are fetched."""
    if not ranked:
        return {}
    top = max(s for _, s in ranked)
    if top <= 0:
        return {pid: 0.0 for pid, _ in ranked}
    return {pid: max(0.0, s) / top for pid, s in ranked}


NORMALIZERS = {"max": maxscale, "minmax": minmax, "zscore": zscore}


def convex(
    lists: Sequence[Ranked],
    weights: Sequence[float],
    limit: int | None = None,
    missing: float | None = None,
    norm: str = "minmax",
) -> list[tuple[str, float]]:
    """Normalised convex fusion: score(d) = sum_i w_i * norm_i(d) / sum_i w_i.

    `norm` is "max" (each list divided by its best score), "minmax" (each list scaled to
    [0, 1]) or "zscore". A document absent from list i gets `missing` there (default: that
    list's lowest normalised score). Lists whose scores were completed for every candidate (see
    SearchEngine) never need `missing`."""
    f = NORMALIZERS[norm]
    norms = [f(r) for r in lists]
    floors = [(missing if missing is not None else (min(n.values()) if n else 0.0)) for n in norms]
    ids: dict[str, None] = {}
    for r in lists:
        for pid, _ in r:
            ids.setdefault(pid, None)
    total = sum(weights) or 1.0
    out = [(pid, sum(w * n.get(pid, fl) for w, n, fl in zip(weights, norms, floors)) / total) for pid in ids]
    out.sort(key=lambda x: (-x[1], x[0]))
    return out[:limit] if limit else out


def calibrated_convex(
    keyword: Ranked, semantic: Ranked, scale: Callable[[float], float], semantic_weight: float
) -> list[tuple[str, float]]:
    """Convex fusion with the semantic list on an absolute scale: score(d) = (1 - w) * minmax(bm25)(d)
    + w * scale(cosine(d)).

    Min-max would stretch whatever the semantic list holds to [0, 1]; `scale` is calibrated per model,
    so a weak best match stays weak and a clearly better meaning match outweighs a keyword hit that
    only shares an acronym. Ties (cosines beyond the scale's ends) go to the higher cosine."""
    top = max((sc for _, sc in keyword), default=0.0)
    # BM25 0 is no match at all (min-max would give a list of zeros 1.0 each); the best match gets 1
    kw = {pid: sc / top for pid, sc in keyword} if top > 0 else {}
    cos = dict(semantic)
    ids = list(dict.fromkeys([pid for pid, _ in keyword] + [pid for pid, _ in semantic]))
    w = semantic_weight
    low = min(cos.values(), default=0.0)
    scored = [(pid, (1 - w) * kw.get(pid, 0.0) + w * scale(cos.get(pid, low)), cos.get(pid, low)) for pid in ids]
    scored.sort(key=lambda x: (-x[1], -x[2], x[0]))
    return [(pid, round(s, 6)) for pid, s, _ in scored]


def blend(a: Ranked, b: Ranked, weight: float) -> list[tuple[str, float]]:
    """(1 - weight) * a + weight * b over the union of two scored lists (a paper missing from one
    scores 0 there): both lists already on [0, 1], so the weight is the share of the say `b` gets."""
    sa, sb = dict(a), dict(b)
    ids = list(dict.fromkeys([pid for pid, _ in a] + [pid for pid, _ in b]))
    scored = [(pid, (1 - weight) * sa.get(pid, 0.0) + weight * sb.get(pid, 0.0)) for pid in ids]
    scored.sort(key=lambda x: (-x[1], x[0]))
    return [(pid, round(sc, 6)) for pid, sc in scored]
