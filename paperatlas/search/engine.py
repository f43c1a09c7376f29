"""SearchEngine: keyword and semantic candidates, fused into one ranking, with filters.

Indexes are built lazily on the first query and rebuilt when the library changes
(checked with two cheap queries per search). Built indexes are saved in
`<library file>.index/`, keyed by the library's data version, so the next process
maps them from disk instead of rebuilding (a million papers take minutes to index,
seconds to load)."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from ..embed.base import Embedder
from ..errors import PaperatlasError
from ..i18n import gettext
from ..index.base import VECTOR_INDEXES
from ..models import Hit, Hits, Paper
from ..overrides import parse_overrides
from ..store.sqlite import SQLiteStore
from .cjk import has_cjk
from .floor import Floor, ScoreScale, apply_floor, best_coverage, floor_for, scale_for
from .fusion import NORMALIZERS, blend, calibrated_convex, convex, rrf
from .glossary import latin_words, translate
from .keyword import KEYWORD_INDEXES
from .query import MAX_TERMS, Query, parse, phrase_filter
from .snippets import highlight

MODES = ("hybrid", "keyword", "semantic")
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


def _faiss_available() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


class SearchEngine:
    def __init__(
        self,
        store: SQLiteStore,
        embedder: Callable[[], Embedder],
        settings: SearchSettings | None = None,
        multilingual: Callable[[], Embedder] | None = None,
        translator: Callable[[str], str | None] | None = None,
    ) -> None:
        self.store = store
        # a CJK query -> its English rendering by a language model, or None (no endpoint, or it failed)
        self._translator = translator
        self._embedder = embedder
        # the second index: queries in CJK script go there (English-only MiniLM cannot read them)
        self._multilingual = multilingual
        self._ml: tuple[Any, Any, dict[str, int]] | None = None  # (index, version, id -> row)
        self.settings = settings or SearchSettings()
        self._lock = threading.Lock()
        self._kw: Any = None
        self._kw_version: Any = None
        self._kw_pos_map: dict[str, int] | None = None
        self._vec: Any = None
        self._vec_version: Any = None
        self._vec_pos: dict[str, int] = {}
        self._qcache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._qlock = threading.Lock()
        self._vstate = threading.local()
        self.floor_override: Floor | None = None  # calibration tries candidate floors through this
        self.crosslingual_floor_override: Floor | None = None  # ...and for the multilingual route
        self.crosslingual_scale_override: ScoreScale | None = None
        self.index_source: dict[str, str] = {}  # "keyword"/"vectors" -> "built" or "loaded" (from disk)

    def _version(self, what: str, model: str = "") -> Any:
        """data_version / vector_count, re-read only when the file changed: both scan a
        table (tens of ms at a million papers), the change token is O(1)."""
        token = self.store.change_token()
        st = self._vstate  # per thread: each thread has its own connection and token
        if getattr(st, "token", None) != token:
            st.token, st.versions = token, {}
        key = what + model
        if key not in st.versions:
            if what == "translations":  # machine translations are keyword-searchable too
                fn = getattr(getattr(self.store, "llm", None), "translations_version", None)
                st.versions[key] = fn() if fn else (0, "")
            else:
                st.versions[key] = self.store.data_version() if what == "data" else self.store.vector_count(model)
        return st.versions[key]

    # -- saved indexes -------------------------------------------------------------------
    def index_folder(self, name: str) -> Path | None:
        """Where derived data named `name` is saved beside the library (None: keep it in memory)."""
        return self._folder(name)

    def _folder(self, name: str) -> Path | None:
        root = self.store.index_root
        if not self.settings.persist or root is None:
            return None
        return root / name

    @staticmethod
    def _saved(folder: Path | None, key: dict[str, Any]) -> bool:
        if folder is None:
            return False
        try:
            return json.loads((folder / "engine.json").read_text(encoding="utf-8")) == key
        except (OSError, ValueError):
            return False

    @staticmethod
    def _save(index: Any, folder: Path | None, key: dict[str, Any]) -> None:
        """Write to a temporary folder, then swap it in: a reader never sees half an index."""
        if folder is None or not hasattr(index, "save"):
            return
        tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
        try:
            shutil.rmtree(tmp, ignore_errors=True)
            index.save(tmp)
            (tmp / "engine.json").write_text(json.dumps(key), encoding="utf-8")
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
            os.replace(tmp, folder)
        except OSError:  # a read-only folder: search works, the next process rebuilds
            shutil.rmtree(tmp, ignore_errors=True)

    # -- indexes -------------------------------------------------------------------------
    def _keyword_options(self) -> dict[str, Any]:
        s = self.settings
        if s.keyword_index == "fts5":
            return {"store": self.store}
        if s.keyword_index in ("bm25", "bm25s"):
            return {"k1": s.k1, "b": s.b, "title_weight": s.title_weight}
        return {}

    def _keyword_texts(self) -> Any:
        """The store's texts in batches, each abstract followed by the paper's keywords (the authors'
        own words for it, when `index_keywords`) and its current translations (a Chinese query finds a
        paper by the words of its Chinese title and abstract)."""
        translated = getattr(getattr(self.store, "llm", None), "translated_texts", None)
        with_keywords = self.settings.index_keywords
        for batch in self.store.iter_keyword_texts():
            extra = translated({i: (t, a) for i, t, _, a, _ in batch}) if translated else {}
            yield [
                (i, t, d, " ".join(x for x in (a, " ".join(kw) if with_keywords else "", extra.get(i, "")) if x))
                for i, t, d, a, kw in batch
            ]

    def keyword_index(self) -> Any:
        version = (*self._version("data"), *self._version("translations"))
        if self._kw is None or version != self._kw_version:
            with self._lock:
                if self._kw is None or version != self._kw_version:
                    name = self.settings.keyword_index
                    kw = KEYWORD_INDEXES.create(name, **self._keyword_options())
                    folder = self._folder(f"keyword-{name}")
                    key = {
                        "version": list(version),
                        "signature": getattr(kw, "signature", name),
                        "keywords": self.settings.index_keywords,
                    }
                    self.index_source["keyword"] = "loaded"
                    if not (self._saved(folder, key) and kw.load(folder, self.store.paper_ids())):
                        if hasattr(kw, "build_batches"):
                            kw.build_batches(self._keyword_texts())
                        else:
                            kw.build([doc for batch in self._keyword_texts() for doc in batch])
                        self._save(kw, folder, key)
                        self.index_source["keyword"] = "built"
                    self._kw_pos_map = None
                    self._kw, self._kw_version = kw, version
        return self._kw

    @property
    def _kw_pos(self) -> dict[str, int]:
        """Paper id -> position in the keyword index (built on the first filtered search)."""
        if self._kw_pos_map is None:
            self._kw_pos_map = {pid: i for i, pid in enumerate(self.keyword_index().ids)}
        return self._kw_pos_map

    def vector_backend(self, n: int) -> str:
        name = self.settings.vector_index
        if name == "auto":
            return "faiss-ivf" if n >= self.settings.ann_threshold and _faiss_available() else "numpy"
        return name

    def _build_vectors(self, model: str, version: tuple[Any, ...]) -> tuple[Any, dict[str, int]]:
        """The vector index of `model`'s vectors (loaded from disk when saved for this version)."""
        n = version[1]
        name = self.vector_backend(n)
        idx = VECTOR_INDEXES.create(name)
        folder = self._folder(f"vectors-{name}-{model.replace('/', '_')}")
        key = {"version": [model, n, *version[2]], "signature": getattr(idx, "signature", name)}
        self.index_source["vectors"] = "built"
        if hasattr(idx, "build_batches"):  # large: stream from the store, save the result
            if self._saved(folder, key) and idx.load(folder, self.store.vector_ids(model)):
                self.index_source["vectors"] = "loaded"
            else:
                idx.build_batches(lambda: self.store.iter_vectors(model), n)
                self._save(idx, folder, key)
        else:
            ids, mat = self.store.load_vectors(model)
            idx.build(ids, mat if len(ids) else np.zeros((0, 1), np.float32))
        return idx, getattr(idx, "row", None) or {pid: i for i, pid in enumerate(idx.ids)}

    def vector_index(self) -> Any | None:
        """The vector index of the current embedder, or None when nothing is embedded."""
        model = self._embedder().id
        version = (model, self._version("vectors", model), self._version("data"))
        if self._vec is None or version != self._vec_version:
            with self._lock:
                if self._vec is None or version != self._vec_version:
                    idx, self._vec_pos = self._build_vectors(model, version)
                    self._vec, self._vec_version = idx, version
        return self._vec if len(self._vec) else None

    # -- the multilingual index ------------------------------------------------------------
    @property
    def multilingual_embedder(self) -> Embedder | None:
        return self._multilingual() if self._multilingual is not None else None

    def multilingual_index(self) -> tuple[Any, dict[str, int]] | None:
        """(index, id -> row) over the multilingual model's vectors; None when there are none."""
        emb = self.multilingual_embedder
        if emb is None:
            return None
        model = emb.id
        count = self._version("vectors", model)
        if not count:
            return None
        version = (model, count, self._version("data"))
        ml = self._ml
        if ml is None or ml[1] != version:
            with self._lock:
                ml = self._ml
                if ml is None or ml[1] != version:
                    idx, pos = self._build_vectors(model, version)
                    ml = self._ml = (idx, version, pos)
        return (ml[0], ml[2]) if len(ml[0]) else None

    def route(self, text: str) -> str:
        """Which index search by meaning uses for `text`: "multilingual" for a query in CJK script
        when the library has that index, else "default" (English queries never change path)."""
        if has_cjk(text) and self.multilingual_index() is not None:
            return "multilingual"
        return "default"

    def query_vector(self, text: str, embedder: Embedder | None = None) -> np.ndarray:
        """The query's embedding, from a small LRU (search-as-you-type and paging repeat queries)."""
        emb = embedder or self._embedder()
        key = text if embedder is None else f"{emb.id}\x00{text}"
        with self._qlock:  # the web server calls this from several threads
            v = self._qcache.get(key)
            if v is not None:
                self._qcache.move_to_end(key)
                return v
        v = emb.embed_query(text)
        with self._qlock:
            self._qcache[key] = v
            while len(self._qcache) > 512:
                self._qcache.popitem(last=False)
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
    def _complete(
        self, q: Query, qv: np.ndarray, lists: dict[str, list[tuple[str, float]]], vec: Any, vec_pos: dict[str, int]
    ) -> None:
        """Give every candidate its real score in both lists (in place).

        A paper the keyword list ranked 3rd but the semantic list missed (it was 101st)
        otherwise counts as the *worst* semantic match; its actual cosine is one dot
        product away, and its BM25 one posting lookup."""
        kw = self._kw
        kw_ids = {pid for pid, _ in lists["keyword"]}
        sem_ids = {pid for pid, _ in lists["semantic"]}
        need_sem = [pid for pid, _ in lists["keyword"] if pid not in sem_ids and pid in vec_pos]
        if need_sem:
            pos = [vec_pos[pid] for pid in need_sem]
            mat = vec.vectors(pos) if hasattr(vec, "vectors") else vec.matrix[pos]
            sims = mat @ np.asarray(qv, dtype=np.float32)
            lists["semantic"] = lists["semantic"] + [(pid, float(s)) for pid, s in zip(need_sem, sims)]
        need_kw = [pid for pid, _ in lists["semantic"] if pid not in kw_ids]
        if need_kw and hasattr(kw, "score_positions"):
            kpos = self._kw_pos
            have = [pid for pid in need_kw if pid in kpos]
            bm = kw.score_positions(q, [kpos[pid] for pid in have])
            lists["keyword"] = lists["keyword"] + [(pid, float(s)) for pid, s in zip(have, bm)]

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

    def glossary_reading(self, q: Query) -> tuple[str, float] | None:
        """The glossary's reading of a query in CJK script: (its English words, the share of its
        Chinese characters they cover); None for any other query or with the glossary off. One
        search reads a query once and hands the reading to `keyword_query` and `english_query`."""
        if not self.settings.glossary or not has_cjk(q.text):
            return None
        return translate(q.text)

    def english_query(self, q: Query, reading: Any = _UNREAD) -> tuple[Query, float] | None:
        """(the query read in English through the glossary, the share of its Chinese it read), or
        None when the glossary reads too little of it to stand for the query."""
        s = self.settings
        if s.glossary_weight <= 0:
            return None
        if reading is _UNREAD:
            reading = self.glossary_reading(q)
        if reading is None:
            return None
        english, share = reading
        if not english or share < s.glossary_min_share:
            return None
        return parse(f"{latin_words(q.text)} {english}"), share

    def translation(self, q: Query) -> str | None:
        """A language model's English rendering of a query in CJK script, when one is configured and
        answered with English (a reply still in CJK script would route back to the multilingual index)."""
        if self._translator is None or self.settings.translation_weight <= 0 or not has_cjk(q.text):
            return None
        english = self._translator(q.text)
        if not english or has_cjk(english) or parse(english).empty:
            return None
        return english

    def keyword_query(self, q: Query, reading: Any = _UNREAD) -> Query:
        """What the keyword index is asked: the query, plus the English words of the Chinese terms
        the glossary knows (the papers are in English; a Chinese term's bigrams match none of them)."""
        if reading is _UNREAD:
            reading = self.glossary_reading(q)
        english = reading[0] if reading is not None else ""
        if not english:
            return q
        extra = parse(english)
        return Query(
            text=f"{q.text} {english}", terms=list(dict.fromkeys(q.terms + extra.terms))[:MAX_TERMS], phrases=q.phrases
        )

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
        words: Query | None = None,
    ) -> tuple[list[tuple[str, float]], dict[str, dict[str, int]], bool]:
        """rank() plus whether the floor emptied a non-empty answer. `reading`: the query's glossary
        reading, `translated`: its language-model English, when the caller already has them (read here
        otherwise, once for all routes). `words`: the query whose words the floor's coverage counts
        (default `q`)."""
        if mode not in MODES:
            raise PaperatlasError(f"unknown search mode {mode!r}", f"use one of: {', '.join(MODES)}")
        if reading is _UNREAD:
            reading = self.glossary_reading(q)
        exclude = set(exclude)
        lists: dict[str, list[tuple[str, float]]] = {}
        qv = None
        if mode in ("keyword", "hybrid"):
            kw = self.keyword_index()
            mask = None if allowed is None and not exclude else self._mask(self._kw_pos, len(kw.ids), allowed, exclude)
            lists["keyword"] = kw.search(self.keyword_query(q, reading), depth, mask)
        ml = self.multilingual_index() if mode != "keyword" and has_cjk(q.text) else None
        vec_pos = self._vec_pos
        if mode in ("semantic", "hybrid") and ml is not None:
            vec, vec_pos = ml
            emb = self.multilingual_embedder
            qv = self.query_vector(q.text, emb)
            lists["semantic"] = vec.search(qv, depth, self._mask(vec_pos, len(vec), allowed, exclude))
        elif mode in ("semantic", "hybrid"):
            vec = self.vector_index()
            vec_pos = self._vec_pos
            if vec is None:
                if mode == "semantic":
                    raise PaperatlasError(
                        gettext("this library has no embeddings yet, so it cannot search by meaning"),
                        gettext("run `paperatlas embed`, or search with --mode keyword"),
                    )
            elif q.text.strip():
                qv = self.query_vector(q.text) if qvec is None else qvec
                lists["semantic"] = vec.search(qv, depth, self._mask(self._vec_pos, len(vec), allowed, exclude))
        ranks: dict[str, dict[str, int]] = {}
        for name, ranked in lists.items():
            for r, (pid, _) in enumerate(ranked, start=1):
                ranks.setdefault(pid, {})[name] = r
        s = self.settings
        if len(lists) == 1:
            fused = next(iter(lists.values()))
        elif not lists:
            fused = []
        elif s.fusion == "rrf":
            fused = rrf([lists["keyword"], lists["semantic"]], k=s.rrf_k)
        else:
            if s.complete_scores and qv is not None:
                self._complete(q, qv, lists, vec, vec_pos)
            w = s.crosslingual_semantic_weight if ml is not None else s.semantic_weight
            scale = self._crosslingual_scale() if ml is not None else None
            if scale is not None:
                fused = calibrated_convex(lists["keyword"], lists["semantic"], scale, w)
            else:
                # crosslingual_fusion "minmax" names its own normalisation; English text follows `norm`
                norm = "minmax" if ml is not None else s.norm
                fused = convex([lists["keyword"], lists["semantic"]], [1 - w, w], norm=norm)
        if len(lists) == 1 and "semantic" in lists and ml is not None:
            scale = self._crosslingual_scale()
            if scale is not None:  # semantic mode: the calibrated score, not e5's crowded cosine
                fused = calibrated_convex([], lists["semantic"], scale, 1.0)
        if translated is _UNREAD:
            translated = self.translation(q)
        # the glossary's English reading (when no model rendered the query), as far as it reaches,
        # searched as an English query would be (keyword + the default model) and blended in before
        # the floor, which then reads the query's words in English
        english = self.english_query(q, reading) if ml is not None and not translated else None
        if english is not None and (mode == "hybrid" or self.vector_index() is not None):
            en, _, _ = self._rank(english[0], mode, depth, allowed, exclude)
            fused = blend(fused, en, s.glossary_weight * english[1])
        emptied = False
        fl = self.active_floor(ml is not None) if floor and qv is not None and fused else None
        if fl is not None:
            best = max((c for _, c in lists["semantic"]), default=-1.0)
            # the words of the top hits: keyword hits in hybrid, the nearest papers in semantic mode
            words_from = lists.get("keyword") or lists.get("semantic", ())
            cq = english[0] if english is not None else (q if words is None else words)  # read in English
            cov = self.keyword_coverage(cq, words_from) if best < fl.gate_cosine and cq.text.strip() else 0.0
            fused = apply_floor(fused, lists, fl, cov)
            emptied = not fused
        if translated:
            # a model's rendering is a whole English query: it is searched as one, past its own floor,
            # and blended with what the Chinese query kept (either may have found what the other missed)
            # Past the gate, its floor counts only the words the reader typed in Latin script ("LoRA"):
            # the rendering's own words are the model's choice, and a short everyday phrase in English
            # ("ticket for a concert") shares them with some abstract (train split: no answerable
            # rendering needs them, every one passes the cosine gate)
            own = latin_words(q.text)
            eq = parse(f"{own} {translated}")
            en, _, en_emptied = self._rank(eq, mode, depth, allowed, exclude, floor=floor, words=parse(own))
            fused = blend(fused, en, s.translation_weight) if fused else en
            emptied = not fused and (emptied or en_emptied)
        return fused, ranks, emptied

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
        terms = self.keyword_query(q, reading).terms  # a Chinese query's English words are marked too
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
        mask = self._mask(self._vec_pos, len(vec), allowed, {paper_id})
        return vec.search(v, limit, mask)
