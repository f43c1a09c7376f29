"""SearchEngine: a query expanded into weighted variants (search/expand.py), each ranked alike
(search/rank.py) over the library's indexes (search/indexes.py), blended, past the relevance floor,
and paged into Hits with snippets."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..embed.base import Embedder
from ..errors import PaperatlasError
from ..i18n import gettext
from ..models import Hit, Hits, Paper
from ..store.sqlite import SQLiteStore
from . import expand as ex
from .cjk import has_cjk
from .floor import Floor, ScoreScale, best_coverage, floor_for, scale_for
from .fusion import blend
from .indexes import Indexes
from .query import Query, parse, phrase_filter
from .rank import MODES, Ranked, floored, rank_one
from .settings import SearchSettings
from .snippets import snippet

__all__ = ["MODES", "SearchEngine", "SearchSettings"]
_UNREAD: Any = object()  # "the caller has not read the query through the glossary yet"


class SearchEngine:
    """Search over one library's indexes. `translator`: a query in CJK script -> the English a language
    model renders it in (None: no endpoint, or it failed); `extra_texts` / `extra_version`: more text the
    keyword index reads per paper, and what changes when it does (Indexes)."""

    def __init__(
        self,
        store: SQLiteStore,
        embedder: Callable[[], Embedder],
        settings: SearchSettings | None = None,
        multilingual: Callable[[], Embedder | None] | None = None,
        translator: Callable[[str], str | None] | None = None,
        extra_texts: Callable[[dict[str, tuple[str, str]]], dict[str, str]] | None = None,
        extra_version: Callable[[], Any] | None = None,
    ) -> None:
        self.store = store
        self._translator = translator
        self._embedder = embedder
        self.settings = settings or SearchSettings()
        self.indexes = Indexes(store, embedder, self.settings, multilingual, extra_texts, extra_version)
        self.floor_override: Floor | None = None  # calibration tries candidate floors through this
        self.crosslingual_floor_override: Floor | None = None  # ...and for the multilingual route
        self.crosslingual_scale_override: ScoreScale | None = None

    # -- the indexes (search/indexes.py) -----------------------------------------------------
    @property
    def index_source(self) -> dict[str, str]:
        return self.indexes.index_source

    def index_folder(self, name: str) -> Path | None:
        return self.indexes.index_folder(name)

    def keyword_index(self) -> Any:
        return self.indexes.keyword_index()

    def vector_index(self) -> Any | None:
        """The vector index of the current embedder, or None when nothing is embedded."""
        return self.indexes.vector_index()

    @property
    def multilingual_embedder(self) -> Embedder | None:
        return self.indexes.multilingual_embedder

    def multilingual_index(self) -> tuple[Any, dict[str, int]] | None:
        return self.indexes.multilingual_index()

    def query_vector(self, text: str, embedder: Embedder | None = None) -> np.ndarray:
        return self.indexes.query_vector(text, embedder)

    def route(self, text: str) -> str:
        """Which index search by meaning uses for `text`: "multilingual" for a query in CJK script
        when the library has that index, else "default" (English queries never change path)."""
        if has_cjk(text) and self.multilingual_index() is not None:
            return "multilingual"
        return "default"

    # -- reading a query (search/expand.py) --------------------------------------------------
    def glossary_reading(self, q: Query) -> ex.Reading | None:
        return ex.glossary_reading(q, self.settings)

    def translation(self, q: Query) -> str | None:
        return ex.translation(q, self._translator, self.settings)

    def keyword_query(self, q: Query, reading: Any = _UNREAD) -> Query:
        return ex.keyword_query(q, self.glossary_reading(q) if reading is _UNREAD else reading)

    # -- ranking -------------------------------------------------------------------------------
    def _crosslingual_scale(self) -> ScoreScale | None:
        if self.settings.crosslingual_fusion != "calibrated" or self.multilingual_embedder is None:
            return None
        return self.crosslingual_scale_override or scale_for(self.multilingual_embedder.id)

    def active_floor(self, multilingual: bool = False) -> Floor | None:
        """The floor semantic and hybrid search apply now (None: none calibrated for the model)."""
        if not self.settings.floor:
            return None
        if multilingual:
            emb = self.multilingual_embedder
            if self.crosslingual_floor_override is not None:
                return self.crosslingual_floor_override
            return floor_for(emb.id) if emb is not None else None
        return self.floor_override or floor_for(self._embedder().id)

    def keyword_coverage(self, q: Query, keyword_list: Sequence[tuple[str, float]], top: int = 5) -> float:
        """The best share of the query's content words held by one of the top keyword hits."""
        ids = [pid for pid, s in keyword_list[:top] if s > 0]
        if not ids:
            return 0.0
        papers = self.store.get_papers(ids)
        return best_coverage(q.text, (papers[p].title + " " + papers[p].abstract for p in ids if p in papers))

    def match_evidence(self, q: Query, qvec: np.ndarray | None = None) -> tuple[float, float]:
        """(best cosine of any paper, best keyword-hit word coverage): what the floor's gate reads."""
        vec = self.vector_index()
        best = -1.0
        if vec is not None and q.text.strip():
            qv = self.query_vector(q.text) if qvec is None else qvec
            best = max((c for _, c in vec.search(qv, 1)), default=-1.0)
        return best, self.keyword_coverage(q, self.keyword_index().search(q, 5))

    def rank(
        self,
        q: Query,
        mode: str,
        depth: int,
        allowed: set[str] | None = None,
        exclude: Iterable[str] = (),
        qvec: np.ndarray | None = None,
        floor: bool = False,
    ) -> tuple[list[tuple[str, float]], dict[str, dict[str, int]]]:
        """Fused (id, score) list and each id's rank in the keyword / semantic lists.

        A query in CJK script is searched by meaning in the multilingual index when the library
        has one (`route`); every other query takes the default path, unchanged. `qvec` is the
        query's embedding by the default model when the caller already has it (evaluations);
        the multilingual path embeds the query itself. With `floor`, hits below the relevance
        floor are dropped (all of them for a query with no real match)."""
        fused, ranks, _ = self._rank(q, mode, depth, allowed, exclude, qvec, floor)
        return fused, ranks

    def _one(self, q: Query, mode: str, depth: int, allowed: set[str] | None, exclude: set[str], **kw: Any) -> Ranked:
        reading = kw.pop("reading", None)
        return rank_one(
            self.indexes, self.settings, q, mode, depth, allowed, exclude, reading, self._crosslingual_scale, **kw
        )

    def _floored(
        self, r: Ranked, fused: list[tuple[str, float]], floor: bool, words: Query
    ) -> tuple[list[tuple[str, float]], bool]:
        """`fused` past the floor (with `floor`), and whether the floor emptied it."""
        fl = self.active_floor(r.multilingual) if floor and r.qv is not None and fused else None
        if fl is None:
            return fused, False
        out = floored(r, fused, fl, words, self.keyword_coverage)
        return out, not out

    def _rank(
        self,
        q: Query,
        mode: str,
        depth: int,
        allowed: set[str] | None = None,
        exclude: Iterable[str] = (),
        qvec: np.ndarray | None = None,
        floor: bool = False,
        reading: Any = _UNREAD,
        translated: Any = _UNREAD,
    ) -> tuple[list[tuple[str, float]], dict[str, dict[str, int]], bool]:
        """rank() plus whether the floor emptied a non-empty answer. `reading`: the query's glossary
        reading, `translated`: its language-model English, when the caller already has them (read here
        otherwise). The query is expanded into its variants (search/expand.py), each ranked once by the
        same function, and blended: the glossary's English before the floor, a model's English (past
        its own floor) after."""
        if mode not in MODES:
            raise PaperatlasError(f"unknown search mode {mode!r}", f"use one of: {', '.join(MODES)}")
        if reading is _UNREAD:
            reading = self.glossary_reading(q)
        exclude = set(exclude)
        typed = self._one(q, mode, depth, allowed, exclude, reading=reading, qvec=qvec)
        if translated is _UNREAD:
            translated = self.translation(q)
        variants = ex.expand(q, self.settings, reading, translated, typed.multilingual)
        fused, words, emptied = typed.fused, q, False
        judge = typed  # whose evidence the floor weighs
        for v in variants[1:]:
            if v.stage != "glossary":
                continue
            words = v.query  # the floor reads the query's words in English
            if mode == "hybrid" or self.vector_index() is not None:
                english = self._one(v.query, mode, depth, allowed, exclude)
                fused = blend(fused, english.fused, v.weight)
                if not typed.multilingual and english.qv is not None:
                    # no multilingual index (yet): the English model reads Chinese characters as noise,
                    # so a query the glossary reads is judged by its English, as an English query is;
                    # the multilingual index, once built, takes over (typed.multilingual)
                    judge = english
        fused, emptied = self._floored(judge, fused, floor, words)
        for v in variants[1:]:
            if v.stage != "model":
                continue
            # searched as an English query, past its own floor, and blended with what the typed query
            # kept (either may have found what the other missed)
            r = self._one(v.query, mode, depth, allowed, exclude)
            en, en_emptied = self._floored(r, r.fused, floor, v.words or v.query)
            fused = blend(fused, en, v.weight) if fused else en
            emptied = not fused and (emptied or en_emptied)
        return fused, typed.ranks, emptied

    def search(
        self,
        text: str,
        mode: str = "hybrid",
        limit: int = 20,
        offset: int = 0,
        allowed: set[str] | None = None,
        exclude: Iterable[str] = (),
    ) -> Hits:
        """A page of hits; `.total` counts every hit that passed (`.more`: at least that many),
        `.no_good_match` says the floor found no real match."""
        q = parse(text)
        if q.empty:
            return Hits()
        depth = max(self.settings.depth, offset + limit)
        if q.phrases:
            depth = max(depth * 5, 500)  # phrases filter candidates afterwards: fetch more
        reading = self.glossary_reading(q)
        translated = self.translation(q)
        fused, ranks, no_match = self._rank(
            q, mode, depth, allowed, exclude, floor=True, reading=reading, translated=translated
        )
        per_list: dict[str, int] = {}
        for r in ranks.values():
            for name in r:
                per_list[name] = per_list.get(name, 0) + 1
        papers: dict[str, Paper] = {}
        if q.phrases:
            papers = self.store.get_papers([pid for pid, _ in fused])
            fused = [
                (pid, s)
                for pid, s in fused
                if pid in papers and phrase_filter(q, papers[pid].title + " " + papers[pid].abstract)
            ]
        page = fused[offset : offset + limit]
        if not papers:
            papers = self.store.get_papers([pid for pid, _ in page])
        terms = ex.keyword_query(q, reading).terms  # a Chinese query's English words are marked too
        if translated:
            terms = list(dict.fromkeys(terms + parse(translated).terms))
        return Hits(
            [
                Hit(papers[pid], s, ranks.get(pid, {}), snippet=snippet(papers[pid].abstract, terms))
                for pid, s in page
                if pid in papers
            ],
            total=len(fused),
            more=any(n >= depth for n in per_list.values()),
            no_good_match=no_match,
            read_as=translated or "",
        )

    def similar(self, paper_id: str, limit: int = 10, allowed: set[str] | None = None) -> list[tuple[str, float]]:
        """Nearest papers by embedding (the paper itself excluded)."""
        vec = self.vector_index()
        if vec is None:
            raise PaperatlasError(
                gettext("this library has no embeddings yet, so it cannot find related papers"),
                gettext("run `paperatlas embed`"),
            )
        v = vec.vector(paper_id)
        if v is None:
            raise PaperatlasError(
                gettext("paper {id!r} has no embedding", id=paper_id), gettext("run `paperatlas embed`")
            )
        mask = self.indexes.mask(self.indexes.vector_positions(), len(vec), allowed, {paper_id})
        return vec.search(v, limit, mask)
