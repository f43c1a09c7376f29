"""Library: the one object the CLI, the web UI and the HTTP API all use."""

from __future__ import annotations

import copy
import functools
import importlib
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from . import settings
from .contrib import Filter, FilterTable, SearchRequest, contributions, core_filters
from .core import EmbedListener, heard
from .embed.base import DEFAULT_EMBEDDER, EMBEDDERS, RETIRED, Embedder, check_choice
from .errors import ModelMismatch, NotFound, PaperatlasError
from .i18n import gettext
from .links import link_map, paper_links
from .models import Hit, Hits, IngestReport, Paper
from .search.engine import SearchEngine, SearchSettings
from .store import is_postgres_url, open_store, redact
from .store.sqlite import SORTABLE  # the column orders `papers` takes (the surfaces offer them too)
from .store.vector_cache import VectorCache, text_hash

if TYPE_CHECKING:  # the capabilities' classes load on first use (Capability)
    from .authors import Authors
    from .citations import Citations
    from .fulltext import Fulltext
    from .ingest.pipeline import PreviewFile, Progress, Records
    from .llm import Llm
    from .multilingual import Multilingual
    from .own_papers import OwnPapers
    from .programme import Programme
    from .readers import Readers
    from .recommend import Recommend
    from .report import Report
    from .sources import Sources
    from .topics import Topics
    from .translate import Translator

DEFAULT_DB = "paperatlas.db"
#: what happens to new papers' vectors after a write (Library.add_papers)
EmbedPolicy = Literal["after", "queue", "no"]


MAX_RESULTS = 1000  # the most hits one search or similar call returns (page with offset for more)


#: the hooks a capability's class may have (contrib.py): the library asks for them by these names
HOOKS = frozenset(
    {
        "after_embed",
        "asked_about",
        "body_matches",
        "claims_file",
        "decorate",
        "digest_news",
        "explain_empty",
        "filters",
        "ingest_files",
        "library_stats",
        "map_places",
        "paper_fields",
        "passages",
        "query_english",
        "reader_papers",
        "search_embedder",
        "side_models",
        "sorts",
        "split_query",
    }
)


@dataclass(frozen=True)
class Capability:
    """One capability: the attribute it is attached as (`lib.<name>`), its class (a "module:Class" path,
    imported when the library first uses the capability, so that a command pays only for the
    capabilities it touches; or the class itself), the earlier capabilities it is handed, and, with a
    path, the hooks its class has (HOOKS; tests/test_startup.py checks them against the class), which
    say whom the library asks without importing the others."""

    name: str
    cls: str | type
    given: tuple[str, ...] = ()
    hooks: frozenset[str] | None = None

    def load(self) -> type:
        return self.cls if isinstance(self.cls, type) else _load_class(self.cls)

    def has(self, hook: str) -> bool:
        if hook not in HOOKS:
            raise ValueError(f"no hook {hook!r}: add it to library.HOOKS (and to the capabilities that have it)")
        if self.hooks is None or not isinstance(self.cls, str):
            return callable(getattr(self.load(), hook, None))
        return hook in self.hooks


@functools.cache
def _load_class(path: str) -> type:
    module, _, name = path.partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert isinstance(cls, type)
    return cls


def _hooks(*names: str) -> frozenset[str]:
    return frozenset(names)


# The capabilities, each an object of its own room attached as `lib.<name>` and made on first use, in
# this order when made together. Adding a capability is adding it here: the library asks each one
# for the filters, sorts and hit decorations it contributes (contrib.py) and names none of them.
CAPABILITIES: list[Capability | tuple[str, type, tuple[str, ...]]] = [
    Capability("readers", "paperatlas.readers:Readers", (), _hooks()),
    Capability("llm", "paperatlas.llm:Llm", ("readers",), _hooks("library_stats", "query_english")),
    Capability("recommend", "paperatlas.recommend:Recommend", ("readers", "llm"), _hooks()),
    Capability("sources", "paperatlas.sources:Sources", (), _hooks("digest_news")),
    Capability("topics", "paperatlas.topics:Topics", ("readers",), _hooks()),
    Capability("authors", "paperatlas.authors:Authors", (), _hooks("explain_empty", "split_query", "filters")),
    Capability(
        "multilingual",
        "paperatlas.multilingual:Multilingual",
        (),
        _hooks("after_embed", "search_embedder", "side_models"),
    ),
    Capability(
        "programme",
        "paperatlas.programme:Programme",
        ("readers", "recommend"),
        _hooks("decorate", "digest_news", "explain_empty", "map_places", "filters", "claims_file", "ingest_files"),
    ),
    Capability("report", "paperatlas.report:Report", ("llm",), _hooks("explain_empty", "filters")),
    Capability(
        "citations", "paperatlas.citations:Citations", (), _hooks("decorate", "paper_fields", "sorts", "filters")
    ),
    Capability(
        "fulltext",
        "paperatlas.fulltext:Fulltext",
        (),
        _hooks("library_stats", "passages", "filters", "claims_file", "ingest_files", "asked_about", "body_matches"),
    ),
    Capability("translator", "paperatlas.translate:Translator", ("llm", "fulltext"), _hooks()),
    Capability("own_papers", "paperatlas.own_papers:OwnPapers", ("readers",), _hooks("reader_papers")),
]


def capabilities() -> list[Capability]:
    """CAPABILITIES, each as a Capability (an entry may be a (name, class, given) triple)."""
    return [c if isinstance(c, Capability) else Capability(*c) for c in CAPABILITIES]


def _claim_files(
    capabilities: Sequence[Any], paths: Sequence[str | Path], format: str | None
) -> tuple[list[tuple[Any, list[str | Path]]], list[str | Path]]:
    """Which capability reads each file itself (its `claims_file` hook: a programme feed, a PDF),
    in CAPABILITIES order, and the files left for the paper-list readers."""
    readers = [(c, claims) for c in capabilities if callable(claims := getattr(c, "claims_file", None))]
    claimed: dict[int, tuple[Any, list[str | Path]]] = {}
    lists: list[str | Path] = []
    for p in paths:
        for i, (cap, claims) in enumerate(readers):
            if claims(p, format):
                claimed.setdefault(i, (cap, []))[1].append(p)
                break
        else:
            lists.append(p)
    return [claimed[i] for i in sorted(claimed)], lists


class _Core:
    """The library's own contribution: the columns every paper has."""

    @staticmethod
    def filters() -> list[Filter]:
        return core_filters()


def filter_table(capabilities: Sequence[Any] | None = None) -> FilterTable:
    """The library's own filters and those its capabilities contribute; without `capabilities`, those
    of the capability classes (what the CLI's --help shows before any library is open)."""
    if capabilities is None:
        capabilities = [c.load() for c in _capabilities_with("filters", "sorts")]
    return FilterTable.of([_Core(), *capabilities])


def _capabilities_with(*hooks: str) -> list[Capability]:
    return [c for c in capabilities() if any(c.has(h) for h in hooks)]


def default_db_path() -> str:
    return str(settings.get("db")) or DEFAULT_DB


def missing_library(path: str) -> NotFound:
    """The error of a command that reads a library that does not exist (nothing is created)."""
    return NotFound(
        f"no library at {Path(path).resolve()} (nothing was created there)",
        f"make one with `paperatlas --db {path} ingest FILE...` (or `make demo`), "
        "or point --db / $PAPERATLAS_DB at an existing library file",
    )


class Library:
    """A paper library in one SQLite file (or a PostgreSQL database).

    The library itself is here: ingest, embed, get, papers, count, stats, search, similar. Every
    other capability is an object of its own room, attached as an attribute: `readers`, `recommend`,
    `sources`, `topics`, `authors`, `multilingual` (docs/architecture.md).

    Example:
        >>> lib = Library(":memory:")
        >>> lib.ingest(["examples/neurips-2026.txt"]).summary()
        '10 new, 0 updated, 0 unchanged'
        >>> [p.venue for p in lib.papers(limit=1)]
        ['NeurIPS']
    """

    def __init__(
        self,
        path: str | Path | None = None,
        embedder: str | Embedder | None = None,
        search_settings: SearchSettings | None = None,
        vector_cache: VectorCache | None = None,
        create: bool = True,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        """Open (or create) the library file at `path` (default ./paperatlas.db or $PAPERATLAS_DB).

        Args:
            path: the SQLite file; ":memory:" for a throw-away library; a postgresql:// URL for a
                library in PostgreSQL shared by several hosts (needs `paperatlas[scale]`).
            embedder: a registered embedder name ("minilm", "hashing", ...) or an Embedder;
                default: the one this library was embedded with, else "minilm-tuned-r11".
            search_settings: fusion weights, candidate depth, index backends.
            vector_cache: where embeddings are cached across libraries (default ~/.cache/paperatlas).
            create: with False, a missing file raises NotFound instead of becoming an empty library
                (commands that only read must not leave empty files behind).
            on_wait: told (once) when an ingest or embed waits for another process writing to this library.
        """
        self.path = str(path) if path is not None else default_db_path()
        if not create and self.path != ":memory:" and not is_postgres_url(self.path) and not Path(self.path).exists():
            raise missing_library(self.path)
        self.store = open_store(self.path)
        self._embedder_arg = embedder
        self._embedder: Embedder | None = None
        self._embedder_name = ""
        self.vector_cache = vector_cache or VectorCache()
        self.engine = SearchEngine(
            self.store,
            lambda: self.embedder,
            search_settings,
            # a second model queries in CJK script are searched with (the multilingual capability's)
            multilingual=self._search_embedder,
            # a Chinese query is also searched in the English a configured model renders it as
            translator=self._query_english,
            # the machine translations of titles and abstracts are keyword-searchable too
            extra_texts=self.store.llm.translated_texts,
            extra_version=self.store.llm.translations_version,
        )
        self._embed_status: tuple[Any, dict[str, Any]] | None = None
        self._queued: threading.Thread | None = None  # an embed queued by add_papers(embed="queue")
        self.on_wait = on_wait
        # the capabilities: each is made on first use (`capability`), and builds its heavy parts
        # (models, caches) on first use in turn
        self._specs = {c.name: c for c in capabilities()}
        self._made: dict[str, Any] = {}
        self._making = threading.RLock()
        self._filters: FilterTable | None = None

    # the capability objects (set from CAPABILITIES; declared for the type checker and the reader)
    readers: Readers
    llm: Llm
    recommend: Recommend
    own_papers: OwnPapers
    sources: Sources
    topics: Topics
    authors: Authors
    multilingual: Multilingual
    programme: Programme
    report: Report
    citations: Citations
    fulltext: Fulltext
    translator: Translator

    def capability(self, name: str) -> Any:
        """The capability object attached as `name`, made now if it is not yet (with those it is handed)."""
        cap = self._made.get(name)
        if cap is None:
            with self._making:  # server threads: one object per capability
                cap = self._made.get(name)
                if cap is None:
                    spec = self._specs[name]
                    cap = spec.load()(self, *(self.capability(g) for g in spec.given))
                    self._made[name] = cap
                    setattr(self, name, cap)
        return cap

    if not TYPE_CHECKING:  # the type checker reads the capabilities' annotations below, and flags a typo

        def __getattr__(self, name: str) -> Any:
            # only for attributes not set yet: a capability not used so far
            specs = self.__dict__.get("_specs")
            if specs is not None and name in specs:
                return self.capability(name)
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    @property
    def capabilities(self) -> list[Any]:
        """Every capability object, in CAPABILITIES order (all made now)."""
        return [self.capability(name) for name in self._specs]

    @property
    def filters(self) -> FilterTable:
        """The library's own filters and sorts and those its capabilities contribute."""
        if self._filters is None:
            self._filters = filter_table([self.capability(c.name) for c in self._with("filters", "sorts")])
        return self._filters

    def _with(self, *hooks: str) -> list[Capability]:
        return [c for c in self._specs.values() if any(c.has(h) for h in hooks)]

    def contributions(self, hook: str) -> list[Callable[..., Any]]:
        """The capabilities' methods named `hook` (e.g. "digest_news", "map_places"), in CAPABILITIES order;
        only the capabilities that have it are made."""
        return contributions([self.capability(c.name) for c in self._with(hook)], hook)

    def decorate(self, hits: Sequence[Hit]) -> None:
        """Let each capability add what it knows to the hits (the programme's events, ...)."""
        if hits:
            for decorate in self.contributions("decorate"):
                decorate(hits)

    def _search_embedder(self) -> Embedder | None:
        return next((f() for f in self.contributions("search_embedder")), None)

    def _side_models(self) -> set[str]:
        """Models whose vectors a capability keeps beside the library's own (the multilingual index)."""
        return {m for f in self.contributions("side_models") for m in f()}

    def _query_english(self, text: str) -> str:
        """The English a capability's language model renders a query as ("" when none does)."""
        return next((english for f in self.contributions("query_english") if (english := f(text))), "")

    def close(self) -> None:
        if self._queued is not None:  # its connections close with the store: let it finish first
            self._queued.join()
        self.store.close()
        self.vector_cache.close()

    # -- read-only serving --------------------------------------------------------------------
    @property
    def read_only(self) -> bool:
        return bool(getattr(self.store, "read_only", False))

    def set_read_only(self) -> None:
        """From now on nothing writes to the library (`serve --read-only`): the store refuses
        writes, profiles are computed but not saved, indexes live in the cache folder."""
        self.store.set_read_only()

    def secret(self, name: str) -> str:
        """A random secret kept in the library under `name` (made on first use, so every host serving
        the library agrees; a fresh one each call on a read-only library that has none yet)."""
        fresh = secrets.token_urlsafe(32)
        stored = self.store.get_meta(name)
        if stored is None and not self.read_only:
            stored = self.store.meta_setdefault(name, fresh)
        return stored or fresh

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingest: the one write path of papers ----------------------------------------------
    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the library's write lock (reentrant): what a capability plans from the stored papers
        and then writes with `add_papers` (a programme's events) stays one step for other writers."""
        with self.store.write_lock(self.on_wait):
            yield

    def add_papers(
        self,
        papers: Sequence[str | Path] | Records,
        *,
        format: str | None = None,
        venue: str | None = None,
        year: int | None = None,
        encoding: str = "utf-8",
        skip_bad: bool = False,
        progress: Progress | None = None,
        embed: EmbedPolicy = "no",
        listener: EmbedListener | None = None,
    ) -> IngestReport:
        """Store papers: paper-list files, or `Records` (a fetched page, a programme's papers).

        Every write of papers comes here: it holds the library's write lock while it plans and
        writes (one ingest at a time per library, across processes: each plans its writes from what
        the library holds), de-duplicates against what is stored, and reports what it did. `embed`
        says what happens to the new papers' vectors afterwards, outside the lock: "after" embeds
        them now (and the multilingual index, when it is on), "queue" embeds them in a background
        thread of this process, "no" leaves them to `paperatlas embed`. `listener` hears the embed.

        Raises:
            IngestError: a file or record is bad (and `skip_bad` is False); nothing was stored.
        """
        from .ingest.pipeline import Records, ingest_files, ingest_rows

        with self.writing():
            if isinstance(papers, Records):
                r = papers
                report = ingest_rows(self.store, r.name, r.source, r.format, r.rows, r.defaults, skip_bad, r.state)
            else:
                report = ingest_files(self.store, list(papers), format, venue, year, encoding, skip_bad, progress)
        report.embedded = self.embed_after(embed, listener)
        return report

    def embed_after(self, policy: EmbedPolicy, listener: EmbedListener | None = None) -> int:
        """Bring the vectors up to date after a write, as `policy` says (see `add_papers`).
        Returns the papers embedded now (0 for "queue" and "no")."""
        if policy == "no":
            return 0
        if policy == "queue":
            t = threading.Thread(target=self._embed_quietly, name="embed-queued", daemon=True)
            t.start()
            self._queued = t
            return 0
        if policy != "after":
            raise ValueError(f"embed policy {policy!r}: use after, queue or no")
        waiting = self.embedding_status()["waiting"]
        n = heard(listener, "papers", self.embedder.id, waiting, lambda update: self.embed(progress=update))
        for follow in self.contributions("after_embed"):  # side indexes (the multilingual one) follow
            follow(listener)
        return n

    def _embed_quietly(self) -> None:
        try:
            self.embed()
            for follow in self.contributions("after_embed"):
                follow(None)
        except PaperatlasError:  # a queued embed is best effort: `paperatlas embed` says why and resumes
            pass

    def ingest(
        self,
        paths: Sequence[str | Path] | str | Path,
        format: str | None = None,
        venue: str | None = None,
        year: int | None = None,
        encoding: str = "utf-8",
        skip_bad: bool = False,
        progress: Progress | None = None,
        embed: EmbedPolicy = "no",
        listener: EmbedListener | None = None,
    ) -> IngestReport:
        """Ingest paper-list files (format auto-detected unless `format` is given).

        Args:
            paths: one path or several; gzipped files are read transparently.
            format: force a format (see `paperatlas.ingest.formats.FORMAT_NAMES`).
            venue: set every paper's venue (overrides the file's).
            year: set every paper's year (overrides the file's).
            encoding: text encoding of the files.
            skip_bad: store the good records and list the bad ones instead of failing.
            progress: callback `(done, total)` called after each written batch.
            embed: "after", "queue" or "no" (`add_papers`); `listener` hears that embed.

        Returns:
            IngestReport with new / updated / unchanged / merged counts and bad records.

        Raises:
            IngestError: a file or record is bad (and `skip_bad` is False); nothing was stored.
        """
        if isinstance(paths, (str, Path)):
            paths = [paths]
        # a file a capability reads itself (a programme feed, a PDF) goes to it; the rest are lists
        claimed, lists = _claim_files([self.capability(c.name) for c in self._with("claims_file")], paths, format)
        report = IngestReport()
        if lists:
            report = self.add_papers(
                lists, format=format, venue=venue, year=year, encoding=encoding, skip_bad=skip_bad, progress=progress
            )
        for cap, files in claimed:  # after the lists: a feed links its events to the papers they bring
            report.add(cap.ingest_files(files, skip_bad=skip_bad))
        report.embedded = self.embed_after(embed, listener)
        return report

    @staticmethod
    def preview(
        paths: Sequence[str | Path] | str | Path,
        format: str | None = None,
        venue: str | None = None,
        year: int | None = None,
        encoding: str = "utf-8",
    ) -> list[PreviewFile]:
        """What `ingest` would store from `paths`, read and normalised the same way, writing nothing
        (no library is opened or created).

        Returns:
            One PreviewFile per path: its papers with their locations, notes, warnings, bad records.

        Example:
            >>> Library.preview("examples/neurips2026.txt")[0].papers[0][1].title  # doctest: +SKIP
        """
        if isinstance(paths, (str, Path)):
            paths = [paths]
        claimed, lists = _claim_files([c.load() for c in _capabilities_with("claims_file")], paths, format)
        from .ingest.pipeline import preview_files

        out = preview_files(lists, format, venue, year, encoding)
        return out + [cap.preview_file(p) for cap, files in claimed for p in files]

    # -- reading -----------------------------------------------------------------------
    def get(self, paper_id: str) -> Paper:
        """The paper with this id (or an alias of a merged duplicate). Raises NotFound."""
        p = self.store.get_paper(paper_id)
        if p is None:
            raise NotFound(
                gettext("no paper with id {id!r}", id=paper_id),
                gettext("`paperatlas list` shows the ids in this library"),
            )
        return p

    def get_many(self, ids: Sequence[str]) -> list[Paper]:
        """Papers in the order of `ids`, skipping unknown ids."""
        found = self.store.get_papers(ids)
        return [found[i] for i in ids if i in found]

    def papers(
        self,
        venue: str | None = None,
        year: int | None = None,
        status: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "rowid",
        descending: bool = False,
        **filters: Any,
    ) -> list[Paper]:
        """Papers matching the filters, in `order` (rowid = ingest order).

        `filters`: any other filter of `self.filters` by name, e.g. `institution`, `country` (names
        matched folded, also a run of words of the name) and `type` (oral, spotlight, poster,
        highlight), which read the fields of docs/fields.md. `order` is a column (`SORTABLE`) or an
        order a capability contributes (`lib.sorts()`: citations, rising), largest first."""
        if order not in SORTABLE:  # a contributed order: over every match, then the page asked for
            every = {p.id: p for p in self.papers(venue, year, status, **filters)}
            ordered = [every[i] for i in self.sort_ids(list(every), order)]
            return ordered[offset:] if limit is None else ordered[offset : offset + limit]
        venue, year, status, keep = self._split(venue, year, status, filters)
        if keep is None:
            return self.store.list_papers(venue, year, status, limit, offset, order, descending)
        papers = [p for p in self.store.list_papers(venue, year, status, None, 0, order, descending) if p.id in keep]
        return papers[offset:] if limit is None else papers[offset : offset + limit]

    def count(
        self, venue: str | None = None, year: int | None = None, status: str | None = None, **filters: Any
    ) -> int:
        venue, year, status, keep = self._split(venue, year, status, filters)
        if keep is None:
            return self.store.count_papers(venue, year, status)
        allowed = self.store.filter_ids(venue, year, status)
        return len(keep if allowed is None else keep & allowed)

    def _split(
        self, venue: str | None, year: int | None, status: str | None, filters: dict[str, Any]
    ) -> tuple[str | None, int | None, str | None, set[str] | None]:
        """The checked columns (which the store filters in SQL) and the ids the other filters keep."""
        values = self.filters.check({"venue": venue, "year": year, "status": status, **filters})
        others = {k: v for k, v in values.items() if not self.filters[k].column}
        keep = self.filters.keep(self, others) if others else None
        return values.get("venue"), values.get("year"), values.get("status"), keep

    def ping(self) -> None:
        """Raises StoreUnavailable (PaperatlasError) unless the library's database answers now."""
        self.store.ping()

    def has(self, paper_id: str) -> bool:
        """Whether the library holds a paper with this id (or alias)."""
        return self.store.get_paper(paper_id) is not None

    def version(self) -> tuple[Any, ...]:
        """Changes whenever a paper is added, changed or removed: a key for caches of what papers say."""
        return tuple(self.store.data_version())

    def facet_counts(self) -> list[tuple[str, int | None, str, int]]:
        """(venue, year, status, papers) for every combination the library holds."""
        return self.store.facet_counts()

    def copy_to(self, other: Library) -> dict[str, int]:
        """Copy everything (papers, vectors, readers...) into an empty library; returns counts per kind."""
        from .store.copy import copy_library

        return copy_library(self.store, other.store)

    def stats(self) -> dict[str, Any]:
        """Counts per venue / year / status, vector models and the file size."""
        venues: dict[str, dict[str, Any]] = {}
        for venue, year, status, n in self.store.facet_counts():
            key = f"{venue or '(no venue)'} {year or ''}".strip()
            v = venues.setdefault(key, {"venue": venue, "year": year, "papers": 0, "status": {}})
            v["papers"] += n
            if status:
                v["status"][status] = n
        return {
            "path": redact(self.path),
            "papers": self.count(),
            "venues": list(venues.values()),
            "vectors": self.store.vector_models(),
            "schema_version": self.store.schema_version,
            "file_bytes": self.store.file_size(),
            **{k: v for stats in self.contributions("library_stats") for k, v in stats().items()},
        }

    # -- embeddings ----------------------------------------------------------------------
    @property
    def embedder(self) -> Embedder:
        """The embedding model (created on first use; the model itself loads on first embed)."""
        if self._embedder is None:
            arg = self._embedder_arg
            if arg is None:
                arg = self.store.get_meta("embedder") or self._chosen_in_settings() or self._made_by()
            self._embedder_name = arg if isinstance(arg, str) else getattr(arg, "id", "custom")
            self._embedder = EMBEDDERS.create(arg) if isinstance(arg, str) else arg
        return self._embedder

    def _chosen_in_settings(self) -> str:
        """The `embedder` setting, for a library that recorded none; a retired embedder only for a
        library whose vectors it made."""
        chosen = str(settings.get("embedder") or "")
        if chosen in RETIRED:
            check_choice(chosen, library_has=self._made_by(), where=settings.env("embedder"))
        return chosen

    def _made_by(self) -> str:
        """The default embedder, unless this library already holds vectors of another registered one
        (a library from before the default changed, with no embedder name recorded)."""
        from .embed.base import name_for_id

        for model_id in self.store.vector_models():
            if model_id in self._side_models():  # a second index, not the library's model
                continue
            name = name_for_id(model_id)
            if name is not None:
                return name
        return DEFAULT_EMBEDDER

    def _check_model(self) -> None:
        """Refuse to mix vectors of two models in one library."""
        other = {
            m: n
            for m, n in self.store.vector_models().items()
            if m != self.embedder.id and m not in self._side_models()
        }
        if other:
            m = next(iter(other))
            raise ModelMismatch(
                f"this library holds {other[m]} vectors made by {m!r}, not by {self.embedder.id!r}",
                "use the embedder that made them, or re-embed everything: `paperatlas embed --rebuild`",
            )

    def embed(self, progress: Progress | None = None, rebuild: bool = False, batch_size: int = 64) -> int:
        """Embed papers that have no vector from the current model (or whose text changed).

        Returns the number of papers embedded. Vectors come from the on-disk cache when
        this model has seen the same text before.

        The model runs outside the library's write lock, so ingests, likes and fetches go on while
        vectors are computed; each batch is written in a short transaction under the write lock,
        after checking that its papers still hold the texts that were embedded. One embed runs at a
        time per library (`store.embed_lock`): a second waits, then embeds only what is left.
        """
        with self.store.embed_lock(self.on_wait):
            return self._embed(progress, rebuild, batch_size)

    #: how many times an embed looks again for papers stored while it ran
    EMBED_PASSES = 3

    def _embed(self, progress: Progress | None, rebuild: bool, batch_size: int) -> int:
        from .store.vector_cache import embed_cached

        told: list[str] = []

        def on_wait(message: str) -> None:  # once per embed, not once per batch
            if self.on_wait and not told:
                told.append(message)
                self.on_wait(message)

        written = 0
        total = 0
        # small steps: a batch's vectors become searchable (and survive a kill) soon after they are made
        step = max(batch_size * 4, 256)
        for attempt in range(self.EMBED_PASSES):
            todo = self.embed_todo(rebuild and attempt == 0)
            if not todo:
                break
            base, total = total, total + len(todo)
            for s in range(0, len(todo), step):
                chunk = todo[s : s + step]

                def sub(done: int, _n: int, s: int = s, base: int = base) -> None:
                    if progress:
                        progress(base + s + done, total)

                vecs = embed_cached(self.embedder, [t for _, _, t in chunk], self.vector_cache, batch_size, sub)
                with self.store.write_lock(on_wait):
                    rows = self._still_current([(pid, h, v) for (pid, h, _), v in zip(chunk, vecs)])
                    self.store.put_vectors(self.embedder.id, rows)
                written += len(rows)
        if written:
            self.remember_embedder()
        return written

    def _still_current(self, rows: list[tuple[str, str, Any]]) -> list[tuple[str, str, Any]]:
        """The rows whose paper is still stored with the text that was embedded: an ingest that ran
        while the model worked may have changed a text or merged a paper away (the next pass embeds
        its new text)."""
        papers = self.store.get_papers([pid for pid, _, _ in rows])
        keep = []
        for pid, h, v in rows:
            p = papers.get(pid)
            if p is not None and text_hash(Paper(pid, p.title, p.abstract, title_derived=p.title_derived).text) == h:
                keep.append((pid, h, v))
        return keep

    def embed_todo(self, rebuild: bool = False) -> list[tuple[str, str, str]]:
        """(paper id, text hash, text) of every paper whose vector is missing or stale.

        Each batch of vectors is stored as it is made, so after a kill this list holds just
        what is left: `embed` (local or on Ray) resumes where it stopped."""
        if rebuild:  # the multilingual index is kept: it has its own switch (embed --no-multilingual)
            for m in self.store.vector_models():
                if m not in self._side_models():
                    self.store.delete_vectors(m)
        self._check_model()
        have = self.store.text_hashes_for_model(self.embedder.id)
        todo: list[tuple[str, str, str]] = []
        for pid, title, derived, abstract in self.store.all_texts():
            text = Paper(pid, title, abstract, title_derived=derived).text
            h = text_hash(text)
            if have.get(pid) != h:
                todo.append((pid, h, text))
        return todo

    def vectors(self, paper_ids: Sequence[str] | None = None) -> dict[str, Any]:
        """paper id -> its float32 vector from this library's model (papers without one are left out)."""
        ids, mat = self.store.load_vectors(self.embedder.id)
        wanted = None if paper_ids is None else set(paper_ids)
        return {pid: mat[i] for i, pid in enumerate(ids) if wanted is None or pid in wanted}

    @property
    def embedder_name(self) -> str:
        """The registry name of this library's embedder ("minilm", ...), as workers elsewhere create it."""
        self.embedder  # noqa: B018 - resolves the name
        return self._embedder_name

    def remember_embedder(self) -> None:
        if self._embedder_name in EMBEDDERS:  # remember the registry name, so a reopen uses the same model
            self.store.set_meta("embedder", self._embedder_name)

    def embedding_status(self) -> dict[str, Any]:
        """Papers with a vector from the current model, and how many still wait for one.

        Papers are searchable by keyword from the moment they are stored; search by meaning covers
        the `embedded` ones (hybrid uses the vectors that exist). Cheap to call on every page:
        recomputed only when the file changed."""
        token = self.store.change_token()
        cached = self._embed_status
        if cached is not None and cached[0] == token:
            return dict(cached[1])
        model = self.embedder.id
        papers = self.count()
        embedded = min(self.store.vector_count(model), papers)
        status = {"model": model, "papers": papers, "embedded": embedded, "waiting": papers - embedded}
        self._embed_status = (token, status)
        return dict(status)

    def not_embedded(self, mode: str) -> int:
        """Papers a search in `mode` matches by keyword only, as they have no vector yet (0 for a
        keyword search): the answer's `not_embedded`."""
        if mode == "keyword":
            return 0
        try:
            return int(self.embedding_status()["waiting"])
        except PaperatlasError:
            return 0

    def waiting_note(self, mode: str) -> str:
        """What a search in `mode` should say of the papers not embedded yet ("" when nothing): the
        one wording the CLI and the MCP tool give (the web shows the count, `not_embedded`)."""
        if mode == "keyword":
            return ""
        try:
            st = self.embedding_status()
        except PaperatlasError:
            return ""
        if not st["waiting"]:
            return ""
        if not st["embedded"]:
            if mode == "hybrid":
                return (
                    f"none of the {st['papers']} papers is embedded yet: this search is by keyword only "
                    "(`paperatlas embed` adds search by meaning)"
                )
            return f"none of the {st['papers']} papers is embedded yet: `paperatlas embed` adds search by meaning"
        return (
            f"{st['waiting']} of {st['papers']} papers are not embedded yet: "
            f"{'they match by keyword only' if mode == 'hybrid' else 'search by meaning skips them'} "
            "(`paperatlas embed` finishes the job)"
        )

    # -- search ----------------------------------------------------------------------------
    def _allowed(self, values: dict[str, Any], extra: Sequence[tuple[str, Any]] = ()) -> set[str] | None:
        """The ids the (checked) filter values and the query's own filters keep; None: every paper."""
        return self.filters.keep(self, values, extra)

    def search(
        self,
        query: str | SearchRequest,
        mode: str = "hybrid",
        limit: int = 20,
        offset: int = 0,
        venue: str | None = None,
        year: int | None = None,
        status: str | None = None,
        exclude: Sequence[str] = (),
        sort: str | None = None,
        **filters: Any,
    ) -> Hits:
        """Search by keyword (BM25), by meaning (embeddings) or both fused (default).

        `query` is the text, or a whole SearchRequest (its mode, filters and page then count, not the
        arguments). Any text is safe: operators, quotes and symbols are treated as words, except
        "double-quoted phrases", which must appear as written. `limit` is capped at MAX_RESULTS (1000);
        the CLI refuses more rather than cap silently.

        `filters`: any filter of `self.filters` by name (`lib.filters.names()`): the library's venue,
        year and status, and what the capabilities contribute: `author` (case, accents and initials
        forgiven; the query may also hold author:"Name"), `institution`, `country`, `type` (oral,
        spotlight, poster, highlight; docs/fields.md), `session` (its id or name), `day` (YYYY-MM-DD,
        the conference's local date), `room`. A query of only such filters lists their papers, newest
        first. Each hit carries what the capabilities add to it (`decorate`: the programme's events).

        Semantic and hybrid search apply a relevance floor: a query with no real match (random
        letters, an off-domain question) returns no hits, with `.no_good_match` set. The result is
        a list of Hit with `.total` (hits in all pages) and `.more` (there may be more than that).
        `sort`: an order a capability contributes (`lib.sorts()`: citations, rising) instead of
        relevance, over the first MAX_RESULTS matches.

        Example:
            >>> lib.search("controllable user simulators", limit=3)  # doctest: +SKIP
            >>> lib.search('author:"P. Liang" language models')  # doctest: +SKIP
            >>> lib.search(SearchRequest("diffusion", filters={"session": "Poster Session 6"}))  # doctest: +SKIP
        """
        if isinstance(query, SearchRequest):
            req = query
            query, mode, limit, offset, sort = req.query, req.mode, req.per_page, req.offset, req.sort or None
            values = self.filters.check(req.filters)
        else:
            values = self.filters.check({"venue": venue, "year": year, "status": status, **filters})
        limit = max(0, min(int(limit), MAX_RESULTS))
        offset = max(0, int(offset))
        hits = self._search(query, mode, limit, offset, values, exclude, sort)
        # the answer says what it answers (Hits.to_dict, the envelope every surface gives)
        hits.query, hits.mode, hits.order = query, mode, sort or ""
        hits.filters = {k: v for k, v in values.items() if v is not None}
        hits.page_number, hits.per_page = (offset // limit + 1 if limit else 1), limit
        hits.has_more = hits.total > offset + len(hits)
        return hits

    def _search(
        self,
        query: str,
        mode: str,
        limit: int,
        offset: int,
        values: dict[str, Any],
        exclude: Sequence[str],
        sort: str | None,
    ) -> Hits:
        if sort:
            # every match (up to MAX_RESULTS) in the contributed order, then the page asked for
            found = self._search(query, mode, MAX_RESULTS, 0, values, exclude, None)
            by_id = {h.paper.id: h for h in found}
            page = copy.copy(found)
            page[:] = [by_id[i] for i in self.sort_ids(list(by_id), sort)][offset : offset + limit]
            return page
        text, extra = query, []
        for split in self.contributions("split_query"):  # author:"Name" in the query
            text, pairs = split(text)
            extra += [(name, self.filters[name].check(v)) for name, v in pairs]
        allowed = self._allowed(values, extra)
        if (extra or self.filters.lists_alone(values)) and not text.strip():
            # only filters (author:..., an institution, a session...): their papers, newest first
            papers = sorted(
                self.store.get_papers(list(allowed or ())).values(), key=lambda p: (-(p.year or 0), p.venue, p.title)
            )
            hits = Hits([Hit(p, 1.0, {}) for p in papers[offset : offset + limit]], total=len(papers))
        elif allowed is not None and not allowed:
            return Hits()
        else:
            hits = self.engine.search(text if extra else query, mode, limit, offset, allowed, exclude)
        self.decorate(hits)
        return hits

    def similar(self, paper_id: str, limit: int = 10, venue: str | None = None, year: int | None = None) -> list[Hit]:
        """Papers nearest to `paper_id` by embedding, each with a reason ("shares: ...")."""
        from .topics.related import add_reasons

        me = self.get(paper_id)
        allowed = self._allowed(self.filters.check({"venue": venue, "year": year}))
        ranked = self.engine.similar(me.id, max(0, min(int(limit), MAX_RESULTS)), allowed)
        papers = self.store.get_papers([pid for pid, _ in ranked])
        hits = [Hit(papers[pid], s, {"semantic": r}) for r, (pid, s) in enumerate(ranked, start=1) if pid in papers]
        self.decorate(hits)
        return add_reasons(self.store, me, hits)

    # -- where a paper can be read ----------------------------------------------------------
    def aliases(self, paper_id: str) -> list[str]:
        """The paper's other ids (those of the duplicates merged into it, e.g. its arXiv preprint)."""
        return self.store.aliases_of(self.get(paper_id).id)

    def links(self, paper_id: str) -> dict[str, str]:
        """Where to read a paper: {"page", "pdf", "arxiv"} (those it has), http(s) only."""
        p = self.get(paper_id)
        return link_map(p, self.store.aliases_of(p.id))

    def reading_links(self, paper_id: str) -> list[tuple[str, str]]:
        """(label, URL) pairs, most useful first: PDF, OpenReview, arXiv, DOI, the source page."""
        p = self.get(paper_id)
        return paper_links(p, self.store.aliases_of(p.id))

    def paper_fields(self, paper_id: str) -> dict[str, Any]:
        """The fields the capabilities add to one paper wherever it is shown in full (`show --json`,
        the paper page, MCP): each capability with a `paper_fields(id)` contributes its own keys."""
        out: dict[str, Any] = {}
        for fields in self.contributions("paper_fields"):
            out.update(fields(paper_id))
        return out

    def sorts(self) -> dict[str, Any]:
        """name -> Sort: the orders the capabilities contribute to search and lists."""
        return {s.name: s for sorts in self.contributions("sorts") for s in sorts()}

    def sort_ids(self, ids: Sequence[str], name: str) -> list[str]:
        """`ids` in the order of the contributed sort `name`, largest value first; ids without a
        value keep their order after the others. Unknown names raise, listing the known ones."""
        sorts = self.sorts()
        if name not in sorts:
            raise PaperatlasError(
                f"cannot sort by {name!r}", f"use one of: {', '.join(sorted(sorts)) or '(none in this library)'}"
            )
        value = sorts[name].key(self, list(ids))
        return sorted(ids, key=lambda i: (i not in value, -value.get(i, 0.0)))
