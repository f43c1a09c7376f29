"""SQL for personal data: readers, feedback (like / not interested / seen), tags, notes,
triage choices and saved searches: `store.readers`, one part of the store."""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

FEEDBACK_KINDS = ("like", "dislike", "seen")


@dataclass
class Reader:
    id: int
    name: str
    token: str
    preferences: str = ""
    profile: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""

    def public(self) -> dict[str, Any]:
        """Everything but the token."""
        return {"id": self.id, "name": self.name, "preferences": self.preferences, "created_at": self.created_at}


@dataclass
class Feedback:
    paper_id: str
    kind: str
    created_at: str


class _HasConn(Protocol):
    @property
    def conn(self) -> sqlite3.Connection: ...

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


_READER_COLS = "id, name, token, preferences, profile, created_at"


def _utc(t: float) -> str:
    """A time as the sortable UTC text the session rows hold."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _session_hash(sid: str) -> str:
    return hashlib.sha256(sid.encode("utf-8", "surrogatepass")).hexdigest()


def _reader(row: tuple[Any, ...]) -> Reader:
    return Reader(row[0], row[1], row[2], row[3], json.loads(row[4] or "{}"), row[5])


class PersonalStore:
    """The readers' tables, a part of the store (`store.readers`) sharing its connection."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    # -- readers -----------------------------------------------------------------------
    def create_reader(self, name: str) -> Reader:
        token = secrets.token_urlsafe(24)
        with self._db.transaction() as c:
            c.execute("INSERT INTO readers(name, token) VALUES (?, ?)", (name, token))
        r = self.get_reader(name)
        assert r is not None
        return r

    def get_reader(self, name_or_id: str | int) -> Reader | None:
        col = "id" if isinstance(name_or_id, int) else "name"
        row = self._db.conn.execute(f"SELECT {_READER_COLS} FROM readers WHERE {col}=?", (name_or_id,)).fetchone()
        return _reader(row) if row else None

    def reader_by_token(self, token: str) -> Reader | None:
        row = self._db.conn.execute(f"SELECT {_READER_COLS} FROM readers WHERE token=?", (token,)).fetchone()
        return _reader(row) if row else None

    def list_readers(self) -> list[Reader]:
        return [_reader(r) for r in self._db.conn.execute(f"SELECT {_READER_COLS} FROM readers ORDER BY id")]

    def delete_reader(self, reader_id: int) -> None:
        with self._db.transaction() as c:
            c.execute("DELETE FROM readers WHERE id=?", (reader_id,))

    def set_reader_fields(
        self, reader_id: int, preferences: str | None = None, profile: dict[str, Any] | None = None
    ) -> None:
        with self._db.transaction() as c:
            if preferences is not None:
                c.execute("UPDATE readers SET preferences=? WHERE id=?", (preferences, reader_id))
            if profile is not None:
                c.execute(
                    "UPDATE readers SET profile=? WHERE id=?", (json.dumps(profile, ensure_ascii=False), reader_id)
                )

    def reset_token(self, reader_id: int) -> str:
        """A new secret token for the reader: the old one, its sessions and feed URLs stop working."""
        token = secrets.token_urlsafe(24)
        with self._db.transaction() as c:
            c.execute("UPDATE readers SET token=? WHERE id=?", (token, reader_id))
            c.execute("DELETE FROM web_sessions WHERE reader_id=?", (reader_id,))
        return token

    # -- web sessions ------------------------------------------------------------------
    def create_session(self, reader_id: int, max_age: int) -> str:
        """A new web session of the reader, valid for `max_age` seconds; returns its secret id
        (only its hash is stored). Expired sessions of every reader are dropped on the way."""
        sid = secrets.token_urlsafe(18)
        now = time.time()
        with self._db.transaction() as c:
            c.execute("DELETE FROM web_sessions WHERE expires_at < ?", (_utc(now),))
            c.execute(
                "INSERT INTO web_sessions(id_hash, reader_id, expires_at) VALUES (?, ?, ?)",
                (_session_hash(sid), reader_id, _utc(now + max_age)),
            )
        return sid

    def session_is_live(self, reader_id: int, sid: str) -> bool:
        """Whether `sid` is an unexpired session of this reader (not signed out, token not reset)."""
        row = self._db.conn.execute(
            "SELECT 1 FROM web_sessions WHERE id_hash=? AND reader_id=? AND expires_at >= ?",
            (_session_hash(sid), reader_id, _utc(time.time())),
        ).fetchone()
        return row is not None

    def end_session(self, sid: str) -> None:
        with self._db.transaction() as c:
            c.execute("DELETE FROM web_sessions WHERE id_hash=?", (_session_hash(sid),))

    def end_sessions(self, reader_id: int) -> int:
        """End every web session of the reader (sign out everywhere); how many there were."""
        with self._db.transaction() as c:
            return int(c.execute("DELETE FROM web_sessions WHERE reader_id=?", (reader_id,)).rowcount or 0)

    # -- feedback ----------------------------------------------------------------------
    def set_feedback(
        self, reader_id: int, paper_ids: list[str], kind: str, on: bool = True, at: str | None = None
    ) -> None:
        """Set or clear a judgement. 'like' and 'dislike' exclude each other."""
        if kind not in FEEDBACK_KINDS:
            raise ValueError(f"unknown feedback {kind!r}; use one of {', '.join(FEEDBACK_KINDS)}")
        with self._db.transaction() as c:
            for pid in paper_ids:
                if on and kind in ("like", "dislike"):
                    other = "dislike" if kind == "like" else "like"
                    c.execute(
                        "DELETE FROM feedback WHERE reader_id=? AND paper_id=? AND kind=?", (reader_id, pid, other)
                    )
                if on:
                    if at:
                        c.execute(
                            "INSERT OR REPLACE INTO feedback(reader_id, paper_id, kind, created_at)"
                            " VALUES (?, ?, ?, ?)",
                            (reader_id, pid, kind, at),
                        )
                    else:
                        c.execute(
                            "INSERT OR REPLACE INTO feedback(reader_id, paper_id, kind) VALUES (?, ?, ?)",
                            (reader_id, pid, kind),
                        )
                else:
                    c.execute(
                        "DELETE FROM feedback WHERE reader_id=? AND paper_id=? AND kind=?", (reader_id, pid, kind)
                    )

    def feedback(self, reader_id: int, kind: str | None = None) -> list[Feedback]:
        """A reader's judgements, oldest first."""
        q = "SELECT paper_id, kind, created_at FROM feedback WHERE reader_id=?"
        params: list[Any] = [reader_id]
        if kind:
            q += " AND kind=?"
            params.append(kind)
        return [Feedback(*r) for r in self._db.conn.execute(q + " ORDER BY created_at, paper_id", params)]

    def feedback_for_papers(self, reader_id: int, paper_ids: list[str]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for i in range(0, len(paper_ids), 900):
            chunk = paper_ids[i : i + 900]
            q = f"SELECT paper_id, kind FROM feedback WHERE reader_id=? AND paper_id IN ({','.join('?' * len(chunk))})"
            for pid, kind in self._db.conn.execute(q, [reader_id, *chunk]):
                out.setdefault(pid, set()).add(kind)
        return out

    # -- tags and notes ----------------------------------------------------------------
    def add_tag(self, reader_id: int, paper_id: str, tag: str) -> None:
        with self._db.transaction() as c:
            c.execute(
                "INSERT OR IGNORE INTO tags(reader_id, paper_id, tag) VALUES (?, ?, ?)", (reader_id, paper_id, tag)
            )

    def remove_tag(self, reader_id: int, paper_id: str, tag: str) -> None:
        with self._db.transaction() as c:
            c.execute("DELETE FROM tags WHERE reader_id=? AND paper_id=? AND tag=?", (reader_id, paper_id, tag))

    def tags(self, reader_id: int, paper_id: str | None = None) -> dict[str, list[str]]:
        """paper id -> tags (of one paper, or all the reader's)."""
        q = "SELECT paper_id, tag FROM tags WHERE reader_id=?"
        params: list[Any] = [reader_id]
        if paper_id is not None:
            q += " AND paper_id=?"
            params.append(paper_id)
        out: dict[str, list[str]] = {}
        for pid, tag in self._db.conn.execute(q + " ORDER BY created_at, tag", params):
            out.setdefault(pid, []).append(tag)
        return out

    def set_note(self, reader_id: int, paper_id: str, note: str) -> None:
        with self._db.transaction() as c:
            if note.strip():
                c.execute(
                    "INSERT OR REPLACE INTO notes(reader_id, paper_id, note) VALUES (?, ?, ?)",
                    (reader_id, paper_id, note),
                )
            else:
                c.execute("DELETE FROM notes WHERE reader_id=? AND paper_id=?", (reader_id, paper_id))

    def notes(self, reader_id: int) -> dict[str, str]:
        return dict(self._db.conn.execute("SELECT paper_id, note FROM notes WHERE reader_id=?", (reader_id,)))

    # -- triage choices ----------------------------------------------------------------
    def add_choice(self, reader_id: int, winner: str, loser: str) -> None:
        with self._db.transaction() as c:
            c.execute("INSERT INTO choices(reader_id, winner, loser) VALUES (?, ?, ?)", (reader_id, winner, loser))

    def choices(self, reader_id: int) -> list[tuple[str, str, str]]:
        """(winner, loser, created_at), oldest first."""
        return list(
            self._db.conn.execute(
                "SELECT winner, loser, created_at FROM choices WHERE reader_id=? ORDER BY id", (reader_id,)
            )
        )

    # -- saved searches ----------------------------------------------------------------
    def save_search(self, reader_id: int, name: str, query: str, params: dict[str, Any]) -> int:
        with self._db.transaction() as c:
            c.execute(
                "INSERT OR REPLACE INTO saved_searches(reader_id, name, query, params) VALUES (?, ?, ?, ?)",
                (reader_id, name, query, json.dumps(params)),
            )
            return int(
                c.execute("SELECT id FROM saved_searches WHERE reader_id=? AND name=?", (reader_id, name)).fetchone()[0]
            )

    def saved_searches(self, reader_id: int) -> list[dict[str, Any]]:
        return [
            {"id": i, "name": n, "query": q, "params": json.loads(p), "created_at": t}
            for i, n, q, p, t in self._db.conn.execute(
                "SELECT id, name, query, params, created_at FROM saved_searches WHERE reader_id=? ORDER BY id",
                (reader_id,),
            )
        ]

    def delete_saved_search(self, reader_id: int, search_id: int) -> None:
        with self._db.transaction() as c:
            c.execute("DELETE FROM saved_searches WHERE reader_id=? AND id=?", (reader_id, search_id))

    def iter_feedback_all(self) -> Iterator[tuple[int, str, str]]:
        yield from self._db.conn.execute("SELECT reader_id, paper_id, kind FROM feedback")
