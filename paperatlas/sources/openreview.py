"""OpenReview API v2: a venue's papers with decision, authors, keywords, TL;DR, primary area, PDF link.

Accepted papers carry the venue's id in `content.venueid` (`GET /notes?content.venueid=ICLR.cc/2025/
Conference`); `--all` asks for every submission through the submission invitation (`GET /notes?
invitation=ICLR.cc/2025/Conference/-/Submission`), whose venueid then says rejected, withdrawn, ...
Pages of at most 1000 notes (the API's cap) by offset; the offset is saved after each stored page.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ..ingest.formats import Format
from .base import SOURCES, Page, SourceArgsError, get_parsed, parse_json, reject_options
from ..http_client import HttpClient, Response

DEFAULT_BASE = "https://api2.openreview.net"
PAGE_SIZE = 1000


@SOURCES.register("openreview")
class OpenReviewSource:
    name: ClassVar[str] = "openreview"
    default_base: ClassVar[str] = DEFAULT_BASE
    polite_delay: ClassVar[float] = 1.0

    def __init__(
        self,
        args: Sequence[str],
        base_url: str | None = None,
        all: bool = False,
        page_size: int = PAGE_SIZE,
        **options: Any,
    ) -> None:
        if len(args) != 1 or "/" not in args[0]:
            raise SourceArgsError(
                f"openreview takes one VENUE_ID, got {' '.join(args) or 'nothing'}",
                "e.g. `paperatlas fetch openreview ICLR.cc/2025/Conference` (the id in the "
                "venue page's address, openreview.net/group?id=...)",
            )
        reject_options("openreview", options, "VENUE_ID, --all and --base-url")
        self.venue_id = args[0].strip().strip("/")
        self.all = bool(all)
        self.page_size = max(1, min(int(page_size), PAGE_SIZE))
        self.base_url = (base_url or DEFAULT_BASE).rstrip("/")
        self.key = f"openreview {self.venue_id}" + (" --all" if self.all else "")

    def query(self) -> dict[str, Any]:
        if self.all:
            return {"invitation": f"{self.venue_id}/-/Submission"}
        return {"content.venueid": self.venue_id}

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        # a complete run starts over (decisions and abstracts change); an interrupted one resumes
        offset = 0 if state.get("complete") else int(state.get("offset", 0))
        url = f"{self.base_url}/notes"
        while True:
            params = {**self.query(), "offset": offset, "limit": self.page_size}

            def parse(resp: Response) -> Any:
                data = parse_json(resp)
                if not isinstance(data, dict) or not isinstance(data.get("notes"), list):
                    raise ValueError("no `notes` list in the answer")
                return data

            resp, data = get_parsed(client, url, parse, f"openreview {self.venue_id}", params)
            notes = [n for n in data["notes"] if isinstance(n, dict)]
            rows = [(f"note {n.get('id', offset + i)}", n) for i, n in enumerate(notes)]
            offset += len(notes)
            total = data.get("count") if isinstance(data.get("count"), int) else None
            last = len(notes) < self.page_size or not notes or (total is not None and offset >= total)
            state_now = {"offset": 0, "complete": True} if last else {"offset": offset, "complete": False}
            note = ""
            if last and offset == 0:
                note = (
                    f"openreview has no {'submissions' if self.all else 'accepted papers'} under {self.venue_id}"
                    " yet: check the venue id (openreview.net/group?id=...); before decisions are public, "
                    "--all fetches every submission"
                )
            yield Page(resp.url, rows, Format.OPENREVIEW, state_now, total=total, note=note)
            if last:
                return
