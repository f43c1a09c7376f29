"""LibraryCore: what a capability object may use of the library it is attached to.

Every capability (readers, recommend, sources, topics, authors, multilingual, ...) is a class in its
own package, constructed with the library: `Recommend(lib)`. It is typed against this Protocol rather
than against `Library`, so a capability never imports `library.py` (which imports every capability)
and stays testable over anything that offers these few members.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .models import Hit, Hits, IngestReport, Paper

if TYPE_CHECKING:
    from .contrib import FilterTable, SearchRequest
    from .embed.base import Embedder
    from .ingest.pipeline import Records
    from .search.engine import SearchEngine
    from .store.sqlite import SQLiteStore
    from .store.vector_cache import VectorCache


class EmbedListener(Protocol):
    """What a surface shows of the embed that follows a write: `begin` (which index, its model, the
    papers waiting) returns a progress callback or None; `end` hears how many were embedded."""

    def begin(self, index: str, model: str, waiting: int) -> Callable[[int, int], None] | None: ...

    def end(self, index: str, model: str, embedded: int) -> None: ...


def heard(
    listener: EmbedListener | None,
    index: str,
    model: str,
    waiting: int,
    run: Callable[[Callable[[int, int], None] | None], int],
) -> int:
    """`run(progress)` (an embed of `index`), told to `listener` from its start to its end, an
    interrupted one included. Returns what `run` returns: the papers embedded."""
    update = listener.begin(index, model, waiting) if listener else None
    done = 0
    try:
        done = run(update)
    finally:
        if listener:
            listener.end(index, model, done)
    return done


class LibraryCore(Protocol):
    """The paper library itself: its store, its embeddings and its search."""

    path: str
    store: SQLiteStore
    engine: SearchEngine
    vector_cache: VectorCache
    on_wait: Callable[[str], None] | None
    filters: FilterTable  # every filter: the library's own and what the capabilities contribute

    @property
    def read_only(self) -> bool: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def embedder_name(self) -> str: ...

    def embed_todo(self, rebuild: bool = False) -> list[tuple[str, str, str]]: ...

    def writing(self) -> AbstractContextManager[None]: ...

    def add_papers(self, papers: Records, *, skip_bad: bool = False) -> IngestReport: ...

    def embed_after(self, policy: Literal["after", "queue", "no"], listener: Any = None) -> int: ...

    def remember_embedder(self) -> None: ...

    def get(self, paper_id: str) -> Paper: ...

    def get_many(self, ids: Sequence[str]) -> list[Paper]: ...

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
    ) -> list[Paper]: ...

    def count(
        self, venue: str | None = None, year: int | None = None, status: str | None = None, **filters: Any
    ) -> int: ...

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
        **filters: Any,
    ) -> Hits: ...

    def contributions(self, hook: str) -> list[Callable[..., Any]]: ...

    def decorate(self, hits: Sequence[Hit]) -> None: ...

    def similar(
        self, paper_id: str, limit: int = 10, venue: str | None = None, year: int | None = None
    ) -> list[Hit]: ...

    def vectors(self, paper_ids: Sequence[str] | None = None) -> dict[str, Any]: ...
