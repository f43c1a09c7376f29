"""Sources as `lib.sources`: fetch a venue's papers from the web into the library, follow sources and
update them all."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..errors import NotFound, PaperatlasError
from ..i18n import gettext
from ..ingest.pipeline import Records
from ..models import Hit, IngestReport, Paper
from ..store.sources import Follow
from .base import FetchReport, create_source, fetch
from .openalex import DEFAULT_BASE, FOLLOW_KINDS, mailto_default, resolve_follow
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


# a new follow of a person or a place starts this many days before the day it is made, so the first
# `update` brings their latest papers rather than nothing (or a whole career, or a university's century)
FOLLOW_BACK_DAYS = 90
NEWS_DAYS = 30  # a digest with no --since shows followed people's papers added in the last 30 days
MAX_NEWS = 50


@dataclass
class Followed:
    """A person or a place followed through OpenAlex: what `update` fetches their new works by."""

    kind: str  # author | institution
    id: str  # OpenAlex author id or ORCID; ROR URL
    name: str
    follow: Follow

    def to_dict(self) -> dict[str, Any]:
        f = self.follow
        return {
            "kind": self.kind,
            "id": self.id,
            "name": self.name,
            "key": f.key,
            "since": f.options.get("since", ""),
            "last_run_at": f.last_run_at,
            "last_summary": f.last_summary,
            "last_error": f.last_error,
        }


def _affiliation_ids(p: Paper) -> tuple[set[str], set[str]]:
    """(author ids and ORCIDs, institution RORs) the paper's affiliations name."""
    people: set[str] = set()
    places: set[str] = set()
    for a in p.extra.get("affiliations") or []:
        if not isinstance(a, dict):
            continue
        for k in ("openalex_author", "orcid"):
            if isinstance(a.get(k), str) and a[k]:
                people.add(a[k].upper())
        for r in a.get("ror") or []:
            if isinstance(r, str) and r:
                places.add(r.lower())
    return people, places


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

    # -- people and places -------------------------------------------------------------------
    def follow_entity(
        self,
        kind: str,
        query: str,
        base_url: str | None = None,
        since: str | None = None,
        mailto: str | None = None,
        client: HttpClient | None = None,
    ) -> tuple[Followed, bool, str]:
        """Follow an author (OpenAlex id, ORCID or name) or an institution (ROR or name): `update`
        then fetches their works published since `since` (default FOLLOW_BACK_DAYS before today)
        from OpenAlex, and digests list them. Returns (what is followed, whether it is new, how a
        name was resolved)."""
        import datetime as dt

        mail = (mailto if mailto is not None else mailto_default()).strip()
        client = client or HttpClient(delay=0.2)
        ident, name, note = resolve_follow(client, base_url or DEFAULT_BASE, kind, query, mail)
        start = since or (dt.date.today() - dt.timedelta(days=FOLLOW_BACK_DAYS)).isoformat()
        for f in self._followed():
            if f.kind == kind and f.id.upper() == ident.upper():
                start = since or str(f.follow.options.get("since") or start)  # a re-follow keeps its start
        opts: dict[str, Any] = {kind: ident, "since": start, "label": name}
        if mailto:
            opts["mailto"] = mailto
        key, created = self.follow("openalex", [], base_url, **opts)
        got = next(f for f in self._followed() if f.follow.key == key)
        return got, created, note

    def unfollow_entity(self, kind: str, query: str) -> str:
        """Stop following an author or institution, named by its id or by the name it was followed
        under (nothing is looked up). Returns the subscription's key; NotFound if none."""
        q = " ".join(query.split()).lower()
        for f in self._followed():
            if f.kind == kind and q in (f.id.lower(), f.name.lower(), f.id.lower().removeprefix("https://ror.org/")):
                self._store.sources.remove_follow(f.follow.key)
                return f.follow.key
        raise NotFound(
            f"not following the {kind} {query!r}", f"`paperatlas follow {kind}` lists the {kind}s you follow"
        )

    def followed(self, kind: str | None = None) -> list[Followed]:
        """The authors and institutions followed (of `kind`, or both)."""
        return [f for f in self._followed() if kind is None or f.kind == kind]

    def _followed(self) -> list[Followed]:
        out = []
        for f in self._store.sources.follows():
            if f.source != "openalex":
                continue
            for kind in FOLLOW_KINDS:
                ident = str(f.options.get(kind) or "")
                if ident:
                    out.append(Followed(kind, ident, str(f.options.get("label") or ident), f))
        return out

    def digest_news(self, reader: str, since: str = "") -> tuple[list[Hit], dict[str, str]]:
        """What a digest (and its Atom feed and e-mail) shows first: papers of followed authors and
        institutions added since `since` (default: the last NEWS_DAYS days), newest first, each with
        who it is by. The same for every reader: follows belong to the library."""
        import datetime as dt

        followed = self._followed()
        if not followed:
            return [], {}
        start = since or (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=NEWS_DAYS)).strftime("%Y-%m-%d")
        added = self._store.papers_added_at(sorted(self._store.papers_added_since(start)))
        people = {f.id.upper(): f.name for f in followed if f.kind == "author"}
        places = {f.id.lower(): f.name for f in followed if f.kind == "institution"}
        hits: list[Hit] = []
        when: dict[str, str] = {}
        newest = sorted(added, key=lambda pid: (added[pid], pid), reverse=True)
        papers = self._store.get_papers(newest)
        for pid in newest:
            p = papers.get(pid)
            if p is None:
                continue
            ids, rors = _affiliation_ids(p)
            who = [people[i] for i in sorted(ids) if i in people] + [places[r] for r in sorted(rors) if r in places]
            if not who:
                continue
            names = ", ".join(dict.fromkeys(who))
            hits.append(Hit(p, 0.0, {"followed": len(hits) + 1}, reason=gettext("you follow {names}", names=names)))
            when[pid] = added[pid]
            if len(hits) >= MAX_NEWS:
                break
        return hits, when
