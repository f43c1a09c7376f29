"""The ACM-CR weight sweep's adoption rule (benchmarks/acm_weights.py): a variant replaces the shipped
weights only when picking the tuning readers' best is itself better on held-out readers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

_spec = importlib.util.spec_from_file_location(
    "acm_weights", Path(__file__).resolve().parents[1] / "benchmarks" / "acm_weights.py"
)
assert _spec and _spec.loader
acm_weights = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(acm_weights)


def _readers(values: np.ndarray) -> dict[int, float]:
    return {2 * i: float(v) for i, v in enumerate(values)}  # tuning readers sit at even positions


def test_a_variant_better_on_every_reader_is_adopted() -> None:
    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.6, 25)
    tune = {"shipped": _readers(base), "x=1": _readers(base + 0.02), "x=2": _readers(base - 0.05)}
    cv = acm_weights.cross_validated(tune)
    assert cv["picks per fold"] == ["x=1"] * 5 and cv["adopt"] == "x=1"
    assert cv["difference 90% interval"][0] > 0


def test_noise_keeps_the_shipped_weights() -> None:
    rng = np.random.default_rng(2)
    base = rng.uniform(0.2, 0.6, 25)
    # best on the mean of all readers, by luck of a few: better on some readers, worse on others
    noisy = base + rng.normal(0.002, 0.03, 25)
    tune = {"shipped": _readers(base), "x=1": _readers(noisy)}
    cv = acm_weights.cross_validated(tune)
    assert np.mean(noisy) > np.mean(base)
    assert cv["difference 90% interval"][0] <= 0 and cv["adopt"] == "shipped"


def test_ties_go_to_the_shipped_weights() -> None:
    base = np.linspace(0.2, 0.6, 25)
    cv = acm_weights.cross_validated({"x=1": _readers(base), "shipped": _readers(base)})
    assert cv["picks per fold"] == ["shipped"] * 5 and cv["adopt"] == "shipped"
