"""SearchEngine: keyword and semantic candidates, fused into one ranking, with filters.

Indexes live in memory, are built lazily on the first query and rebuilt when the
library changes (checked with two cheap queries per search)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..embed.base import Embedder
from ..errors import PaperatlasError
from ..index.base import VECTOR_INDEXES
from ..models import Hit, Paper
from ..store.sqlite import SQLiteStore
from .fusion import convex, rrf
from .keyword import KEYWORD_INDEXES
from .query import Query, parse, phrase_filter
from .snippets import highlight

MODES = ("hybrid", "keyword", "semantic")


@dataclass
class SearchSettings:
    keyword_index: str = "bm25s"
    vector_index: str = "numpy"
    fusion: str = "convex"  # or "rrf"
    semantic_weight: float = 0.5  # convex: weight of the semantic list (keyword gets 1 - this)
    depth: int = 100  # candidates taken from each list before fusing
    rrf_k: int = 60


class SearchEngine:
    def __init__(self, store: SQLiteStore, embedder: Callable[[], Embedder],
                 settings: SearchSettings | None = None) -> None:
        self.store = store
        self._embedder = embedder
        self.settings = settings or SearchSettings()
        self._lock = threading.Lock()
        self._kw: Any = None
        self._kw_version: Any = None
        self._kw_pos: dict[str, int] = {}
        self._vec: Any = None
        self._vec_version: Any = None
        self._vec_pos: dict[str, int] = {}
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()

    # -- indexes -------------------------------------------------------------------------
    def keyword_index(self) -> Any:
        version = self.store.data_version()
        if self._kw is None or version != self._kw_version:
            with self._lock:
                if self._kw is None or version != self._kw_version:
                    opts = {"store": self.store} if self.settings.keyword_index == "fts5" else {}
                    kw = KEYWORD_INDEXES.create(self.settings.keyword_index, **opts)
                    docs = self.store.all_texts()
                    kw.build(docs)
                    self._kw_pos = {d[0]: i for i, d in enumerate(docs)}
                    self._kw, self._kw_version = kw, version
        return self._kw

    def vector_index(self) -> Any | None:
        """The vector index of the current embedder, or None when nothing is embedded."""
        model = self._embedder().id
        version = (model, self.store.vector_count(model), self.store.data_version())
        if self._vec is None or version != self._vec_version:
            with self._lock:
                if self._vec is None or version != self._vec_version:
                    ids, mat = self.store.load_vectors(model)
                    idx = VECTOR_INDEXES.create(self.settings.vector_index)
                    idx.build(ids, mat if len(ids) else np.zeros((0, 1), np.float32))
                    self._vec_pos = {pid: i for i, pid in enumerate(ids)}
                    self._vec, self._vec_version = idx, version
        return self._vec if len(self._vec) else None

    def query_vector(self, text: str) -> np.ndarray:
        v = self._qcache.get(text)
        if v is None:
            v = self._embedder().embed_query(text)
            self._qcache[text] = v
            if len(self._qcache) > 512:
                self._qcache.popitem(last=False)
        else:
            self._qcache.move_to_end(text)
        return v

    @staticmethod
    def _mask(pos: dict[str, int], n: int, allowed: set[str] | None, exclude: set[str]) -> np.ndarray | None:
        if allowed is None and not exclude:
            return None
        if allowed is None:
            m = np.ones(n, dtype=bool)
        else:
            m = np.zeros(n, dtype=bool)
            m[[pos[i] for i in allowed if i in pos]] = True
        ex = [pos[i] for i in exclude if i in pos]
        if ex:
            m[ex] = False
        return m

    # -- ranking -------------------------------------------------------------------------
    def rank(self, q: Query, mode: str, depth: int, allowed: set[str] | None = None,
             exclude: Iterable[str] = ()) -> tuple[list[tuple[str, float]], dict[str, dict[str, int]]]:
        """Fused (id, score) list and each id's rank in the keyword / semantic lists."""
        if mode not in MODES:
            raise PaperatlasError(f"unknown search mode {mode!r}", f"use one of: {', '.join(MODES)}")
        exclude = set(exclude)
        lists: dict[str, list[tuple[str, float]]] = {}
        if mode in ("keyword", "hybrid"):
            kw = self.keyword_index()
            lists["keyword"] = kw.search(q, depth, self._mask(self._kw_pos, len(self._kw_pos), allowed, exclude))
        if mode in ("semantic", "hybrid"):
            vec = self.vector_index()
            if vec is None:
                if mode == "semantic":
                    raise PaperatlasError("this library has no embeddings yet, so it cannot search by meaning",
                                          "run `paperatlas embed`, or search with --mode keyword")
            elif q.text.strip():
                qv = self.query_vector(q.text)
                lists["semantic"] = vec.search(qv, depth, self._mask(self._vec_pos, len(vec), allowed, exclude))
        ranks: dict[str, dict[str, int]] = {}
        for name, ranked in lists.items():
            for r, (pid, _) in enumerate(ranked, start=1):
                ranks.setdefault(pid, {})[name] = r
        if len(lists) == 1:
            fused = next(iter(lists.values()))
        elif not lists:
            fused = []
        elif self.settings.fusion == "rrf":
            fused = rrf([lists["keyword"], lists["semantic"]], k=self.settings.rrf_k)
        else:
            w = self.settings.semantic_weight
            fused = convex([lists["keyword"], lists["semantic"]], [1 - w, w])
        return fused, ranks

    def search(self, text: str, mode: str = "hybrid", limit: int = 20, offset: int = 0,
               allowed: set[str] | None = None, exclude: Iterable[str] = ()) -> list[Hit]:
        q = parse(text)
        if q.empty:
            return []
        depth = max(self.settings.depth, offset + limit)
        if q.phrases:
            depth = max(depth * 5, 500)  # phrases filter candidates afterwards: fetch more
        fused, ranks = self.rank(q, mode, depth, allowed, exclude)
        papers: dict[str, Paper] = {}
        if q.phrases:
            papers = self.store.get_papers([pid for pid, _ in fused])
            fused = [(pid, s) for pid, s in fused if pid in papers and phrase_filter(q, papers[pid].title + " " + papers[pid].abstract)]
        page = fused[offset : offset + limit]
        if not papers:
            papers = self.store.get_papers([pid for pid, _ in page])
        terms = q.terms
        return [
            Hit(papers[pid], s, ranks.get(pid, {}), snippet=highlight(papers[pid].abstract, terms))
            for pid, s in page if pid in papers
        ]

    def similar(self, paper_id: str, limit: int = 10, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """Nearest papers by embedding (the paper itself excluded)."""
        vec = self.vector_index()
        if vec is None:
            raise PaperatlasError("this library has no embeddings yet, so it cannot find related papers",
                                  "run `paperatlas embed`")
        v = vec.vector(paper_id)
        if v is None:
            raise PaperatlasError(f"paper {paper_id!r} has no embedding", "run `paperatlas embed`")
        mask = self._mask(self._vec_pos, len(vec), allowed, {paper_id})
        return vec.search(v, limit, mask)
