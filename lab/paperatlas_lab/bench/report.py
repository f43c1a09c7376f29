"""`paperatlas bench report FILE...`: how long a conference report takes to build and render.

The files (paper lists: paperlists JSON, JSONL, ...) go into a library under --workdir, kept between
runs (ingest, embed with the hashing embedder unless --embedder says otherwise, topics build: each step
is skipped when already done, and its time is printed when it runs). Then, each --repeats times:

* scan: reading every paper's facts from the store (`iter_facts`), the floor any report pays;
* report: `lib.report.build()` over the whole library (every year: trends included), and for the
  largest venue-year alone;
* html / markdown: rendering the whole-library report.

Medians are printed with the ratio report / scan measured in the same run, and the load average: on a
shared machine the wall time depends on what else runs.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _median_s(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return round(statistics.median(times), 3), out


def bench_report(
    files: Sequence[str],
    workdir: Path,
    embedder: str = "hashing",
    repeats: int = 3,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    from paperatlas.library import Library
    from paperatlas.report.render import render_html, render_markdown

    say = log or (lambda m: None)
    workdir.mkdir(parents=True, exist_ok=True)
    db = workdir / f"report-bench-{embedder}.db"
    setup: dict[str, float] = {}
    with Library(db, embedder=embedder) as lib:
        t = time.perf_counter()
        rep = lib.ingest(list(files), skip_bad=True)
        if rep.new or rep.updated:
            setup["ingest_s"] = round(time.perf_counter() - t, 1)
            say(f"ingest: {rep.summary()} in {setup['ingest_s']} s")
        t = time.perf_counter()
        if lib.embed():
            setup["embed_s"] = round(time.perf_counter() - t, 1)
            say(f"embed: {setup['embed_s']} s")
        meta = lib.store.topics.topics_meta() or {}
        if meta.get("data_version") != list(lib.store.data_version()):
            t = time.perf_counter()
            lib.topics.build(seed=0)
            setup["topics_s"] = round(time.perf_counter() - t, 1)
            say(f"topics build: {setup['topics_s']} s")
        n = lib.count()
        groups = Counter((p.venue, p.year) for p in lib.store.report.iter_facts())
        (venue, year), in_group = groups.most_common(1)[0]
        scan_s, _ = _median_s(lambda: sum(1 for _ in lib.store.report.iter_facts()), repeats)
        whole_s, whole = _median_s(lambda: lib.report.build(), repeats)
        one_s, _ = _median_s(lambda: lib.report.build(venue, [year] if year else []), repeats)
        html_s, html = _median_s(lambda: render_html(whole), repeats)
        md_s, _ = _median_s(lambda: render_markdown(whole), repeats)
        d = whole.to_dict()
    return {
        "papers": n,
        "embedder": embedder,
        "themes": len(d["themes"]),
        "years": d["scope"]["years_present"],
        "setup": setup,
        "repeats": repeats,
        "scan_s": scan_s,
        "report_s": whole_s,
        "report_over_scan": round(whole_s / scan_s, 1) if scan_s else None,
        "largest_group": {"venue": venue, "year": year, "papers": in_group, "report_s": one_s},
        "html_s": html_s,
        "html_bytes": len(html.encode("utf-8")),
        "markdown_s": md_s,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def table(r: dict[str, Any]) -> str:
    g = r["largest_group"]
    return "\n".join(
        [
            f"papers {r['papers']} ({r['embedder']} vectors), {r['themes']} themes, years {r['years'][:1]}..{r['years'][-1:]}",
            f"scan of every paper's facts: {r['scan_s']} s (median of {r['repeats']})",
            f"report, whole library:       {r['report_s']} s = {r['report_over_scan']} x the scan",
            f"report, {g['venue']} {g['year']} ({g['papers']} papers): {g['report_s']} s",
            f"render html: {r['html_s']} s ({r['html_bytes'] / 1e6:.1f} MB); markdown: {r['markdown_s']} s",
            f"load average {r['load_average']}",
        ]
    )
