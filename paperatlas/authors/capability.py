"""Authors as `lib.authors`: one author's papers, co-authors and topics, and the name index that
`author:"Name"` filters use."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..contrib import Filter
from ..errors import NotFound
from ..models import Paper
from .affiliations import author_institutions
from .index import AuthorIndex
from .names import split_author_filters

if TYPE_CHECKING:
    from ..core import LibraryCore


class Authors:
    """The library's authors.

    Example:
        >>> lib.authors.get("P. Liang")["names"]  # doctest: +SKIP
        ['Percy Liang']
    """

    def __init__(self, lib: LibraryCore) -> None:
        self._store = lib.store
        self._index: tuple[Any, AuthorIndex] | None = None
        self._lock = threading.Lock()  # one rebuild when several requests find the index stale

    @staticmethod
    def filters() -> list[Filter]:
        """author: a query may also hold author:"Name" (split_query)."""
        return [
            Filter(
                "author",
                str,
                'only papers by this author; case, accents and initials are forgiven ("P. Liang"). '
                'The query may also hold author:"Name"; a query of only that lists the author\'s papers',
                "authors",
                lambda lib, v: lib.authors.index().paper_ids(v),
                metavar="NAME",
                example="Percy Liang",
            )
        ]

    @staticmethod
    def split_query(text: str) -> tuple[str, list[tuple[str, str]]]:
        """The query without its author:"Name" filters, and those filters as (filter, value) pairs."""
        rest, names = split_author_filters(text)
        return rest, [("author", n) for n in names]

    def explain_empty(self, values: dict[str, Any]) -> str:
        """Why the author filter kept nothing, with the fix ("" when it is not why)."""
        name = values.get("author")
        if name and not self.index().names(name):
            return "no author by that name here: check the spelling, or give the family name alone"
        return ""

    def index(self) -> AuthorIndex:
        """Every author name and their papers; rebuilt when the papers change."""
        version = self._store.data_version()
        cached = self._index
        if cached is None or cached[0] != version:
            with self._lock:
                cached = self._index
                if cached is None or cached[0] != version:
                    cached = self._index = (version, AuthorIndex(self._store.iter_authors()))
        return cached[1]

    def get(self, name: str, limit_coauthors: int = 30) -> dict[str, Any]:
        """One author's papers in this library, their co-authors and topics.

        `name` is matched as in search (case, accents and initials forgiven); `names` lists the
        spellings it matched. Raises NotFound when no paper has such an author."""
        idx = self.index()
        names = idx.names(name)
        if not names:
            raise NotFound(
                f"no author matching {name!r} in this library", "check the spelling, or try the family name alone"
            )
        ids = {pid for n in names for pid in idx.papers[n]}
        papers = sorted(self._store.get_papers(list(ids)).values(), key=lambda p: (-(p.year or 0), p.venue, p.title))
        same = set(names)
        co: dict[str, int] = {}
        for p in papers:
            for a in dict.fromkeys(" ".join(a.split()) for a in p.authors):
                if a and a not in same:
                    co[a] = co.get(a, 0) + 1
        coauthors = sorted(co.items(), key=lambda kv: (-kv[1], kv[0]))[:limit_coauthors]
        return {
            "name": names[0],
            "names": names,
            "papers": papers,
            "institutions": author_institutions(papers, names),
            "coauthors": [{"name": n, "papers": c} for n, c in coauthors],
            "topics": self._topics(papers),
        }

    def _topics(self, papers: Sequence[Paper], limit: int = 8) -> list[dict[str, Any]]:
        """What the papers are about: their map topics when the map is built, else their primary
        areas and keywords, each with how many of the papers it covers."""
        counts: dict[str, int] = {}
        placed = self._store.topics.paper_topics([p.id for p in papers]) if papers else {}
        if placed:
            labels = {t["topic"]: t["label"] for t in self._store.topics.list_topics("coarse")}
            for info in placed.values():
                label = labels.get(info.get("coarse"))
                if label:
                    counts[label] = counts.get(label, 0) + 1
        if not counts:
            for p in papers:
                seen: set[str] = set()
                for t in [str(p.extra.get("primary_area") or ""), *p.keywords]:
                    # ICLR's catch-all area says nothing: "general machine learning (i.e., none of the above)"
                    t = " ".join(t.replace("(i.e., none of the above)", "").split())
                    if t and t.lower() not in seen:
                        seen.add(t.lower())
                        counts[t] = counts.get(t, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].lower()))[:limit]
        return [{"topic": t, "papers": n} for t, n in ranked]
