"""`fulltext fetch` against a loopback server replaying a real PDF (tests/data/pdfs), clean and then
with faults, in one run: papers/min, bytes fetched per paper read, and what each fault became.

    .venv/bin/python benchmarks/fulltext_fetch.py [--papers N]

The faults (tests/sourceserver.py): 503 with Retry-After: 1, slow (past the whole-answer deadline),
cut (half the body), an HTML login page instead of the PDF, a redirect loop, 10 GB claimed.
No politeness delay (one loopback host): the figures are paperatlas's own cost, not a site's.
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


def run(n: int, faults: bool) -> None:
    server = SourceServer().start()
    body = PDF.read_bytes()
    rows = []
    for i in range(n):
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
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "papers.jsonl"
        f.write_text("".join(json.dumps(r) + "\n" for r in rows))
        with Library(Path(tmp) / "lib.db", embedder="hashing") as lib:
            lib.ingest([f])
            client = HttpClient(total_timeout=2.0, retries=1, backoff=0.1, max_bytes=64 << 20)
            rep = lib.fulltext.fetch([r["id"] for r in rows], client=client)
    server.stop()
    per = rep.bytes / rep.read if rep.read else 0
    label = "with faults (every other paper)" if faults else "clean (baseline)"
    print(
        f"{label:<32} {n} papers: {rep.read} read, failed {rep.failed}; {rep.papers_per_minute:.0f} papers/min, "
        f"{per / 1e3:.0f} kB fetched per paper read ({body.__len__() / 1e3:.0f} kB PDF), {rep.bytes / 1e6:.1f} MB in all"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=24)
    args = ap.parse_args()
    run(args.papers, faults=False)
    run(args.papers, faults=True)


if __name__ == "__main__":
    main()
