"""The conference report: themes, what rose and faded, who is there, how it was judged (`lib.report`).

    >>> rep = lib.report.build(venue="CoRL", years=[2023, 2024, 2025])  # doctest: +SKIP
    >>> rep.to_dict()["trends"]["rising"]  # doctest: +SKIP

Figures come from the papers' fields (docs/fields.md) and the stored topics (`paperatlas topics build`,
built over the whole library, so one theme means the same thing in every year). Renderers:
`report.render` (Markdown, one offline HTML file) and the web page `/report`.
"""

from __future__ import annotations

from ..i18n import Note

import dataclasses
import hashlib
import json
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..contrib import Filter
from ..errors import PaperatlasError
from ..files import swap_in
from ..i18n import gettext
from ..store.report import PaperFacts
from .facets import FacetIndex, check_type
from .figures import ConferenceReport, ThemeInput, build_report, extractive_description

#: bump when the figures change shape or meaning: a kept report of another format is computed again
FIGURES_FORMAT = 1

if TYPE_CHECKING:
    from ..core import LibraryCore
    from ..llm import Llm

__all__ = ["ConferenceReport", "FacetIndex", "Report", "parse_years"]


def parse_years(text: str | Sequence[int] | None) -> list[int]:
    """ "2023", "2019-2025", "2021,2023-2024" (or a list of ints) -> sorted years; an error names the fix."""
    if text is None or text == "":
        return []
    if not isinstance(text, str):
        return sorted({int(y) for y in text})
    years: set[int] = set()
    for part in text.replace(" ", "").split(","):
        lo, sep, hi = part.partition("-")
        if not (lo.isdigit() and (not sep or hi.isdigit())):
            raise PaperatlasError(
                gettext("bad years {years!r}", years=text),
                gettext("give a year, a range or a list, e.g. 2024, 2019-2025 or 2021,2023"),
            )
        a, b = sorted((int(lo), int(hi) if sep else int(lo)))  # 2025-2019 is 2019-2025
        if not (1950 <= a <= b <= 2100):
            raise PaperatlasError(
                gettext("bad years {years!r}", years=text),
                gettext("give years between 1950 and 2100, the smaller first, e.g. 2019-2025"),
            )
        years.update(range(a, b + 1))
    return sorted(years)


class Report:
    """The report capability of a library: its figures, and the institution / country / type filters."""

    def __init__(self, lib: LibraryCore, llm: Llm | None = None) -> None:
        self.lib = lib
        self.llm = llm  # written theme summaries, when an endpoint is configured
        self._lock = threading.Lock()
        self._facets: tuple[Any, FacetIndex] | None = None

    # -- the filters -----------------------------------------------------------------------
    @staticmethod
    def filters() -> list[Filter]:
        """institution, country and type: read from the fields of docs/fields.md."""
        return [
            Filter(
                "institution",
                str,
                'only papers with an author at this institution ("tsinghua" finds Tsinghua University; docs/fields.md)',
                "report",
                lambda lib, v: lib.report.filter_ids(institution=v),
                metavar="NAME",
                example="Tsinghua",
            ),
            Filter(
                "country",
                str,
                'only papers with an author in this country ("China", "USA")',
                "report",
                lambda lib, v: lib.report.filter_ids(country=v),
                max_length=100,
                metavar="NAME",
                example="China",
            ),
            Filter(
                "type",
                str,
                "only this presentation type",
                "report",
                lambda lib, v: lib.report.filter_ids(type=v),
                choices=("oral", "spotlight", "poster", "highlight"),
                example="oral",
            ),
        ]

    def facets(self) -> FacetIndex:
        """institution / country / type -> paper ids; rebuilt when the papers change."""
        version = self.lib.store.data_version()
        with self._lock:
            if self._facets is None or self._facets[0] != version:
                self._facets = (version, FacetIndex(self.lib.store.report.iter_facts()))
            return self._facets[1]

    def version(self) -> tuple[Any, ...]:
        """Changes when the papers change or the topics are rebuilt: a key for caches of built reports."""
        return (*self.lib.store.data_version(), (self.lib.store.topics.topics_meta() or {}).get("built_at"))

    def explain_empty(self, values: dict[str, Any]) -> str:
        """Why the institution / country filter kept nothing, with the fix ("" when it is not why)."""
        for kind in ("institution", "country"):
            name = values.get(kind)
            if name and not self.facets().names(kind, name):
                return (
                    f"no paper here names the {kind} {name!r}: affiliations come with paperlists files "
                    "(docs/fields.md); check the spelling"
                )
        return ""

    def filter_ids(
        self, institution: str | None = None, country: str | None = None, type: str | None = None
    ) -> set[str] | None:
        """Ids passing the filters, or None when none is given (everything passes)."""
        check_type(type)
        if not any(x and str(x).strip() for x in (institution, country, type)):
            return None
        return self.facets().ids(institution, country, type)

    # -- the report -------------------------------------------------------------------------
    def papers_in(self, venue: str | None = None, years: Sequence[int] = ()) -> list[PaperFacts]:
        v = (venue or "").strip().lower()
        ys = set(years)
        return [
            f
            for f in self.lib.store.report.iter_facts()
            if (not v or f.venue.lower() == v) and (not ys or f.year in ys)
        ]

    def build(
        self,
        venue: str | None = None,
        years: Sequence[int] | str | None = None,
        describe: bool = True,
        summaries: str = "cached",
    ) -> ConferenceReport:
        """The report of one venue (any venue when None) over `years` (all years when empty).

        `summaries`: each theme's written label and sentence (en and zh) from the language model:
        "auto" asks the configured endpoint for those not cached yet, "cached" shows stored ones only
        (sends nothing: the web page and MCP tool), "off" leaves them out (report.summaries).

        Raises PaperatlasError (with the fix) when nothing is in scope or the topics were never built.
        """
        ys = parse_years(years)  # type: ignore[arg-type]
        store = self.lib.store
        scope = ((venue or "").lower(), ys, describe)
        key = self._figures_key(scope)
        rep = self._kept_figures(scope, key)
        if rep is None:
            rep = self._figures(venue, ys, describe)
            self._keep_figures(scope, key, rep)
        meta = store.topics.topics_meta() or {}
        have_topics = bool(meta)
        rep.scope["topics_built_at"] = meta.get("built_at", "")
        rep.scope["themes_missing"] = not have_topics
        if not have_topics:
            rep.notes.append(Note("the themes and their trends are not in this report: they were not built yet"))
            rep.hints.append(Note("run `paperatlas embed`, then `paperatlas topics build`, to add the themes"))
        elif meta.get("data_version") != list(store.data_version()):
            rep.notes.append(Note("papers changed since the themes were built"))
            rep.hints.append(Note("`paperatlas topics build` refreshes the themes"))
        if self.llm is not None and summaries != "off" and rep.themes:
            from .summaries import summarise_themes

            rep.notes += summarise_themes(self.lib, self.llm, rep.themes, summaries, rep.hints)
        rep.cited = self._most_cited(list(rep.titles))
        rep.cited_themes = self._rising_themes(rep.themes) if rep.cited else []
        if not rep.cited and getattr(self.lib, "citations", None) is not None:
            rep.hints.append(
                Note(
                    "the most cited papers and the themes rising by citations are not in this report: "
                    "run `paperatlas enrich --all` to add them"
                )
            )
        return rep

    def _figures(self, venue: str | None, ys: list[int], describe: bool) -> ConferenceReport:
        """The report's figures over its papers and their themes (all but the notes on the topics'
        age, the themes' written summaries and the citations, which `build` adds each time)."""
        store = self.lib.store
        papers = self.papers_in(venue, ys)
        what = " ".join(x for x in (venue or "", ",".join(map(str, ys))) if x) or gettext("this library")
        if not papers:
            raise PaperatlasError(
                gettext("no papers for {what}", what=what),
                gettext("`paperatlas stats` lists the venues and years this library holds"),
            )
        # without topics the report comes at once all the same: who is there, how it was judged; the
        # themes and their trends are marked missing with the commands that add them (building them
        # here would embed every paper first: minutes, where the report should take a second)
        have_topics = bool(store.topics.topics_meta())
        rows = store.topics.list_topics("coarse") if have_topics else []
        themes = [ThemeInput(r["topic"], r["label"], list(r["phrases"])) for r in rows]
        stored_central = {r["topic"]: list(r["central"]) for r in rows}
        placed = store.topics.paper_topics([p.id for p in papers]) if have_topics else {}
        assignment = {pid: int(v["coarse"]) for pid, v in placed.items()}
        vectors = self.lib.vectors([pid for pid in assignment]) if assignment else {}

        def central(topic: int, ids: list[str]) -> list[str]:
            """The theme's papers in scope, nearest to their own centroid first."""
            have = [i for i in ids if i in vectors]
            if len(have) < 2:
                first = [i for i in stored_central.get(topic, []) if i in set(ids)]
                return first + sorted(set(ids) - set(first))
            m = np.stack([vectors[i] for i in have]).astype(np.float32)
            c = m.mean(axis=0)
            score = m @ (c / (np.linalg.norm(c) or 1.0))
            ranked = [have[k] for k in np.argsort(-score, kind="stable")]
            return ranked + sorted(set(ids) - set(have))

        def description(t: dict[str, Any]) -> dict[str, str]:
            central_papers = self.lib.get_many(t["central"][:5])
            return extractive_description(
                t["phrases"] or t["label"].split(", "), [(p.id, p.abstract) for p in central_papers]
            )

        # the venue as the papers spell it ("corl" asked, "CoRL" stored)
        spelled = Counter(p.venue for p in papers).most_common(1)[0][0] if venue else ""
        scope = {"venue": spelled, "years": ys}
        rep = build_report(scope, papers, assignment, themes, central, description if describe else None)
        rep.titles = {p.id: p.title for p in papers}
        return rep

    def _figures_key(self, scope: tuple[Any, ...]) -> str:
        """What the figures are computed from: the papers (every one's content: kept across processes,
        where data_version's one-second timestamp is not enough), the topics' build, the vectors."""
        store = self.lib.store
        emb = self.lib.embedder.id
        meta = sorted((store.topics.topics_meta() or {}).items())
        version = (store.data_version(), store.papers_signature(), emb, store.vector_count(emb))
        return repr((FIGURES_FORMAT, scope, meta, version))

    def _folder(self, scope: tuple[Any, ...]) -> Path | None:
        root = self.lib.engine.index_folder("report")
        # one kept report per scope (venue, years): another scope does not push it out
        return None if root is None else root / hashlib.sha1(repr(scope).encode()).hexdigest()[:16]

    def _kept_figures(self, scope: tuple[Any, ...], key: str) -> ConferenceReport | None:
        """The figures kept by an earlier process for this scope, if computed from what is here now."""
        folder = self._folder(scope)
        if folder is None:
            return None
        try:
            if (folder / "key.txt").read_text(encoding="utf-8") != key:
                return None
            d = json.loads((folder / "report.json").read_text(encoding="utf-8"))
            d["notes"] = [Note(m, **p) for m, p in d["notes"]]
            d["hints"] = [Note(m, **p) for m, p in d["hints"]]
            return ConferenceReport(**d)
        except (OSError, ValueError, TypeError, KeyError):
            return None  # none kept yet, or of another shape: computed again

    def _keep_figures(self, scope: tuple[Any, ...], key: str, rep: ConferenceReport) -> None:
        """Keep the figures for the next process (seconds to compute at 100k papers): in the library's
        index folder, written whole or not at all."""
        folder = self._folder(scope)
        if folder is None:
            return
        # its fields as they are (asdict would deep-copy every id list: seconds at 100k papers)
        d = {f.name: getattr(rep, f.name) for f in dataclasses.fields(rep)}
        for k in ("notes", "hints"):
            d[k] = [[getattr(n, "msgid", str(n)), getattr(n, "params", {})] for n in getattr(rep, k)]

        def write(tmp: Path) -> None:
            (tmp / "report.json").write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
            (tmp / "key.txt").write_text(key, encoding="utf-8")

        swap_in(folder, write)

    def _rising_themes(self, themes: list[dict[str, Any]], most: int = 5, least: int = 2) -> list[dict[str, Any]]:
        """The themes whose papers gather citations fastest: citations of this year and the last per
        paper with a count (citation velocity), so a large theme does not win by its size alone.
        Themes with fewer than `least` counted papers are left out (one paper is not a theme's pace)."""
        citations = getattr(self.lib, "citations", None)
        if citations is None or not themes:
            return []
        ids = [pid for t in themes for pid in t.get("ids", [])]
        counted = citations.citation_counts(ids)
        recent = citations.rising(list(counted))
        rows = []
        for t in themes:
            have = [pid for pid in t.get("ids", []) if pid in counted]
            if len(have) < least:
                continue
            total = sum(recent.get(pid, 0.0) for pid in have)
            rows.append(
                {
                    "topic": t["topic"],
                    "label": t["label"],
                    "velocity": round(total / len(have), 2),
                    "recent": int(total),
                    "cited_by_count": int(sum(counted[pid] for pid in have)),
                    "papers": len(have),
                    "fastest": sorted(have, key=lambda pid: (-recent.get(pid, 0.0), pid))[:3],
                }
            )
        rows.sort(key=lambda r: (-r["velocity"], r["topic"]))
        return [r for r in rows if r["recent"] > 0][:most]

    def _most_cited(self, ids: list[str], most: int = 10) -> list[dict[str, Any]]:
        """The most cited papers in scope, with their recent citations (none before `enrich`)."""
        citations = getattr(self.lib, "citations", None)
        if citations is None:
            return []
        counts = citations.citation_counts(ids)
        top = sorted(counts, key=lambda pid: (-counts[pid], pid))[:most]
        recent = citations.rising(top)
        return [{"id": pid, "cited_by_count": int(counts[pid]), "recent": int(recent.get(pid, 0))} for pid in top]
