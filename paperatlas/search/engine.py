"""SearchEngine: a query expanded into weighted variants (search/expand.py), each ranked alike
(search/rank.py) over the library's indexes (search/indexes.py), blended, past the relevance floor,
and paged into Hits with snippets."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..embed.base import Embedder
from ..errors import PaperatlasError
from ..i18n import gettext
from ..models import Hit, Hits, Paper
from ..overrides import parse_overrides
from ..store.sqlite import SQLiteStore
from . import expand as ex
from .cjk import has_cjk
from .floor import Floor, ScoreScale, best_coverage, floor_for, scale_for
from .fusion import NORMALIZERS, blend
from .indexes import Indexes
from .query import Query, parse, phrase_filter
from .rank import MODES, Ranked, floored, rank_one
from .snippets import highlight

__all__ = ["MODES", "SearchEngine", "SearchSettings"]
_UNREAD: Any = object()  # "the caller has not read the query through the glossary yet"


@dataclass
class SearchSettings:
    """How search ranks. Defaults tuned on the SciFact *train* split only (809 claims);
    docs/search.md has the sweep. Test-split numbers are reported, never tuned on."""

    keyword_index: str = "bm25"  # "bm25" (built in, saved beside the library), "bm25s", "fts5"
    # BM25: k1/b barely matter on SciFact train (nDCG@10 0.700-0.710 over k1 0.9-1.5, b 0.6-0.9);
    # repeating the title 3x beats 2x and 1x (0.709 / 0.705 / 0.701 at k1 1.2, b 0.75).
    k1: float = 1.2
    b: float = 0.75
    title_weight: int = 3
    # the keyword index reads each paper's keywords after its abstract: on the paraphrase set's train
    # half (8,117 venue papers, 5,478 with keywords) hybrid MRR@10 0.852 -> 0.880 once, the same twice or
    # three times (test 0.765 -> 0.772); TL;DR text too: 0.868. SciFact has none, so it is unchanged
    index_keywords: bool = True
    vector_index: str = "auto"  # "numpy" (exact), "faiss-ivf" (approximate), "auto": by size
    # auto: exact below this many vectors, faiss IVF-SQ8 above. Exact float32 costs ~8 ms per
    # query at 100k on one core (more on a busy machine), IVF ~1 ms at recall@10 ~0.97 (bench search)
    ann_threshold: int = 50_000
    fusion: str = "convex"  # "convex" (normalised scores) or "rrf" (ranks only)
    # convex: how each list is put on [0, 1] before the weighted sum: "max" divides by the list's best
    # score, "minmax" also moves its worst candidate to 0, "zscore" standardises. "max" keeps a semantic
    # list whose cosines sit close together close together, and a score no longer depends on how deep
    # the lists were fetched. Picked with the weight on three dev sets (docs/search.md: minmax 0.5 ->
    # max 0.55 moves SciFact dev 0.7868 -> 0.7880, paraphrase train 0.943 -> 0.962, the 402 written dev
    # paraphrases 0.854 -> 0.858 with minilm-tuned-r11)
    norm: str = "max"
    semantic_weight: float = 0.55  # convex: weight of the semantic list (keyword gets 1 - this)
    # the same for queries routed to the multilingual index (CJK script): tuned on the 54 Chinese
    # queries of tests/data/crosslingual_queries.jsonl (686 papers), hybrid MRR@10 0.682 / 0.702 / 0.711 / 0.712
    # at 0.5 / 0.7 / 0.8 / 0.9 (semantic alone 0.708): an acronym ("LLM") matches too much by keyword
    crosslingual_semantic_weight: float = 0.8
    # queries routed to the multilingual index: "calibrated" fuses the model's cosine on its
    # calibrated scale (search/floor.py: SCALES) with min-max keyword scores, so a clearly better
    # meaning match wins and the score shown says how good the match is; "minmax" scales each list
    # to [0, 1] within the answer (the top hit always 1.000, however weak)
    crosslingual_fusion: str = "calibrated"
    # a Chinese query's keyword side also searches the English words of the terms glossary.tsv knows
    # (search/glossary.py); docs/crosslingual.md has the figures with and without
    glossary: bool = True
    # ...and, when the glossary reads at least `glossary_min_share` of its Chinese characters, the
    # English reading is searched as an English query and blended in with weight glossary_weight * share
    glossary_weight: float = 0.5
    glossary_min_share: float = 0.5
    # where a language model is configured, a query in CJK script is also rendered in English by it
    # (lib.llm.query_english, stored per query) and that English searched as an English query, blended
    # in with this weight; it stands in for the glossary's reading. Tuned on the train half of
    # tests/data/zh_queries.jsonl at 8,117 papers with Qwen2.5-Coder-1.5B, greedy renderings: MRR@10
    # 0.831 / 0.889 / 0.892 / 0.841 at 0.3 / 0.5 / 0.7 / 0.9 (docs/crosslingual.md has the test figures)
    translation_weight: float = 0.7
    complete_scores: bool = True  # hybrid: score every candidate in both lists, not "missing = worst"
    depth: int = 100  # candidates taken from each list before fusing
    rrf_k: int = 60
    persist: bool = True  # save built indexes beside the library file
    # semantic / hybrid: no hits for a query with no real match (search/floor.py; calibrated per
    # embedder by `paperatlas eval floor`: SciFact train claims against nonsense queries)
    floor: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def parse_overrides(cls, text: str) -> dict[str, Any]:
        """ "norm=minmax,semantic_weight=0.5" -> {"norm": "minmax", "semantic_weight": 0.5}, each value
        read as its field's type; an unknown name or a value of the wrong type is refused with the fix."""
        out = parse_overrides(cls().to_dict(), text, "search setting")
        if "norm" in out and out["norm"] not in NORMALIZERS:
            raise PaperatlasError(f"unknown norm {out['norm']!r}", f"use one of: {', '.join(NORMALIZERS)}")
        return out


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
        for v in variants[1:]:
            if v.stage != "glossary":
                continue
            words = v.query  # the floor reads the query's words in English
            if mode == "hybrid" or self.vector_index() is not None:
                fused = blend(fused, self._one(v.query, mode, depth, allowed, exclude).fused, v.weight)
        fused, emptied = self._floored(typed, fused, floor, words)
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
                Hit(papers[pid], s, ranks.get(pid, {}), snippet=highlight(papers[pid].abstract, terms))
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
