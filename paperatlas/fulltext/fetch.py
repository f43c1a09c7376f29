"""Download papers' PDFs from their own links, through the one HTTP client and its bounds.

Each paper's PDF address comes from its record (`links.paper_links`: the record's own PDF, an
OpenReview `pdf?id=`, an arXiv preprint). What the client promises holds here too: a cap on the size
(a 10 GB Content-Length is refused before a byte is read), a deadline for the whole answer, retries
that honour Retry-After, redirects within the host only (a loop ends after a few). On top of that
the answer must be a PDF: an HTML login or captcha page is recorded as such, never read as text.

Politeness is per host: several hosts are asked at once (`fulltext_fetch_hosts`), each host one
request at a time with its own pause (hosts.polite_pause). A host that asks to wait longer than
`fulltext_fetch_max_wait` (Retry-After), or fails `fulltext_fetch_host_failures` times in a row, is
set aside for the run with the reason and the fix: its papers are left for the next run, and the
other hosts go on. Downloads run in worker threads; everything the library stores is written by the
calling thread, one paper per transaction, so a run that is killed keeps every paper it finished
and the next run fetches only what is missing.
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import settings
from ..durations import duration
from ..hosts import polite_pause
from ..http_client import FetchError, HttpClient, host_port, retry_after
from ..links import paper_links
from ..models import Paper
from .reader import MAX_FILE_BYTES, FulltextError

# a polite default between two requests to one host (hosts.POLITE_PAUSES holds those that ask for more)
DELAY_S = 1.0
DEADLINE_S = 120.0
SET_ASIDE = "set_aside"  # the state of a paper whose host was set aside before it was asked


@dataclass
class HostAside:
    """A host this run stopped asking: why (`reason`: retry_after or failures), the fix, and how
    many of its papers were left for the next run."""

    host: str
    reason: str
    message: str
    fix: str
    papers: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


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
    hosts: int = 0  # hosts asked for a PDF
    workers: int = 1  # hosts asked at once
    set_aside: list[HostAside] = field(default_factory=list)

    @property
    def papers_per_minute(self) -> float:
        done = self.read + sum(self.failed.values())
        return 60.0 * done / self.seconds if self.seconds > 0 else 0.0

    @property
    def bytes_per_paper(self) -> float:
        """Bytes downloaded (failed answers included) per paper read."""
        return self.bytes / self.read if self.read else 0.0

    @property
    def set_aside_papers(self) -> int:
        return sum(h.papers for h in self.set_aside)

    def to_dict(self) -> dict[str, Any]:
        return {
            "asked": self.asked,
            "read": self.read,
            "skipped": self.skipped,
            "no_link": self.no_link,
            "failed": self.failed,
            "set_aside": [h.to_dict() for h in self.set_aside],
            "set_aside_papers": self.set_aside_papers,
            "hosts": self.hosts,
            "workers": self.workers,
            "bytes": self.bytes,
            "bytes_per_paper": round(self.bytes_per_paper),
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
    ctype = _header(headers, "Content-Type") or "no type"
    head = body[:200].lstrip().lower()
    if ctype.startswith("text/html") or head.startswith((b"<!doctype html", b"<html")):
        return f"the server answered with an HTML page ({ctype}), not a PDF: a login, captcha or error page"
    return f"the answer ({ctype}, {len(body):,} bytes) is not a PDF"


def _header(headers: Mapping[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name.lower()), "")


@dataclass
class _Got:
    """One paper's download, handed from a worker to the thread that stores: the PDF's bytes or
    why there are none (`state` SET_ASIDE: its host was set aside before it was asked)."""

    index: int
    paper: Paper
    url: str
    body: bytes = b""
    error: FulltextError | None = None
    bytes: int = 0
    state: str = ""


class _Host:
    """One host's politeness and health for a run: its own client (its pause, its bounds), the
    failures in a row, and whether it was set aside. Only one thread asks a host at a time."""

    def __init__(self, key: str, client: HttpClient, max_wait: float, budget: int) -> None:
        self.key = key
        self.client = client
        self.max_wait = max_wait
        self.budget = budget
        self.in_row = 0
        self.aside: HostAside | None = None

    def download(self, index: int, paper: Paper, url: str) -> _Got:
        if self.aside is not None:
            self.aside.papers += 1
            return _Got(index, paper, url, state=SET_ASIDE)
        before = self.client.stats["bytes"]
        try:
            resp = self.client.get(url, headers={"Accept": "application/pdf"}, what=f"the PDF of {paper.id}")
        except FetchError as e:
            error = FulltextError("fetch_failed", e.message, e.fix)
            asked = _header(e.headers, "Retry-After")
            wait = retry_after(asked) if e.status in (429, 503) else None
            if wait is not None and wait > self.max_wait:
                error = self._busy(wait, asked)
            else:
                self._failed(error)
            return _Got(index, paper, url, error=error, bytes=self.client.stats["bytes"] - before)
        got = _Got(index, paper, url, body=resp.body, bytes=self.client.stats["bytes"] - before)
        why = looks_like_pdf(dict(resp.headers), resp.body)
        if why:
            got.body, got.error = b"", FulltextError("not_pdf", f"{url}: {why}")
            self._failed(got.error)
        else:
            self.in_row = 0
        return got

    def _busy(self, wait: float, asked: str) -> FulltextError:
        """The host asks to wait longer than a run waits: no sleeping on it, its papers wait for a later run."""
        after = time.strftime("%H:%M UTC", time.gmtime(time.time() + wait))
        message = (
            f"{self.key} asks to wait {duration(wait)} before its next request (Retry-After: {asked}), "
            f"longer than the {self.max_wait:g} s a run waits"
        )
        fix = (
            f"run the same command again after {after}: it fetches only what is missing "
            "(or wait longer with PAPERATLAS_FULLTEXT_FETCH_MAX_WAIT=SECONDS)"
        )
        self.aside = HostAside(self.key, "retry_after", message, fix)
        return FulltextError("fetch_failed", message, fix)

    def _failed(self, error: FulltextError) -> None:
        self.in_row += 1
        if self.in_row >= self.budget and self.aside is None:
            self.aside = HostAside(
                self.key,
                "failures",
                f"{self.key}: {self.in_row} downloads failed in a row (the last: {error.message})",
                "open one of its PDF links in a browser to see what it answers; the next run tries this host "
                "again (PAPERATLAS_FULLTEXT_FETCH_HOST_FAILURES=N allows more failures in a row)",
            )


def fetch_many(
    fulltext: Any,
    papers: Sequence[Paper],
    client: HttpClient | None = None,
    redo: bool = False,
    on_progress: Callable[[int, int, str, str], None] | None = None,
    workers: int | None = None,
) -> FetchReport:
    """Fetch and read each paper's PDF; `fulltext` is the capability that stores what was read.
    `client` is the template each host's client is made from (its pause, `delay`, is the least a
    host gets); `workers`: hosts asked at once (default the `fulltext_fetch_hosts` setting; 1 asks
    one paper at a time, in the order given)."""
    template = client or HttpClient(delay=DELAY_S, total_timeout=DEADLINE_S, max_bytes=MAX_FILE_BYTES, retries=3)
    workers = max(1, workers or int(settings.get("fulltext_fetch_hosts")))
    max_wait = float(settings.get("fulltext_fetch_max_wait"))
    budget = int(settings.get("fulltext_fetch_host_failures"))
    report = FetchReport(asked=len(papers), workers=workers)
    start = time.monotonic()
    done = 0

    def tick(p: Paper, state: str) -> None:
        nonlocal done
        done += 1
        if on_progress is not None:
            on_progress(done, len(papers), p.id, state)

    results: dict[int, dict[str, Any]] = {}
    todo: list[tuple[int, Paper, str]] = []
    for i, p in enumerate(papers):
        if not redo and fulltext.has(p.id):
            report.skipped += 1
            results[i] = {"id": p.id, "state": "skipped"}
            tick(p, "skipped")
            continue
        url = pdf_url(p, fulltext.lib.store.aliases_of(p.id))
        if not url:
            report.no_link += 1
            results[i] = {"id": p.id, "state": "no_link"}
            tick(p, "no_link")
            continue
        todo.append((i, p, url))

    hosts: dict[str, _Host] = {}
    for _i, _p, url in todo:
        key = host_port(url)
        if key not in hosts:
            host_client = dataclasses.replace(
                template,
                delay=polite_pause(key, template.delay),
                give_up_after=max_wait,
                max_wait=max(template.max_wait, max_wait),  # a Retry-After within the bound is waited in full
                stats={"requests": 0, "retries": 0, "bytes": 0},
                _last={},
            )
            hosts[key] = _Host(key, host_client, max_wait, budget)
    report.hosts = len(hosts)

    def settle(got: _Got) -> None:
        state = _settle(fulltext, got, report)
        results[got.index] = {"id": got.paper.id, "state": state}
        tick(got.paper, state)

    try:
        if workers == 1 or len(hosts) <= 1:
            for i, p, url in todo:  # one paper at a time, in the order given
                settle(hosts[host_port(url)].download(i, p, url))
        else:
            _in_parallel(todo, hosts, workers, settle)
    finally:
        report.results = [results[i] for i in sorted(results)]
        report.set_aside = [h.aside for h in hosts.values() if h.aside is not None]
        for h in hosts.values():  # the caller's client counts what its copies did
            for k, v in h.client.stats.items():
                template.stats[k] = template.stats.get(k, 0) + v
        report.seconds = time.monotonic() - start
    return report


def _in_parallel(
    todo: Sequence[tuple[int, Paper, str]], hosts: dict[str, _Host], workers: int, settle: Callable[[_Got], None]
) -> None:
    """Each worker takes a whole host at a time (so no host is asked twice at once) and hands each
    download to this thread, which stores it: the library is written from one thread only."""
    by_host: dict[str, list[tuple[int, Paper, str]]] = {}
    for item in todo:
        by_host.setdefault(host_port(item[2]), []).append(item)
    pending = list(by_host.items())
    pending.reverse()  # pop() from the end: hosts in the order their first paper was given
    lock = threading.Lock()
    stop = threading.Event()
    out: queue.Queue[_Got | BaseException] = queue.Queue()

    def work() -> None:
        try:
            while not stop.is_set():
                with lock:
                    if not pending:
                        return
                    key, items = pending.pop()
                for i, p, url in items:
                    if stop.is_set():
                        return
                    out.put(hosts[key].download(i, p, url))
        except BaseException as e:  # handed to the storing thread, which raises it
            out.put(e)

    threads = [
        threading.Thread(target=work, name=f"paperatlas-fetch-{n}", daemon=True)
        for n in range(min(workers, len(by_host)))
    ]
    for t in threads:
        t.start()
    try:
        for _ in range(len(todo)):
            got = out.get()
            if isinstance(got, BaseException):
                raise got
            settle(got)
    finally:
        # an interrupted run: workers stop before their next request; what they hold is fetched next run
        stop.set()


def _settle(fulltext: Any, got: _Got, report: FetchReport) -> str:
    """Store one download (or why there is none) and count it; returns the paper's state."""
    if got.state == SET_ASIDE:
        return SET_ASIDE
    report.bytes += got.bytes
    p = got.paper
    if got.error is not None:
        fulltext.record_failure(p.id, got.error, got.url)
        report.failed[got.error.reason] = report.failed.get(got.error.reason, 0) + 1
        return got.error.reason
    r = fulltext.add_bytes(p, got.body, got.url)
    if r.ok:
        report.read += 1
        return "read"
    report.failed[r.reason] = report.failed.get(r.reason, 0) + 1
    return str(r.reason)
