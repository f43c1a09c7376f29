"""The citation graph's tables: each paper's OpenAlex work and the works it references.

Written in SQLite's dialect like the rest of the store; PostgresStore runs it through its translator.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .personal import _HasConn

_CHUNK = 500  # ids per IN (...) list: far below SQLite's and PostgreSQL's parameter limits


@dataclass
class CitationRecord:
    """One paper's OpenAlex work as `enrich` matched it (matched=False: looked up, not found)."""

    paper_id: str
    openalex_id: str = ""
    matched: bool = True
    method: str = ""  # doi | arxiv | title | fetched
    score: float | None = None  # the title similarity for a title match; 1.0 for an id match
    cited_by_count: int | None = None
    counts_by_year: list[dict[str, int]] = field(default_factory=list)
    referenced_works: list[str] = field(default_factory=list)
    related_works: list[str] = field(default_factory=list)
    fetched_at: str = ""


_COLS = "paper_id, openalex_id, matched, method, score, cited_by_count, counts_by_year, related_works, fetched_at"


def _chunks(ids: Sequence[str]) -> Iterable[list[str]]:
    for i in range(0, len(ids), _CHUNK):
        yield list(ids[i : i + _CHUNK])


class CitationStore:
    """Each paper's OpenAlex work and its references, a part of the store (`store.citations`)."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def save(self, records: Sequence[CitationRecord]) -> None:
        """Write records in one transaction, replacing each paper's earlier record and references."""
        if not records:
            return
        with self._db.transaction() as c:
            for r in records:
                c.execute("DELETE FROM citation_refs WHERE paper_id=?", (r.paper_id,))
                c.execute(
                    "INSERT OR REPLACE INTO citation_works(paper_id, openalex_id, matched, method, score,"
                    " cited_by_count, counts_by_year, related_works, references_count, fetched_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    (
                        r.paper_id,
                        r.openalex_id,
                        1 if r.matched else 0,
                        r.method,
                        r.score,
                        r.cited_by_count,
                        json.dumps(r.counts_by_year),
                        json.dumps(r.related_works),
                        len(r.referenced_works),
                    ),
                )
                for w in dict.fromkeys(r.referenced_works):
                    c.execute("INSERT INTO citation_refs(paper_id, work_id) VALUES (?, ?)", (r.paper_id, w))

    def fetched_at(self, paper_ids: Sequence[str]) -> dict[str, str]:
        """When each of these papers was last looked up (papers never looked up are left out)."""
        out: dict[str, str] = {}
        for chunk in _chunks(list(paper_ids)):
            marks = ",".join("?" * len(chunk))
            for pid, at in self._db.conn.execute(
                f"SELECT paper_id, fetched_at FROM citation_works WHERE paper_id IN ({marks})", chunk
            ):
                out[pid] = str(at or "")
        return out

    def get(self, paper_id: str) -> CitationRecord | None:
        row = self._db.conn.execute(f"SELECT {_COLS} FROM citation_works WHERE paper_id=?", (paper_id,)).fetchone()
        if row is None:
            return None
        refs = [
            w
            for (w,) in self._db.conn.execute(
                "SELECT work_id FROM citation_refs WHERE paper_id=? ORDER BY work_id", (paper_id,)
            )
        ]
        return _record(row, refs)

    def papers_of_works(self, work_ids: Sequence[str]) -> dict[str, str]:
        """OpenAlex work id -> the library paper matched to it (for the works that have one)."""
        out: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(work_ids))):
            marks = ",".join("?" * len(chunk))
            for pid, wid in self._db.conn.execute(
                f"SELECT paper_id, openalex_id FROM citation_works WHERE matched=1 AND openalex_id IN ({marks})"
                " ORDER BY paper_id",
                chunk,
            ):
                out.setdefault(wid, pid)
        return out

    def citing_papers(self, work_id: str) -> list[str]:
        """The library papers whose reference lists name `work_id`."""
        return [
            pid
            for (pid,) in self._db.conn.execute(
                "SELECT paper_id FROM citation_refs WHERE work_id=? ORDER BY paper_id", (work_id,)
            )
        ]

    def references_of(self, paper_ids: Sequence[str]) -> dict[str, list[str]]:
        """paper id -> the works its reference list names (papers without one are left out)."""
        out: dict[str, list[str]] = {}
        for chunk in _chunks(list(dict.fromkeys(paper_ids))):
            marks = ",".join("?" * len(chunk))
            for pid, wid in self._db.conn.execute(
                f"SELECT paper_id, work_id FROM citation_refs WHERE paper_id IN ({marks}) ORDER BY paper_id, work_id",
                chunk,
            ):
                out.setdefault(pid, []).append(wid)
        return out

    def papers_citing_any(self, work_ids: Sequence[str]) -> dict[str, int]:
        """paper id -> how many of `work_ids` its reference list names (bibliographic coupling)."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(dict.fromkeys(work_ids))):
            marks = ",".join("?" * len(chunk))
            for pid, n in self._db.conn.execute(
                f"SELECT paper_id, COUNT(*) FROM citation_refs WHERE work_id IN ({marks}) GROUP BY paper_id", chunk
            ):
                out[pid] = out.get(pid, 0) + int(n)
        return out

    def cited_by_counts(self, paper_ids: Sequence[str]) -> dict[str, int]:
        """paper id -> its OpenAlex cited-by count (papers without one are left out)."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(paper_ids)):
            marks = ",".join("?" * len(chunk))
            for pid, n in self._db.conn.execute(
                f"SELECT paper_id, cited_by_count FROM citation_works WHERE matched=1 AND cited_by_count IS NOT NULL"
                f" AND paper_id IN ({marks})",
                chunk,
            ):
                out[pid] = int(n)
        return out

    def recent_citations(self, paper_ids: Sequence[str], since_year: int) -> dict[str, int]:
        """paper id -> citations counted in `since_year` and later (from counts_by_year)."""
        out: dict[str, int] = {}
        for chunk in _chunks(list(paper_ids)):
            marks = ",".join("?" * len(chunk))
            for pid, years in self._db.conn.execute(
                f"SELECT paper_id, counts_by_year FROM citation_works WHERE matched=1 AND paper_id IN ({marks})", chunk
            ):
                counts = json.loads(years or "[]")
                out[pid] = sum(
                    int(c.get("cited_by_count") or 0) for c in counts if int(c.get("year") or 0) >= since_year
                )
        return out

    def graph(self) -> list[tuple[str, str]]:
        """Every (citing paper, cited paper) pair within the library."""
        return [
            (a, b)
            for a, b in self._db.conn.execute(
                "SELECT r.paper_id, w.paper_id FROM citation_refs r JOIN citation_works w"
                " ON w.openalex_id = r.work_id AND w.matched = 1 WHERE r.paper_id <> w.paper_id"
                " ORDER BY r.paper_id, w.paper_id"
            )
        ]

    def most_cited(self, limit: int = 10) -> list[tuple[str, int]]:
        return [
            (pid, int(n))
            for pid, n in self._db.conn.execute(
                "SELECT paper_id, cited_by_count FROM citation_works WHERE matched=1 AND cited_by_count IS NOT NULL"
                " ORDER BY cited_by_count DESC, paper_id LIMIT ?",
                (int(limit),),
            )
        ]

    def counts(self) -> dict[str, int]:
        """How many papers were looked up, and matched by each method."""
        out: dict[str, int] = {}
        for matched, method, n in self._db.conn.execute(
            "SELECT matched, method, COUNT(*) FROM citation_works GROUP BY matched, method"
        ):
            out[method if matched else "unmatched"] = out.get(method if matched else "unmatched", 0) + int(n)
        return out


def _record(row: Sequence[Any], refs: list[str]) -> CitationRecord:
    pid, oid, matched, method, score, cited, years, related, at = row
    return CitationRecord(
        pid,
        oid or "",
        bool(matched),
        method or "",
        score,
        cited,
        json.loads(years or "[]"),
        refs,
        json.loads(related or "[]"),
        str(at or ""),
    )
