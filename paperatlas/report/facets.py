"""Which papers have an institution, a country or a presentation type: the filters of search and list.

Built from every paper's `extra` (see docs/fields.md) and rebuilt when the papers change. Names match
folded (case and accents dropped), on the whole name or on a run of its words ("tsinghua" finds
"Tsinghua University", "berkeley" finds "University of California, Berkeley").
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from ..authors.names import fold
from ..errors import PaperatlasError
from ..i18n import gettext
from ..ingest.fields import PRESENTATIONS, presentation_of
from ..store.report import PaperFacts

# a few spellings people type for the countries paperlists names in full (English and Chinese)
COUNTRY_ALIASES = {
    "usa": "united states",
    "us": "united states",
    "u s": "united states",
    "america": "united states",
    "美国": "united states",
    "uk": "united kingdom",
    "britain": "united kingdom",
    "英国": "united kingdom",
    "中国": "china",
    "prc": "china",
    "korea": "south korea",
    "韩国": "south korea",
    "日本": "japan",
    "德国": "germany",
    "法国": "france",
    "加拿大": "canada",
    "新加坡": "singapore",
    "瑞士": "switzerland",
    "以色列": "israel",
    "印度": "india",
    "澳大利亚": "australia",
    "荷兰": "netherlands",
    "香港": "hong kong",
}


def paper_type(status: str, extra: dict[str, Any]) -> str:
    """The presentation type: `extra.presentation`, else read from the decision ("Oral")."""
    pres = str(extra.get("presentation") or "").strip().lower()
    return pres or _presentation(status)


@functools.lru_cache(maxsize=4096)
def _presentation(status: str) -> str:
    """presentation_of, remembered: a report asks it of every paper several times (400,000 regular
    expression searches at 100k papers), and a library spells its decisions a handful of ways."""
    return presentation_of(status)


def institutions_of(extra: dict[str, Any]) -> list[str]:
    """The distinct institutions of a paper's authors, in author order."""
    out: dict[str, None] = {}
    for a in extra.get("affiliations") or []:
        if not isinstance(a, dict):
            continue
        for name in a.get("institutions") or [a.get("institution")]:
            name = " ".join(str(name or "").split())
            if name:
                out.setdefault(name, None)
    return list(out)


def countries_of(extra: dict[str, Any]) -> list[str]:
    """The paper's countries: the source's own list when it has one, else its authors' countries."""
    listed = extra.get("countries")
    if isinstance(listed, list) and listed:
        return [" ".join(str(c).split()) for c in listed if str(c).strip()]
    out: dict[str, None] = {}
    for a in extra.get("affiliations") or []:
        c = " ".join(str(a.get("country") or "").split()) if isinstance(a, dict) else ""
        if c:
            out.setdefault(c, None)
    return list(out)


def check_type(value: str | None) -> str | None:
    """A --type value, lower-cased; an error naming the valid ones for anything else."""
    if value is None or not value.strip():
        return None
    v = value.strip().lower()
    if v.endswith("s") and v[:-1] in PRESENTATIONS:
        v = v[:-1]
    if v not in PRESENTATIONS:
        raise PaperatlasError(
            gettext("unknown presentation type {type!r}", type=value),
            gettext("use one of: {types}", types=", ".join(PRESENTATIONS)),
        )
    return v


class FacetIndex:
    """institution / country / type -> paper ids, over every paper of the library."""

    def __init__(self, facts: Iterable[PaperFacts]) -> None:
        self.institutions: dict[str, set[str]] = {}
        self.countries: dict[str, set[str]] = {}
        self.types: dict[str, set[str]] = {}
        for f in facts:
            for name in institutions_of(f.extra):
                self.institutions.setdefault(name, set()).add(f.id)
            for name in countries_of(f.extra):
                self.countries.setdefault(name, set()).add(f.id)
            t = paper_type(f.status, f.extra)
            if t:
                self.types.setdefault(t, set()).add(f.id)
        self._folded = {
            "institution": [(fold(n), n) for n in self.institutions],
            "country": [(fold(n), n) for n in self.countries],
        }

    def names(self, kind: str, query: str) -> list[str]:
        """The stored institution (or country) names that `query` matches."""
        q = fold(query)
        if kind == "country":
            q = COUNTRY_ALIASES.get(q, COUNTRY_ALIASES.get(query.strip(), q))
        if not q:
            return []
        exact = [n for f, n in self._folded[kind] if f == q]
        return exact or [n for f, n in self._folded[kind] if f" {q} " in f" {f} "]

    def ids(
        self, institution: str | None = None, country: str | None = None, type: str | None = None
    ) -> set[str] | None:
        """Papers passing every given filter; None when no filter is given."""
        out: set[str] | None = None

        def meet(s: set[str]) -> None:
            nonlocal out
            out = s if out is None else out & s

        if institution and institution.strip():
            meet(set().union(*(self.institutions[n] for n in self.names("institution", institution))))
        if country and country.strip():
            meet(set().union(*(self.countries[n] for n in self.names("country", country))))
        t = check_type(type)
        if t:
            meet(set(self.types.get(t, set())))
        return out


def paper_institutions(extra: dict[str, Any]) -> list[tuple[str, str]]:
    """(institution, country) of a paper's authors, distinct, in author order: what its page lists."""
    out: dict[str, str] = {}
    for a in extra.get("affiliations") or []:
        if not isinstance(a, dict):
            continue
        for name in a.get("institutions") or [a.get("institution")]:
            name = " ".join(str(name or "").split())
            if name and not out.get(name):
                out[name] = " ".join(str(a.get("country") or "").split()) if name == a.get("institution") else ""
    return list(out.items())
