"""Fetch positions and subscriptions: the SQL behind `fetch`, `follow`, `unfollow`, `update`.

Written in SQLite's dialect like the rest of the store; PostgresStore runs it through its translator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .personal import _HasConn


@dataclass
class Follow:
    """A saved subscription: `paperatlas update` fetches `source args` with `options`."""

    key: str
    source: str
    args: list[str]
    options: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    last_run_at: str = ""
    last_summary: str = ""
    last_error: str = ""


_FOLLOW_COLS = "key, source, args, options, created_at, last_run_at, last_summary, last_error"


def _follow(row: tuple[Any, ...]) -> Follow:
    return Follow(row[0], row[1], json.loads(row[2]), json.loads(row[3]), *row[4:8])


class SourceStore:
    """Fetch positions and subscriptions, a part of the store (`store.sources`) sharing its connection."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def source_state(self, key: str) -> dict[str, Any]:
        row = self._db.conn.execute("SELECT state FROM source_state WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else {}

    def set_source_state(self, key: str, state: dict[str, Any]) -> None:
        with self._db.transaction() as c:
            c.execute(
                "INSERT OR REPLACE INTO source_state(key, state, updated_at)"
                " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                (key, json.dumps(state)),
            )

    def add_follow(self, key: str, source: str, args: list[str], options: dict[str, Any]) -> bool:
        """Save a subscription; False when it already existed (its options are then replaced)."""
        with self._db.transaction() as c:
            existed = c.execute("SELECT 1 FROM follows WHERE key=?", (key,)).fetchone() is not None
            if existed:
                c.execute("UPDATE follows SET options=? WHERE key=?", (json.dumps(options), key))
            else:
                c.execute(
                    "INSERT INTO follows(key, source, args, options) VALUES (?, ?, ?, ?)",
                    (key, source, json.dumps(args), json.dumps(options)),
                )
        return not existed

    def remove_follow(self, key: str) -> bool:
        with self._db.transaction() as c:
            return c.execute("DELETE FROM follows WHERE key=?", (key,)).rowcount > 0

    def follows(self) -> list[Follow]:
        return [
            _follow(r) for r in self._db.conn.execute(f"SELECT {_FOLLOW_COLS} FROM follows ORDER BY created_at, key")
        ]

    def source_state_updated_at(self, key: str) -> str:
        """When a fetch of `key` last stored its position ("" if it was never fetched)."""
        row = self._db.conn.execute("SELECT updated_at FROM source_state WHERE key=?", (key,)).fetchone()
        return str(row[0] or "") if row else ""

    def record_follow_run(self, key: str, summary: str, error: str, at: str = "") -> None:
        """The outcome of the latest fetch of a followed source (at `at`, an ISO time; default now)."""
        with self._db.transaction() as c:
            if at:
                c.execute(
                    "UPDATE follows SET last_run_at=?, last_summary=?, last_error=? WHERE key=?",
                    (at, summary, error, key),
                )
            else:
                c.execute(
                    "UPDATE follows SET last_run_at=strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), last_summary=?,"
                    " last_error=? WHERE key=?",
                    (summary, error, key),
                )
