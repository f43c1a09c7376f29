"""`paperatlas eval report`: is the report right, and are its themes recognisable?

Two checks on a library whose topics are built:

* **themes against the authors' own areas** (`--areas VENUE YEAR`, e.g. ICLR 2024, whose papers carry
  an author-chosen `primary_area`): for each theme of that venue-year's report, its majority area and
  the share of its papers in it (purity); NMI between themes and areas; and whether the theme's label
  shares a content word with its majority area's name. The same figures for the themes' sizes with the
  papers shuffled (seeded) are measured in the same run: the chance level.
* **trends against the raw files** (`--raw FILE...`): each theme's paper count per year is recounted
  from the raw files (record id -> the year in the file name or record, id -> theme from the library)
  and compared with the report's trend counts; every disagreement is listed.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from ..topics.phrases import word_key

_WORD = re.compile(r"[a-z]+")
_STOP = {
    "and",
    "or",
    "of",
    "the",
    "for",
    "in",
    "on",
    "to",
    "a",
    "an",
    "with",
    "e",
    "g",
    "i",
    "including",
    "etc",
    "none",
    "above",
    "general",
    "learning",
    "applications",
    "application",
}


def _words(text: str) -> set[str]:
    return {word_key(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


def _purity_nmi(themes: Sequence[str], areas: Sequence[str]) -> tuple[float, float]:
    from sklearn.metrics import normalized_mutual_info_score

    by: dict[str, Counter[str]] = {}
    for t, a in zip(themes, areas):
        by.setdefault(t, Counter())[a] += 1
    purity = sum(c.most_common(1)[0][1] for c in by.values()) / max(1, len(areas))
    return round(purity, 4), round(float(normalized_mutual_info_score(areas, themes)), 4)


def theme_agreement(lib: Any, venue: str, year: int, field: str = "primary_area", seed: int = 0) -> dict[str, Any]:
    rep = lib.report.build(venue, [year], describe=False).to_dict()
    facts = {f.id: f for f in lib.report.papers_in(venue, [year])}
    rows, themes, areas = [], [], []
    for t in rep["themes"]:
        labelled = [(i, str(facts[i].extra.get(field) or "").strip()) for i in t["ids"]]
        labelled = [(i, a) for i, a in labelled if a]
        if not labelled:
            continue
        c = Counter(a for _, a in labelled)
        top, n = c.most_common(1)[0]
        label_words = _words(t["label"] + " " + " ".join(t.get("phrases") or []))
        rows.append(
            {
                "topic": t["topic"],
                "label": t["label"],
                "papers": len(labelled),
                "area": top,
                "purity": round(n / len(labelled), 3),
                "label_matches_area": bool(label_words & _words(top)),
            }
        )
        themes += [str(t["topic"])] * len(labelled)
        areas += [a for _, a in labelled]
    if not rows:
        raise click.ClickException(f"no paper of {venue} {year} has a {field!r}: use ICLR 2024 of ml_venue_papers")
    purity, nmi = _purity_nmi(themes, areas)
    shuffled = areas[:]
    random.Random(seed).shuffle(shuffled)
    c_purity, c_nmi = _purity_nmi(themes, shuffled)
    return {
        "venue": venue,
        "year": year,
        "papers": len(areas),
        "areas": len(set(areas)),
        "themes": len(rows),
        "purity": purity,
        "nmi": nmi,
        "chance_purity": c_purity,
        "chance_nmi": c_nmi,
        "labels_matching_area": sum(r["label_matches_area"] for r in rows),
        "per_theme": rows,
    }


def _year_of(path: Path, rec: dict[str, Any]) -> int | None:
    y = rec.get("year")
    if isinstance(y, int):
        return y
    m = re.search(r"(19|20)\d\d", path.name)
    return int(m.group(0)) if m else None


def trends_check(lib: Any, venue: str, files: Sequence[str]) -> dict[str, Any]:
    rep = lib.report.build(venue).to_dict()
    tr = rep.get("trends")
    if not tr:
        raise click.ClickException(f"the library holds one year of {venue} at most: no trends to check")
    theme_of = {i: t["topic"] for t in rep["themes"] for i in t["ids"]}
    raw: Counter[tuple[int, int]] = Counter()
    per_year: Counter[int] = Counter()
    missing = 0
    for f in files:
        p = Path(f)
        records = json.loads(p.read_text(encoding="utf-8"))
        for r in records:
            y = _year_of(p, r)
            pid = str(r.get("id") or "")
            if pid not in theme_of:
                missing += 1
                continue
            per_year[y] += 1
            raw[(theme_of[pid], y)] += 1
    diffs = []
    for row in tr["themes"]:
        for ys, n in row["counts"].items():
            want = raw[(row["topic"], int(ys))]
            if want != n:
                diffs.append({"topic": row["topic"], "year": int(ys), "report": n, "raw": want})
    placed_diffs = [
        {"year": int(y), "report": n, "raw": per_year[int(y)]} for y, n in tr["papers"].items() if per_year[int(y)] != n
    ]
    return {
        "venue": venue,
        "years": tr["years"],
        "papers_per_year": tr["papers"],
        "raw_records_not_in_a_theme": missing,
        "count_disagreements": diffs,
        "year_total_disagreements": placed_diffs,
        "rising": [
            {k: r[k] for k in ("label", "shares", "change", "z", "q", "significant")}
            for r in tr["themes"]
            if r["topic"] in tr["rising"]
        ],
        "fading": [
            {k: r[k] for k in ("label", "shares", "change", "z", "q", "significant")}
            for r in tr["themes"]
            if r["topic"] in tr["fading"]
        ],
        "significant": sum(r["significant"] for r in tr["themes"]),
        "themes": len(tr["themes"]),
        "new": [r["label"] for r in tr["themes"] if r["new"]],
    }


@click.command("report")
@click.option(
    "--db", "db_path", envvar="PAPERATLAS_DB", required=True, metavar="PATH", help="A library with its topics built."
)
@click.option("--areas", nargs=2, metavar="VENUE YEAR", help="Check the themes of VENUE YEAR against primary_area.")
@click.option("--venue", help="With --raw: the venue whose trends are checked.")
@click.option(
    "--raw",
    "raw",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="With --venue: the raw paperlists files the library was built from (repeat the option).",
)
def report_cmd(db_path: str, areas: tuple[str, str] | None, venue: str | None, raw: tuple[str, ...]) -> None:
    """Check the report: its themes against ICLR's primary areas, its trends against the raw files.

    Example:

    \b
        paperatlas eval report --db venue.db --areas ICLR 2024
        paperatlas eval report --db corl.db --venue CoRL --raw corl2021.json --raw corl2022.json
    """
    from ..library import Library

    out: dict[str, Any] = {}
    with Library(db_path, create=False) as lib:
        if areas:
            out["themes_vs_areas"] = theme_agreement(lib, areas[0], int(areas[1]))
        if raw:
            if not venue:
                raise click.UsageError("--raw needs --venue")
            out["trends_vs_raw"] = trends_check(lib, venue, raw)
    if not out:
        raise click.UsageError("give --areas VENUE YEAR and/or --venue V --raw FILE...")
    click.echo(json.dumps(out, indent=1, ensure_ascii=False))
