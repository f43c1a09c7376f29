"""arXiv: new papers in some categories, from the export API (Atom), newest first.

`GET {base}/api/query?search_query=(cat:cs.LG OR cat:cs.CL) AND submittedDate:[FROM TO]
&sortBy=submittedDate&sortOrder=descending&start=N&max_results=200`, one request every 3 seconds
as arXiv's terms of use ask. The first run goes back to --since (default: 7 days); later runs start
from the newest day already fetched (papers seen twice are recognised, not stored twice).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ..ingest.formats import Format, parse_xml, read_string
from .base import SOURCES, Page, SourceArgsError, get_parsed, reject_options
from ..http_client import FetchError, HttpClient, Response

DEFAULT_BASE = "https://export.arxiv.org"
PAGE_SIZE = 200
FIRST_RUN_DAYS = 7
_CATEGORY = re.compile(r"^[a-z\-]+(\.[A-Za-z\-]+)?$")
_OS = "{http://a9.com/-/spec/opensearch/1.1/}"
_ATOM = "{http://www.w3.org/2005/Atom}"


def _date(s: str) -> dt.date:
    try:
        return dt.date.fromisoformat(s[:10])
    except ValueError:
        raise SourceArgsError(
            f"--since {s!r} is not a date", "write it as YYYY-MM-DD, e.g. --since 2026-11-01"
        ) from None


@SOURCES.register("arxiv")
class ArxivSource:
    name: ClassVar[str] = "arxiv"
    default_base: ClassVar[str] = DEFAULT_BASE
    polite_delay: ClassVar[float] = 3.0

    def __init__(
        self,
        args: Sequence[str],
        base_url: str | None = None,
        since: str | None = None,
        page_size: int = PAGE_SIZE,
        **options: Any,
    ) -> None:
        bad = [a for a in args if not _CATEGORY.match(a)]
        if not args or bad:
            raise SourceArgsError(
                f"arxiv takes categories like cs.LG, got {' '.join(bad or args) or 'nothing'}",
                "e.g. `paperatlas fetch arxiv cs.LG cs.CL --since 2026-11-01` (the list: arxiv.org/category_taxonomy)",
            )
        reject_options("arxiv", options, "CATEGORY..., --since and --base-url")
        self.categories = sorted(set(args))
        self.since = _date(since) if since else None
        self.page_size = max(1, min(int(page_size), 2000))
        self.base_url = (base_url or DEFAULT_BASE).rstrip("/")
        self.key = "arxiv " + " ".join(self.categories)

    def _query(self, since: dt.date) -> str:
        cats = " OR ".join(f"cat:{c}" for c in self.categories)
        return f"({cats}) AND submittedDate:[{since:%Y%m%d}0000 TO 999912312359]"

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        saved = _date(state["since"]) if state.get("since") else None
        since = self.since or saved or (dt.date.today() - dt.timedelta(days=FIRST_RUN_DAYS))
        resuming = not state.get("complete", True) and saved == since
        start = int(state.get("start", 0)) if resuming else 0
        newest = state.get("newest", "") if resuming else ""
        url = f"{self.base_url}/api/query"
        while True:
            params = {
                "search_query": self._query(since),
                "sortBy": "submittedDate",
                "sortOrder": "descending",
                "start": start,
                "max_results": self.page_size,
            }
            resp, (rows, total) = get_parsed(client, url, _parse_feed, f"arxiv {' '.join(self.categories)}", params)
            for _, row in rows:
                newest = max(newest, row.get("published", "")[:10])
            start += len(rows)
            last = not rows or len(rows) < self.page_size or (total is not None and start >= total)
            if last:
                # the next run starts from the newest day seen (or today's window when nothing came)
                state_now = {"since": newest or since.isoformat(), "complete": True}
            else:
                state_now = {"since": since.isoformat(), "start": start, "newest": newest, "complete": False}
            yield Page(resp.url, rows, Format.ATOM, state_now, total=total)
            if last:
                return


def _parse_feed(resp: Response) -> tuple[list[tuple[str, dict[str, Any]]], int | None]:
    text = resp.body.decode("utf-8")
    root = parse_xml(text, "the arXiv feed")  # ParseError ("Rate exceeded." is plain text): fetched again
    if root.tag != f"{_ATOM}feed":
        raise ValueError(f"expected an Atom feed, got <{root.tag}>")
    for entry in root.iter(f"{_ATOM}entry"):
        eid = entry.findtext(f"{_ATOM}id", "")
        if "/api/errors" in eid:  # arXiv answers a bad query with HTTP 200 and one entry titled Error
            raise FetchError(
                f"arXiv rejected the query: {(entry.findtext(f'{_ATOM}summary') or '').strip()} ({resp.url})",
                "check the categories (arxiv.org/category_taxonomy) and --since",
                resp.url,
            )
    total_text = root.findtext(f"{_OS}totalResults")
    total = int(total_text) if total_text and total_text.strip().isdigit() else None
    res = read_string(resp.url, text, Format.ATOM)
    if res.bad:
        raise ValueError(str(res.bad[0]))
    return res.rows, total
