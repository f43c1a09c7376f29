"""The Source protocol, its registry, and the loop that stores what a source fetches.

A source turns its arguments into pages of raw rows (the same row dicts the file readers produce),
each with the position to resume from once it is stored. `fetch()` writes every page through the
ingest pipeline (normalisation, deduplication, one transaction per batch) and saves that position
in the library in the same transaction as the page's last batch: a killed fetch resumes at the
first page it had not stored, and nothing is stored twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol
from xml.etree import ElementTree as ET

from ..errors import PaperatlasError
from ..ingest.formats import Format, NestedTooDeep
from ..ingest.pipeline import Records
from ..models import IngestReport
from ..registry import Registry
from ..http_client import MAX_PAGES_ENV, FetchError, HttpClient, Response, max_pages_default

SOURCES: Registry[Source] = Registry("source")


# Pages one run fetches at most: far above a real venue (OpenReview pages hold 1000 notes, arXiv's
# 200) yet a server that invents new papers on every page cannot make a run endless. A run that
# stops there says so, and the next run resumes where it stopped.
class SourceArgsError(PaperatlasError):
    """The arguments do not name something this source can fetch."""


def reject_options(source: str, options: dict[str, Any], takes: str) -> None:
    """A SourceArgsError for the first option this source does not take (None/False/"" are unset)."""
    unknown = sorted(k for k, v in options.items() if v not in (None, False, ""))
    if unknown:
        raise SourceArgsError(f"{source} does not take --{unknown[0].replace('_', '-')}", f"{source} takes {takes}")


@dataclass
class Page:
    """One response's worth of rows, and where the fetch stands once they are stored."""

    url: str
    rows: list[tuple[str, dict[str, Any]]]
    format: Format
    state: dict[str, Any]
    defaults: dict[str, Any] = field(default_factory=dict)
    total: int | None = None  # records the source says there are, when it says
    note: str = ""  # something the reader should know (shown on stderr)
    # run once the page's papers are stored (a programme writes its events then); returns a note
    on_stored: Callable[[Any], str] | None = None


class Source(Protocol):
    """A place papers come from. `key` names one subscription ("paperlists colm 2025")."""

    name: ClassVar[str]
    default_base: ClassVar[str]
    polite_delay: ClassVar[float]  # seconds between two requests, as the service asks
    key: str
    base_url: str

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]: ...


@dataclass
class FetchReport(IngestReport):
    """What one fetch did: the ingest counts plus the network side."""

    source: str = ""
    pages: int = 0
    requests: int = 0
    retries: int = 0
    bytes: int = 0
    seconds: float = 0.0
    resumed: bool = False
    not_modified: bool = False
    stopped: str = ""  # why the run stopped before the source said it was complete ("" when it did not)

    def summary(self) -> str:
        s = super().summary() + f" from {self.source}"
        extra = [
            f"{self.pages} page{'s' if self.pages != 1 else ''}",
            f"{self.requests} request{'s' if self.requests != 1 else ''}",
        ]
        if self.retries:
            extra.append(f"{self.retries} retried")
        if self.resumed:
            extra.append("resumed")
        if self.not_modified:
            extra.append("not modified since the last fetch")
        if self.stopped:
            extra.append(f"stopped early: {self.stopped}")
        return f"{s} ({', '.join(extra)}, {self.seconds:.1f} s)"

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.update(
            source=self.source,
            pages=self.pages,
            requests=self.requests,
            retries=self.retries,
            bytes=self.bytes,
            seconds=round(self.seconds, 3),
            resumed=self.resumed,
            not_modified=self.not_modified,
            stopped=self.stopped,
            summary=self.summary(),
        )
        return d


def year_args(args: Sequence[str], years: Sequence[int]) -> list[list[str]]:
    """One argument list per year: `{year}` in an argument is replaced (`ICLR.cc/{year}/Conference`),
    else the year is appended (`paperlists nips` -> `paperlists nips 2019`, `... 2020`, ...)."""
    if any("{year}" in a for a in args):
        return [[a.replace("{year}", str(y)) for a in args] for y in years]
    return [[*args, str(y)] for y in years]


def create_source(name: str, args: Sequence[str], base_url: str | None = None, **options: Any) -> Source:
    """The registered source `name` for `args` (an unknown name lists the valid ones)."""
    return SOURCES.create(name, args=list(args), base_url=base_url, **options)


def fetch(
    store: Any,
    source: Source,
    client: HttpClient | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    max_pages: int | None = None,
    write: Callable[[Records], IngestReport] | None = None,
) -> FetchReport:
    """Fetch `source` into `store`, resuming from the saved position. Raises FetchError (what was
    stored before the failure stays, with its position) or SourceArgsError.

    Each page is stored by `write` (the library's one write path, `Library.add_papers`, which holds
    the library's write lock while it plans and writes); without one, under the store's write lock.

    A run ends early, saying so in `report.stopped` and its notes, after `max_pages` pages (default
    $PAPERATLAS_FETCH_MAX_PAGES or 1000; the next run resumes there) or when the source sends a page
    it already sent in this run (a server that repeats itself would never end; that page is not
    stored again)."""
    client = client or HttpClient(delay=source.polite_delay)
    cap = max_pages if max_pages is not None else max_pages_default()
    before = dict(client.stats)
    bind = getattr(source, "bind", None)
    if bind is not None:  # a source that links what it fetches to the papers already there
        bind(store)
    state = store.sources.source_state(source.key)
    report = FetchReport(source=source.key, resumed=bool(state) and not state.get("complete", False))
    start = time.monotonic()
    done = 0
    seen: dict[str, int] = {}  # digest of a page's rows -> its number in this run
    pages = source.pages(client, state)
    try:
        for page in pages:
            digest = _page_digest(page)
            if page.rows and digest in seen:
                report.stopped = f"page {report.pages + 1} repeats page {seen[digest]}"
                report.notes.append(
                    f"{source.key}: stopped at page {report.pages + 1} ({page.url}): it holds the same papers as "
                    f"page {seen[digest]}, so the source repeats itself; the pages before it are stored"
                )
                break
            seen[digest] = report.pages + 1
            report.pages += 1
            if page.state.get("not_modified"):
                report.not_modified = True
            r = (write or _writer(store))(_records(source, page))
            report.add(r)
            if page.note:
                report.notes.append(page.note)
            if page.on_stored is not None:
                note = page.on_stored(store)
                if note:
                    report.notes.extend(note.splitlines())
            done += len(page.rows)
            if progress:
                progress(done, page.total)
            if report.pages >= cap and not page.state.get("complete", False):
                report.stopped = f"the cap of {cap} page{'s' if cap != 1 else ''} per run"
                report.notes.append(
                    f"{source.key}: stopped after {cap} page{'s' if cap != 1 else ''}, the cap per run ({done} records): the next run "
                    f"resumes from here; raise it with --max-pages or {MAX_PAGES_ENV}"
                )
                break
    finally:
        close = getattr(pages, "close", None)
        if close is not None:
            close()
        report.seconds = time.monotonic() - start
        for k in ("requests", "retries", "bytes"):
            setattr(report, k, client.stats[k] - before.get(k, 0))
    return report


def _page_digest(page: Page) -> str:
    return hashlib.sha256(json.dumps(page.rows, sort_keys=True, default=str).encode()).hexdigest()


def _records(source: Source, page: Page) -> Records:
    return Records(page.url, source.name, page.format, page.rows, page.defaults, (source.key, json.dumps(page.state)))


def _writer(store: Any) -> Callable[[Records], IngestReport]:
    """A page's write when no library hands one in: planned and written under the store's write
    lock, so an overlapping fetch or ingest in another process cannot store the same papers between
    the plan and the write."""
    from ..ingest.pipeline import ingest_rows

    def write(r: Records) -> IngestReport:
        with store.write_lock():
            return ingest_rows(store, r.name, r.source, r.format, r.rows, r.defaults, skip_bad=True, state=r.state)

    return write


# -- helpers the sources share ---------------------------------------------------------------
def get_parsed(
    client: HttpClient,
    url: str,
    parse: Callable[[Response], Any],
    what: str,
    params: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    tries: int = 3,
) -> tuple[Response, Any]:
    """GET and parse; a page that does not parse (a proxy's error page, a body cut off without a
    length) is fetched again, then reported with the URL and what was wrong."""
    last: Exception | None = None
    for attempt in range(tries):
        resp = client.get(url, params, headers, what=what)
        if resp.status == 304:
            return resp, None
        try:
            return resp, parse(resp)
        except (ValueError, ET.ParseError, KeyError, TypeError) as e:
            last = e
            if isinstance(e, NestedTooDeep):  # not a transient proxy page: fetching again changes nothing
                break
            if attempt + 1 < tries:
                client.stats["retries"] += 1
                client.sleep(min(client.max_wait, client.backoff * (2**attempt)))
    shown = resp.url
    raise FetchError(
        f"{what}: the page at {shown} is not what the service sends ({last})",
        "try again later (a re-run resumes here); if it persists, check --base-url points at the "
        "service itself and not at a login or error page",
        shown,
    )


def parse_json(resp: Response) -> Any:
    try:
        return json.loads(resp.body.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ValueError(f"not UTF-8 at byte {e.start}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}") from None
    except RecursionError:  # the decoder recurses once per level: 100,000 nested brackets end here
        raise NestedTooDeep("JSON nested too deep to read") from None
