"""The full text of papers: each paper's reading status, its sections, passages (paragraphs),
captions and reference list, and the keyword index of its passages. The SQL behind `lib.fulltext`.

Written in SQLite's dialect like the rest of the store; PostgresStore runs it through its
translator. The passages' FTS5 index exists on SQLite only: on PostgreSQL a body search is a
LIKE scan of the passages (slower, the same results for a single word).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .personal import _HasConn
from .vector_cache import text_hash


@dataclass
class FulltextStatus:
    paper_id: str
    state: str  # read | failed
    reason: str
    message: str
    fix: str
    sha256: str
    pages: int
    source: str
    backend: str
    updated_at: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class PassageRow:
    rowid: int
    paper_id: str
    section_idx: int
    idx: int
    page: int
    section: str
    text: str
    score: float = 0.0


_STATUS_COLS = "paper_id, state, reason, message, fix, sha256, pages, source, backend, updated_at"


class FulltextStore:
    """The full-text tables, a part of the store (`store.fulltext`) sharing its connection."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    @property
    def _fts(self) -> bool:
        return getattr(self._db, "backend", "sqlite") == "sqlite"

    # -- writing ----------------------------------------------------------------------------
    def put_document(
        self,
        paper_id: str,
        status: dict[str, Any],
        sections: Sequence[dict[str, Any]],
        captions: Sequence[dict[str, Any]],
        references: Sequence[dict[str, Any]],
    ) -> int:
        """Replace a paper's text with a new reading, all in one transaction; returns the passages written.

        sections: {heading, number, page, text_hash, paragraphs: [(page, text)]}."""
        with self._db.transaction() as c:
            self._delete(c, paper_id)
            n = 0
            for si, s in enumerate(sections):
                c.execute(
                    "INSERT INTO fulltext_sections(paper_id, idx, heading, number, page, text_hash) VALUES (?,?,?,?,?,?)",
                    (paper_id, si, s["heading"], s["number"], s["page"], s["text_hash"]),
                )
                for pi, (page, text) in enumerate(s["paragraphs"]):
                    c.execute(
                        "INSERT INTO fulltext_passages(paper_id, section_idx, idx, page, text, text_hash)"
                        " VALUES (?,?,?,?,?,?)",
                        (paper_id, si, pi, page, text, text_hash(text)),
                    )
                    n += 1
            # a paragraph whose words changed loses its vector; one read again unchanged keeps it
            c.execute(
                "DELETE FROM fulltext_vectors WHERE paper_id = ?"
                " AND text_hash NOT IN (SELECT text_hash FROM fulltext_passages WHERE paper_id = ?)",
                (paper_id, paper_id),
            )
            c.executemany(
                "INSERT INTO fulltext_captions(paper_id, idx, kind, label, page, text) VALUES (?,?,?,?,?,?)",
                [(paper_id, i, x["kind"], x["label"], x["page"], x["text"]) for i, x in enumerate(captions)],
            )
            c.executemany(
                "INSERT INTO fulltext_references(paper_id, idx, raw, title, authors, year, cited_id)"
                " VALUES (?,?,?,?,?,?,?)",
                [
                    (
                        paper_id,
                        i,
                        r["raw"],
                        r["title"],
                        json.dumps(r["authors"], ensure_ascii=False),
                        r["year"],
                        r["id"],
                    )
                    for i, r in enumerate(references)
                ],
            )
            if self._fts:
                c.execute(
                    "INSERT INTO passages_fts(rowid, text, section) SELECT p.rowid, p.text, s.heading"
                    " FROM fulltext_passages p JOIN fulltext_sections s"
                    " ON s.paper_id = p.paper_id AND s.idx = p.section_idx WHERE p.paper_id = ?",
                    (paper_id,),
                )
            self._put_status(c, paper_id, status)
        return n

    def put_failure(self, paper_id: str, status: dict[str, Any]) -> None:
        """Record why a paper's PDF could not be read; a text read earlier stays (it is still right)."""
        with self._db.transaction() as c:
            self._put_status(c, paper_id, status)

    def _put_status(self, c: Any, paper_id: str, s: dict[str, Any]) -> None:
        c.execute(
            "INSERT OR REPLACE INTO fulltext_status(paper_id, state, reason, message, fix, sha256, pages, source,"
            " backend, updated_at) VALUES (?,?,?,?,?,?,?,?,?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
            (
                paper_id,
                s["state"],
                s.get("reason", ""),
                s.get("message", ""),
                s.get("fix", ""),
                s.get("sha256", ""),
                s.get("pages", 0),
                s.get("source", ""),
                s.get("backend", ""),
            ),
        )

    def _delete(self, c: Any, paper_id: str) -> None:
        if self._fts:
            c.execute(
                "DELETE FROM passages_fts WHERE rowid IN (SELECT rowid FROM fulltext_passages WHERE paper_id = ?)",
                (paper_id,),
            )
        for table in ("fulltext_passages", "fulltext_sections", "fulltext_captions", "fulltext_references"):
            c.execute(f"DELETE FROM {table} WHERE paper_id = ?", (paper_id,))

    def rebuild_index(self) -> None:
        """The passages' keyword index from the passages (after rows were copied in)."""
        if not self._fts:
            return
        with self._db.transaction() as c:
            c.execute("DELETE FROM passages_fts")
            c.execute(
                "INSERT INTO passages_fts(rowid, text, section) SELECT p.rowid, p.text, s.heading"
                " FROM fulltext_passages p JOIN fulltext_sections s ON s.paper_id = p.paper_id AND s.idx = p.section_idx"
            )

    # -- reading ----------------------------------------------------------------------------
    def status(self, paper_id: str) -> FulltextStatus | None:
        row = self._db.conn.execute(
            f"SELECT {_STATUS_COLS} FROM fulltext_status WHERE paper_id = ?", (paper_id,)
        ).fetchone()
        return FulltextStatus(*row) if row else None

    def statuses(self, state: str | None = None) -> list[FulltextStatus]:
        sql = f"SELECT {_STATUS_COLS} FROM fulltext_status"
        rows = self._db.conn.execute(
            sql + (" WHERE state = ?" if state else "") + " ORDER BY paper_id", (state,) if state else ()
        )
        return [FulltextStatus(*r) for r in rows]

    def counts(self) -> dict[str, int]:
        """state (read, or the reason a paper failed) -> papers."""
        out: dict[str, int] = {}
        for state, reason, n in self._db.conn.execute(
            "SELECT state, reason, count(*) FROM fulltext_status GROUP BY state, reason"
        ):
            out[state if state == "read" else reason or state] = int(n)
        return out

    def read_ids(self) -> set[str]:
        return {r[0] for r in self._db.conn.execute("SELECT paper_id FROM fulltext_status WHERE state = 'read'")}

    def sections(self, paper_id: str) -> list[dict[str, Any]]:
        secs = [
            {"idx": i, "heading": h, "number": n, "page": p, "text_hash": th, "paragraphs": []}
            for i, h, n, p, th in self._db.conn.execute(
                "SELECT idx, heading, number, page, text_hash FROM fulltext_sections WHERE paper_id = ? ORDER BY idx",
                (paper_id,),
            )
        ]
        by_idx = {s["idx"]: s for s in secs}
        for rowid, si, page, text in self._db.conn.execute(
            "SELECT rowid, section_idx, page, text FROM fulltext_passages WHERE paper_id = ? ORDER BY section_idx, idx",
            (paper_id,),
        ):
            if si in by_idx:
                by_idx[si]["paragraphs"].append({"n": int(rowid), "page": page, "text": text})
        return secs

    def captions(self, paper_id: str) -> list[dict[str, Any]]:
        return [
            {"kind": k, "label": lab, "page": p, "text": t}
            for k, lab, p, t in self._db.conn.execute(
                "SELECT kind, label, page, text FROM fulltext_captions WHERE paper_id = ? ORDER BY idx", (paper_id,)
            )
        ]

    def references(self, paper_id: str) -> list[dict[str, Any]]:
        return [
            {"raw": raw, "title": t, "authors": json.loads(a or "[]"), "year": y, "id": cid}
            for raw, t, a, y, cid in self._db.conn.execute(
                "SELECT raw, title, authors, year, cited_id FROM fulltext_references WHERE paper_id = ? ORDER BY idx",
                (paper_id,),
            )
        ]

    def paper_by_doi(self, doi: str) -> str | None:
        """The paper whose record names this DOI (as `extra.doi`), when exactly one does."""
        rows = self._db.conn.execute(
            "SELECT id, extra FROM papers WHERE lower(extra) LIKE ?", (f'%"doi": "{doi.lower()}"%',)
        ).fetchall()
        ids = [pid for pid, extra in rows if str(json.loads(extra or "{}").get("doi", "")).lower() == doi.lower()]
        return ids[0] if len(ids) == 1 else None

    def citing(self, paper_id: str) -> list[str]:
        """The papers whose reference list (read from their PDF) names this one."""
        rows = self._db.conn.execute(
            "SELECT DISTINCT paper_id FROM fulltext_references WHERE cited_id = ? ORDER BY paper_id", (paper_id,)
        )
        return [r[0] for r in rows]

    def passage_count(self) -> int:
        return int(self._db.conn.execute("SELECT count(*) FROM fulltext_passages").fetchone()[0])

    def _rows(self, sql: str, params: Sequence[Any]) -> list[PassageRow]:
        return [PassageRow(*r) for r in self._db.conn.execute(sql, params)]

    _SELECT = (
        "SELECT p.rowid, p.paper_id, p.section_idx, p.idx, p.page, s.heading, p.text{score}"
        " FROM fulltext_passages p JOIN fulltext_sections s ON s.paper_id = p.paper_id AND s.idx = p.section_idx"
    )

    def search(
        self, match: str, words: Sequence[str], limit: int, paper_ids: Sequence[str] | None = None
    ) -> list[PassageRow]:
        """Passages ranked by keyword: `match` is a safe FTS5 expression (SQLite), `words` the plain
        words for the LIKE scan elsewhere; `paper_ids` keeps the passages of those papers only."""
        scope, params = "", []
        if paper_ids is not None:
            ids = list(dict.fromkeys(paper_ids))[:900]
            if not ids:
                return []
            scope = f" AND p.paper_id IN ({','.join('?' * len(ids))})"
            params = ids
        if self._fts:
            sql = (
                self._SELECT.format(score=", bm25(passages_fts) AS sc")
                + " JOIN passages_fts f ON f.rowid = p.rowid WHERE passages_fts MATCH ?"
                + scope
                + " ORDER BY sc LIMIT ?"
            )
            return self._rows(sql, [match, *params, limit])
        like = " AND ".join("lower(p.text) LIKE ?" for _ in words) or "1=1"
        sql = self._SELECT.format(score=", 0.0") + f" WHERE {like}" + scope + " ORDER BY p.paper_id, p.rowid LIMIT ?"
        return self._rows(sql, [f"%{w.lower()}%" for w in words] + params + [limit])

    def passages_by_rowid(self, rowids: Sequence[int]) -> list[PassageRow]:
        """These passages (the ones still stored), in the order asked."""
        ids = list(dict.fromkeys(int(r) for r in rowids))[:900]
        if not ids:
            return []
        rows = self._rows(self._SELECT.format(score=", 0.0") + f" WHERE p.rowid IN ({','.join('?' * len(ids))})", ids)
        at = {r.rowid: r for r in rows}
        return [at[i] for i in ids if i in at]

    # -- passages by meaning: their vectors ---------------------------------------------------
    def fill_hashes(self, batch: int = 2000) -> int:
        """Give passages stored before their text was hashed their hash (short transactions)."""
        done = 0
        while True:
            rows = self._db.conn.execute(
                "SELECT rowid, text FROM fulltext_passages WHERE text_hash = '' LIMIT ?", (batch,)
            ).fetchall()
            if not rows:
                return done
            with self._db.transaction() as c:
                c.executemany(
                    "UPDATE fulltext_passages SET text_hash = ? WHERE rowid = ?",
                    [(text_hash(t), int(r)) for r, t in rows],
                )
            done += len(rows)

    def papers_to_embed(self, model: str, paper_ids: Sequence[str] | None = None) -> list[str]:
        """The papers (of `paper_ids`, or all) with a passage that has no vector from `model`."""
        rows = self._db.conn.execute(
            "SELECT DISTINCT p.paper_id FROM fulltext_passages p LEFT JOIN fulltext_vectors v"
            " ON v.paper_id = p.paper_id AND v.model = ? AND v.text_hash = p.text_hash"
            " WHERE v.paper_id IS NULL",
            (model,),
        )
        todo = {r[0] for r in rows}
        if paper_ids is None:
            return sorted(todo)
        return [pid for pid in dict.fromkeys(paper_ids) if pid in todo]

    def passages_to_embed(self, model: str, paper_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(paper id, text hash, text) of each distinct passage text of these papers without a vector."""
        ids = list(dict.fromkeys(paper_ids))[:900]
        if not ids:
            return []
        rows = self._db.conn.execute(
            "SELECT p.paper_id, p.text_hash, p.text FROM fulltext_passages p LEFT JOIN fulltext_vectors v"
            " ON v.paper_id = p.paper_id AND v.model = ? AND v.text_hash = p.text_hash"
            f" WHERE v.paper_id IS NULL AND p.text_hash != '' AND p.paper_id IN ({','.join('?' * len(ids))})"
            " ORDER BY p.rowid",
            [model, *ids],
        )
        out: dict[tuple[str, str], str] = {}
        for pid, h, text in rows:
            out.setdefault((pid, h), text)
        return [(pid, h, t) for (pid, h), t in out.items()]

    def put_passage_vectors(self, model: str, rows: Sequence[tuple[str, str, Any]]) -> int:
        """Store (paper id, text hash, vector) rows in one short transaction, only those whose passage
        still holds that text (a paper read again while its passages were embedded loses nothing);
        returns the rows stored."""
        import numpy as np

        if not rows:
            return 0
        ids = list(dict.fromkeys(pid for pid, _, _ in rows))
        with self._db.transaction() as c:
            have: set[tuple[str, str]] = set()
            for s in range(0, len(ids), 500):
                part = ids[s : s + 500]
                have.update(
                    (pid, h)
                    for pid, h in c.execute(
                        "SELECT paper_id, text_hash FROM fulltext_passages"
                        f" WHERE paper_id IN ({','.join('?' * len(part))})",
                        part,
                    )
                )
            keep = [
                (pid, model, h, np.asarray(v, dtype=np.float32).tobytes()) for pid, h, v in rows if (pid, h) in have
            ]
            c.executemany(
                "INSERT OR IGNORE INTO fulltext_vectors(paper_id, model, text_hash, vec) VALUES (?,?,?,?)", keep
            )
        return len(keep)

    def passage_vectors(self, model: str, paper_ids: Sequence[str] | None = None) -> tuple[list[int], Any]:
        """(passage rowids, their float32 vectors as rows of one matrix) of `model`, of these papers or all."""
        import numpy as np

        scope, params = "", [model]
        if paper_ids is not None:
            ids = list(dict.fromkeys(paper_ids))[:900]
            if not ids:
                return [], np.zeros((0, 0), dtype=np.float32)
            scope = f" AND p.paper_id IN ({','.join('?' * len(ids))})"
            params += ids
        rowids: list[int] = []
        blobs: list[bytes] = []
        for r, blob in self._db.conn.execute(
            "SELECT p.rowid, v.vec FROM fulltext_passages p JOIN fulltext_vectors v"
            " ON v.paper_id = p.paper_id AND v.text_hash = p.text_hash WHERE v.model = ?" + scope + " ORDER BY p.rowid",
            params,
        ):
            rowids.append(int(r))
            blobs.append(bytes(blob))
        if not blobs:
            return [], np.zeros((0, 0), dtype=np.float32)
        return rowids, np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)

    def saved_ids(self) -> set[str]:
        """The papers some reader saved (liked): what their agenda is made of."""
        return {r[0] for r in self._db.conn.execute("SELECT DISTINCT paper_id FROM feedback WHERE kind = 'like'")}

    def embedded_count(self, model: str) -> int:
        """Passages with a vector from `model`."""
        return int(
            self._db.conn.execute(
                "SELECT count(*) FROM fulltext_passages p JOIN fulltext_vectors v"
                " ON v.paper_id = p.paper_id AND v.text_hash = p.text_hash WHERE v.model = ?",
                (model,),
            ).fetchone()[0]
        )

    def passages_of(self, paper_id: str) -> list[PassageRow]:
        return self._rows(self._SELECT.format(score=", 0.0") + " WHERE p.paper_id = ? ORDER BY p.rowid", (paper_id,))
