"""Reading groups: one list of N papers that is fair to every member.

Each member ranks the papers (their own recommendations); a paper earns a member a
truncated Borda score (`depth - rank` for their top `depth`, else 0). The list maximises
the Nash social welfare, the product over members of their total Borda score, greedily
(add the paper with the largest gain in the sum of logs). Plain sum of scores is the
comparison: it can hand the whole list to the members whose tastes agree.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..index.numpy import top_k

METHODS = ("nash", "sum")


def default_depth(n_papers: int, list_length: int) -> int:
    """Borda depth: each member's top 100, or top 10% of a small library (at least 3x the list),
    so that a paper only earns points from members who actually rank it high."""
    return int(max(min(100, n_papers // 10), 3 * list_length, 1))


def borda(scores: np.ndarray, exclude: np.ndarray | None = None, depth: int = 100) -> np.ndarray:
    """(n,) truncated Borda points from one member's scores: depth for their best paper, down to 1."""
    s = scores.astype(np.float64, copy=True)
    if exclude is not None:
        s[exclude] = -np.inf
    out = np.zeros(len(s), dtype=np.float64)
    top = [i for i in top_k(s, depth) if np.isfinite(s[i])]
    out[top] = depth - np.arange(len(top))
    return out


def select(points: np.ndarray, k: int, method: str = "nash", exclude: np.ndarray | None = None) -> list[int]:
    """Pick k columns of the (members, papers) Borda matrix by Nash welfare or by sum; never a
    column in `exclude` (a boolean mask), even when fewer than k others remain."""
    if method not in METHODS:
        raise ValueError(f"unknown group method {method!r}; use one of {', '.join(METHODS)}")
    m, n = points.shape
    avail = np.ones(n, dtype=bool) if exclude is None else ~exclude
    k = min(k, int(avail.sum()))
    if method == "sum":
        total = points.sum(0).astype(np.float64)
        total[~avail] = -np.inf
        return [int(i) for i in top_k(total, k)]
    chosen: list[int] = []
    util = np.zeros(m)
    avail = avail.copy()
    for _ in range(k):
        # +1 keeps log finite before a member has any points; the greedy gain is exact otherwise
        gain = np.log1p(util[:, None] + points).sum(0) - np.log1p(util).sum()
        gain[~avail] = -np.inf
        j = int(np.argmax(gain))
        chosen.append(j)
        avail[j] = False
        util += points[:, j]
    return chosen


def member_stats(points: np.ndarray, chosen: Sequence[int]) -> list[dict[str, float]]:
    """Per member: share of the list's total points, and satisfaction = their points over the
    points of their own best list of the same length."""
    chosen = list(chosen)
    got = points[:, chosen].sum(1) if chosen else np.zeros(points.shape[0])
    total = got.sum() or 1.0
    out = []
    for i in range(points.shape[0]):
        best = np.sort(points[i])[::-1][: len(chosen)].sum() or 1.0
        out.append(
            {
                "share": float(got[i] / total),
                "satisfaction": float(got[i] / best),
                "in_their_top": int(sum(1 for j in chosen if points[i, j] > 0)),
            }
        )
    return out
