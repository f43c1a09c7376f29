"""The programme of a conference that ran on a Mini-Conf site (ICLR 2020, ACL 2020, PLDI 2021 ...).

A deployed Mini-Conf site serves every file of its `sitedata/` as a JSON list of rows at
`{base}/serve_{name}.json`: the calendar of presentations (`serve_calendar_papers.json`), the
papers (`serve_papers.json`) and the sessions of each track (`serve_track_{track}.json`; the
conference's own name unless TRACK... are given). They are read as the saved files are
(programme/miniconf.py) and linked like the virtual-site feed (programme/link.py): by title, or
the paper is brought in.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ..http_client import FetchError, HttpClient, Response
from ..ingest.formats import VENUE_SPELLING, Format
from ..programme.feed import FeedError
from ..programme.link import commit, plan, summary
from ..programme.miniconf import CALENDAR_COLUMNS, parse_sitedata, sitedata_rows
from .base import SOURCES, Page, SourceArgsError, get_parsed, reject_options


@SOURCES.register("miniconf")
class MiniConfSource:
    name: ClassVar[str] = "miniconf"
    default_base: ClassVar[str] = ""
    polite_delay: ClassVar[float] = 1.0

    def __init__(self, args: Sequence[str], base_url: str | None = None, **options: Any) -> None:
        if len(args) < 2 or not args[1].isdigit() or not args[0].replace("-", "").isalnum():
            raise SourceArgsError(
                f"miniconf takes CONF YEAR [TRACK...], got {' '.join(args) or 'nothing'}",
                "e.g. `paperatlas fetch miniconf pldi 2021 --base-url https://pldi21.example.org`",
            )
        if not base_url:
            raise SourceArgsError(
                "a Mini-Conf site has no standard address", "give it with --base-url (the site's root)"
            )
        reject_options("miniconf", options, "CONF YEAR [TRACK...] and --base-url")
        self.conf, self.year = args[0].lower(), int(args[1])
        self.tracks = [t for t in args[2:] if t] or [self.conf]
        self.base_url = base_url.rstrip("/")
        self.key = f"miniconf {self.conf} {self.year}"
        self.feed = f"{self.conf} {self.year}"
        self.venue = VENUE_SPELLING.get(self.conf, self.conf.upper())
        self._store: Any = None

    def bind(self, store: Any) -> None:
        self._store = store

    def _get(self, client: HttpClient, name: str, required: tuple[str, ...]) -> bytes:
        url = f"{self.base_url}/serve_{name}.json"

        def parse(resp: Response) -> bytes:
            try:
                sitedata_rows(resp.body, url, required)  # a cut or foreign body is fetched again
            except FeedError as e:
                if "more than" in e.message:  # too big is not a transient fault: no retry
                    raise
                raise ValueError(e.message) from None
            return resp.body

        return get_parsed(client, url, parse, f"miniconf {self.feed} {name}")[1]  # type: ignore[no-any-return]

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        if self._store is None:
            raise SourceArgsError(
                "the miniconf source links events to a library's papers",
                "fetch it through `paperatlas fetch miniconf CONF YEAR --base-url URL`",
            )
        calendar = self._get(client, "calendar_papers", CALENDAR_COLUMNS)
        papers = self._get(client, "papers", ("UID", "title"))
        tracks: dict[str, bytes] = {}
        missing = []
        for t in self.tracks:
            try:
                tracks[f"serve_track_{t}.json"] = self._get(client, f"track_{t}", ("UID", "title"))
            except FetchError as e:
                if e.status != 404:
                    raise
                missing.append(t)
        url = f"{self.base_url}/serve_calendar_papers.json"
        feed = parse_sitedata(calendar, papers, tracks, url, f"{self.base_url}/serve_papers.json")
        for ev in feed.events:  # the papers' pages are paths of the site
            if ev.url.startswith("/"):
                ev.url = self.base_url + ev.url
        if missing:
            feed.notes.append(f"no track {', '.join(missing)} on the site (HTTP 404): its sessions are named by id")
        if not feed.events:
            raise FeedError(
                f"the programme at {url} lists no events" + (f" ({'; '.join(feed.notes)})" if feed.notes else ""),
                "check --base-url points at the Mini-Conf site's root",
            )
        p = plan(self._store, self.feed, self.venue, self.year, feed)
        done = (self.key, json.dumps({"url": url, "complete": True}))

        def stored(store: Any) -> str:
            counts = commit(store, p, done)
            return "\n".join([f"programme {self.feed}: {summary(counts)}", *p.notes])

        yield Page(
            url,
            p.rows,
            Format.JSON,
            {"url": url, "complete": False},
            {"venue": self.venue, "year": self.year},
            total=len(feed.events),
            on_stored=stored,
        )
