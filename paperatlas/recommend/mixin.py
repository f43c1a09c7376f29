"""RecommendMixin: the recommendation methods of Library (implemented in api.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..models import Hit, Paper
from ..store.personal import Reader
from . import api
from .base import DEFAULT_RECOMMENDER
from .importer import ImportReport

ReaderArg = str | Reader | None


class RecommendMixin:
    """Personal recommendations, profile, triage, reading groups, digests (issue 6)."""

    def recommend(self, reader: ReaderArg = None, limit: int = 20, method: str = DEFAULT_RECOMMENDER,
                  offset: int = 0, venue: str | None = None, year: int | None = None, status: str | None = None,
                  include_judged: bool = False, since: str | None = None) -> list[Hit]:
        """Recommendations for a reader, each Hit's `reason` saying why.

        Example:
            >>> lib.set_feedback("me", [some_id], "like"); lib.recommend("me", limit=5)  # doctest: +SKIP
        """
        return api.recommend(self, reader, limit, method, offset, venue, year, status, include_judged, since)

    def profile(self, reader: ReaderArg = None) -> dict[str, Any]:
        """The reader's readable profile (interests with key phrases and example papers)."""
        return api.profile(self, reader)

    def edit_profile(self, reader: ReaderArg = None, **edits: Any) -> dict[str, Any]:
        """Edit the profile: remove=, restore=, add_phrase= (+ interest=), remove_phrase=, rename=,
        preferences=. See api.edit_profile."""
        return api.edit_profile(self, reader, **edits)

    def triage_pair(self, reader: ReaderArg = None, venue: str | None = None,
                    year: int | None = None) -> tuple[Paper, Paper] | None:
        """The next "A or B?" pair (dueling-bandit choice), or None when none is left."""
        return api.triage_pair(self, reader, venue, year)

    def triage_choose(self, reader: ReaderArg, winner: str, loser: str) -> None:
        """Record the reader's answer to a triage pair."""
        api.triage_choose(self, reader, winner, loser)

    def triage_neither(self, reader: ReaderArg, a: str, b: str) -> None:
        """Record that the reader wants neither paper of a triage pair (both rank lower)."""
        api.triage_neither(self, reader, a, b)

    def group_list(self, readers: Sequence[str], n: int = 10, method: str = "nash",
                   venue: str | None = None, year: int | None = None) -> dict[str, Any]:
        """A reading-group list fair to every member (Nash welfare of Borda scores)."""
        return api.group_list(self, readers, n, method, venue=venue, year=year)

    def digest(self, reader: ReaderArg = None, since: str | None = None, limit: int = 20,
               format: str = "markdown", link: str = "") -> str:
        """Unseen, unjudged recommendations as markdown, html or an Atom feed."""
        return api.digest(self, reader, since, limit, format, link)

    def saved_search_feed(self, reader: ReaderArg, name_or_id: str | int, limit: int = 20, link: str = "") -> str:
        """An Atom feed of a saved search's unseen results."""
        return api.saved_search_feed(self, reader, name_or_id, limit, link)

    def import_reader(self, reader: ReaderArg, path: str | Path, format: str | None = None) -> ImportReport:
        """Like the papers of a reference file (Zotero's CSL-JSON, RIS, BibTeX, Zotero RDF, or a list of
        titles / ids); report what is not in the library. `format` is detected from the content unless given."""
        return api.import_reader(self, reader, path, format)

    def tag(self, reader: ReaderArg, paper_ids: Sequence[str], tag: str, remove: bool = False) -> None:
        api.tag(self, reader, paper_ids, tag, remove)

    def note(self, reader: ReaderArg, paper_id: str, text: str) -> None:
        """Set (or, with empty text, clear) the reader's note on a paper."""
        api.note(self, reader, paper_id, text)
