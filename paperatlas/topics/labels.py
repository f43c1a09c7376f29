"""Topic labels by class-based TF-IDF (c-TF-IDF, as in BERTopic) over key-phrase candidates.

All documents of one cluster are treated as one "class document"; a phrase scores high
when it is frequent in that class and rare across the others:

    W(t, c) = tf(t, c) / |c|  *  log(1 + A / f(t))

where tf counts the documents of class c that contain t, |c| is the total of those
counts, A the average class total and f(t) the count of t over all classes. Candidates
come from `phrases.candidate_keys`, so boilerplate ("we propose", "state of the art")
never reaches a label.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .phrases import candidate_keys, is_label_worthy, pick_diverse, surface_forms


@dataclass
class PhraseMatrix:
    """Documents x phrase keys: `counts` is a CSR matrix of occurrences per document."""

    keys: list[str]
    counts: object  # scipy.sparse.csr_matrix (n_docs, n_keys), int32
    df: np.ndarray  # documents containing each key

    @property
    def n_docs(self) -> int:
        return int(self.counts.shape[0])  # type: ignore[attr-defined]


def phrase_matrix(texts: Sequence[str], min_df: int = 2, max_n: int = 3) -> PhraseMatrix:
    """Count the candidate phrases of every text; keep keys found in >= min_df texts."""
    from scipy import sparse

    vocab: dict[str, int] = {}
    rows, cols, vals = array("i"), array("i"), array("i")
    for d, text in enumerate(texts):
        for key, n in candidate_keys(text, max_n).items():
            j = vocab.setdefault(key, len(vocab))
            rows.append(d)
            cols.append(j)
            vals.append(n)
    n_docs, n_keys = len(texts), len(vocab)
    r = np.frombuffer(rows, dtype=np.int32)
    c = np.frombuffer(cols, dtype=np.int32)
    v = np.frombuffer(vals, dtype=np.int32)
    df = np.bincount(c, minlength=n_keys) if n_keys else np.zeros(0, dtype=np.int64)
    keep = np.flatnonzero(df >= min_df)
    remap = np.full(n_keys, -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    m = remap[c] >= 0 if n_keys else np.zeros(0, dtype=bool)
    mat = sparse.csr_matrix((v[m], (r[m], remap[c[m]])), shape=(n_docs, len(keep)), dtype=np.int32)
    inv = [""] * n_keys
    for k, j in vocab.items():
        inv[j] = k
    return PhraseMatrix([inv[j] for j in keep], mat, df[keep])


def class_tfidf(pm: PhraseMatrix, labels: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(W, counts): c-TF-IDF weights and per-class document counts, both (n_classes, n_keys)."""
    from scipy import sparse

    labels = np.asarray(labels)
    ok = labels >= 0
    onehot = sparse.csr_matrix(
        (np.ones(int(ok.sum()), dtype=np.float32), (labels[ok], np.flatnonzero(ok))),
        shape=(n_classes, pm.n_docs),
    )
    presence = pm.counts.copy()  # type: ignore[attr-defined]
    presence.data = np.ones_like(presence.data, dtype=np.float32)
    counts = np.asarray((onehot @ presence).todense(), dtype=np.float32)
    totals = counts.sum(axis=1, keepdims=True)
    tf = counts / np.maximum(totals, 1.0)
    f = counts.sum(axis=0)
    avg = float(totals.mean()) if n_classes else 0.0
    idf = np.log1p(avg / np.maximum(f, 1.0))
    return tf * idf, counts


@dataclass
class ClassLabel:
    phrases: list[str]  # readable key phrases, best first
    keys: list[str]  # their matching keys


def _subphrases(key: str) -> set[str]:
    w = key.split()
    return {" ".join(w[i:j]) for i in range(len(w)) for j in range(i + 1, len(w) + 1)}


def label_keys(
    pm: PhraseMatrix,
    labels: np.ndarray,
    n_classes: int,
    n_phrases: int = 4,
    min_support: float = 0.04,
    avoid: Sequence[Sequence[str]] | None = None,
) -> list[list[str]]:
    """The phrase keys of each class's label, best first (2-4 unless the class is tiny).

    `avoid[c]`: keys (and their parts) that class c uses only when nothing else fits; a
    subtopic should say what sets it apart, not repeat its parent's label."""
    w, counts = class_tfidf(pm, labels, n_classes)
    sizes = np.bincount(np.asarray(labels)[np.asarray(labels) >= 0], minlength=n_classes)
    col = {k: j for j, k in enumerate(pm.keys)}

    def pick(c: int, shared: dict[str, int]) -> list[str]:
        row = w[c].copy()
        # a phrase that heads the labels of several classes belongs to the one where it weighs
        # most; elsewhere it is halved, so each label says what sets its class apart
        for key, owner in shared.items():
            if owner != c:
                row[col[key]] *= 0.5
        # a label phrase must occur in a few of the class's papers, not in one outlier
        floor = max(2.0, min_support * sizes[c]) if sizes[c] >= 10 else 1.0
        order = np.argsort(-row, kind="stable")[:200]
        ranked = [(pm.keys[j], float(row[j])) for j in order if row[j] > 0 and counts[c, j] >= floor]
        cnt = {pm.keys[j]: float(counts[c, j]) for j in order}
        if avoid is not None and c < len(avoid) and avoid[c]:
            av = set().union(*(_subphrases(k) for k in avoid[c]))
            keys = pick_diverse([r for r in ranked if r[0] not in av], n_phrases, cnt)
            if len(keys) >= 2:
                return keys
        return pick_diverse(ranked, n_phrases, cnt)

    picked = [pick(c, {}) for c in range(n_classes)]
    users: dict[str, list[int]] = {}
    for c, ks in enumerate(picked):
        for key in ks[:2]:
            users.setdefault(key, []).append(c)
    shared = {key: max(cs, key=lambda c: (w[c, col[key]], -c)) for key, cs in users.items() if len(cs) > 1}
    if shared:
        picked = [pick(c, shared) for c in range(n_classes)]
    return picked


def written_forms(texts: Sequence[str], keys: set[str], sample: int = 20_000) -> dict[str, str]:
    """How each key is usually written (see `surface_forms`), from up to `sample` texts:
    that is clear from a sample, and a full pass costs ~40 s at 100k papers."""
    if not keys:
        return {}
    if len(texts) > sample:
        texts = [texts[i] for i in np.random.default_rng(0).choice(len(texts), sample, replace=False)]
    return surface_forms(texts, keys)


def label_classes(
    pm: PhraseMatrix,
    texts: Sequence[str],
    labels: np.ndarray,
    n_classes: int,
    n_phrases: int = 4,
    min_support: float = 0.04,
    avoid: Sequence[Sequence[str]] | None = None,
) -> list[ClassLabel]:
    """2-4 readable phrases per class, as written in the texts (see `label_keys`)."""
    picked = label_keys(pm, labels, n_classes, n_phrases, min_support, avoid)
    forms = written_forms(texts, {k for ks in picked for k in ks})
    return [ClassLabel([forms.get(k, k) for k in ks], ks) for ks in picked]


def paper_phrases(pm: PhraseMatrix, n: int = 5, min_df: int = 2) -> list[list[int]]:
    """Each document's own key phrases (indices into pm.keys): tf * idf, diverse."""
    counts = pm.counts
    idf = np.log((1.0 + pm.n_docs) / (1.0 + pm.df)) + 1.0
    worthy = np.array([is_label_worthy(k) for k in pm.keys], dtype=bool) if pm.keys else np.zeros(0, bool)
    nwords = np.array([k.count(" ") + 1 for k in pm.keys], dtype=np.float32)
    # favour phrases over single words a little: they read better and carry more meaning
    bonus = 1.0 + 0.35 * (nwords - 1.0)
    out: list[list[int]] = []
    indptr, indices, data = counts.indptr, counts.indices, counts.data  # type: ignore[attr-defined]
    for d in range(pm.n_docs):
        cols = indices[indptr[d] : indptr[d + 1]]
        vals = data[indptr[d] : indptr[d + 1]]
        ok = worthy[cols] & (pm.df[cols] >= min_df) & (pm.df[cols] < 0.25 * pm.n_docs + 2)
        cols, vals = cols[ok], vals[ok]
        if not len(cols):
            out.append([])
            continue
        s = (1.0 + np.log(vals)) * idf[cols] * bonus[cols]
        order = np.argsort(-s, kind="stable")[: 4 * n]
        ranked = [(pm.keys[cols[i]], float(s[i])) for i in order]
        cnt = {pm.keys[cols[i]]: float(vals[i]) for i in order}
        keys = pick_diverse(ranked, n, cnt)
        index = {pm.keys[cols[i]]: int(cols[i]) for i in order}
        out.append([index[k] for k in keys])
    return out


def idf_of(df: int, n_docs: int) -> float:
    return math.log((1.0 + n_docs) / (1.0 + df)) + 1.0
