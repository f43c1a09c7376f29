"""A reader's own papers as likes: the corpus grown by those papers, so every recommender reads them.

What a researcher wrote says what they work on before they have starred anything. Their papers are
not the library's (they are stored apart and never listed), so they join the recommenders' view
only while one reader's list is scored: `with_own_papers` appends them as extra rows of a copy of
the corpus (TF-IDF through the library's own vectoriser, embeddings centred like the library's),
they are given to the recommender as that reader's oldest likes, and `Trimmed` hands back the
scores of the library's rows alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..i18n import gettext
from .base import Corpus, Scored
from .features import tfidf_text, with_keywords

OWN_PREFIX = "own:"  # corpus ids of a reader's own papers: never a library paper id


@dataclass
class ReaderPapers:
    """A reader's own papers as the recommenders need them (raw vectors: None when not embedded)."""

    keys: list[str]
    titles: list[str]
    abstracts: list[str]
    authors: list[list[str]] = field(default_factory=list)
    keywords: list[list[str]] = field(default_factory=list)
    venues: list[str] = field(default_factory=list)
    years: list[int | None] = field(default_factory=list)
    vectors: list[np.ndarray | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def ids(self) -> list[str]:
        return [OWN_PREFIX + k for k in self.keys]


def with_own_papers(corpus: Corpus, own: ReaderPapers) -> Corpus:
    """A copy of `corpus` with the reader's papers appended as rows (the library's rows unchanged)."""
    import scipy.sparse as sp

    k = len(own)
    authors = own.authors or [[] for _ in range(k)]
    keywords = own.keywords or [[] for _ in range(k)]
    texts = [
        with_keywords(tfidf_text(t, a, au), kw) for t, a, au, kw in zip(own.titles, own.abstracts, authors, keywords)
    ]
    x = corpus.vectorizer.transform(texts).astype(np.float32)
    tfidf = sp.vstack([corpus.tfidf, x]).tocsr()
    emb = None
    if corpus.emb is not None:
        rows = np.zeros((k, corpus.emb.shape[1]), np.float32)
        for i, v in enumerate(own.vectors or [None] * k):
            if v is None or len(v) != corpus.emb.shape[1]:
                continue  # embedded by another model, or not yet: its keywords still count
            c = np.asarray(v, np.float32) - (corpus.emb_mean if corpus.emb_mean is not None else 0.0)
            rows[i] = c / (np.linalg.norm(c) or 1.0)
        emb = np.ascontiguousarray(np.vstack([corpus.emb, rows]))
    years = corpus.years if corpus.years is not None else np.zeros(len(corpus), np.int64)
    return Corpus(
        ids=corpus.ids + own.ids,
        titles=corpus.titles + list(own.titles),
        emb=emb,
        tfidf=tfidf,
        vocab=corpus.vocab,
        label_mask=corpus.label_mask,
        vectorizer=corpus.vectorizer,
        prior=np.concatenate([corpus.prior, np.zeros(k, np.float32)]),
        keywords=list(corpus.keywords) + list(keywords),
        venues=list(corpus.venues) + list(own.venues or [""] * k),
        years=np.concatenate([years, np.array([int(y or 0) for y in (own.years or [0] * k)], np.int64)]),
        embed_query=corpus.embed_query,
        emb_mean=corpus.emb_mean,
        # the svm baseline's arxiv-sanity space has no rows for these papers: it reads `tfidf` instead
        svm_space=None,
    )


@dataclass
class Trimmed:
    """A recommender's answer over the grown corpus, cut back to the library's `n` rows; a reason
    that names one of the reader's own papers says they wrote it, not that they liked it."""

    inner: Scored
    n: int
    own_titles: Sequence[str] = ()

    def __post_init__(self) -> None:
        self.scores = np.asarray(self.inner.scores)[: self.n]

    def explain(self, rows: Sequence[int]) -> list[str]:
        out = self.inner.explain(rows)
        if not self.own_titles:
            return out
        swaps = [
            (gettext("because you liked {title!r}", title=t), gettext("because you wrote {title!r}", title=t))
            for t in {_short(t) for t in self.own_titles}
        ]
        return [next((why.replace(a, b) for a, b in swaps if a in why), why) for why in out]


def _short(title: str, n: int = 80) -> str:
    """A title as the recommenders' reasons shorten it."""
    return title if len(title) <= n else title[: n - 1].rstrip() + "…"
