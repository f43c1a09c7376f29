"""Sources as `lib.sources`: fetch a venue's papers from the web into the library, follow sources and
update them all."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import NotFound, PaperatlasError
from ..ingest.pipeline import Records
from ..models import IngestReport
from ..store.sources import Follow
from .base import FetchReport, create_source, fetch
from ..http_client import HttpClient

if TYPE_CHECKING:
    from ..core import LibraryCore

ClientFactory = Callable[[float], HttpClient]  # polite delay of the source -> client


@dataclass
class UpdateResult:
    """One followed source's part of `update`: its report, or the error that stopped it."""

    follow: Follow
    report: FetchReport | None
    error: str = ""


def _options(options: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in options.items() if v not in (None, False, "")}


class Sources:
    """Fetching venues from the web into the library, and staying current.

    Example:
        >>> lib.sources.fetch("paperlists", ["colm", "2025"]).summary()  # doctest: +SKIP
        '418 new, 0 updated, 0 unchanged from paperlists colm 2025 (1 page, 1 request, 2.1 s)'
    """

    def __init__(self, lib: LibraryCore) -> None:
        self._lib = lib
        self._store = lib.store

    def _write(self, records: Records) -> IngestReport:
        return self._lib.add_papers(records, skip_bad=True)

    def fetch(
        self,
        source: str,
        args: Sequence[str],
        base_url: str | None = None,
        client: HttpClient | None = None,
        progress: Callable[[int, int | None], None] | None = None,
        max_pages: int | None = None,
        client_factory: ClientFactory | None = None,
        embed: Literal["after", "queue", "no"] = "no",
        listener: Any = None,
        **options: Any,
    ) -> FetchReport:
        """Fetch a source's papers into the library: only new or changed papers are written, one
        transaction per batch, and a killed fetch resumes where it stopped. `embed` and `listener`:
        what follows the write (`Library.add_papers`); `report.embedded` counts it."""
        src = create_source(source, args, base_url, **_options(options))
        if client is None and client_factory is not None:
            client = client_factory(src.polite_delay)
        report = fetch(self._store, src, client, progress, max_pages=max_pages, write=self._write)
        if any(f.key == src.key for f in self._store.sources.follows()):
            # a one-off fetch of a followed source is that subscription's latest run too
            self._store.sources.record_follow_run(src.key, report.summary(), "")
        report.embedded = self._lib.embed_after(embed, listener)
        return report

    def follow(self, source: str, args: Sequence[str], base_url: str | None = None, **options: Any) -> tuple[str, bool]:
        """Save a subscription that `update` fetches. Returns (its key, whether it is new)."""
        opts = _options(options)
        src = create_source(source, args, base_url, **opts)  # checks the arguments now, not at the next update
        if base_url:
            opts["base_url"] = base_url
        created = self._store.sources.add_follow(src.key, source, list(args), opts)
        fetched_at = self._store.sources.source_state_updated_at(src.key) if created else ""
        if fetched_at:  # fetched before it was followed: that fetch is its latest run, not "never"
            complete = self._store.sources.source_state(src.key).get("complete", True)
            # English, as the summaries `update` stores are
            self._store.sources.record_follow_run(
                src.key,
                "fetched before following"
                if complete
                else "fetched before following (stopped part-way; `paperatlas update` resumes it)",
                "",
                at=fetched_at,
            )
        return src.key, created

    def unfollow(self, source: str, args: Sequence[str]) -> str:
        """Remove a subscription (the papers it brought stay). Returns its key; NotFound if none."""
        key = " ".join([source, *args])
        for f in self._store.sources.follows():
            if f.key == key or (f.source == source and f.args == list(args)):
                self._store.sources.remove_follow(f.key)
                return f.key
        raise NotFound(f"not following {key!r}", "`paperatlas follow` with no arguments lists the subscriptions")

    def follows(self) -> list[Follow]:
        return self._store.sources.follows()

    def update(
        self,
        client_factory: ClientFactory | None = None,
        progress: Callable[[Follow], None] | None = None,
        max_pages: int | None = None,
    ) -> list[UpdateResult]:
        """Fetch every followed source. One failing source does not stop the others."""
        results: list[UpdateResult] = []
        for f in self._store.sources.follows():
            if progress:
                progress(f)
            opts = dict(f.options)
            base = opts.pop("base_url", None)
            try:
                src = create_source(f.source, f.args, base, **opts)
                client = client_factory(src.polite_delay) if client_factory else None
                report = fetch(self._store, src, client, max_pages=max_pages, write=self._write)
            except PaperatlasError as e:
                self._store.sources.record_follow_run(f.key, "", e.message)
                results.append(UpdateResult(f, None, str(e)))
                continue
            self._store.sources.record_follow_run(f.key, report.summary(), "")
            results.append(UpdateResult(f, report))
        return results
