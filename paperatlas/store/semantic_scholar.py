"""Semantic Scholar's side of the citation graph: each paper's S2 record (TL;DR, external ids,
counts) and its citation links with S2's `isInfluential` mark, a part of the store (`store.s2`).

Written in SQLite's dialect like the rest of the store; PostgresStore runs it through its translator.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .personal import _HasConn

_CHUNK = 500


@dataclass
class S2Link:
    """One citation link of a paper: `direction` "cited_by" (the other paper cites it) or "cites"."""

    direction: str
    other_s2: str
    other_paper: str | None = None  # the library paper it is, when one matched
    influential: bool = False


@dataclass
class S2Record:
    """A paper's Semantic Scholar record as `enrich --semantic-scholar` found it (matched=False: not found)."""

    paper_id: str
    s2_id: str = ""
    matched: bool = True
    tldr: str = ""
    tldr_model: str = ""
    external_ids: dict[str, Any] = field(default_factory=dict)
    citation_count: int | None = None
    influential_count: int | None = None
    links: list[S2Link] = field(default_factory=list)
    fetched_at: str = ""


class S2Store:
    """Semantic Scholar records and links, a part of the store sharing its connection."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def save(self, records: Sequence[S2Record]) -> None:
        """Write records in one transaction, replacing each paper's earlier record and links."""
        if not records:
            return
        with self._db.transaction() as c:
            for r in records:
                c.execute("DELETE FROM s2_links WHERE paper_id=?", (r.paper_id,))
                c.execute(
                    "INSERT OR REPLACE INTO s2_papers(paper_id, s2_id, matched, tldr, tldr_model, external_ids,"
                    " citation_count, influential_count, fetched_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    (
                        r.paper_id,
                        r.s2_id,
                        1 if r.matched else 0,
                        r.tldr,
                        r.tldr_model,
                        json.dumps(r.external_ids),
                        r.citation_count,
                        r.influential_count,
                    ),
                )
                seen: set[tuple[str, str]] = set()
                for link in r.links:
                    if (link.direction, link.other_s2) in seen:
                        continue
                    seen.add((link.direction, link.other_s2))
                    c.execute(
                        "INSERT INTO s2_links(paper_id, direction, other_s2, other_paper, influential)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (r.paper_id, link.direction, link.other_s2, link.other_paper, 1 if link.influential else 0),
                    )

    def get(self, paper_id: str) -> S2Record | None:
        row = self._db.conn.execute(
            "SELECT paper_id, s2_id, matched, tldr, tldr_model, external_ids, citation_count, influential_count,"
            " fetched_at FROM s2_papers WHERE paper_id=?",
            (paper_id,),
        ).fetchone()
        if row is None:
            return None
        links = [
            S2Link(d, o, p, bool(i))
            for d, o, p, i in self._db.conn.execute(
                "SELECT direction, other_s2, other_paper, influential FROM s2_links WHERE paper_id=?"
                " ORDER BY direction, influential DESC, other_s2",
                (paper_id,),
            )
        ]
        return S2Record(
            row[0],
            row[1] or "",
            bool(row[2]),
            row[3] or "",
            row[4] or "",
            json.loads(row[5] or "{}"),
            row[6],
            row[7],
            links,
            str(row[8] or ""),
        )

    def fetched_at(self, paper_ids: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        ids = list(paper_ids)
        for i in range(0, len(ids), _CHUNK):
            chunk = ids[i : i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for pid, at in self._db.conn.execute(
                f"SELECT paper_id, fetched_at FROM s2_papers WHERE paper_id IN ({marks})", chunk
            ):
                out[pid] = str(at or "")
        return out

    def influential_citers(self, paper_id: str) -> list[str]:
        """Library papers S2 marks as citing `paper_id` influentially: its own links, and the links of
        library papers whose reference lists S2 gave (the same mark seen from the citing side)."""
        rows = self._db.conn.execute(
            "SELECT other_paper FROM s2_links WHERE paper_id=? AND direction='cited_by' AND influential=1"
            " AND other_paper IS NOT NULL"
            " UNION SELECT paper_id FROM s2_links WHERE other_paper=? AND direction='cites' AND influential=1",
            (paper_id, paper_id),
        )
        return sorted({r[0] for r in rows if r[0] and r[0] != paper_id})
