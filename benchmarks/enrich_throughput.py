"""`enrich` and `fetch openalex` throughput: seconds per 1,000 papers against a loopback server.

    nice -n 19 .venv/bin/python benchmarks/enrich_throughput.py [--papers 1000] [--runs 3]

The server answers with the recorded OpenAlex work (tests/data/sources/openalex/W2741809807.json),
one copy per asked DOI under that DOI and a work id of its own, cut to the fields `select=` asks for
as the API does, so every answer has the real record's size and shape (45 references, 9 authorships). Paths timed, each from a fresh library:

- `enrich` by DOI: N papers with DOIs, 50 to a request (N/50 requests), no polite pause (--delay 0),
  then again at the default 0.2 s pause between requests (what a real run waits at least);
- `enrich` by title: N/10 papers without ids, one search each;
- `fetch openalex`: N works in pages of 200 (the API's page size), stored as papers with their links;
- baseline in the same run: `ingest` of the same N papers from a JSONL file.

Prints the medians of --runs runs. Nothing here leaves the machine.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from paperatlas import Library  # noqa: E402
from paperatlas.sources import HttpClient  # noqa: E402
from sourceserver import SourceServer  # noqa: E402

WORK = json.loads((ROOT / "tests/data/sources/openalex/W2741809807.json").read_text(encoding="utf-8"))


def work(i: int) -> dict[str, Any]:
    w = copy.deepcopy(WORK)
    w["id"] = f"https://openalex.org/W{800000000 + i}"
    w["doi"] = f"https://doi.org/10.5555/bench.{i}"
    w["title"] = w["display_name"] = f"Open access prevalence study number {i} of the benchmark"
    return w


def select(works: list[dict[str, Any]], q: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Only the fields `select=` asks for, as the API answers."""
    keys = q.get("select", [""])[0].split(",")
    return [{k: w[k] for k in keys if k in w} for w in works] if keys != [""] else works


def serve(n: int) -> SourceServer:
    works = [work(i) for i in range(n)]

    def route(q: dict[str, list[str]]) -> bytes:
        flt = q.get("filter", [""])[0]
        if flt.startswith("doi:"):
            found = [works[int(d.rsplit(".", 1)[1])] for d in flt[4:].split("|")]
        elif flt.startswith("title.search:"):
            i = int(flt.rsplit(" ", 4)[-4])
            found = [works[i]]
        else:  # fetch: cursor paging, 200 a page
            start = int(q.get("cursor", ["*"])[0].replace("*", "0"))
            found = works[start : start + 200]
            nxt = str(start + 200) if start + 200 < n else None
            return json.dumps({"meta": {"count": n, "next_cursor": nxt}, "results": select(found, q)}).encode()
        return json.dumps({"meta": {"count": len(found)}, "results": select(found, q)}).encode()

    return SourceServer(routes={"/works": route}).start()


def papers_file(tmp: Path, n: int, with_doi: bool) -> Path:
    f = tmp / f"papers-{n}-{with_doi}.jsonl"
    rows = []
    for i in range(n):
        w = work(i)
        row = {"id": f"p{i}", "title": w["title"], "abstract": f"Abstract of paper {i}.", "year": 2018}
        if with_doi:
            row["doi"] = f"10.5555/bench.{i}"
        rows.append(json.dumps(row))
    f.write_text("\n".join(rows), encoding="utf-8")
    return f


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--papers", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    n = a.papers
    server = serve(n)
    timings: dict[str, list[float]] = {}

    def timed(name: str, per: int, fn: Any) -> None:
        start = time.perf_counter()
        fn()
        timings.setdefault(name, []).append((time.perf_counter() - start) * 1000 / per)

    try:
        for run in range(a.runs):
            with tempfile.TemporaryDirectory() as d:
                tmp = Path(d)
                dois, titles = papers_file(tmp, n, True), papers_file(tmp, n // 10, False)
                base = Library(str(tmp / "base.db"), embedder="hashing")
                timed("ingest from a file (baseline)", n, lambda: base.ingest([str(dois)]))
                base.close()
                lib = Library(str(tmp / "doi.db"), embedder="hashing")
                lib.ingest([str(dois)])
                url = server.url
                timed("enrich by DOI, no pause", n, lambda: lib.citations.enrich(base_url=url, client=HttpClient()))
                timed(
                    "enrich by DOI, 0.2 s pause",
                    n,
                    lambda: lib.citations.enrich(base_url=url, client=HttpClient(delay=0.2), refresh=True),
                )
                lib.close()
                lib = Library(str(tmp / "title.db"), embedder="hashing")
                lib.ingest([str(titles)])
                timed(
                    "enrich by title, no pause",
                    n // 10,
                    lambda: lib.citations.enrich(base_url=url, client=HttpClient()),
                )
                lib.close()
                lib = Library(str(tmp / "fetch.db"), embedder="hashing")
                timed(
                    "fetch openalex (pages of 200)",
                    n,
                    lambda: lib.sources.fetch("openalex", [], url, client=HttpClient(), search="bench"),
                )
                assert lib.count() == n, lib.count()
                lib.close()
    finally:
        server.stop()
    print(f"seconds per 1,000 papers (median of {a.runs} runs, {n} papers, loopback)")
    for name, ts in timings.items():
        print(f"{name:<32} {statistics.median(ts):8.2f}")


if __name__ == "__main__":
    main()
