"""Bootstrap a reader from their own library: match a reference file to the papers of the library.

Reads what Zotero (and Better BibTeX, Mendeley, JabRef...) export: CSL-JSON, RIS, BibTeX/BibLaTeX,
Zotero RDF, or a plain list of titles / ids (see `paperatlas.refs.readers`). Matching, in order:
an id the library knows (paper id or alias, e.g. an OpenReview forum id), the DOI, the arXiv id,
the URL, the exact title (case, punctuation and spacing ignored), then a close title among the keyword-search
hits (difflib ratio >= 0.9). What does not match is reported, never guessed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..ingest.clean import normalize_key
from ..refs import ids as idmod
from ..refs.readers import Entry, read_entries as _read

if TYPE_CHECKING:
    from ..core import LibraryCore

FUZZY_MIN = 0.9
__all__ = ["Entry", "ImportReport", "match", "read_entries"]


@dataclass
class ImportReport:
    matched: list[tuple[str, str, str]] = field(default_factory=list)  # (entry, paper id, how)
    unmatched: list[str] = field(default_factory=list)
    format: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "matched": [{"entry": e, "id": i, "how": h} for e, i, h in self.matched],
            "unmatched": self.unmatched,
        }

    def summary(self) -> str:
        return f"{len(self.matched)} matched, {len(self.unmatched)} not in the library"


def read_entries(path: str | Path, format: str | None = None) -> list[Entry]:
    """Entries of a reference file: CSL-JSON, RIS, BibTeX, Zotero RDF or a plain list (by content)."""
    return _read(path, format)


def url_key(url: str) -> str:
    """An URL without scheme, "www.", trailing slash or case: http://x.org/a/ == https://www.X.org/a."""
    u = re.sub(r"^[a-z]+://(www\.)?", "", url.strip().lower())
    return u.rstrip("/")


class _Index:
    """DOI, arXiv id, URL and title keys of the library's papers, built once, on first need."""

    def __init__(self, lib: LibraryCore) -> None:
        self.doi: dict[str, str] = {}
        self.arxiv: dict[str, str] = {}
        self.url: dict[str, str] = {}
        self.title: dict[str, str] = {}
        derived: dict[str, str] = {}
        for p in lib.papers():
            d, a = idmod.paper_ids(p)
            if d:
                self.doi.setdefault(d, p.id)
            if a:
                self.arxiv.setdefault(a, p.id)
            if p.url and "://" in p.url:
                self.url.setdefault(url_key(p.url), p.id)
            # a title paperatlas derived from the abstract is matched too (a paper exported to a
            # reference manager and back carries it), after every title a list gave
            (derived if p.title_derived else self.title).setdefault(normalize_key(p.title), p.id)
        for k, pid in derived.items():
            self.title.setdefault(k, pid)


def match(lib: LibraryCore, entries: list[Entry]) -> ImportReport:
    """Match entries to papers of `lib`."""
    report = ImportReport()
    index: _Index | None = None
    for e in entries:
        found = next(((pid, "id") for i in e.ids if (pid := lib.store.resolve_id(i))), None)
        if found is None and (e.doi or e.arxiv or e.title):
            index = index or _Index(lib)
            if e.doi and e.doi in index.doi:
                found = (index.doi[e.doi], "doi")
            elif e.arxiv and (pid := index.arxiv.get(e.arxiv) or lib.store.resolve_id(e.arxiv)):
                found = (pid, "arxiv")
            elif pid := next((index.url[k] for i in e.ids if "://" in i and (k := url_key(i)) in index.url), None):
                found = (pid, "url")
            elif e.title:
                key = normalize_key(e.title)
                found = (index.title[key], "title") if key in index.title else _fuzzy(lib, e.title, key)
        if found:
            report.matched.append((e.text, found[0], found[1]))
        else:
            report.unmatched.append(e.text)
    return report


def _fuzzy(lib: LibraryCore, title: str, key: str) -> tuple[str, str] | None:
    if len(key) < 12:  # too short to tell papers apart by spelling
        return None
    best, best_r = None, 0.0
    for h in lib.search(title, mode="keyword", limit=5):
        r = difflib.SequenceMatcher(None, key, normalize_key(h.paper.title)).ratio()
        if r > best_r:
            best, best_r = h.paper.id, r
    return (best, f"similar title ({best_r:.2f})") if best and best_r >= FUZZY_MIN else None
