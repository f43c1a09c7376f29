"""2-D layouts of paper embeddings: a registry of reducers, measured against each other.

The default, "neighbors", is UMAP's recipe (fuzzy k-nearest-neighbour graph, then a
force layout whose attraction/repulsion curve comes from `min_dist`) written in numpy:
no numba JIT (umap-learn spends ~35 s of CPU compiling in every new process, more than
the whole 8k-paper budget), deterministic for a seed, and linear in the number of edges.
"umap" (umap-learn) and "tsne" (openTSNE) are optional backends with the same shape.
`paperatlas bench topics` prints the time and neighbour preservation of each.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from ..errors import PaperatlasError
from ..registry import Registry


class Reducer(Protocol):
    def fit_transform(self, x: np.ndarray) -> np.ndarray:
        """(n, d) float32 -> (n, 2) float32."""
        ...


REDUCERS: Registry[Reducer] = Registry("layout")


def pca(x: np.ndarray, dims: int, seed: int = 0) -> np.ndarray:
    """Top principal components (randomised SVD for big inputs), deterministic for a seed."""
    x = np.asarray(x, dtype=np.float32)
    xc = x - x.mean(axis=0, keepdims=True)
    dims = min(dims, x.shape[1], max(1, x.shape[0] - 1))
    if x.shape[0] <= 3000 or x.shape[1] <= dims + 10:
        _, _, vt = np.linalg.svd(xc, full_matrices=False)
    else:
        from sklearn.utils.extmath import randomized_svd

        _, _, vt = randomized_svd(xc, dims, random_state=seed, n_iter=4)
    # fix the sign of each component so the result does not depend on the SVD routine
    vt = vt[:dims]
    signs = np.sign(vt[np.arange(len(vt)), np.argmax(np.abs(vt), axis=1)])
    return (xc @ (vt * signs[:, None]).T).astype(np.float32)


def knn(x: np.ndarray, k: int, block: int = 1024, workers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest neighbours by euclidean distance (self excluded): (indices, distances).

    Blocked matrix products keep memory at block * n floats per worker. The partial sort
    of each block dominates and numpy runs it without the GIL, so blocks go to a thread
    per core: 100k points in 50 dimensions take a few minutes on two cores.
    """
    import os
    from concurrent.futures import ThreadPoolExecutor

    x = np.ascontiguousarray(x, dtype=np.float32)
    n = x.shape[0]
    k = min(k, n - 1)
    sq = np.einsum("ij,ij->i", x, x)
    idx = np.empty((n, k), dtype=np.int32)
    dist = np.empty((n, k), dtype=np.float32)

    def run(s: int) -> None:
        e = min(n, s + block)
        d2 = x[s:e] @ x.T
        d2 *= -2.0
        d2 += sq[s:e, None]
        d2 += sq[None, :]
        d2[np.arange(e - s), np.arange(s, e)] = np.inf  # not your own neighbour
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        pd = np.take_along_axis(d2, part, axis=1)
        order = np.lexsort((part, pd), axis=1)  # by distance, ties by index: deterministic
        idx[s:e] = np.take_along_axis(part, order, axis=1)
        dist[s:e] = np.sqrt(np.maximum(np.take_along_axis(pd, order, axis=1), 0.0))

    starts = range(0, n, block)
    workers = workers or min(4, os.cpu_count() or 1)
    if workers <= 1 or n <= 4 * block:
        for s in starts:
            run(s)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))
    return idx, dist


def fuzzy_graph(idx: np.ndarray, dist: np.ndarray, n_iter: int = 48) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """UMAP's fuzzy simplicial set: symmetric edge list (heads, tails, weights)."""
    from scipy import sparse

    n, k = idx.shape
    rho = dist[:, 0].astype(np.float64)
    target = np.log2(k)
    lo = np.zeros(n)
    hi = np.full(n, np.inf)
    sigma = np.ones(n)
    d = np.maximum(dist.astype(np.float64) - rho[:, None], 0.0)
    for _ in range(n_iter):  # vectorised binary search for every point's bandwidth
        psum = np.exp(-d / sigma[:, None]).sum(axis=1)
        big = psum > target
        hi = np.where(big, sigma, hi)
        lo = np.where(big, lo, sigma)
        sigma = np.where(np.isinf(hi), sigma * 2.0, (lo + hi) / 2.0)
    mean_d = max(float(dist.mean()), 1e-12)
    sigma = np.maximum(sigma, 1e-3 * mean_d)
    w = np.exp(-d / sigma[:, None])
    rows = np.repeat(np.arange(n), k)
    a = sparse.csr_matrix((w.ravel(), (rows, idx.ravel())), shape=(n, n))
    sym = (a + a.T - a.multiply(a.T)).tocoo()
    return sym.row.astype(np.int32), sym.col.astype(np.int32), sym.data.astype(np.float32)


def _init(x: np.ndarray, heads: np.ndarray, tails: np.ndarray, w: np.ndarray, seed: int, dims: int = 2) -> np.ndarray:
    """Spectral embedding of the graph (UMAP's default), or PCA when that does not converge."""
    from scipy import sparse
    from scipy.sparse.linalg import eigsh

    n = x.shape[0]
    rng = np.random.default_rng(seed)
    y: np.ndarray | None = None
    if n > 10:
        try:
            g = sparse.csr_matrix((w, (heads, tails)), shape=(n, n))
            deg = np.asarray(g.sum(axis=1)).ravel()
            dinv = sparse.diags(1.0 / np.sqrt(np.maximum(deg, 1e-12)))
            # the largest eigenvectors of D^-1/2 W D^-1/2 are the smallest of the normalised Laplacian
            m = dinv @ g @ dinv
            v0 = rng.uniform(-1, 1, n)
            vals, vecs = eigsh(m, k=dims + 1, which="LA", v0=v0, tol=1e-4, maxiter=n * 5)
            order = np.argsort(-vals)
            y = vecs[:, order[1 : dims + 1]]
            y = y * np.sign(y[np.argmax(np.abs(y), axis=0), np.arange(dims)])  # fixed sign per axis
        except Exception:  # ARPACK may fail on a disconnected graph: fall back to PCA
            y = None
    if y is None or not np.all(np.isfinite(y)):
        y = pca(x, dims, seed).astype(np.float64)
    y = y - y.mean(axis=0)
    y = 10.0 * y / max(float(np.abs(y).max()), 1e-12)
    return (y + rng.normal(scale=1e-4, size=y.shape)).astype(np.float32)


def _optimize(
    y: np.ndarray,
    heads: np.ndarray,
    tails: np.ndarray,
    w: np.ndarray,
    n_epochs: int,
    seed: int,
    a: float = 1.577,
    b: float = 0.895,
    negative: int = 5,
    learning_rate: float = 1.0,
) -> np.ndarray:
    """UMAP's cross-entropy force layout, with all sampled edges of an epoch applied at once."""
    rng = np.random.default_rng(seed)
    n = y.shape[0]
    keep = w >= w.max() / n_epochs
    heads, tails, w = heads[keep], tails[keep], w[keep]
    eps = (w.max() / w).astype(np.float32)  # an edge is sampled every eps epochs
    next_at = eps.copy()
    y = y.astype(np.float32).copy()
    a32, b32 = np.float32(a), np.float32(b)
    for e in range(n_epochs):
        alpha = np.float32(learning_rate * (1.0 - e / n_epochs))
        sel = np.flatnonzero(next_at <= e + 1)
        next_at[sel] += eps[sel]
        h, t = heads[sel], tails[sel]
        # attraction along sampled edges (both ends move), repulsion from `negative`
        # random points per edge (only the head moves): one gather, one scatter per axis
        hn = np.repeat(h, negative)
        tn = rng.integers(0, n, size=hn.shape[0]).astype(np.int32)
        src = np.concatenate([h, hn])
        dst = np.concatenate([t, tn])
        diff = y[src] - y[dst]
        d2 = np.einsum("ij,ij->i", diff, diff)
        m = len(h)
        pb = np.power(np.maximum(d2, np.float32(1e-12)), b32 - 1)  # d2^(b-1)
        den = a32 * pb * d2 + 1  # 1 + a d2^b
        coef = np.empty_like(d2)
        coef[:m] = np.where(d2[:m] > 0, -2 * a32 * b32 * pb[:m] / den[:m], 0)
        coef[m:] = np.where(dst[m:] != src[m:], 2 * b32 / ((np.float32(0.001) + d2[m:]) * den[m:]), 0)
        g = np.clip(coef[:, None] * diff, -4, 4)
        g *= alpha
        idx = np.concatenate([src, t])
        for dim in range(y.shape[1]):
            wts = np.concatenate([g[:, dim], -g[:m, dim]])
            y[:, dim] += np.bincount(idx, wts, minlength=n).astype(np.float32)
    return y


@dataclass
class NeighborGraph:
    """The fuzzy k-NN graph of a set of vectors; build once, embed in several dimensions."""

    z: np.ndarray  # the PCA-reduced vectors the graph was built on
    heads: np.ndarray
    tails: np.ndarray
    weights: np.ndarray

    @classmethod
    def build(cls, x: np.ndarray, n_neighbors: int = 15, pca_dims: int = 50, seed: int = 0) -> NeighborGraph:
        x = np.asarray(x, dtype=np.float32)
        z = pca(x, pca_dims, seed) if x.shape[1] > pca_dims else x
        idx, dist = knn(z, n_neighbors)
        return cls(z, *fuzzy_graph(idx, dist))

    def embed(
        self,
        dims: int = 2,
        min_dist: float = 0.1,
        n_epochs: int | None = None,
        seed: int = 0,
        negative: int = 5,
        learning_rate: float = 1.0,
    ) -> np.ndarray:
        """A `dims`-dimensional embedding that keeps the graph's neighbours close."""
        n = self.z.shape[0]
        y = _init(self.z, self.heads, self.tails, self.weights, seed, dims)
        # UMAP uses 500 epochs below 10k points; 300 measured the same here (ICLR half A: k-means
        # NMI 0.379 vs 0.380, 10-NN preservation 0.347 vs 0.350) at 60% of the time
        epochs = n_epochs or (300 if n <= 10_000 else 200)
        a, b = _ab(min_dist)
        return _optimize(y, self.heads, self.tails, self.weights, epochs, seed, a, b, negative, learning_rate)


@REDUCERS.register("neighbors")
class NeighborLayout:
    """UMAP-style layout in numpy: k-NN graph on PCA-50, fuzzy weights, force layout."""

    # Map defaults chosen on the 8,117 venue papers by 10-NN preservation (no labels involved):
    # min_dist 0.1 / 5 negatives / rate 1.0 (UMAP's) kept 0.176 of each paper's 10 nearest
    # neighbours, umap-learn itself 0.193, these 0.220 (openTSNE: 0.322 at 5x the CPU).
    def __init__(
        self,
        n_neighbors: int = 15,
        n_epochs: int | None = None,
        pca_dims: int = 50,
        min_dist: float = 0.05,
        seed: int = 0,
        n_components: int = 2,
        negative: int = 8,
        learning_rate: float = 0.5,
    ) -> None:
        self.negative, self.learning_rate = negative, learning_rate
        self.n_components = n_components
        self.n_neighbors = n_neighbors
        self.n_epochs = n_epochs
        self.pca_dims = pca_dims
        self.min_dist = min_dist
        self.seed = seed

    def fit_transform(self, x: np.ndarray, graph: NeighborGraph | None = None) -> np.ndarray:
        n = x.shape[0]
        if n < 4:
            return _tiny(n, self.n_components)
        g = graph or NeighborGraph.build(x, self.n_neighbors, self.pca_dims, self.seed)
        return g.embed(self.n_components, self.min_dist, self.n_epochs, self.seed, self.negative, self.learning_rate)


@lru_cache(maxsize=16)
def _ab(min_dist: float, spread: float = 1.0) -> tuple[float, float]:
    """The a, b of UMAP's 1 / (1 + a d^2b) curve for this min_dist (least squares, as UMAP)."""
    if abs(min_dist - 0.1) < 1e-9 and spread == 1.0:
        return 1.577, 0.895
    if min_dist == 0.0 and spread == 1.0:
        return 1.933, 0.7905
    from scipy.optimize import curve_fit

    xv = np.linspace(0, spread * 3, 300)
    yv = np.where(xv < min_dist, 1.0, np.exp(-(xv - min_dist) / spread))
    (a, b), _ = curve_fit(lambda d, a, b: 1.0 / (1.0 + a * d ** (2 * b)), xv, yv)
    return float(a), float(b)


def _tiny(n: int, dims: int = 2) -> np.ndarray:
    """Too few papers to lay out: put them on a circle."""
    ang = np.linspace(0, 2 * np.pi, n, endpoint=False)
    y = np.zeros((n, dims), dtype=np.float32)
    if n:
        y[:, 0], y[:, 1 % dims] = np.cos(ang), np.sin(ang)
    return y


@REDUCERS.register("umap")
class UmapLayout:
    """umap-learn (optional: pip install umap-learn); first use JIT-compiles for ~30-60 s."""

    def __init__(self, n_neighbors: int = 15, min_dist: float = 0.1, pca_dims: int = 50, seed: int = 0) -> None:
        self.opts = dict(n_neighbors=n_neighbors, min_dist=min_dist, random_state=seed)
        self.pca_dims, self.seed = pca_dims, seed

    def fit_transform(self, x: np.ndarray) -> np.ndarray:
        if x.shape[0] < 4:
            return _tiny(x.shape[0])
        try:
            import umap
        except ImportError:
            raise PaperatlasError(
                "the 'umap' layout needs umap-learn", "pip install umap-learn, or use the default layout 'neighbors'"
            ) from None
        z = pca(x, self.pca_dims, self.seed)
        return np.asarray(umap.UMAP(**self.opts).fit_transform(z), dtype=np.float32)


@REDUCERS.register("tsne")
class TsneLayout:
    """openTSNE with FFT gradients (optional: pip install openTSNE)."""

    def __init__(self, pca_dims: int = 50, seed: int = 0, n_jobs: int = 1, **opts: Any) -> None:
        self.pca_dims, self.seed, self.n_jobs, self.opts = pca_dims, seed, n_jobs, opts

    def fit_transform(self, x: np.ndarray) -> np.ndarray:
        if x.shape[0] < 4:
            return _tiny(x.shape[0])
        try:
            import openTSNE
        except ImportError:
            raise PaperatlasError(
                "the 'tsne' layout needs openTSNE", "pip install openTSNE, or use the default layout 'neighbors'"
            ) from None
        z = pca(x, self.pca_dims, self.seed)
        perplexity = min(30.0, max(2.0, (x.shape[0] - 1) / 3.0))
        t = openTSNE.TSNE(random_state=self.seed, n_jobs=self.n_jobs, perplexity=perplexity, **self.opts)
        return np.asarray(t.fit(z), dtype=np.float32)


@REDUCERS.register("pca")
class PcaLayout:
    """The first two principal components: instant, but clusters overlap."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def fit_transform(self, x: np.ndarray) -> np.ndarray:
        if x.shape[0] < 4:
            return _tiny(x.shape[0])
        return pca(x, 2, self.seed)


def neighbor_preservation(x: np.ndarray, y: np.ndarray, k: int = 10, sample: int = 1000, seed: int = 0) -> float:
    """Mean share of each point's k nearest neighbours (cosine, full dimension) that are
    also among its k nearest on the map; 1.0 is perfect, k/n is chance."""
    n = x.shape[0]
    rng = np.random.default_rng(seed)
    pick = rng.choice(n, size=min(sample, n), replace=False)
    xs = np.asarray(x, np.float32)
    xs = xs / np.maximum(np.linalg.norm(xs, axis=1, keepdims=True), 1e-12)
    hits = 0.0
    for i in pick:
        s = xs @ xs[i]
        s[i] = -np.inf
        hi = set(np.argpartition(-s, k)[:k].tolist())
        d = ((y - y[i]) ** 2).sum(axis=1)
        d[i] = np.inf
        lo = set(np.argpartition(d, k)[:k].tolist())
        hits += len(hi & lo) / k
    return hits / len(pick)
