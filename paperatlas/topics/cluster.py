"""Clustering papers at two levels, with k chosen by measurement.

The pipeline clusters in a 5-D neighbour embedding of the papers (UMAP-style, as
BERTopic does), not in the raw 384-D space: on ICLR 2024 (tuning half) k-means there
agrees better with the authors' primary areas at every k, and its silhouette has a real
peak, while on raw embeddings silhouette only falls as k grows, so it would always
pick the smallest k on offer.

Coarse topics: k-means for every k in 10..40 (geometric steps); the k with the best mean
silhouette (over 5 seeds, on a fixed sample) wins. On the tuning data the silhouette
curve has two peaks, a trivial one at 6-8 topics and the useful one at 25-32, hence the
floor of 10. Fine topics: the same inside
each coarse topic, so every fine topic has exactly one parent. Everything is seeded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..registry import Registry


@dataclass
class Clustering:
    labels: np.ndarray  # (n,) int: cluster of each row, 0..k-1, largest cluster first
    k: int
    scores: dict[int, float] = field(default_factory=dict)  # candidate k -> mean silhouette


class Clusterer(Protocol):
    def fit(self, x: np.ndarray) -> Clustering: ...


CLUSTERERS: Registry[Clusterer] = Registry("clusterer")


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def _sqdist(x: np.ndarray, c: np.ndarray, xx: np.ndarray) -> np.ndarray:
    d = x @ c.T
    d *= -2.0
    d += xx[:, None]
    d += np.einsum("ij,ij->i", c, c)[None, :]
    return np.maximum(d, 0.0, out=d)


def _kmeans_once(x: np.ndarray, k: int, rng: np.random.Generator, max_iter: int) -> tuple[np.ndarray, float]:
    n = x.shape[0]
    xx = np.einsum("ij,ij->i", x, x)
    # k-means++ seeding, with a few candidates per step as in scikit-learn's greedy variant
    trials = 2 + int(np.log(k))
    centers = np.empty((k, x.shape[1]), dtype=x.dtype)
    centers[0] = x[rng.integers(n)]
    closest = _sqdist(x, centers[:1], xx)[:, 0]
    for i in range(1, k):
        total = float(closest.sum())
        if total <= 0:
            centers[i:] = x[rng.integers(n, size=k - i)]
            break
        cand = np.searchsorted(np.cumsum(closest), rng.random(trials) * total).clip(0, n - 1)
        d = np.minimum(closest[:, None], _sqdist(x, x[cand], xx))
        best = int(np.argmin(d.sum(axis=0)))
        centers[i] = x[cand[best]]
        closest = d[:, best]
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(max_iter):
        # argmin over centres of |c|^2 - 2 x.c: the same order as the distances, |x|^2 dropped
        scores = x @ (-2.0 * centers.T)
        scores += np.einsum("ij,ij->i", centers, centers)[None, :]
        new = np.argmin(scores, axis=1)
        moved = int(np.count_nonzero(new != labels))
        labels = new
        if moved <= n // 2000:  # (nearly) converged: the last few moves change nothing visible
            break
        counts = np.bincount(labels, minlength=k)
        for j in range(x.shape[1]):
            centers[:, j] = np.bincount(labels, x[:, j], minlength=k) / np.maximum(counts, 1)
        empty = np.flatnonzero(counts == 0)
        if len(empty):  # restart an empty cluster at the worst-served point
            far = np.argsort(-scores[np.arange(n), labels])[: len(empty)]
            centers[empty] = x[far]
    diff = x - centers[labels]
    return labels.astype(np.int32), float(np.einsum("ij,ij->", diff, diff))


def kmeans(x: np.ndarray, k: int, seed: int, n_init: int = 3, max_iter: int = 100) -> np.ndarray:
    """Labels of k-means (k-means++ starts, best of n_init by inertia); deterministic for a seed.

    A small numpy Lloyd loop: the pipeline clusters a 5-D embedding, where this is faster
    than scikit-learn's per-call thread-pool overhead across the ~500 small fits of a build."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    k = max(1, min(k, x.shape[0]))
    rng = np.random.default_rng(seed)
    best: tuple[np.ndarray, float] | None = None
    for _ in range(max(1, n_init)):
        run = _kmeans_once(x, k, rng, max_iter)
        if best is None or run[1] < best[1]:
            best = run
    assert best is not None
    return best[0]


def silhouette(x: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette (euclidean); -1 when there are fewer than two clusters."""
    from sklearn.metrics import silhouette_score

    if len(np.unique(labels)) < 2 or len(labels) < 3:
        return -1.0
    return float(silhouette_score(x, labels))


def candidate_ks(n: int, lo: int, hi: int, steps: int = 9) -> list[int]:
    """About `steps` values of k from lo to hi, spaced geometrically, each cluster >= 5 papers."""
    hi = max(2, min(hi, n // 5))
    lo = max(2, min(lo, hi))
    ks = np.unique(np.round(np.geomspace(lo, hi, num=steps)).astype(int))
    return [int(k) for k in ks]


def auto_kmeans(
    x: np.ndarray, ks: Sequence[int], seed: int = 0, repeats: int = 3, score_sample: int = 2_000
) -> Clustering:
    """k-means for each k in ks, scored by silhouette averaged over `repeats` seeds on one
    fixed sample of rows; the best k is refit on all rows (best of 3 starts)."""
    n = x.shape[0]
    ks = [k for k in ks if 2 <= k < n]
    if not ks:
        return Clustering(np.zeros(n, np.int32), 1 if n else 0)
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(n, size=min(score_sample, n), replace=False))
    scores: dict[int, float] = {}
    for k in ks:
        scores[k] = float(
            np.mean([silhouette(x[sample], kmeans(x, k, seed + r, n_init=1)[sample]) for r in range(repeats)])
        )
    best = max(ks, key=lambda k: (round(scores[k], 4), -k))  # ties -> fewer topics
    return Clustering(relabel(kmeans(x, best, seed)), best, scores)


def relabel(labels: np.ndarray) -> np.ndarray:
    """Number clusters by size (largest = 0, ties by first row), dropping empty ones."""
    uniq, first, sizes = np.unique(labels, return_index=True, return_counts=True)
    order = np.lexsort((first, -sizes))
    remap = np.zeros(int(uniq.max()) + 1 if len(uniq) else 0, dtype=np.int32)
    remap[uniq[order]] = np.arange(len(order), dtype=np.int32)
    return remap[labels]


@CLUSTERERS.register("kmeans")
class AutoKMeans:
    """k-means with k chosen by silhouette over a geometric range (or a fixed k)."""

    def __init__(self, k: int | None = None, k_min: int = 10, k_max: int = 40, seed: int = 0, repeats: int = 5) -> None:
        self.repeats = repeats
        self.k, self.k_min, self.k_max, self.seed = k, k_min, k_max, seed

    def fit(self, x: np.ndarray) -> Clustering:
        if self.k:
            return Clustering(relabel(kmeans(x, self.k, self.seed)), min(self.k, x.shape[0]))
        n = x.shape[0]
        # a small library gets fewer topics: about 40-15 papers per topic at the ends of the range
        lo = min(self.k_min, max(2, n // 40))
        hi = min(self.k_max, max(lo, n // 15))
        return auto_kmeans(x, candidate_ks(n, lo, hi), self.seed, self.repeats)


def _absorb_small(x: np.ndarray, labels: np.ndarray, min_part: int) -> np.ndarray:
    """Move the papers of parts smaller than min_part to the nearest larger part."""
    sizes = np.bincount(labels)
    big = np.flatnonzero(sizes >= min_part)
    if len(big) == len(sizes) or not len(big):
        return labels
    centers = np.stack([x[labels == c].mean(axis=0) for c in big])
    out = labels.copy()
    small = ~np.isin(labels, big)
    d = ((x[small, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    out[small] = big[np.argmin(d, axis=1)]
    return relabel(out)


def split_fine(
    x: np.ndarray, coarse: np.ndarray, seed: int = 0, k_max: int = 8, min_size: int = 20, min_part: int = 5
) -> tuple[np.ndarray, np.ndarray]:
    """Fine topics inside each coarse topic: (fine label of each row, parent of each fine topic).

    A coarse topic of at least `min_size` papers is split by `auto_kmeans` with k from 2
    to k_max; parts under `min_part` papers join their nearest sibling; a smaller topic
    stays whole."""
    fine = np.zeros(x.shape[0], dtype=np.int32)
    parents: list[int] = []
    for c in range(int(coarse.max()) + 1 if len(coarse) else 0):
        rows = np.flatnonzero(coarse == c)
        if not len(rows):
            continue
        if len(rows) >= min_size:
            cl = auto_kmeans(x[rows], candidate_ks(len(rows), 2, k_max, steps=k_max), seed + c + 1)
            labels = _absorb_small(x[rows], cl.labels, min_part)
        else:
            labels = np.zeros(len(rows), np.int32)
        fine[rows] = labels + len(parents)
        parents.extend([c] * (int(labels.max()) + 1))
    return fine, np.asarray(parents, dtype=np.int32)
