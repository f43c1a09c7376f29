"""CVF open access (CVPR, ICCV, WACV, ECCV where the site has it): a conference's papers, PDFs and abstracts.

`cvf CVPR 2024` (or `--conf CVPR --year 2024`) reads the listing `https://openaccess.thecvf.com/CVPR2024?day=all`:
each paper's title, authors, its page (`/content/CVPR2024/html/…_paper.html`) and its PDF
(`/content/CVPR2024/papers/…_paper.pdf`, which `fulltext fetch` downloads). The abstract lives only
on the paper's own page, one request each: a run reads at most $PAPERATLAS_CVF_PAPER_PAGES of them
(politely, one a second), and the next run reads those still without one. The library is the
resume point: a paper whose stored record has an abstract is not asked for again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from html.parser import HTMLParser
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from .. import settings
from ..ingest.formats import Format
from ..http_client import FetchError, HttpClient, Response
from .base import SOURCES, Page, SourceArgsError, get_parsed, reject_options

DEFAULT_BASE = "https://openaccess.thecvf.com"
CONFERENCES = ("CVPR", "ICCV", "ECCV", "WACV")
# papers stored per transaction: a killed run keeps the abstracts it had read, give or take one batch
BATCH = 25
# a paper page is a few KiB; anything far larger is not one, and is not kept in memory whole
MAX_TITLE = 1_000
MAX_ABSTRACT = 20_000
# paper pages that fail one after another, not with 404, mean the site is down: stop asking it
MAX_FAILURES_IN_A_ROW = 3


def _classes(attrs: dict[str, str | None]) -> list[str]:
    return (attrs.get("class") or "").split()


class _Listing(HTMLParser):
    """The <dt class="ptitle"> / <dd> pairs of a listing page, read as tolerantly as a browser does."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.entries: list[dict[str, Any]] = []
        self._in_dt = self._in_title = self._in_form = self._in_form_a = False
        self._form_value = self._form_text = ""

    @property
    def _cur(self) -> dict[str, Any] | None:
        return self.entries[-1] if self.entries else None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        cur = self._cur
        if tag == "dt":
            self._in_dt = "ptitle" in _classes(a)
            if self._in_dt:
                self.entries.append({"page": "", "title": [], "authors": [], "pdf": ""})
        elif tag == "dd":
            self._in_dt = self._in_title = False
        elif cur is None:
            return
        elif tag == "a" and self._in_dt and not cur["page"]:
            cur["page"], self._in_title = a.get("href") or "", True
        elif tag == "form" and "authsearch" in _classes(a):
            self._in_form, self._form_value, self._form_text = True, "", ""
        elif tag == "input" and self._in_form and a.get("name") in ("query", "query_author"):
            self._form_value = self._form_value or (a.get("value") or "")
        elif tag == "a" and self._in_form:
            self._in_form_a = True
        elif tag == "a" and not self._in_dt and not cur["pdf"]:
            href = a.get("href") or ""
            if "/papers/" in href and href.lower().endswith(".pdf"):
                cur["pdf"] = href

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._in_title = self._in_form_a = False
        elif tag == "dt":
            self._in_dt = self._in_title = False
        elif tag == "form" and self._in_form:
            self._in_form = False
            # the hidden field names the author; a form without one: the link's text does
            name = " ".join((self._form_value or self._form_text).split())
            if name and self._cur is not None:
                self._cur["authors"].append(name)

    def handle_data(self, data: str) -> None:
        cur = self._cur
        if cur is None:
            return
        if self._in_title:
            cur["title"].append(data)
        elif self._in_form_a:
            self._form_text += data


class _Abstract(HTMLParser):
    """The text of <div id="abstract"> on a paper's page (nested divs included, markup dropped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.found = False
        self._depth = 0
        self._size = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._depth:
            self._depth += tag == "div"
        elif tag == "div" and dict(attrs).get("id") == "abstract" and not self.found:
            self.found, self._depth = True, 1

    def handle_endtag(self, tag: str) -> None:
        if self._depth and tag == "div":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth and self._size < MAX_ABSTRACT:
            self.parts.append(data)
            self._size += len(data)

    @property
    def text(self) -> str:
        return " ".join("".join(self.parts).split())[:MAX_ABSTRACT]


def _decode(resp: Response) -> str:
    return resp.body.decode("utf-8", errors="replace")


def _ends(text: str) -> bool:
    """Whether an HTML page arrived whole: a body cut off without a length has no </html>."""
    return "</html>" in text[-4096:].lower()


_P = TypeVar("_P", bound=HTMLParser)


def _parsed(resp: Response, parser: _P) -> _P:
    """`parser` fed the page's whole text. Raises ValueError for a page cut off before </html>."""
    text = _decode(resp)
    if not _ends(text):
        raise ValueError("the page ends before </html>: it was cut off")
    parser.feed(text)
    parser.close()
    return parser


def parse_abstract(resp: Response) -> str:
    """A paper page's abstract ("" when the page has none). Raises ValueError for a cut page."""
    return _parsed(resp, _Abstract()).text


@SOURCES.register("cvf")
class CvfSource:
    name: ClassVar[str] = "cvf"
    default_base: ClassVar[str] = DEFAULT_BASE
    polite_delay: ClassVar[float] = 1.0

    def __init__(self, args: Sequence[str], base_url: str | None = None, **options: Any) -> None:
        conf, year = str(options.pop("conf", "") or ""), str(options.pop("year", "") or "")
        words = [w for a in args for w in a.split()]
        if len(words) == 1 and not conf and not year:  # `cvf CVPR2024`
            m = re.fullmatch(r"([A-Za-z]+)(\d{4})", words[0])
            words = [m.group(1), m.group(2)] if m else words
        if words:
            conf, year = (words + [year])[:2] if not conf else (conf, words[0] if not year else year)
        if len(words) > 2 or not conf or not re.fullmatch(r"(?:19|20)\d\d", year):
            raise SourceArgsError(
                f"cvf takes a conference and a year, got {' '.join([*args, conf, year]).strip() or 'nothing'}",
                "e.g. `paperatlas fetch cvf CVPR 2024` or `paperatlas fetch cvf --conf ICCV --year 2023`",
            )
        reject_options("cvf", options, "CONF YEAR (or --conf, --year) and --base-url")
        self.conf = conf.upper()
        if self.conf not in CONFERENCES:
            raise SourceArgsError(
                f"cvf has no conference {conf!r}",
                f"CVF open access holds {', '.join(CONFERENCES)} (e.g. `paperatlas fetch cvf CVPR 2024`); "
                "for another venue try `paperatlas fetch openalex --venue NAME --year YEAR`",
            )
        self.year = int(year)
        self.base_url = (base_url or DEFAULT_BASE).rstrip("/")
        self.key = f"cvf {self.conf} {self.year}"
        self._store: Any = None

    def bind(self, store: Any) -> None:
        """The library: the abstracts it already holds are kept, not fetched again."""
        self._store = store

    @property
    def listing_url(self) -> str:
        return f"{self.base_url}/{self.conf}{self.year}?day=all"

    def _parse_listing(self, resp: Response) -> list[dict[str, Any]]:
        p = _parsed(resp, _Listing())
        if not p.entries:
            raise ValueError(f'no papers (<dt class="ptitle">) on the page for {self.conf} {self.year}')
        return p.entries

    def _local(self, href: str, kind: str) -> str:
        """`href` on this source's own site ("" when it is not a /content/ page of that kind). Saved
        listings hold absolute links and mirrors serve the same paths: only the path is kept, so a
        listing cannot send the fetch to another host."""
        path = urlsplit(href.strip()).path
        if not path.startswith("/content") or not path.lower().endswith(kind) or ".." in path.split("/"):
            return ""
        return self.base_url + path

    def _rows(self, entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        rows, skipped = [], 0
        for e in entries:
            page = self._local(e["page"], ".html")
            title = " ".join("".join(e["title"]).split())[:MAX_TITLE]
            if not page or not title:
                skipped += 1
                continue
            stem = page.rsplit("/", 1)[-1][: -len(".html")].removesuffix("_paper")
            rows.append(
                {
                    "id": f"cvf-{stem}",
                    "title": title,
                    "authors": e["authors"],
                    "venue": self.conf,
                    "year": self.year,
                    "url": page,
                    "pdf_url": self._local(e["pdf"], ".pdf"),
                    "abstract": "",
                }
            )
        return rows, skipped

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        what = f"cvf {self.conf} {self.year}"
        try:
            resp, entries = get_parsed(client, self.listing_url, self._parse_listing, f"{what} listing")
        except FetchError as e:
            if e.status == 404:
                raise FetchError(
                    f"{what}: CVF open access has no listing at {self.listing_url}",
                    "check the conference and year on https://openaccess.thecvf.com/menu "
                    "(ECCV is there only for some years; `fetch openalex --venue` covers the rest)",
                    self.listing_url,
                    404,
                ) from None
            raise
        rows, skipped = self._rows(entries)
        known: dict[str, Any] = {}
        if self._store is not None:
            known = self._store.get_papers([r["id"] for r in rows])
        budget = int(settings.get("cvf_paper_pages"))
        # where the last run's reading stopped: a page that always fails cannot hold the others back
        begin = state.get("cursor", 0) if isinstance(state.get("cursor"), int) else 0
        begin = begin if 0 <= begin < len(rows) else 0
        cursor = begin
        read = missing = failed_404 = 0
        stopped = ""
        failures: list[str] = []
        in_a_row = 0
        total = len(rows)
        for start in range(0, total, BATCH):
            batch = rows[start : start + BATCH]
            for i, row in enumerate(batch, start=start):
                have = known.get(row["id"])
                if have is not None and have.abstract:
                    row["abstract"] = have.abstract  # the record stays as stored: nothing to write
                    continue
                if stopped or read >= budget or i < begin:
                    missing += 1
                    continue
                read, cursor = read + 1, i + 1
                try:
                    _, abstract = get_parsed(client, row["url"], parse_abstract, f"{what} paper page")
                    in_a_row = 0
                except FetchError as e:
                    missing += 1
                    if e.status == 404:
                        failed_404 += 1
                    else:
                        in_a_row += 1
                    if len(failures) < 3:
                        failures.append(f"{row['url']}: {e.message}")
                    if in_a_row >= MAX_FAILURES_IN_A_ROW:
                        stopped = f"{in_a_row} paper pages in a row failed"
                    continue
                row["abstract"] = abstract or ""
                missing += not abstract
            done = start + len(batch) >= total
            if done and not stopped and read < budget:
                cursor = 0  # every page from the cursor on was asked: the next run starts at the top
            note = ""
            if done and (missing or skipped):
                note = self._note(total, missing, read, budget, failed_404, failures, stopped, skipped)
            yield Page(
                resp.url if start == 0 else f"{resp.url}#papers-{start + 1}-{start + len(batch)}",
                [(f"paper {start + i + 1}", r) for i, r in enumerate(batch)],
                Format.JSON,
                {"complete": done, "papers": total, "cursor": cursor, "without_abstract": missing},
                total=total,
                note=note,
            )

    def _note(
        self,
        total: int,
        missing: int,
        read: int,
        budget: int,
        failed_404: int,
        failures: list[str],
        stopped: str,
        skipped: int,
    ) -> str:
        lines = []
        if missing:
            why = []
            if read >= budget or stopped:
                why.append(
                    f"this run read {read} paper page{'s' if read != 1 else ''} "
                    f"(at most {budget}, $PAPERATLAS_CVF_PAPER_PAGES)"
                )
            if stopped:
                why.append(f"then stopped: {stopped}")
            if failed_404:
                why.append(f"{failed_404} paper page{'s' if failed_404 != 1 else ''} answered 404")
            lines.append(
                f"{self.key}: {missing} of {total} papers are stored without an abstract"
                + (f" ({'; '.join(why)})" if why else "")
                + ": run the same fetch again to read their pages"
            )
            lines += [f"  {f}" for f in failures]
        if skipped:
            lines.append(
                f"{self.key}: {skipped} listing entr{'ies' if skipped != 1 else 'y'} had no title or no "
                "paper page on the site and were skipped"
            )
        return "\n".join(lines)
