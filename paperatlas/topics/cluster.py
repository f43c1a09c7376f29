"""Clustering paper embeddings at two levels, with k chosen by measurement.

Coarse topics: k-means on the unit-length embeddings (so euclidean k-means ranks like
cosine) for every k in a candidate range; the k with the best silhouette (cosine, on a
fixed sample) wins. Fine topics: the same, inside each coarse topic, so every fine topic
has exactly one parent. Everything is seeded, so a rebuild of the same library gives the
same topics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..registry import Registry


@dataclass
class Clustering:
    labels: np.ndarray  # (n,) int: cluster of each row, 0..k-1
    centers: np.ndarray  # (k, d) unit-length centroids
    k: int
    scores: dict[int, float] = field(default_factory=dict)  # candidate k -> silhouette


class Clusterer(Protocol):
    def fit(self, x: np.ndarray) -> Clustering: ...


CLUSTERERS: Registry[Clusterer] = Registry("clusterer")


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def kmeans(x: np.ndarray, k: int, seed: int, n_init: int = 3, init: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(labels, centers) of k-means; deterministic for a seed."""
    from sklearn.cluster import KMeans

    k = max(1, min(k, x.shape[0]))
    if init is not None:
        km = KMeans(k, init=init, n_init=1, random_state=seed, max_iter=100)
    else:
        km = KMeans(k, n_init=n_init, random_state=seed, max_iter=100)
    labels = km.fit_predict(x)
    return labels.astype(np.int32), unit(km.cluster_centers_)


def silhouette(x: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette with cosine distance; -1 when fewer than two clusters."""
    from sklearn.metrics import silhouette_score

    if len(np.unique(labels)) < 2 or len(labels) < 3:
        return -1.0
    return float(silhouette_score(x, labels, metric="cosine"))


def candidate_ks(n: int, lo: int, hi: int, steps: int = 8) -> list[int]:
    """About `steps` values of k from lo to hi, spaced geometrically, each cluster >= 5 papers."""
    hi = max(2, min(hi, n // 5))
    lo = max(2, min(lo, hi))
    ks = np.unique(np.round(np.geomspace(lo, hi, num=steps)).astype(int))
    return [int(k) for k in ks]


def auto_kmeans(x: np.ndarray, ks: Sequence[int], seed: int = 0, fit_sample: int = 12_000,
                score_sample: int = 3_000) -> Clustering:
    """k-means for each k in ks on a sample, scored by silhouette; the best k refit on all rows."""
    x = unit(x)
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    if n <= 2 or not ks:
        return Clustering(np.zeros(n, np.int32), x.mean(axis=0, keepdims=True) if n else x, 1 if n else 0)
    fit_idx = np.sort(rng.choice(n, size=fit_sample, replace=False)) if n > fit_sample else np.arange(n)
    xf = x[fit_idx]
    score_pos = np.sort(rng.choice(len(fit_idx), size=min(score_sample, len(fit_idx)), replace=False))
    scores: dict[int, float] = {}
    fits: dict[int, np.ndarray] = {}
    for k in ks:
        if k >= len(fit_idx):
            continue
        labels, centers = kmeans(xf, k, seed)
        scores[k] = silhouette(xf[score_pos], labels[score_pos])
        fits[k] = centers
    if not scores:
        return Clustering(np.zeros(n, np.int32), unit(x.mean(axis=0, keepdims=True)), 1)
    best = max(scores, key=lambda k: (round(scores[k], 4), -k))  # ties -> fewer topics
    if len(fit_idx) == n:
        labels, centers = kmeans(x, best, seed)
    else:
        labels, centers = kmeans(x, best, seed, init=fits[best])
    return Clustering(*_relabel(labels, centers), k=best, scores=scores)


def _relabel(labels: np.ndarray, centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number clusters by size (largest = 0), dropping empty ones, so ids are stable."""
    k = centers.shape[0]
    sizes = np.bincount(labels, minlength=k)
    order = [c for c in np.lexsort((np.arange(k), -sizes)) if sizes[c] > 0]
    remap = np.full(k, -1, dtype=np.int32)
    remap[order] = np.arange(len(order))
    return remap[labels], centers[order]


@CLUSTERERS.register("kmeans")
class AutoKMeans:
    """k-means with k chosen by silhouette over a geometric range."""

    def __init__(self, k: int | None = None, k_min: int = 8, k_max: int = 40, seed: int = 0) -> None:
        self.k, self.k_min, self.k_max, self.seed = k, k_min, k_max, seed

    def fit(self, x: np.ndarray) -> Clustering:
        ks = [self.k] if self.k else candidate_ks(x.shape[0], self.k_min, self.k_max)
        return auto_kmeans(x, ks, self.seed)


def split_fine(x: np.ndarray, coarse: np.ndarray, seed: int = 0, k_max: int = 8,
               min_size: int = 20) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fine topics inside each coarse topic: (fine labels, parent of each fine topic, centers).

    Each coarse topic of at least `min_size` papers is split by `auto_kmeans` with k from
    2 to k_max (each part >= 5 papers); a smaller one stays whole."""
    x = unit(x)
    fine = np.zeros(x.shape[0], dtype=np.int32)
    parents: list[int] = []
    centers: list[np.ndarray] = []
    for c in range(int(coarse.max()) + 1 if len(coarse) else 0):
        rows = np.flatnonzero(coarse == c)
        if len(rows) >= min_size:
            cl = auto_kmeans(x[rows], candidate_ks(len(rows), 2, k_max, steps=k_max), seed + c + 1)
        else:
            cl = Clustering(np.zeros(len(rows), np.int32), unit(x[rows].mean(axis=0, keepdims=True)), 1)
        fine[rows] = cl.labels + len(parents)
        parents.extend([c] * cl.centers.shape[0])
        centers.append(cl.centers)
    return fine, np.asarray(parents, dtype=np.int32), (np.vstack(centers) if centers else np.zeros((0, x.shape[1])))
