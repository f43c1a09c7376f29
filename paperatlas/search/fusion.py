"""Pure fusion functions over ranked lists of (id, score)."""

from __future__ import annotations

from collections.abc import Sequence

Ranked = Sequence[tuple[str, float]]


def rrf(lists: Sequence[Ranked], weights: Sequence[float] | None = None, k: int = 60,
        limit: int | None = None) -> list[tuple[str, float]]:
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


def convex(lists: Sequence[Ranked], weights: Sequence[float], limit: int | None = None,
           missing: float = 0.0) -> list[tuple[str, float]]:
    """Min-max-normalised convex fusion: score(d) = sum_i w_i * norm_i(d); a document
    absent from list i gets `missing` there (0 = the worst score that list retrieved)."""
    norms = [minmax(r) for r in lists]
    ids: dict[str, None] = {}
    for r in lists:
        for pid, _ in r:
            ids.setdefault(pid, None)
    total = sum(weights) or 1.0
    out = [(pid, sum(w * n.get(pid, missing) for w, n in zip(weights, norms)) / total) for pid in ids]
    out.sort(key=lambda x: (-x[1], x[0]))
    return out[:limit] if limit else out
