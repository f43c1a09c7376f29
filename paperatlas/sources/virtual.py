"""The programme of a conference from its virtual site: `{base}/static/virtual/data/{conf}-{year}-orals-posters.json`.

NeurIPS, ICML, ICLR (and MLSys, ECCV, ...) publish every presentation there: session, times with
their offset, room, poster position, type. Each event links to a paper of the library by its
OpenReview forum id (then by normalised title); events whose paper is missing bring it in
through the ingest pipeline; then the events, the papers' presentation fields and what changed
since the last read are written in one transaction (programme/link.py). One page, incremental
through the ETag: an unchanged programme is not downloaded again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ..ingest.formats import VENUE_SPELLING, Format
from ..programme.feed import Feed, FeedError, parse_feed
from ..programme.link import commit, plan, summary
from .base import SOURCES, Page, SourceArgsError, get_parsed, reject_options
from ..http_client import HttpClient, Response

# where each conference's virtual site lives (others: https://{conf}.cc)
HOSTS = {
    "mlsys": "https://mlsys.org",
    "eccv": "https://eccv.ecva.net",
    "cvpr": "https://cvpr.thecvf.com",
    "iccv": "https://iccv.thecvf.com",
    "corl": "https://www.corl.org",
    "aistats": "https://aistats.org",
}


@SOURCES.register("virtual")
class VirtualSource:
    name: ClassVar[str] = "virtual"
    default_base: ClassVar[str] = "https://neurips.cc"
    polite_delay: ClassVar[float] = 1.0

    def __init__(self, args: Sequence[str], base_url: str | None = None, **options: Any) -> None:
        if len(args) != 2 or not args[1].isdigit() or not args[0].replace("-", "").isalnum():
            raise SourceArgsError(
                f"virtual takes CONF YEAR, got {' '.join(args) or 'nothing'}",
                "e.g. `paperatlas fetch virtual neurips 2025` (the name in the virtual site's"
                " /static/virtual/data/{conf}-{year}-orals-posters.json)",
            )
        reject_options("virtual", options, "CONF YEAR and --base-url")
        self.conf, self.year = args[0].lower(), int(args[1])
        self.base_url = (base_url or HOSTS.get(self.conf, f"https://{self.conf}.cc")).rstrip("/")
        self.key = f"virtual {self.conf} {self.year}"
        self.feed = f"{self.conf} {self.year}"
        self.venue = VENUE_SPELLING.get(self.conf, self.conf.upper())
        self._store: Any = None

    def bind(self, store: Any) -> None:
        """The library the events link to (they are matched against its papers before any write)."""
        self._store = store

    @property
    def url(self) -> str:
        return f"{self.base_url}/static/virtual/data/{self.conf}-{self.year}-orals-posters.json"

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        if self._store is None:
            raise SourceArgsError(
                "the virtual source links events to a library's papers",
                "fetch it through `paperatlas fetch virtual CONF YEAR` (or Library.fetch)",
            )
        url = self.url
        etag = state.get("etag") if state.get("complete") and state.get("url") == url else None
        headers = {"If-None-Match": etag} if etag else {}

        def parse(resp: Response) -> Feed:
            try:
                return parse_feed(resp.body, f"the programme at {resp.url}")
            except FeedError as e:
                if "more than" in e.message:  # too big is not a transient fault: no retry
                    raise
                raise ValueError(e.message) from None

        resp, feed = get_parsed(client, url, parse, f"virtual {self.conf} {self.year}", headers=headers)
        if resp.status == 304:
            yield Page(
                url,
                [],
                Format.JSON,
                {**state, "not_modified": True},
                note=f"programme {self.feed}: not modified since the last read",
            )
            return
        if not feed.events:
            raise FeedError(
                f"the programme at {url} lists no events" + (f" ({'; '.join(feed.notes)})" if feed.notes else ""),
                "check CONF and YEAR (the virtual site may not have published it yet)",
            )
        # the feed gives its pages as paths of the virtual site: they are the conference's pages, on its own
        # address, even when the feed was read from a mirror (which may be gone tomorrow)
        home = HOSTS.get(self.conf, f"https://{self.conf}.cc").rstrip("/")
        for ev in feed.events:
            if ev.url.startswith("/"):
                ev.url = home + ev.url
        p = plan(self._store, self.feed, self.venue, self.year, feed)
        new_etag = resp.headers.get("ETag", "") or resp.headers.get("Etag", "")
        done = (self.key, json.dumps({"url": url, "etag": new_etag, "complete": True}))

        def stored(store: Any) -> str:
            counts = commit(store, p, done)
            notes = [f"programme {self.feed}: {summary(counts)}", *p.notes]
            return "\n".join(notes)

        # the position is marked complete only with the events (stored()), so a fetch killed between
        # the papers and the events reads the feed again instead of answering "not modified"
        yield Page(
            url,
            p.rows,
            Format.JSON,
            {"url": url, "complete": False},
            {"venue": self.venue, "year": self.year},
            total=len(feed.events),
            on_stored=stored,
        )
