"""`paperatlas eval report`: is the report right, and are its themes recognisable?

Two checks on a library whose topics are built:

* **themes against the authors' own areas** (`--areas VENUE YEAR`, e.g. ICLR 2024, whose papers carry
  an author-chosen `primary_area`): for each theme of that venue-year's report, its majority area and
  the share of its papers in it (purity); NMI between themes and areas; and whether the theme's label
  shares a content word with its majority area's name. The same figures for the themes' sizes with the
  papers shuffled (seeded) are measured in the same run: the chance level.
* **themes on real vectors** (`--papers FILE`, the ml_venue_papers file): the ICLR 2024 papers that
  carry a primary area go into a throw-away library, embedded once with the packaged MiniLM (vectors
  cached under ~/.cache/paperatlas/eval/ unless $PAPERATLAS_VECTOR_CACHE says otherwise) and once with
  the hashing embedder, the topics built as `paperatlas topics build` would, and the report's themes
  scored (purity, NMI, ARI, labels sharing a word with their majority area) beside the same themes'
  sizes with the areas shuffled (chance, mean of 20 seeds). Nothing is tuned here: the topic pipeline's
  choices were made on ICLR half A (sha1(id) even, see eval/topics.py); the figures are given on all
  labelled papers and on the untouched half B alone.
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

from paperatlas import settings
from paperatlas.topics.phrases import word_key

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
    s = _scores(themes, areas)
    return s["purity"], s["nmi"]


def _scores(themes: Sequence[str], areas: Sequence[str]) -> dict[str, float]:
    """Purity (each theme counted as its majority area), NMI and ARI of themes against areas."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    by: dict[str, Counter[str]] = {}
    for t, a in zip(themes, areas):
        by.setdefault(t, Counter())[a] += 1
    purity = sum(c.most_common(1)[0][1] for c in by.values()) / max(1, len(areas))
    return {
        "purity": round(purity, 4),
        "nmi": round(float(normalized_mutual_info_score(areas, themes)), 4),
        "ari": round(float(adjusted_rand_score(areas, themes)), 4),
    }


def _chance(themes: Sequence[str], areas: Sequence[str], seeds: int = 20) -> dict[str, float]:
    """The same theme sizes with the areas shuffled: the mean over `seeds` shuffles."""
    runs = []
    for seed in range(seeds):
        shuffled = list(areas)
        random.Random(seed).shuffle(shuffled)
        runs.append(_scores(themes, shuffled))
    return {k: round(sum(r[k] for r in runs) / len(runs), 4) for k in runs[0]}


def theme_agreement(
    lib: Any, venue: str, year: int, field: str = "primary_area", heldout: Any = None
) -> dict[str, Any]:
    """The themes of VENUE YEAR's report against `field`; `heldout(id)` picks a subset scored on its own."""
    rep = lib.report.build(venue, [year], describe=False, summaries="off").to_dict()
    facts = {f.id: f for f in lib.report.papers_in(venue, [year])}
    rows, themes, areas, ids = [], [], [], []
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
        ids += [i for i, _ in labelled]
    if not rows:
        raise click.ClickException(f"no paper of {venue} {year} has a {field!r}: use ICLR 2024 of ml_venue_papers")
    got = _scores(themes, areas)
    chance = _chance(themes, areas)
    out: dict[str, Any] = {
        "venue": venue,
        "year": year,
        "papers": len(areas),
        "areas": len(set(areas)),
        "themes": len(rows),
        **got,
        "chance_purity": chance["purity"],
        "chance_nmi": chance["nmi"],
        "chance_ari": chance["ari"],
        "labels_matching_area": sum(r["label_matches_area"] for r in rows),
        "per_theme": rows,
    }
    theme_of = dict(zip(ids, themes))
    area_of = dict(zip(ids, areas))
    if heldout is not None:
        b = [i for i in ids if heldout(i)]
        hb_t, hb_a = [theme_of[i] for i in b], [area_of[i] for i in b]
        out["heldout"] = {"papers": len(b), **_scores(hb_t, hb_a), "chance": _chance(hb_t, hb_a)}
    return out


def real_vectors_agreement(
    path: str | Path,
    venue: str = "ICLR",
    year: int = 2024,
    embedders: Sequence[str] = ("minilm", "hashing"),
    seed: int = 0,
    progress: Any = None,
) -> dict[str, Any]:
    """The report's themes of VENUE YEAR against primary_area, on each embedder's vectors.

    One throw-away library per embedder, built from the labelled records of `path`; the topics are
    built with `seed` and the pipeline's own k choice. Half B (sha1(id) odd) is scored on its own.
    """
    import tempfile
    import time

    from paperatlas.library import Library
    from .topics import half_b, read_labelled

    say = progress or (lambda s: None)
    records = [
        r
        for r in read_labelled(path)
        if str(r.get("venue", "")).lower() == venue.lower() and int(r.get("year") or 0) == year
    ]
    if not records:
        raise click.ClickException(f"no record of {venue} {year} in {path} has a primary_area")
    out: dict[str, Any] = {"file": str(path), "venue": venue, "year": year, "records": len(records), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="paperatlas-eval-report-") as tmp:
        src = Path(tmp) / "labelled.jsonl"
        with open(src, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        for name in embedders:
            with Library(Path(tmp) / f"{name}.db", embedder=name) as lib:
                lib.ingest([src], format="jsonl")
                say(f"{name}: embedding {len(records)} papers (through the vector cache)")
                t = time.perf_counter()
                lib.embed()
                embed_s = time.perf_counter() - t
                say(f"{name}: building the topics")
                t = time.perf_counter()
                model = lib.topics.build(seed=seed)
                topics_s = time.perf_counter() - t
                t = time.perf_counter()
                got = theme_agreement(lib, venue, year, heldout=half_b)
                got["info"] = {
                    "embedder": lib.embedder.id,
                    "k": int(model.meta["k"]["coarse"]),
                    "seed": seed,
                    "seconds": {
                        "embed": round(embed_s, 1),
                        "topics": round(topics_s, 1),
                        "report_and_scores": round(time.perf_counter() - t, 1),
                    },
                }
                out["runs"][name] = got
    out["tuning"] = (
        "nothing tuned here; the topic pipeline was tuned on ICLR half A (sha1(id) even) by eval topics; "
        "heldout = half B (sha1(id) odd), untouched"
    )
    out["chance"] = "the same themes' sizes with the areas shuffled, mean of 20 seeds"
    return out


def _year_of(path: Path, rec: dict[str, Any]) -> int | None:
    y = rec.get("year")
    if isinstance(y, int):
        return y
    m = re.search(r"(19|20)\d\d", path.name)
    return int(m.group(0)) if m else None


def trends_check(lib: Any, venue: str, files: Sequence[str]) -> dict[str, Any]:
    rep = lib.report.build(venue, summaries="off").to_dict()
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
@click.option("--db", "db_path", envvar=settings.env("db"), metavar="PATH", help="A library with its topics built.")
@click.option(
    "--papers",
    type=click.Path(exists=True, dir_okay=False),
    help="The ml_venue_papers file: score the themes of its ICLR 2024 papers on MiniLM and hashing vectors.",
)
@click.option("--embedders", default="minilm,hashing", show_default=True, help="With --papers: embedders to compare.")
@click.option("--areas", nargs=2, metavar="VENUE YEAR", help="Check the themes of VENUE YEAR against primary_area.")
@click.option("--venue", help="With --raw: the venue whose trends are checked.")
@click.option(
    "--raw",
    "raw",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="With --venue: the raw paperlists files the library was built from (repeat the option).",
)
def report_cmd(
    db_path: str | None,
    papers: str | None,
    embedders: str,
    areas: tuple[str, str] | None,
    venue: str | None,
    raw: tuple[str, ...],
) -> None:
    """Check the report: its themes against ICLR's primary areas, its trends against the raw files.

    Example:

    \b
        paperatlas eval report --papers ../shared/data/ml_venue_papers/papers.jsonl.gz
        paperatlas eval report --db venue.db --areas ICLR 2024
        paperatlas eval report --db corl.db --venue CoRL --raw corl2021.json --raw corl2022.json
    """

    from paperatlas.library import Library

    out: dict[str, Any] = {}
    if papers:
        # the evaluation's vectors live apart from the everyday cache, and are reused by every run
        settings.put_default("vector_cache", str(Path.home() / ".cache" / "paperatlas" / "eval" / "vectors.sqlite"))
        names = [n.strip() for n in embedders.split(",") if n.strip()]
        out["themes_on_real_vectors"] = real_vectors_agreement(
            papers, embedders=names, progress=lambda s: click.echo(s, err=True)
        )
    if not (areas or raw):
        if not out:
            raise click.UsageError("give --papers FILE, or --db DB with --areas VENUE YEAR and/or --venue V --raw FILE")
        click.echo(json.dumps(out, indent=1, ensure_ascii=False))
        return
    if not db_path:
        raise click.UsageError("--areas and --raw need --db (a library with its topics built)")
    with Library(db_path, create=False) as lib:
        if areas:
            out["themes_vs_areas"] = theme_agreement(lib, areas[0], int(areas[1]))
        if raw:
            if not venue:
                raise click.UsageError("--raw needs --venue")
            out["trends_vs_raw"] = trends_check(lib, venue, raw)
    click.echo(json.dumps(out, indent=1, ensure_ascii=False))
