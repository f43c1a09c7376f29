"""Pairwise triage: "A or B?", learnt with a Bradley-Terry model, pairs chosen as a dueling bandit.

The reader's utility is linear in a low-dimensional projection of the paper vectors
(PCA of the embeddings, or of TF-IDF when there are none). Each answer "A over B" is
a logistic observation on z_A - z_B; the posterior over the utility weights is a
Laplace approximation (a few Newton steps; cheap in 32 dimensions).

Pair selection follows the dueling-bandit recipe of optimism plus sampling
(Double Thompson Sampling / MaxInP): A is the best paper under a utility drawn from
the posterior, B the paper with the best optimistic chance to beat A, i.e. the
largest mean advantage plus alpha times its posterior standard deviation. A new
reader therefore gets a diverse pair, and later pairs concentrate where the
reader's taste is still uncertain among the papers that could be good.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .base import Corpus

DIM = 32
PRIOR_VAR = 1.0
ALPHA = 1.0


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


def posterior(z: np.ndarray, choices: Sequence[tuple[int, int]], prior_var: float | None = None,
              iters: int = 20) -> tuple[np.ndarray, np.ndarray]:
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


def utility(corpus: Corpus, choices: Sequence[tuple[str, str]]) -> np.ndarray | None:
    """Posterior-mean utility of every paper, or None without answers."""
    rows = [(corpus.pos[w], corpus.pos[lo]) for w, lo in choices if w in corpus.pos and lo in corpus.pos]
    if not rows:
        return None
    z = projection(corpus)
    mu, _ = posterior(z, rows)
    return z @ mu


def select_pair(corpus: Corpus, choices: Sequence[tuple[str, str]], candidates: np.ndarray,
                rng: np.random.Generator, base: np.ndarray | None = None, alpha: float | None = None,
                base_weight: float = 1.0) -> tuple[int, int] | None:
    """The next pair (row A, row B) among `candidates` (bool mask), or None if fewer than two.

    `base` is an optional current score per paper (e.g. the reader's recommendation scores),
    standardised and added to the sampled utility, so triage refines what likes already say.
    """
    alpha = ALPHA if alpha is None else alpha
    idx = np.flatnonzero(candidates)
    if len(idx) < 2:
        return None
    z = projection(corpus)
    rows = [(corpus.pos[w], corpus.pos[lo]) for w, lo in choices if w in corpus.pos and lo in corpus.pos]
    mu, cov = posterior(z, rows)
    theta = rng.multivariate_normal(mu, cov)
    extra = np.zeros(len(corpus))
    if base is not None:
        sd = float(base.std()) or 1.0
        extra = base_weight * (base - base.mean()) / sd
    za = z[idx]
    a = int(idx[int(np.argmax(za @ theta + extra[idx]))])
    diff = za - z[a]
    sd = np.sqrt(np.clip(np.einsum("ij,jk,ik->i", diff, cov, diff), 0, None))
    opt = diff @ mu + (extra[idx] - extra[a]) + alpha * sd
    opt[idx == a] = -np.inf
    b = int(idx[int(np.argmax(opt))])
    return a, b
