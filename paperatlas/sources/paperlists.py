"""papercopilot/paperlists: one JSON file per venue and year, `{base}/{venue}/{venue}{year}.json`.

The file is read exactly as `paperatlas ingest colm2025.json` reads it (venue and year from the
file name). It is one page: incremental through the ETag (an unchanged file is not downloaded
again) and through record hashes (only new or changed papers are written).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ..ingest.formats import Format, read_string, venue_year_from_name
from .base import SOURCES, Page, SourceArgsError, get_parsed, reject_options
from ..http_client import FetchError, HttpClient, Response

DEFAULT_BASE = "https://raw.githubusercontent.com/papercopilot/paperlists/main"


@SOURCES.register("paperlists")
class PaperlistsSource:
    name: ClassVar[str] = "paperlists"
    default_base: ClassVar[str] = DEFAULT_BASE
    polite_delay: ClassVar[float] = 1.0

    def __init__(self, args: Sequence[str], base_url: str | None = None, **options: Any) -> None:
        if len(args) != 2 or not args[1].isdigit():
            raise SourceArgsError(
                f"paperlists takes VENUE YEAR, got {' '.join(args) or 'nothing'}",
                "e.g. `paperatlas fetch paperlists iclr 2025` (the names of papercopilot/paperlists)",
            )
        reject_options("paperlists", options, "VENUE YEAR and --base-url")
        self.venue, self.year = args[0].strip("/"), int(args[1])
        self.base_url = (base_url or DEFAULT_BASE).rstrip("/")
        self.key = f"paperlists {self.venue} {self.year}"

    def url(self, venue: str) -> str:
        return f"{self.base_url}/{venue}/{venue}{self.year}.json"

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        url = self.url(self.venue)
        headers = {"If-None-Match": state["etag"]} if state.get("etag") and state.get("url") == url else {}

        def parse(resp: Response) -> Any:
            res = read_string(resp.url, resp.body.decode("utf-8"), Format.JSON)
            if res.bad and not res.rows:
                raise ValueError(str(res.bad[0]))
            return res

        try:
            resp, res = get_parsed(client, url, parse, f"paperlists {self.venue} {self.year}", headers=headers)
        except FetchError as e:
            low = self.venue.lower()
            if "HTTP 404" not in str(e) or low == self.venue:
                raise
            # paperlists names are lower-case (iclr/iclr2025.json): forgive `ICLR 2025`
            url = self.url(low)
            resp, res = get_parsed(client, url, parse, f"paperlists {low} {self.year}")
        new_state = {"url": url, "etag": resp.headers.get("ETag", "") or resp.headers.get("Etag", ""), "complete": True}
        if resp.status == 304:
            yield Page(url, [], Format.JSON, {**new_state, "etag": state["etag"], "not_modified": True})
            return
        defaults = venue_year_from_name(url.rsplit("/", 1)[-1])
        yield Page(url, res.rows, Format.JSON, new_state, defaults, total=len(res.rows))
