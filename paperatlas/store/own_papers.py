"""A reader's own papers: what they wrote, kept apart from the library's papers, with their vectors.

They make the reader's profile (`import-reader --author` / `--own`) and are never listed, searched
or counted as the library's papers. Written in SQLite's dialect like the rest of the store;
PostgresStore runs it through its translator.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .personal import _HasConn


@dataclass
class OwnPaper:
    """One paper a reader wrote, as it came in (OpenAlex work or BibTeX entry)."""

    key: str  # the OpenAlex work id, else the DOI, else the entry's own key
    title: str
    abstract: str = ""
    authors: list[str] = field(default_factory=list)
    venue: str = ""
    year: int | None = None
    keywords: list[str] = field(default_factory=list)
    doi: str = ""
    openalex_id: str = ""
    source: str = ""  # where it came from: "openalex A5023888391", "bibtex my.bib"
    added_at: str = ""

    @property
    def text(self) -> str:
        """What is embedded: the same title-and-abstract text the library's papers embed."""
        return f"{self.title}. {self.abstract}".strip() if self.abstract else self.title

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "abstract": self.abstract,
            "authors": self.authors,
            "venue": self.venue,
            "year": self.year,
            "keywords": self.keywords,
            "doi": self.doi,
            "openalex_id": self.openalex_id,
            "source": self.source,
            "added_at": self.added_at,
        }


_COLS = "key, title, abstract, authors, venue, year, keywords, doi, openalex_id, source, added_at"


def _row(r: Sequence[Any]) -> OwnPaper:
    return OwnPaper(
        key=r[0],
        title=r[1],
        abstract=r[2] or "",
        authors=json.loads(r[3] or "[]"),
        venue=r[4] or "",
        year=r[5],
        keywords=json.loads(r[6] or "[]"),
        doi=r[7] or "",
        openalex_id=r[8] or "",
        source=r[9] or "",
        added_at=str(r[10] or ""),
    )


class OwnPaperStore:
    """Readers' own papers and their vectors, a part of the store (`store.own_papers`)."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def save(self, reader_id: int, papers: Sequence[OwnPaper]) -> tuple[int, int]:
        """Add or replace these papers of the reader in one transaction. Returns (new, updated);
        a replaced paper whose text changed loses its vectors, so the next embed redoes them."""
        new = updated = 0
        with self._db.transaction() as c:
            for p in papers:
                old = c.execute(
                    "SELECT title, abstract FROM own_papers WHERE reader_id=? AND key=?", (reader_id, p.key)
                ).fetchone()
                if old is None:
                    new += 1
                else:
                    updated += 1
                    if (old[0], old[1] or "") != (p.title, p.abstract):
                        c.execute("DELETE FROM own_vectors WHERE reader_id=? AND key=?", (reader_id, p.key))
                c.execute(
                    "INSERT OR REPLACE INTO own_papers(reader_id, key, title, abstract, authors, venue, year,"
                    " keywords, doi, openalex_id, source, added_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    (
                        reader_id,
                        p.key,
                        p.title,
                        p.abstract,
                        json.dumps(p.authors),
                        p.venue,
                        p.year,
                        json.dumps(p.keywords),
                        p.doi,
                        p.openalex_id,
                        p.source,
                    ),
                )
        return new, updated

    def papers(self, reader_id: int) -> list[OwnPaper]:
        return [
            _row(r)
            for r in self._db.conn.execute(
                f"SELECT {_COLS} FROM own_papers WHERE reader_id=? ORDER BY added_at, key", (reader_id,)
            )
        ]

    def remove(self, reader_id: int, keys: Sequence[str] | None = None) -> int:
        """Forget these papers of the reader (all of them without `keys`). Returns how many went."""
        with self._db.transaction() as c:
            if keys is None:
                c.execute("DELETE FROM own_vectors WHERE reader_id=?", (reader_id,))
                return c.execute("DELETE FROM own_papers WHERE reader_id=?", (reader_id,)).rowcount
            n = 0
            for k in keys:
                c.execute("DELETE FROM own_vectors WHERE reader_id=? AND key=?", (reader_id, k))
                n += c.execute("DELETE FROM own_papers WHERE reader_id=? AND key=?", (reader_id, k)).rowcount
            return n

    def save_vectors(self, reader_id: int, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self._db.transaction() as c:
            for key, v in vectors.items():
                c.execute(
                    "INSERT OR REPLACE INTO own_vectors(reader_id, key, model, vec) VALUES (?, ?, ?, ?)",
                    (reader_id, key, model, np.asarray(v, dtype=np.float32).tobytes()),
                )

    def vectors(self, reader_id: int, model: str) -> dict[str, np.ndarray]:
        """key -> the reader's paper's vector from `model` (papers without one are left out)."""
        return {
            k: np.frombuffer(bytes(b), dtype=np.float32)
            for k, b in self._db.conn.execute(
                "SELECT key, vec FROM own_vectors WHERE reader_id=? AND model=?", (reader_id, model)
            )
        }

    def version(self, reader_id: int) -> tuple[int, str]:
        """(how many, the latest change): what a cache of the reader's own papers is keyed by."""
        row = self._db.conn.execute(
            "SELECT COUNT(*), MAX(added_at) FROM own_papers WHERE reader_id=?", (reader_id,)
        ).fetchone()
        vrow = self._db.conn.execute("SELECT COUNT(*) FROM own_vectors WHERE reader_id=?", (reader_id,)).fetchone()
        return int(row[0] or 0) * 100_003 + int(vrow[0] or 0), str(row[1] or "")
