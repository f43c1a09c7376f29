"""A conference's programme: its events (a paper presented in a session, a room, at a poster) and
what changed between two reads of the feed. The SQL behind `lib.programme`.

Written in SQLite's dialect like the rest of the store; PostgresStore runs it through its translator.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from .personal import _HasConn

EVENT_COLUMNS = (
    "feed",
    "event_id",
    "paper_id",
    "name",
    "type",
    "session",
    "session_id",
    "start_at",
    "end_at",
    "start_utc",
    "end_utc",
    "room",
    "poster_position",
    "poster_number",
    "url",
    "paper_url",
    "authors",
    "withdrawn",
)
_COLS = ", ".join(EVENT_COLUMNS)


def _event(row: Sequence[Any]) -> dict[str, Any]:
    d = dict(zip(EVENT_COLUMNS, row))
    d["authors"] = json.loads(d["authors"] or "[]")
    d["withdrawn"] = bool(d["withdrawn"])
    return d


class ProgrammeStore:
    """The programme's tables (events, feeds, changes), a part of the store (`store.programme`) sharing its connection."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def forum_links(self) -> dict[str, str]:
        """OpenReview forum id -> paper id, for every paper that names its forum: by its id (the
        forum itself, or `venue/forum`), by `extra.openreview_id`, or by an alias."""
        out: dict[str, str] = {}
        for pid, extra in self._db.conn.execute("SELECT id, extra FROM papers"):
            tail = pid.rsplit("/", 1)[-1]
            out.setdefault(tail, pid)
            if "openreview_id" in extra:
                forum = json.loads(extra).get("openreview_id")
                if isinstance(forum, str) and forum:
                    out[forum] = pid
        for alias, pid in self._db.conn.execute("SELECT alias, paper_id FROM aliases"):
            out.setdefault(alias.rsplit("/", 1)[-1], pid)
        return out

    def programme_events(self, feed: str | None = None, include_withdrawn: bool = True) -> list[dict[str, Any]]:
        """Every event (of one feed), in time then poster order."""
        where, params = [], []
        if feed is not None:
            where.append("feed = ?")
            params.append(feed)
        if not include_withdrawn:
            where.append("withdrawn = 0")
        sql = f"SELECT {_COLS} FROM programme_events" + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY start_utc, session_id, poster_number, event_id"
        return [_event(r) for r in self._db.conn.execute(sql, params)]

    def events_for_papers(self, paper_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """paper id -> its (not withdrawn) events in time order."""
        ids = list(dict.fromkeys(paper_ids))
        out: dict[str, list[dict[str, Any]]] = {}
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            q = (
                f"SELECT {_COLS} FROM programme_events WHERE withdrawn = 0 AND paper_id IN"
                f" ({','.join('?' * len(chunk))}) ORDER BY start_utc, event_id"
            )
            for r in self._db.conn.execute(q, chunk):
                e = _event(r)
                out.setdefault(e["paper_id"], []).append(e)
        return out

    def session_events(self, session_id: str) -> list[dict[str, Any]]:
        q = (
            f"SELECT {_COLS} FROM programme_events WHERE session_id = ? AND withdrawn = 0"
            " ORDER BY poster_number, start_utc, event_id"
        )
        return [_event(r) for r in self._db.conn.execute(q, (session_id,))]

    def programme_version(self) -> tuple[int, int]:
        """(events, the last change's id): changes whenever a read of a feed changed anything."""
        row = self._db.conn.execute(
            "SELECT (SELECT count(*) FROM programme_events), (SELECT coalesce(max(id), 0) FROM programme_changes)"
        ).fetchone()
        return int(row[0]), int(row[1])

    def programme_feeds(self) -> list[str]:
        return [r[0] for r in self._db.conn.execute("SELECT DISTINCT feed FROM programme_events ORDER BY feed")]

    def write_programme(
        self,
        feed: str,
        events: Sequence[dict[str, Any]],
        withdrawn: Sequence[str],
        extras: Sequence[tuple[str, dict[str, Any], str]],
        changes: Sequence[dict[str, Any]],
        state: tuple[str, str] | None = None,
    ) -> None:
        """One read of a feed in one transaction: its events (replaced by event id), the events it no
        longer lists marked withdrawn, the linked papers' new `extra` (with their content hash), what
        changed, and with `state` the fetch's position, so a kill leaves either all of it or none."""
        with self._db.transaction() as c:
            if events:
                marks = ",".join("?" * len(EVENT_COLUMNS))
                c.executemany(
                    f"INSERT OR REPLACE INTO programme_events ({_COLS}) VALUES ({marks})",
                    [
                        tuple(
                            json.dumps(e["authors"], ensure_ascii=False)
                            if k == "authors"
                            else int(e[k])
                            if k == "withdrawn"
                            else e[k]
                            for k in EVENT_COLUMNS
                        )
                        for e in events
                    ],
                )
            if withdrawn:
                c.executemany(
                    "UPDATE programme_events SET withdrawn = 1 WHERE feed = ? AND event_id = ?",
                    [(feed, eid) for eid in withdrawn],
                )
            if extras:
                c.executemany(
                    "UPDATE papers SET extra = ?, content_hash = ?,"
                    " updated_at = strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?",
                    [(json.dumps(x, ensure_ascii=False, default=str), h, pid) for pid, x, h in extras],
                )
            if changes:
                c.executemany(
                    "INSERT INTO programme_changes (feed, event_id, paper_id, kind, before, after)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (
                            feed,
                            ch["event_id"],
                            ch["paper_id"],
                            ch["kind"],
                            json.dumps(ch.get("before") or {}),
                            json.dumps(ch.get("after") or {}),
                        )
                        for ch in changes
                    ],
                )
            if state is not None:
                c.execute(
                    "INSERT OR REPLACE INTO source_state(key, state, updated_at)"
                    " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    state,
                )

    def programme_changes(self, since: str = "", paper_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """What changed in the programme (moved, re-timed, withdrawn, added events), oldest first."""
        q = "SELECT id, feed, event_id, paper_id, kind, before, after, at FROM programme_changes WHERE at >= ?"
        rows = [
            {
                "id": r[0],
                "feed": r[1],
                "event_id": r[2],
                "paper_id": r[3],
                "kind": r[4],
                "before": json.loads(r[5]),
                "after": json.loads(r[6]),
                "at": r[7],
            }
            for r in self._db.conn.execute(q + " ORDER BY id", (since,))
        ]
        if paper_ids is not None:
            wanted = set(paper_ids)
            rows = [r for r in rows if r["paper_id"] in wanted]
        return rows

    def event_change_counts(self) -> dict[tuple[str, str], int]:
        """(feed, event id) -> how many times it changed (the .ics SEQUENCE)."""
        return {
            (f, e): n
            for f, e, n in self._db.conn.execute(
                "SELECT feed, event_id, count(*) FROM programme_changes WHERE kind != 'added' GROUP BY feed, event_id"
            )
        }
