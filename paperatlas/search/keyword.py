"""Keyword (BM25) indexes behind one protocol: the built-in BM25 (default, saved beside the
library), bm25s in memory, or SQLite FTS5 (nothing to build)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from ..index.numpy import top_k
from ..registry import Registry
from ..store.sqlite import SQLiteStore
from .bm25 import Bm25Index, field_text
from .query import Query, fts5_match

Doc = tuple[str, str, bool, str]  # (id, title, title_derived, abstract)


class KeywordIndex(Protocol):
    ids: list[str]  # paper ids in build order

    def build(self, docs: Sequence[Doc]) -> None: ...

    def search(self, q: Query, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Top-k (id, bm25) for a parsed query; `allowed` is a bool mask over build order."""
        ...


KEYWORD_INDEXES: Registry[KeywordIndex] = Registry("keyword index")


KEYWORD_INDEXES.register("bm25", Bm25Index)


@KEYWORD_INDEXES.register("bm25s")
class Bm25sIndex:
    """bm25s (sparse-matrix BM25) with English stop words and the Snowball stemmer."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, title_weight: int = 3, method: str = "lucene") -> None:
        self.k1, self.b, self.title_weight, self.method = k1, b, title_weight, method
        self.ids: list[str] = []
        self._r: Any = None
        self._stemmer: Any = None

    def _tokenize(self, texts: list[str], ids: bool) -> Any:
        import bm25s

        return bm25s.tokenize(texts, stopwords="en", stemmer=self._stemmer, return_ids=ids, show_progress=False)

    def build(self, docs: Sequence[Doc]) -> None:
        import bm25s
        import Stemmer

        self._stemmer = Stemmer.Stemmer("english")
        self.ids = [d[0] for d in docs]
        self._r = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        if docs:
            texts = [field_text(t, dv, a, self.title_weight) for _, t, dv, a in docs]
            self._r.index(self._tokenize(texts, True), show_progress=False)

    def search(self, q: Query, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        if not self.ids or q.empty:
            return []
        toks = self._tokenize([" ".join(q.terms)], False)[0]
        vocab = self._r.vocab_dict
        toks = [t for t in dict.fromkeys(toks) if t in vocab and t != ""]
        if not toks:
            return []
        scores = self._r.get_scores(toks)
        if allowed is not None:
            scores = np.where(allowed, scores, 0.0)
        idx = top_k(scores, k)
        return [(self.ids[i], float(scores[i])) for i in idx if scores[i] > 0]


@KEYWORD_INDEXES.register("fts5")
class Fts5Index:
    """SQLite FTS5 over the library file: nothing to build, nothing extra to install.

    Column weights mirror the title weighting of the bm25s index."""

    def __init__(self, store: SQLiteStore | None = None, title_weight: float = 3.0) -> None:
        self.store = store
        self.title_weight = title_weight
        self.ids: list[str] = []
        self.pos: dict[str, int] = {}

    def build(self, docs: Sequence[Doc]) -> None:
        self.ids = [d[0] for d in docs]
        self.pos = {pid: i for i, pid in enumerate(self.ids)}

    def search(self, q: Query, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        if self.store is None or q.empty:
            return []
        depth = k if allowed is None else max(k * 20, 1000)
        hits = self.store.fts_search(fts5_match(q), depth, (self.title_weight, 1.0, 0.5, 1.0))
        if allowed is not None:
            hits = [(pid, s) for pid, s in hits if pid in self.pos and allowed[self.pos[pid]]]
        return hits[:k]
