"""Bootstrap a reader from their own work: match a BibTeX file or a list of titles/ids to the library.

Matching, in order: an id the library knows (paper id, DOI, arXiv id, OpenReview
forum id, or an alias), the exact title (case, punctuation and spacing ignored), then
a close title among the keyword-search hits (difflib ratio >= 0.9). What does not match
is reported, never guessed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..ingest.clean import normalize_key

FUZZY_MIN = 0.9
_ARXIV = re.compile(r"(\d{4}\.\d{4,5})(v\d+)?")
_FORUM = re.compile(r"forum\?id=([\w\-]+)")
_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)")


@dataclass
class Entry:
    """One thing the reader listed: what it said, and the ids/title to try."""

    text: str
    ids: list[str] = field(default_factory=list)
    title: str = ""


@dataclass
class ImportReport:
    matched: list[tuple[str, str, str]] = field(default_factory=list)  # (entry, paper id, how)
    unmatched: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"matched": [{"entry": e, "id": i, "how": h} for e, i, h in self.matched],
                "unmatched": self.unmatched}

    def summary(self) -> str:
        return f"{len(self.matched)} matched, {len(self.unmatched)} not in the library"


def _ids_in(text: str) -> list[str]:
    out = [text.strip()]
    for rx in (_DOI, _ARXIV, _FORUM):
        out += [m.group(1).rstrip(".,;") for m in rx.finditer(text)]
    return [i for i in dict.fromkeys(out) if i]


def read_entries(path: str | Path) -> list[Entry]:
    """Entries of a BibTeX file (by its content) or of a plain list (one title or id a line)."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    if re.search(r"@\w+\s*\{", text):
        return bibtex_entries(text)
    return [Entry(line.strip(), _ids_in(line), line.strip()) for line in text.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def bibtex_entries(text: str) -> list[Entry]:
    import bibtexparser

    out = []
    for e in bibtexparser.parse_string(text).entries:
        f = {k.lower(): str(v.value) for k, v in e.fields_dict.items()}
        title = re.sub(r"(?<!\\)[{}]", "", f.get("title", "")).strip()
        ids = []
        for k in ("doi", "eprint", "arxiv", "url", "openreview"):
            if f.get(k):
                ids += _ids_in(f[k])
        out.append(Entry(title or e.key, ids, title))
    return out


def match(lib: Any, entries: list[Entry]) -> ImportReport:
    """Match entries to papers of `lib` (a Library)."""
    report = ImportReport()
    by_title: dict[str, str] | None = None
    for e in entries:
        found = next(((pid, "id") for i in e.ids if (pid := lib.store.resolve_id(i))), None)
        if found is None and e.title:
            if by_title is None:  # built only when some entry needs it
                by_title = {}
                for p in lib.papers():
                    if not p.title_derived:
                        by_title.setdefault(normalize_key(p.title), p.id)
            key = normalize_key(e.title)
            if key in by_title:
                found = (by_title[key], "title")
            else:
                found = _fuzzy(lib, e.title, key)
        if found:
            report.matched.append((e.text, found[0], found[1]))
        else:
            report.unmatched.append(e.text)
    return report


def _fuzzy(lib: Any, title: str, key: str) -> tuple[str, str] | None:
    if len(key) < 12:  # too short to tell papers apart by spelling
        return None
    best, best_r = None, 0.0
    for h in lib.search(title, mode="keyword", limit=5):
        r = difflib.SequenceMatcher(None, key, normalize_key(h.paper.title)).ratio()
        if r > best_r:
            best, best_r = h.paper.id, r
    return (best, f"similar title ({best_r:.2f})") if best and best_r >= FUZZY_MIN else None
