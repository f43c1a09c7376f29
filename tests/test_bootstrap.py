"""paperatlas_lab.eval.bootstrap: the paired interval every benchmark's adopt rule reads."""

from __future__ import annotations

import numpy as np

from paperatlas_lab.eval.bootstrap import paired_interval


def test_interval_brackets_the_mean_and_narrows_with_more_pairs() -> None:
    rng = np.random.default_rng(1)
    small, large = rng.normal(0.01, 0.1, 50), rng.normal(0.01, 0.1, 5000)
    lo, hi = paired_interval(small)
    assert lo < small.mean() < hi
    lo2, hi2 = paired_interval(large)
    assert lo2 < large.mean() < hi2 and hi2 - lo2 < (hi - lo) / 5
    assert np.allclose(paired_interval(np.full(30, 0.02)), (0.02, 0.02))  # no spread, no doubt


def test_same_seed_same_interval_and_a_shared_stream_moves_on() -> None:
    d = np.random.default_rng(2).normal(size=100)
    assert paired_interval(d) == paired_interval(d)  # seeded: a rerun prints the same figures
    rng = np.random.default_rng(0)
    first, second = paired_interval(d, rng=rng), paired_interval(d, rng=rng)
    assert first == paired_interval(d) and second != first
