"""The bootstrap interval of a paired difference: how far a mean difference between two rankers, scored on
the same queries (or readers), could move if another sample of them had been drawn."""

from __future__ import annotations

import numpy as np


def paired_interval(diff: np.ndarray, draws: int = 5000, rng: np.random.Generator | None = None) -> tuple[float, float]:
    """The 90% interval (5th and 95th percentiles) of the mean of `diff` over `draws` resamples of its
    entries, with replacement. Pass one `rng` to several calls to continue a single random stream."""
    d = np.asarray(diff, dtype=float)
    rng = rng if rng is not None else np.random.default_rng(0)
    boot = d[rng.integers(0, len(d), size=(draws, len(d)))].mean(axis=1)
    lo, hi = np.percentile(boot, [5, 95])
    return float(lo), float(hi)
