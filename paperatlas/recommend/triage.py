"""Pairwise triage: "A or B?", learnt with a Bradley-Terry model, pairs chosen as a dueling bandit.

The reader's utility is linear in each paper's soft membership of K topic clusters
(spherical k-means over the embeddings, or over a TF-IDF SVD without them): a score
per topic. Each answer "A over B" is a logistic observation on m_A - m_B; the
posterior over the topic scores is a Laplace approximation (a few Newton steps).
Topics, not raw PCA directions: a utility linear in raw coordinates ranks the extreme
papers along one direction first, a utility over topics ranks the heart of the
preferred topic first (and did better on the simulated tuning readers).

Pair selection follows the dueling-bandit recipe of sampling plus optimism (Double
Thompson Sampling / MaxInP): A is the best paper under topic scores drawn from the
posterior, nudged by the reader's current recommendation scores when likes or
preferences exist; B is the paper with the best optimistic chance to beat A (mean
advantage plus alpha times its posterior standard deviation), from the topic
posterior alone. Early on A is an exploratory draw and B the paper of a different,
uncertain topic, so the first pairs cross topics; once a topic keeps winning, it
becomes B's side (the champion) and A keeps challenging it with other topics.
B ignores the recommendation scores on purpose: with them, both papers came from the
top of the same ranking, the answer said nothing about topics, and precision@10 on
the simulated tuning readers fell by half.

`next_pair` is the one entry point: the product (api.triage_pair) and the simulated
evaluation (eval/recommend.py) both call it, so what is measured is what is shipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .base import Corpus, Signals

DIM = 32  # PCA dimensions (the fallback coordinates for clustering without embeddings)
PRIOR_VAR = 1.0
ALPHA = 1.0
CLUSTERS = 32  # topics; 16/24/32/48 tried on the simulated tuning readers
TEMPERATURE = 0.05  # softmax temperature of the memberships over cosine similarity


def projection(corpus: Corpus, dim: int | None = None) -> np.ndarray:
    """(n, dim) PCA coordinates of the corpus, scaled to unit mean norm; cached on the corpus."""
    dim = dim or DIM
    z = corpus.cache.get(f"triage_z{dim}")
    if z is not None:
        return z
    n = len(corpus)
    if corpus.emb is not None and corpus.emb.shape[1] > 0:
        x = corpus.emb - corpus.emb.mean(0)
        k = min(dim, x.shape[1], max(1, n - 1))
        # covariance eigenvectors: (d, d) problem, fast for any n
        cov = (x.T @ x) / max(1, n - 1)
        vals, vecs = np.linalg.eigh(cov)
        z = x @ vecs[:, ::-1][:, :k]
    else:
        from sklearn.decomposition import TruncatedSVD

        k = min(dim, max(1, corpus.tfidf.shape[1] - 1), max(1, n - 1))
        z = TruncatedSVD(k, random_state=0).fit_transform(corpus.tfidf) if n > 1 else np.zeros((n, 1))
    z = np.asarray(z, dtype=np.float64)
    scale = float(np.linalg.norm(z, axis=1).mean()) or 1.0
    z = z / scale
    corpus.cache[f"triage_z{dim}"] = z
    return z


def memberships(corpus: Corpus, k: int | None = None, temperature: float | None = None) -> np.ndarray:
    """(n, k) soft membership of every paper in k topic clusters (spherical k-means over the
    embeddings, or over a TF-IDF SVD without them); cached on the corpus.

    A utility linear in memberships is a score per topic, spread over each topic's papers:
    it ranks the papers at the heart of a preferred topic first, where a utility linear in
    raw coordinates would favour the extreme papers along one direction."""
    from .interests import spherical_kmeans

    k = k or CLUSTERS
    t = temperature or TEMPERATURE
    key = f"triage_m{k}_{t}"
    m = corpus.cache.get(key)
    if m is not None:
        return m
    n = len(corpus)
    x = (
        _unit_rows(corpus.emb)
        if corpus.emb is not None and corpus.emb.shape[1] > 0
        else _unit_rows(projection(corpus, 64))
    )
    k = max(1, min(k, n))
    labels = spherical_kmeans(x, k, seed=0)
    cent = np.zeros((k, x.shape[1]))
    np.add.at(cent, labels, x)
    cent = _unit_rows(cent)
    logits = (x @ cent.T) / t
    logits -= logits.max(1, keepdims=True)
    m = np.exp(logits)
    m /= m.sum(1, keepdims=True)
    corpus.cache[key] = m
    return m


def _unit_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    nr = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(nr > 0, nr, 1.0)


def features(corpus: Corpus) -> np.ndarray:
    """The coordinates the Bradley-Terry utility is linear in: topic memberships. (A prior
    correlating neighbouring topics was tried on the simulated tuning readers: no better.)"""
    return memberships(corpus)


def posterior(
    z: np.ndarray, choices: Sequence[tuple[int, int]], prior_var: float | None = None, iters: int = 20
) -> tuple[np.ndarray, np.ndarray]:
    """(mean, covariance) of the utility weights after the answers (winner row, loser row)."""
    prior_var = prior_var or PRIOR_VAR
    d = z.shape[1]
    prec0 = np.eye(d) / prior_var
    if not choices:
        return np.zeros(d), np.eye(d) * prior_var
    diff = np.stack([z[w] - z[lo] for w, lo in choices])
    w = np.zeros(d)
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(diff @ w)))
        grad = diff.T @ (1.0 - p) - prec0 @ w
        hess = prec0 + (diff * (p * (1 - p))[:, None]).T @ diff
        step = np.linalg.solve(hess, grad)
        w = w + step
        if np.abs(step).max() < 1e-6:
            break
    p = 1.0 / (1.0 + np.exp(-(diff @ w)))
    hess = prec0 + (diff * (p * (1 - p))[:, None]).T @ diff
    return w, np.linalg.inv(hess)


NEITHER = ""  # the winner recorded for "neither of these": a neutral paper of utility 0


def _observations(corpus: Corpus, choices: Sequence[tuple[str, str]]) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The feature rows, plus one all-zero row (index n) for NEITHER, and the answers as row pairs.

    "Neither A nor B" is two answers "neutral over A" and "neutral over B": each paper's topics
    score below zero. Most pairs hold no paper the reader wants, and a forced choice between
    two such papers is a coin flip; "neither" says which topics to stop showing."""
    z = features(corpus)
    n = len(corpus)
    pos = corpus.pos
    rows = [(n if w == NEITHER else pos[w], pos[lo]) for w, lo in choices if (w == NEITHER or w in pos) and lo in pos]
    return np.vstack([z, np.zeros((1, z.shape[1]))]), rows


def utility(corpus: Corpus, choices: Sequence[tuple[str, str]]) -> np.ndarray | None:
    """Posterior-mean utility of every paper, or None without answers."""
    zx, rows = _observations(corpus, choices)
    if not rows:
        return None
    mu, _ = posterior(zx, rows)
    return zx[:-1] @ mu


def select_pair(
    corpus: Corpus,
    choices: Sequence[tuple[str, str]],
    candidates: np.ndarray,
    rng: np.random.Generator,
    base: np.ndarray | None = None,
    alpha: float | None = None,
    base_weight: float = 1.0,
) -> tuple[int, int] | None:
    """The next pair (row A, row B) among `candidates` (bool mask), or None if fewer than two.

    `base` is an optional current score per paper (the reader's recommendation scores from
    likes, dislikes and preferences), standardised and added to A's sampled utility only.
    """
    alpha = ALPHA if alpha is None else alpha
    idx = np.flatnonzero(candidates)
    if len(idx) < 2:
        return None
    zx, rows = _observations(corpus, choices)
    z = zx[:-1]
    mu, cov = posterior(zx, rows)
    theta = rng.multivariate_normal(mu, cov)
    extra = np.zeros(len(corpus))
    if base is not None:
        sd = float(base.std()) or 1.0
        extra = base_weight * (base - base.mean()) / sd
    za = z[idx]
    a = int(idx[int(np.argmax(za @ theta + extra[idx]))])
    diff = za - z[a]
    sd = np.sqrt(np.clip(np.einsum("ij,jk,ik->i", diff, cov, diff), 0, None))
    opt = diff @ mu + alpha * sd
    opt[idx == a] = -np.inf
    b = int(idx[int(np.argmax(opt))])
    return a, b


def next_pair(
    corpus: Corpus, signals: Signals, candidates: np.ndarray, rng: np.random.Generator, recommender: Any = None
) -> tuple[int, int] | None:
    """The next "A or B?" pair for a reader: the product and the evaluation both call this.

    With likes, dislikes or written preferences, `recommender` (the default one unless given)
    ranks the library from them and that ranking nudges A toward the reader's likely papers;
    the choices themselves enter through the Bradley-Terry posterior."""
    base = None
    if signals.likes or signals.dislikes or signals.preferences.strip():
        if recommender is None:
            from .base import DEFAULT_RECOMMENDER, RECOMMENDERS

            recommender = RECOMMENDERS.create(DEFAULT_RECOMMENDER)
        base = recommender.fit(
            corpus, Signals(signals.likes, signals.dislikes, [], signals.preferences, signals.profile)
        ).scores
    return select_pair(corpus, signals.choices, candidates, rng, base)
