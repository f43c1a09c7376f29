"""benchmarks/query_adapter.py, the fit behind the default model's query map: its hand-written gradients
against finite differences, and a fit that recovers a known turn of the query space (small random arrays)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location(
    "query_adapter", Path(__file__).resolve().parent.parent / "benchmarks" / "query_adapter.py"
)
assert _spec is not None and _spec.loader is not None
qa = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qa)


def _problem(seed: int = 0, dim: int = 6, n_docs: int = 30, n_q: int = 8):
    rng = np.random.default_rng(seed)
    docs = qa.unit(rng.normal(size=(n_docs, dim)))
    q = rng.normal(size=(n_q, dim))
    y = rng.integers(0, n_docs, size=n_q)
    W = np.eye(dim) + 0.1 * rng.normal(size=(dim, dim))
    return W, q, y, docs


def _numeric(f, W: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    g = np.zeros_like(W)
    for i in np.ndindex(*W.shape):
        d = np.zeros_like(W)
        d[i] = eps
        g[i] = (f(W + d) - f(W - d)) / (2 * eps)
    return g


@pytest.mark.parametrize("held", [np.array([], dtype=int), np.array([1, 2, 3])])
def test_contrastive_gradient_matches_finite_differences(held: np.ndarray) -> None:
    W, q, y, docs = _problem()
    y[0] = held[0] if len(held) else y[0]  # a positive among the held-out papers is still a positive
    loss, g = qa.grad(W, q, y, docs, held, 0.1)
    num = _numeric(lambda M: qa.grad(M, q, y, docs, held, 0.1)[0], W)
    assert loss > 0 and np.allclose(g, num, atol=1e-5)
    # several relevant papers a query (padded with -1) count as one positive share
    y2 = np.stack([y, np.roll(y, 1), np.full_like(y, -1)], axis=1)
    _, g2 = qa.grad(W, q, y2, docs, held, 0.1)
    assert np.allclose(g2, _numeric(lambda M: qa.grad(M, q, y2, docs, held, 0.1)[0], W), atol=1e-5)


def test_distillation_is_zero_at_the_identity_and_its_gradient_is_right() -> None:
    W, q, _, docs = _problem(1)
    loss0, g0 = qa.distill(np.eye(len(W)), q, docs, 0.1)
    assert abs(loss0) < 1e-9 and np.abs(g0).max() < 1e-6
    _, g = qa.distill(W, q, docs, 0.1)
    assert np.allclose(g, _numeric(lambda M: qa.distill(M, q, docs, 0.1)[0], W), atol=1e-5)


def test_fit_learns_a_turn_of_the_query_space() -> None:
    """Queries are their paper's vector turned by a fixed rotation: the identity ranks them badly, and the
    fitted map, pulled only weakly towards the identity, undoes most of the turn."""
    rng = np.random.default_rng(2)
    dim, n = 8, 200
    docs = qa.unit(rng.normal(size=(n, dim)))
    rot, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    y = np.arange(n)
    q = (docs @ rot.T).astype(np.float32)
    d = {
        "v_docs": docs.astype(np.float32),
        "v_held": np.array([], dtype=int),
        "v_train_q": q[:150],
        "v_train_y": y[:150],
        "s_docs": docs.astype(np.float32),
        "s_held": np.array([], dtype=int),
        "s_train_q": q[:1],
        "s_train_y": y[:1].reshape(1, 1),
    }
    before = qa.mrr10(qa.unit(q[150:]), y[150:], docs)
    W = qa.fit(d, reg=1e-4, tau=0.05, steps=300, lr=0.01, scifact_share=0.0)
    after = qa.mrr10(qa.adapt(W, q[150:]), y[150:], docs)  # the 50 queries it never saw
    assert before < 0.3 and after > 0.9
