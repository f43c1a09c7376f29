"""Download papers' PDFs from their own links, through the one HTTP client and its bounds.

Each paper's PDF address comes from its record (`links.paper_links`: the record's own PDF, an
OpenReview `pdf?id=`, an arXiv preprint). What the client promises holds here too: a cap on the size
(a 10 GB Content-Length is refused before a byte is read), a deadline for the whole answer, retries
that honour Retry-After, a pause between two requests to the same host, redirects within the host
only (a loop ends after a few). On top of that the answer must be a PDF: an HTML login or captcha
page is recorded as such, never read as text. Each paper's result is committed on its own, so a run
that is killed resumes where it stopped: papers already read are skipped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..http_client import FetchError, HttpClient
from ..links import paper_links
from ..models import Paper
from .reader import MAX_FILE_BYTES, FulltextError

# a polite default between two requests to one host (arXiv asks for about 3 s; others take less)
DELAY_S = 1.0
DEADLINE_S = 120.0


@dataclass
class FetchReport:
    """What one `fulltext fetch` run did."""

    asked: int = 0
    read: int = 0
    skipped: int = 0  # already read (a resumed run), or no PDF address
    no_link: int = 0
    failed: dict[str, int] = field(default_factory=dict)  # reason -> papers
    bytes: int = 0
    seconds: float = 0.0
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def papers_per_minute(self) -> float:
        done = self.read + sum(self.failed.values())
        return 60.0 * done / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "read": self.read,
            "skipped": self.skipped,
            "no_link": self.no_link,
            "failed": self.failed,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "papers_per_minute": round(self.papers_per_minute, 2),
            "results": self.results,
        }


def pdf_url(paper: Paper, aliases: Sequence[str] = ()) -> str:
    """The address of the paper's PDF, as its record and source tell it ("" when none is known)."""
    return next((u for label, u in paper_links(paper, aliases) if label == "PDF"), "")


def looks_like_pdf(headers: dict[str, str], body: bytes) -> str:
    """Why an answer is not a PDF ("" when it is): the bytes decide, the type only explains."""
    if b"%PDF-" in body[:1024]:
        return ""
    ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "") or "no type"
    head = body[:200].lstrip().lower()
    if ctype.startswith("text/html") or head.startswith((b"<!doctype html", b"<html")):
        return f"the server answered with an HTML page ({ctype}), not a PDF: a login, captcha or error page"
    return f"the answer ({ctype}, {len(body):,} bytes) is not a PDF"


def fetch_many(
    fulltext: Any,
    papers: Sequence[Paper],
    client: HttpClient | None = None,
    redo: bool = False,
    on_progress: Callable[[int, int, str, str], None] | None = None,
) -> FetchReport:
    """Fetch and read each paper's PDF; `fulltext` is the capability that stores what was read."""
    client = client or HttpClient(delay=DELAY_S, total_timeout=DEADLINE_S, max_bytes=MAX_FILE_BYTES, retries=3)
    report = FetchReport(asked=len(papers))
    start = time.monotonic()
    for i, p in enumerate(papers, start=1):
        state = "skipped"
        if not redo and fulltext.has(p.id):
            report.skipped += 1
        else:
            url = pdf_url(p, fulltext.lib.store.aliases_of(p.id))
            if not url:
                report.no_link += 1
                state = "no_link"
            else:
                state = _one(fulltext, client, p, url, report)
        report.results.append({"id": p.id, "state": state})
        if on_progress is not None:
            on_progress(i, len(papers), p.id, state)
    report.seconds = time.monotonic() - start
    return report


def _one(fulltext: Any, client: HttpClient, p: Paper, url: str, report: FetchReport) -> str:
    before = client.stats["bytes"]
    try:
        resp = client.get(url, headers={"Accept": "application/pdf"}, what=f"the PDF of {p.id}")
    except FetchError as e:
        err = FulltextError("fetch_failed", e.message, e.fix)
        fulltext.record_failure(p.id, err, url)
        report.failed["fetch_failed"] = report.failed.get("fetch_failed", 0) + 1
        return "fetch_failed"
    finally:
        report.bytes += client.stats["bytes"] - before
    why = looks_like_pdf(dict(resp.headers), resp.body)
    if why:
        fulltext.record_failure(p.id, FulltextError("not_pdf", f"{url}: {why}"), url)
        report.failed["not_pdf"] = report.failed.get("not_pdf", 0) + 1
        return "not_pdf"
    r = fulltext.add_bytes(p, resp.body, url)
    if r.ok:
        report.read += 1
        return "read"
    report.failed[r.reason] = report.failed.get(r.reason, 0) + 1
    return r.reason
