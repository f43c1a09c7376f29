"""Fetch throughput (issue 13): papers/s from a loopback server into a fresh library, no embedding.

    PYTHONPATH=. python benchmarks/fetch_throughput.py [paperlists-file.json ...] [--runs 3]

Each file is served as `/{venue}/{venue}{year}.json` (paperlists) and, reshaped into OpenReview API v2
notes, as a paged `/notes` endpoint (1000 per page, as the real API). Baseline in the same run:
`ingest` of the same file from disk. Prints medians of --runs runs. Default file: the small recorded
tests/data/sources/colt2024.json; pass a full paperlists file for a meaningful number.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from paperatlas import Library  # noqa: E402
from paperatlas.ingest.formats import venue_year_from_name  # noqa: E402
from paperatlas.sources import HttpClient  # noqa: E402
from sourceserver import SourceServer  # noqa: E402


def _notes(records: list[dict], venue_id: str) -> list[dict]:
    out = []
    for r in records:
        authors = [a.strip() for a in str(r.get("author", "")).split(";") if a.strip()]
        kws = [k.strip() for k in str(r.get("keywords", "")).split(";") if k.strip()]
        out.append(
            {
                "id": str(r["id"]),
                "forum": str(r["id"]),
                "content": {
                    "title": {"value": r.get("title", "")},
                    "abstract": {"value": r.get("abstract", "")},
                    "authors": {"value": authors},
                    "keywords": {"value": kws},
                    "venue": {"value": venue_id.split(".")[0] + " " + venue_id.split("/")[1]},
                    "venueid": {"value": venue_id},
                },
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", default=[str(ROOT / "tests/data/sources/colt2024.json")])
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    for f in map(Path, a.files):
        body = f.read_bytes()
        records = json.loads(body)
        vy = venue_year_from_name(f.name)
        venue = f.name.split(str(vy["year"]))[0]
        venue_id = f"{vy['venue']}.cc/{vy['year']}/Conference"
        notes = _notes(records, venue_id)

        def notes_api(qs: dict, notes: list = notes) -> bytes:
            off, lim = int(qs["offset"][0]), int(qs["limit"][0])
            return json.dumps({"notes": notes[off : off + lim], "count": len(notes)}).encode()

        server = SourceServer(routes={f"/{venue}/{f.name}": body, "/notes": notes_api}).start()
        times: dict[str, list[float]] = {"ingest (disk)": [], "fetch paperlists": [], "fetch openreview": []}
        try:
            for _ in range(a.runs):
                with tempfile.TemporaryDirectory() as tmp:
                    for name in times:
                        with Library(Path(tmp) / f"{name.split()[-1]}.db", embedder="hashing") as lib:
                            t = time.perf_counter()
                            if name.startswith("ingest"):
                                n = lib.ingest([f]).new
                            elif name.endswith("paperlists"):
                                n = lib.sources.fetch(
                                    "paperlists",
                                    [venue, str(vy["year"])],
                                    base_url=server.url,
                                    client=HttpClient(delay=0),
                                ).new
                            else:
                                n = lib.sources.fetch(
                                    "openreview", [venue_id], base_url=server.url, client=HttpClient(delay=0)
                                ).new
                            times[name].append(time.perf_counter() - t)
                            assert n == len(records), (name, n, len(records))
        finally:
            server.stop()
        base = statistics.median(times["ingest (disk)"])
        print(f"{f.name}: {len(records)} papers, {len(body) / 1e6:.1f} MB, median of {a.runs} runs")
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f"  {name:18s} {m:7.3f} s  {len(records) / m:8.0f} papers/s  ({m / base:.2f}x ingest)")


if __name__ == "__main__":
    main()
