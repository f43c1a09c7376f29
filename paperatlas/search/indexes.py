"""The indexes search reads, built and kept: the keyword index (BM25 by default), the vector index of
the library's model and the multilingual one, each built lazily on first use and rebuilt when the library
changes (checked with two cheap queries per search). Built indexes are saved in `<library file>.index/`,
keyed by the library's data version, so the next process maps them from disk instead of rebuilding (a
million papers take minutes to index, seconds to load). Querying them is search/engine.py's part."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..embed.base import Embedder
from ..files import swap_in
from ..index.base import VECTOR_INDEXES
from ..store.sqlite import SQLiteStore
from .keyword import KEYWORD_INDEXES

if TYPE_CHECKING:
    from .settings import SearchSettings


def _faiss_available() -> bool:
    try:
        import faiss  # noqa: F401
    except ImportError:
        return False
    return True


class Indexes:
    """The library's search indexes, kept current.

    `extra_texts(batch)` gives more text to index per paper ({id: (title, abstract)} -> {id: text}; the
    machine translations of its title and abstract) and `extra_version()` changes when that text does:
    both handed in by the library, so the engine reaches no store part of a capability."""

    def __init__(
        self,
        store: SQLiteStore,
        embedder: Callable[[], Embedder],
        settings: SearchSettings,
        multilingual: Callable[[], Embedder | None] | None = None,
        extra_texts: Callable[[dict[str, tuple[str, str]]], dict[str, str]] | None = None,
        extra_version: Callable[[], Any] | None = None,
    ) -> None:
        self.store = store
        self._embedder = embedder
        # the second index: queries in CJK script go there (English-only MiniLM cannot read them)
        self._multilingual = multilingual
        self._extra_texts = extra_texts
        self._extra_version = extra_version
        self.settings = settings
        self._ml: tuple[Any, Any, dict[str, int]] | None = None  # (index, version, id -> row)
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
            if what == "extra":  # machine translations are keyword-searchable too
                st.versions[key] = self._extra_version() if self._extra_version else (0, "")
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

        def write(tmp: Path) -> None:
            index.save(tmp)
            (tmp / "engine.json").write_text(json.dumps(key), encoding="utf-8")

        swap_in(folder, write)  # a read-only folder: search works, the next process rebuilds

    # -- indexes -------------------------------------------------------------------------
    def _keyword_options(self) -> dict[str, Any]:
        s = self.settings
        if s.keyword_index == "fts5":
            return {"store": self.store}
        if s.keyword_index in ("bm25", "bm25s"):
            return {"k1": s.k1, "b": s.b, "title_weight": s.title_weight}
        return {}

    def _keyword_texts(self) -> Iterator[list[tuple[str, str, bool, str]]]:
        """The store's texts in batches, each abstract followed by the paper's keywords (the authors'
        own words for it, when `index_keywords`) and its current translations (a Chinese query finds a
        paper by the words of its Chinese title and abstract)."""
        translated = self._extra_texts
        with_keywords = self.settings.index_keywords
        for batch in self.store.iter_keyword_texts():
            extra = translated({i: (t, a) for i, t, _, a, _ in batch}) if translated else {}
            yield [
                (i, t, d, " ".join(x for x in (a, " ".join(kw) if with_keywords else "", extra.get(i, "")) if x))
                for i, t, d, a, kw in batch
            ]

    def keyword_index(self) -> Any:
        version = (*self._version("data"), *self._version("extra"))
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
                    if not (self._saved(folder, key) and kw.load(folder, self.store.paper_ids())):  # type: ignore[attr-defined]
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
    def kw_pos(self) -> dict[str, int]:
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
            if self._saved(folder, key) and idx.load(folder, self.store.vector_ids(model)):  # type: ignore[attr-defined]
                self.index_source["vectors"] = "loaded"
            else:
                idx.build_batches(lambda: self.store.iter_vectors(model), n)
                self._save(idx, folder, key)
        else:
            ids, mat = self.store.load_vectors(model)
            idx.build(ids, mat if len(ids) else np.zeros((0, 1), np.float32))
        return idx, getattr(idx, "row", None) or {pid: i for i, pid in enumerate(idx.ids)}  # type: ignore[attr-defined]

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

    def vector_positions(self) -> dict[str, int]:
        """Paper id -> row of the current vector index (as of its last build)."""
        return self._vec_pos

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
        papers = self._version("data")[0]
        if not count or count < self.settings.multilingual_min_coverage * papers:
            return None  # too partial to search: the query goes as with no index (settings.py says why)
        version = (model, count, self._version("data"))
        ml = self._ml
        if ml is None or ml[1] != version:
            with self._lock:
                ml = self._ml
                if ml is None or ml[1] != version:
                    idx, pos = self._build_vectors(model, version)
                    ml = self._ml = (idx, version, pos)
        return (ml[0], ml[2]) if len(ml[0]) else None

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
    def mask(pos: dict[str, int], n: int, allowed: set[str] | None, exclude: set[str]) -> np.ndarray | None:
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
