"""What the conference report and the institution / country / type filters read: each paper's facts.

Written in SQLite's dialect like the rest of the store; PostgresStore runs it through its translator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from .personal import _HasConn


class PaperFacts(NamedTuple):
    """The columns a report counts, without the texts."""

    id: str
    title: str
    venue: str
    year: int | None
    status: str
    authors: list[str]
    extra: dict[str, Any]


class ReportStore:
    """What the conference report reads, a part of the store (`store.report`) sharing its connection."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def iter_facts(self, batch: int = 20_000) -> Iterator[PaperFacts]:
        """Every paper's venue, year, status, authors and extra fields, in rowid order."""
        cur = self._db.conn.execute("SELECT id, title, venue, year, status, authors, extra FROM papers ORDER BY rowid")
        while rows := cur.fetchmany(batch):
            for pid, title, venue, year, status, authors, extra in rows:
                yield PaperFacts(
                    pid,
                    title or "",
                    venue or "",
                    year,
                    status or "",
                    json.loads(authors or "[]"),
                    json.loads(extra or "{}"),
                )
