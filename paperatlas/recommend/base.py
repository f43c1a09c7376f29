"""The recommender protocol and registry, and the data every recommender sees.

A recommender turns a `Corpus` (the candidate papers as embedding and TF-IDF
matrices) and a reader's `Signals` (likes, dislikes, A/B choices, free-text
preferences, the editable profile) into a `Scored`: one score per corpus row
plus an explanation for any row. Ranking, filtering and paging are shared, so
every recommender returns the same shape (`list[tuple[str, float]]`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..i18n import gettext
from ..index.numpy import top_k
from ..registry import Registry


@dataclass
class Corpus:
    """Candidate papers as matrices, built once per library version (see features.py).

    `emb` rows are L2-normalised (zero rows for papers without a vector); `tfidf`
    is the arxiv-sanity-lite TF-IDF matrix (1-2 grams) over title, abstract, authors
    and the authors' keywords; `arxiv_sanity()` the same without keywords, exactly
    as arxiv-sanity-lite has it (fitted on first use: only `svm` reads it).
    """

    ids: list[str]
    titles: list[str]
    emb: np.ndarray | None
    tfidf: Any  # scipy.sparse.csr_matrix (n, V), rows L2-normalised
    vocab: np.ndarray  # (V,) feature names
    label_mask: np.ndarray  # (V,) True where a feature may appear in a label (not an author's name)
    vectorizer: Any
    prior: np.ndarray  # (n,) cold-start score: status (oral > spotlight > poster), then nothing
    keywords: list[list[str]] = field(default_factory=list)
    venues: list[str] = field(default_factory=list)  # venue as recorded ("SIGIR '18"); "" unknown
    years: np.ndarray | None = None  # (n,) int year, 0 unknown
    embed_query: Callable[[str], np.ndarray] | None = None
    emb_mean: np.ndarray | None = None  # subtracted from `emb` rows (features.center); queries too
    cache: dict[str, Any] = field(default_factory=dict)  # derived matrices (PCA for triage, ...)
    # fits (matrix, vocab) over arxiv-sanity's own text; None when that is `tfidf`'s text (no keywords)
    svm_space: Callable[[], tuple[Any, np.ndarray]] | None = None

    def __post_init__(self) -> None:
        self.pos = {pid: i for i, pid in enumerate(self.ids)}

    def __len__(self) -> int:
        return len(self.ids)

    def arxiv_sanity(self) -> tuple[Any, np.ndarray]:
        """(TF-IDF matrix, vocab) over exactly the text arxiv-sanity-lite vectorises."""
        if self.svm_space is None:
            return self.tfidf, self.vocab
        if "svm_space" not in self.cache:  # two threads may both fit it once: same result
            self.cache["svm_space"] = self.svm_space()
        return self.cache["svm_space"]

    def rows(self, ids: Sequence[str]) -> np.ndarray:
        """Row indices of the ids that are in the corpus, in order."""
        return np.array([self.pos[i] for i in ids if i in self.pos], dtype=np.int64)

    def phrase_vectors(self, phrase: str) -> tuple[np.ndarray | None, Any]:
        """(embedding, tf-idf row) of a free-text phrase; cached, since phrases repeat."""
        key = "phrase:" + phrase
        if key not in self.cache:
            ev = None
            if self.emb is not None and self.embed_query is not None:
                ev = np.asarray(self.embed_query(phrase), dtype=np.float32)
                if self.emb_mean is not None:
                    ev = ev - self.emb_mean
                ev = ev / (np.linalg.norm(ev) or 1.0)
            self.cache[key] = (ev, self.vectorizer.transform([phrase]))
        return self.cache[key]


@dataclass
class Signals:
    """What one reader has told us, oldest first."""

    likes: list[str] = field(default_factory=list)
    dislikes: list[str] = field(default_factory=list)
    choices: list[tuple[str, str]] = field(default_factory=list)  # (winner, loser)
    preferences: str = ""
    profile: dict[str, Any] | None = None  # the editable profile (interests.py); None = derive it

    @property
    def empty(self) -> bool:
        return not (
            self.likes or self.dislikes or self.choices or self.preferences.strip() or _has_phrases(self.profile)
        )


def _has_phrases(profile: dict[str, Any] | None) -> bool:
    return bool(profile) and any(i.get("added") and not i.get("removed") for i in profile.get("interests", []))


class Scored(Protocol):
    scores: np.ndarray  # (n,) higher is better

    def explain(self, rows: Sequence[int]) -> list[str]:
        """A short 'why' for each corpus row."""
        ...


class Recommender(Protocol):
    name: str

    def fit(self, corpus: Corpus, signals: Signals) -> Scored: ...


RECOMMENDERS: Registry[Recommender] = Registry("recommender")
DEFAULT_RECOMMENDER = "default"


@dataclass
class PriorScored:
    """The cold-start ranking: no signal yet, so orals, then spotlights, then the rest."""

    scores: np.ndarray

    def explain(self, rows: Sequence[int]) -> list[str]:
        return [gettext("no likes yet: like or triage a few papers to personalise this list")] * len(rows)


def rank(scored: Scored, limit: int, exclude: np.ndarray | None = None, allowed: np.ndarray | None = None) -> list[int]:
    """Top `limit` rows, best first, skipping excluded rows and keeping only allowed ones."""
    s = scored.scores
    if exclude is not None or allowed is not None:
        s = s.astype(np.float64, copy=True)
        if exclude is not None:
            s[exclude] = -np.inf
        if allowed is not None:
            s[~allowed] = -np.inf
    idx = top_k(s, limit)
    return [int(i) for i in idx if np.isfinite(s[i])]


def zscore(v: np.ndarray) -> np.ndarray:
    """Standardise one score component over the corpus so components of different scales add up."""
    v = np.asarray(v, dtype=np.float32)
    sd = float(v.std())
    return (v - float(v.mean())) / sd if sd > 1e-9 else np.zeros_like(v)


def mask(n: int, rows: Sequence[int] | np.ndarray) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    if len(rows):
        m[np.asarray(rows, dtype=np.int64)] = True
    return m
