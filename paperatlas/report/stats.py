"""The tests behind the trend figures: is a theme's change of share more than noise at its sample size?

Pure functions over counts, checked against textbook values in tests/test_report.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def normal_two_sided_p(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def two_proportion_z(x1: int, n1: int, x2: int, n2: int) -> float:
    """The pooled two-proportion z statistic of x2/n2 against x1/n1 (0 when it is undefined)."""
    if n1 <= 0 or n2 <= 0:
        return 0.0
    p = (x1 + x2) / (n1 + n2)
    var = p * (1 - p) * (1 / n1 + 1 / n2)
    return 0.0 if var <= 0 else (x2 / n2 - x1 / n1) / math.sqrt(var)


def trend_z(counts: Sequence[int], totals: Sequence[int], scores: Sequence[float] | None = None) -> float:
    """The Cochran-Armitage test for a linear trend in proportions counts[i]/totals[i] over ordered
    groups (years), as a z statistic: positive when the share grows. Uses every year, not just the
    first and the last; `scores` are the years themselves by default (uneven gaps count as such)."""
    t = list(scores) if scores is not None else list(range(len(counts)))
    n = sum(totals)
    if n <= 0 or len(counts) < 2:
        return 0.0
    p = sum(counts) / n
    stat = sum(ti * (xi - ni * p) for ti, xi, ni in zip(t, counts, totals))
    var = (
        p
        * (1 - p)
        * (sum(ni * ti * ti for ti, ni in zip(t, totals)) - sum(ni * ti for ti, ni in zip(t, totals)) ** 2 / n)
    )
    return 0.0 if var <= 1e-12 else stat / math.sqrt(var)


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """q-values: the false-discovery-rate adjusted p-values, in the order given (many themes are
    tested at once, so a few p < 0.05 among 30 would be expected by chance alone)."""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    q = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        q[i] = min(1.0, running)
    return q
