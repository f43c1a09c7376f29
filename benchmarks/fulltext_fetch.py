"""`fulltext fetch` against loopback servers standing in for several hosts, each replaying a real PDF
(tests/data/pdfs) after a per-request latency, clean and then with faults: papers/min and bytes
fetched per paper read, one paper at a time (`--hosts 1`: today's order, one request after another)
beside several hosts at once (`--hosts 4`), in one run.

    .venv/bin/python benchmarks/fulltext_fetch.py [--papers 24] [--hosts 4] [--latency 0.3] [--delay 1.0]

Each server is a host of its own (its own port: the client tells hosts apart by name and port) and
waits `--latency` seconds before each answer (a distant server); every host gets the polite pause
`--delay` between two requests, as `fulltext fetch` gives a host by default. Papers are listed two
ways: interleaved (host after host: the best case for one request after another, whose pauses then
overlap) and grouped (a venue's papers after another's, as a library is usually ingested).

The faults (tests/sourceserver.py), on every other paper: 503 with Retry-After: 1, slow (past the
2-s whole-answer deadline), cut (half the body), an HTML login page instead of the PDF, a redirect
loop, 10 GB claimed; and the last host answers its first paper with Retry-After: 3600, so it is set
aside for the run (its papers are left for the next run, not counted in papers/min). Bytes count the
bodies that arrived whole (a cut body or a refused 10 GB one is not counted), per paper read.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from sourceserver import SourceServer  # noqa: E402

from paperatlas import Library  # noqa: E402
from paperatlas.http_client import HttpClient  # noqa: E402

PDF = ROOT / "tests" / "data" / "pdfs" / "2020.acl-main.207.pdf"
TITLE = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
FAULTS = ["503:1", "slow:3", "cut", "html", "loop", "huge:10000000000"]


def plan(n: int, hosts: int, order: str) -> list[int]:
    """The host of each paper: interleaved (0,1,2,3,0,1,...) or grouped (0,0,...,1,1,...)."""
    if order == "interleaved":
        return [i % hosts for i in range(n)]
    per = -(-n // hosts)
    return [i // per for i in range(n)]


def run(n: int, hosts: int, order: str, faults: bool, workers: int, latency: float, delay: float) -> str:
    servers = [SourceServer(latency=latency).start() for _ in range(hosts)]
    body = PDF.read_bytes()
    rows = []
    for i, h in enumerate(plan(n, hosts, order)):
        server = servers[h]
        path = f"/pdf/{i}.pdf"
        server.routes[path] = body
        server.content_type[path] = "application/pdf"
        fault = FAULTS[(i // 2) % len(FAULTS)] if faults and i % 2 else ""
        if fault == "html":
            server.routes[path] = b"<!DOCTYPE html><html><body>Sign in to download</body></html>"
            server.content_type[path] = "text/html"
        elif fault == "loop":
            server.faults[path] = [f"redirect:{server.url}{path}"] * 20
        elif fault:
            server.faults[path] = [fault] * (1 if fault.startswith("503") else 4)
        rows.append({"id": f"p{i}", "title": f"{TITLE} {i}", "abstract": "x", "pdf_url": f"{server.url}{path}"})
    if faults:  # the last host asks for an hour at its first paper
        first = next(i for i, h in enumerate(plan(n, hosts, order)) if h == hosts - 1)
        servers[-1].faults[f"/pdf/{first}.pdf"] = ["503:3600"]
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "papers.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with Library(Path(tmp) / "lib.db", embedder="hashing") as lib:
            lib.ingest([f])
            client = HttpClient(delay=delay, total_timeout=2.0, retries=1, backoff=0.1, max_bytes=64 << 20)
            rep = lib.fulltext.fetch([r["id"] for r in rows], client=client, workers=workers)
    for s in servers:
        s.stop()
    failed = ", ".join(f"{k} {v}" for k, v in sorted(rep.failed.items())) or "none"
    aside = f"; {rep.set_aside_papers} left (host set aside)" if rep.set_aside else ""
    mode = "one at a time (--hosts 1)" if workers == 1 else f"{workers} hosts at once"
    return (
        f"{'faults' if faults else 'clean':<7}{order:<12}{mode:<27}{rep.papers_per_minute:>8.0f} papers/min "
        f"{rep.bytes_per_paper / 1e3:>6.0f} kB/paper read  ({rep.read} read, failed: {failed}{aside}; "
        f"{rep.seconds:.1f} s)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--papers", type=int, default=24)
    ap.add_argument("--hosts", type=int, default=4, help="loopback servers, one host each")
    ap.add_argument("--latency", type=float, default=0.3, help="seconds each answer waits before it starts")
    ap.add_argument("--delay", type=float, default=1.0, help="polite pause between two requests to a host")
    ap.add_argument("--workers", type=int, default=4, help="hosts asked at once in the parallel run")
    args = ap.parse_args()
    print(
        f"{args.papers} papers on {args.hosts} loopback hosts, {args.latency:g} s latency, {args.delay:g} s pause "
        f"per host; the PDF is {PDF.stat().st_size / 1e3:.0f} kB"
    )
    for faults in (False, True):
        for order in ("interleaved", "grouped"):
            for workers in (1, args.workers):
                print(run(args.papers, args.hosts, order, faults, workers, args.latency, args.delay), flush=True)


if __name__ == "__main__":
    main()
