"""The figures of a conference report, computed from papers and their topics (pure functions).

Every count keeps the ids of the papers behind it, so each number in every rendering leads to its
papers. Shares are of the papers the figure can be known for: a theme's share is of the papers placed
in a topic, an institution's share is of the papers with a known affiliation; each denominator is in
the report (`placed`, `with_affiliations`, `with_reviews`) so nothing is hidden.
"""

from __future__ import annotations

from ..i18n import Note

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ingest.fields import PRESENTATIONS
from ..store.report import PaperFacts
from .facets import countries_of, institutions_of, paper_type
from .stats import benjamini_hochberg, normal_two_sided_p, trend_z

TOP_INSTITUTIONS = 30
TOP_PAIRS = 15
TOP_AUTHORS = 20
SIGNIFICANCE = 0.05  # on the Benjamini-Hochberg q-value of the trend test
NEW_THEME_EARLIER_SHARE = 0.1  # a theme is new when under 10% of its papers come before the last year
NEW_THEME_MIN_PAPERS = 5


@dataclass
class ThemeInput:
    """A coarse topic as the topic build stored it."""

    topic: int
    label: str
    phrases: list[str] = field(default_factory=list)


@dataclass
class ConferenceReport:
    """A report's figures; `to_dict()` is the one serialiser of --json, the web twin and MCP."""

    scope: dict[str, Any]
    papers: int
    placed: int
    types: dict[str, int]
    type_ids: dict[str, list[str]]
    themes: list[dict[str, Any]]
    institutions: list[dict[str, Any]]
    countries: list[dict[str, Any]]
    collaboration: dict[str, Any]
    authors: list[dict[str, Any]]
    reviews: dict[str, Any]
    trends: dict[str, Any] | None
    notes: list[str] = field(default_factory=list)
    titles: dict[str, str] = field(default_factory=dict)  # id -> title of every paper the report names
    # what the person who makes the report can run to complete it (commands, docs): shown by the CLI and
    # the local web page, never in the shareable files
    hints: list[str] = field(default_factory=list)
    # the most cited papers in scope, by OpenAlex counts (empty before `paperatlas enrich`):
    # [{"id", "cited_by_count", "recent"}], `recent` the citations of this year and the last
    cited: list[dict[str, Any]] = field(default_factory=list)
    # the themes rising fastest by citations (after `paperatlas enrich`): [{"topic", "label", "velocity"
    # (citations this year and last per counted paper), "recent", "cited_by_count", "papers", "fastest"}]
    cited_themes: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self, ids: bool = True) -> dict[str, Any]:
        """The report as JSON. `ids=False` leaves out the id lists behind each count and the titles (a
        compact answer, for the MCP tool): the counts stay, the papers are then found with the filters."""
        d = {
            "scope": self.scope,
            "papers": self.papers,
            "placed": self.placed,
            "types": self.types,
            "type_ids": self.type_ids,
            "themes": self.themes,
            "institutions": self.institutions,
            "countries": self.countries,
            "collaboration": self.collaboration,
            "authors": self.authors,
            "reviews": self.reviews,
            **({"trends": self.trends} if self.trends else {}),
            "notes": self.notes,
            "hints": self.hints,
            "titles": self.titles,
            **({"cited": self.cited} if self.cited else {}),
            **({"cited_themes": self.cited_themes} if self.cited_themes else {}),
        }
        return d if ids else _without_ids(d)


_ID_KEYS = {"ids", "ids_by_year", "highlighted", "type_ids", "titles", "fastest"}


def _without_ids(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _without_ids(x) for k, x in v.items() if k not in _ID_KEYS}
    if isinstance(v, list):
        return [_without_ids(x) for x in v]
    return v


def _share(n: int, d: int) -> float:
    return round(n / d, 4) if d else 0.0


def _mean(xs: Sequence[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def _std(xs: Sequence[float]) -> float | None:
    if not xs:
        return None
    m = sum(xs) / len(xs)
    return round(math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs)), 4)


def rating_of(extra: dict[str, Any]) -> float | None:
    r = extra.get("reviews")
    v = r.get("rating_avg") if isinstance(r, dict) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def citations_of(extra: dict[str, Any]) -> int | None:
    v = extra.get("citations")
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def type_counts(papers: Iterable[PaperFacts]) -> dict[str, int]:
    c = Counter(paper_type(p.status, p.extra) or "unknown" for p in papers)
    return {t: c[t] for t in (*PRESENTATIONS, "unknown") if c.get(t)}


def _counted(
    groups: dict[str, list[str]], known: int, limit: int, extra: Callable[[str], dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0].lower()))[:limit]
    return [
        {
            "name": name,
            "papers": len(ids),
            "share": _share(len(ids), known),
            "ids": ids,
            **(extra(name) if extra else {}),
        }
        for name, ids in ranked
    ]


def _pairs(sets: Iterable[list[str]], limit: int) -> list[dict[str, Any]]:
    pairs: dict[tuple[str, str], list[str]] = {}
    for pid, names in sets:  # type: ignore[misc]
        uniq = sorted(set(names), key=str.lower)
        for i in range(len(uniq)):
            for j in range(i + 1, len(uniq)):
                pairs.setdefault((uniq[i], uniq[j]), []).append(pid)
    ranked = sorted(pairs.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:limit]
    return [{"a": a, "b": b, "papers": len(ids), "ids": ids} for (a, b), ids in ranked]


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def extractive_description(phrases: Sequence[str], abstracts: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The sentence of the theme's central abstracts that holds most of its key phrases, with its paper id:
    {"text", "id"} ({} when no sentence names any phrase)."""
    keys = [p.lower() for p in phrases if p]
    best: tuple[int, int, str, str] | None = None
    for rank, (pid, abstract) in enumerate(abstracts):
        for s in _SENTENCE.split(abstract or ""):
            s = s.strip()
            if not 40 <= len(s) <= 400:
                continue
            low = s.lower()
            hits = sum(1 for k in keys if k in low)
            if hits and (best is None or (hits, -rank) > (best[0], best[1])):
                best = (hits, -rank, s, pid)
    return {"text": best[2], "id": best[3]} if best else {}


def theme_figures(
    theme: ThemeInput, ids: list[str], facts: dict[str, PaperFacts], placed: int, central: list[str]
) -> dict[str, Any]:
    """One theme: size, share, per-type counts, its orals, most cited, reviews and institutions."""
    papers = [facts[i] for i in ids]
    types = type_counts(papers)
    highlighted = [p.id for p in papers if paper_type(p.status, p.extra) in ("oral", "spotlight", "highlight")]
    ratings = [r for r in (rating_of(p.extra) for p in papers) if r is not None]
    cited = sorted(((c, p.id) for p in papers if (c := citations_of(p.extra)) is not None), key=lambda t: (-t[0], t[1]))
    inst: Counter[str] = Counter(n for p in papers for n in institutions_of(p.extra))
    return {
        "topic": theme.topic,
        "label": theme.label,
        "phrases": theme.phrases,
        "papers": len(ids),
        "share": _share(len(ids), placed),
        "ids": ids,
        "types": types,
        "oral_spotlight_share": _share(len(highlighted), len(ids)),
        "highlighted": highlighted,
        "central": central,
        "most_cited": [{"id": i, "citations": c} for c, i in cited[:5]],
        "reviews": {"papers": len(ratings), "rating_avg": _mean(ratings), "rating_std": _std(ratings)},
        "institutions": [{"name": n, "papers": c} for n, c in sorted(inst.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
    }


def trends_of(
    themes: list[dict[str, Any]], facts: dict[str, PaperFacts], years: list[int], placed_by_year: dict[int, int]
) -> dict[str, Any]:
    """Each theme's share per year, its change first -> last year and a test of that change; the
    fastest rising and fading themes and the new ones."""
    rows: list[dict[str, Any]] = []
    totals = [placed_by_year.get(y, 0) for y in years]
    for t in themes:
        per_year = Counter(facts[i].year for i in t["ids"])
        counts = [per_year.get(y, 0) for y in years]
        shares = [_share(c, n) for c, n in zip(counts, totals)]
        z = trend_z(counts, totals, [float(y) for y in years])
        earlier = sum(counts[:-1])
        rows.append(
            {
                "topic": t["topic"],
                "label": t["label"],
                "counts": {str(y): c for y, c in zip(years, counts)},
                "shares": {str(y): s for y, s in zip(years, shares)},
                "change": round(shares[-1] - shares[0], 4),
                "z": round(z, 3),
                "p": normal_two_sided_p(z),
                "new": counts[-1] >= NEW_THEME_MIN_PAPERS and earlier < NEW_THEME_EARLIER_SHARE * sum(counts),
            }
        )
    for r, q in zip(rows, benjamini_hochberg([r["p"] for r in rows])):
        r["p"] = round(r["p"], 6)
        r["q"] = round(q, 6)
        r["significant"] = q < SIGNIFICANCE
    rising = sorted((r for r in rows if r["change"] > 0), key=lambda r: (-r["change"], r["topic"]))[:5]
    fading = sorted((r for r in rows if r["change"] < 0), key=lambda r: (r["change"], r["topic"]))[:5]
    return {
        "years": years,
        "papers": {str(y): n for y, n in zip(years, totals)},
        "themes": rows,
        "rising": [r["topic"] for r in rising],
        "fading": [r["topic"] for r in fading],
        "new": [r["topic"] for r in rows if r["new"]],
        "test": "Cochran-Armitage trend test over the years, two-sided; significant: Benjamini-Hochberg "
        f"q < {SIGNIFICANCE} over the {len(rows)} themes",
    }


def build_report(
    scope: dict[str, Any],
    papers: list[PaperFacts],
    assignment: dict[str, int],
    themes: list[ThemeInput],
    central: Callable[[int, list[str]], list[str]],
    describe: Callable[[dict[str, Any]], dict[str, str]] | None = None,
) -> ConferenceReport:
    """All the figures for the papers in scope.

    Args:
        scope: what the report covers ({"venue", "years"}), copied into the report.
        papers: the papers in scope.
        assignment: paper id -> coarse topic (papers missing from it are not placed).
        themes: the coarse topics with their labels.
        central: (topic, ids in scope) -> those ids, most central first.
        describe: theme figures -> {"text", "id"}, an extractive description.
    """
    facts = {p.id: p for p in papers}
    by_topic: dict[int, list[str]] = {}
    for p in papers:
        t = assignment.get(p.id)
        if t is not None:
            by_topic.setdefault(t, []).append(p.id)
    placed = sum(len(v) for v in by_topic.values())
    notes: list[str] = []
    hints: list[str] = []
    if placed < len(papers) and themes:
        n = len(papers) - placed
        notes.append(
            Note("{n} of {total} papers is in no theme (added after the themes were built)", n=n, total=len(papers))
            if n == 1
            else Note(
                "{n} of {total} papers are in no theme (added after the themes were built)", n=n, total=len(papers)
            )
        )
        hints.append(Note("`paperatlas embed`, then `paperatlas topics build` places them"))
    theme_list = []
    for th in themes:
        ids = by_topic.get(th.topic)
        if not ids:
            continue
        ordered = central(th.topic, ids)
        t = theme_figures(th, ordered, facts, placed, ordered[:5])
        if describe:
            d = describe(t)
            if d:
                t["description"] = d
        theme_list.append(t)
    theme_list.sort(key=lambda t: (-t["papers"], t["topic"]))

    inst_groups: dict[str, list[str]] = {}
    country_groups: dict[str, list[str]] = {}
    country_for: dict[str, Counter[str]] = {}
    with_aff = with_country = multi_country = 0
    for p in papers:
        names, countries = institutions_of(p.extra), countries_of(p.extra)
        with_aff += bool(names)
        with_country += bool(countries)
        multi_country += len(countries) > 1
        for name in names:
            inst_groups.setdefault(name, []).append(p.id)
        for c in countries:
            country_groups.setdefault(c, []).append(p.id)
        for a in p.extra.get("affiliations") or []:
            if isinstance(a, dict) and a.get("institution") and a.get("country"):
                country_for.setdefault(a["institution"], Counter())[a["country"]] += 1

    def inst_country(name: str) -> dict[str, Any]:
        c = country_for.get(name)
        return {"country": c.most_common(1)[0][0] if c else ""}

    institutions = _counted(inst_groups, with_aff, TOP_INSTITUTIONS, inst_country)
    countries = _counted(country_groups, with_country, len(country_groups))
    collaboration = {
        "institution_pairs": _pairs(((p.id, institutions_of(p.extra)) for p in papers), TOP_PAIRS),  # type: ignore[arg-type]
        "country_pairs": _pairs(((p.id, countries_of(p.extra)) for p in papers), TOP_PAIRS),  # type: ignore[arg-type]
        "multi_country_papers": multi_country,
        "multi_country_share": _share(multi_country, with_country),
    }
    author_groups: dict[str, list[str]] = {}
    for p in papers:
        for a in dict.fromkeys(" ".join(a.split()) for a in p.authors):
            if a:
                author_groups.setdefault(a, []).append(p.id)
    authors = [
        {"name": n, "papers": len(ids), "ids": ids}
        for n, ids in sorted(author_groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:TOP_AUTHORS]
    ]
    ratings = {p.id: r for p in papers if (r := rating_of(p.extra)) is not None}
    by_type: dict[str, list[float]] = {}
    for pid, r in ratings.items():
        by_type.setdefault(paper_type(facts[pid].status, facts[pid].extra) or "unknown", []).append(r)
    histogram: dict[int, list[str]] = {}
    for pid, r in ratings.items():
        histogram.setdefault(math.floor(r), []).append(pid)
    reviews = {
        "papers": len(ratings),
        "rating_avg": _mean(list(ratings.values())),
        "rating_std": _std(list(ratings.values())),
        "by_type": {t: {"papers": len(v), "rating_avg": _mean(v)} for t, v in sorted(by_type.items())},
        "histogram": [
            {"from": k, "to": k + 1, "papers": len(histogram[k]), "ids": histogram[k]} for k in sorted(histogram)
        ],
    }
    years = sorted({p.year for p in papers if p.year is not None})
    trends = None
    if len(years) >= 2 and theme_list:
        placed_by_year = Counter(facts[i].year for t in theme_list for i in t["ids"])
        for t in theme_list:  # the papers behind each year's number
            by_year: dict[str, list[str]] = {}
            for i in t["ids"]:
                by_year.setdefault(str(facts[i].year), []).append(i)
            t["ids_by_year"] = {str(y): by_year.get(str(y), []) for y in years}
        trends = trends_of(theme_list, facts, years, placed_by_year)  # type: ignore[arg-type]
    venues: dict[str, set[int]] = {}
    for p in papers:
        if p.venue:
            venues.setdefault(p.venue, set()).update([p.year] if p.year is not None else [])
    scope = {
        **scope,
        "venues_present": {v: sorted(ys) for v, ys in sorted(venues.items())},
        "years_present": years,
        "with_affiliations": with_aff,
        "with_countries": with_country,
        "with_reviews": len(ratings),
    }
    type_ids: dict[str, list[str]] = {}
    for p in papers:
        type_ids.setdefault(paper_type(p.status, p.extra) or "unknown", []).append(p.id)
    type_ids = {t: type_ids[t] for t in (*PRESENTATIONS, "unknown") if t in type_ids}
    return ConferenceReport(
        scope=scope,
        papers=len(papers),
        placed=placed,
        types=type_counts(papers),
        type_ids=type_ids,
        themes=theme_list,
        institutions=institutions,
        countries=countries,
        collaboration=collaboration,
        authors=authors,
        reviews=reviews,
        trends=trends,
        notes=notes,
        hints=hints,
    )
