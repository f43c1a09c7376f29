"""Topic SQL: topics per level, each paper's topics and map position, phrase statistics."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class _HasConn(Protocol):
    @property
    def conn(self) -> sqlite3.Connection: ...

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


TopicRow = tuple[str, int, int | None, int, str, list[str], list[str], float, float]
# (level, topic, parent, size, label, phrases, central paper ids, x, y)
PaperTopicRow = tuple[str, int, int, float, float, list[str]]
# (paper_id, coarse, fine, x, y, key phrases)


class TopicStore:
    """The topic tables, a part of the store (`store.topics`) sharing its connection."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def replace_topics(
        self,
        topics: Sequence[TopicRow],
        papers: Sequence[PaperTopicRow],
        phrase_df: Sequence[tuple[str, int]],
        meta: dict[str, Any],
    ) -> None:
        """Swap in a whole new topic model in one transaction (readers see old or new, never half)."""
        with self._db.transaction() as c:
            c.execute("DELETE FROM topics")
            c.execute("DELETE FROM paper_topics")
            c.execute("DELETE FROM phrase_df")
            c.executemany(
                "INSERT INTO topics(level, topic, parent, size, label, phrases, central, x, y)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (lv, t, p, s, lab, json.dumps(ph, ensure_ascii=False), json.dumps(cen), x, y)
                    for lv, t, p, s, lab, ph, cen, x, y in topics
                ],
            )
            c.executemany(
                "INSERT INTO paper_topics(paper_id, coarse, fine, x, y, phrases) VALUES (?, ?, ?, ?, ?, ?)",
                [(pid, co, fi, x, y, json.dumps(ph, ensure_ascii=False)) for pid, co, fi, x, y, ph in papers],
            )
            c.executemany("INSERT INTO phrase_df(phrase, df) VALUES (?, ?)", phrase_df)
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('topics', ?)", (json.dumps(meta),))

    def topics_meta(self) -> dict[str, Any] | None:
        row = self._db.conn.execute("SELECT value FROM meta WHERE key='topics'").fetchone()
        return json.loads(row[0]) if row else None

    def list_topics(self, level: str | None = None) -> list[dict[str, Any]]:
        q = "SELECT level, topic, parent, size, label, phrases, central, x, y FROM topics"
        params: list[Any] = []
        if level:
            q += " WHERE level=?"
            params.append(level)
        q += " ORDER BY level, topic"
        return [
            {
                "level": lv,
                "topic": t,
                "parent": p,
                "size": s,
                "label": lab,
                "phrases": json.loads(ph),
                "central": json.loads(cen),
                "x": x,
                "y": y,
            }
            for lv, t, p, s, lab, ph, cen, x, y in self._db.conn.execute(q, params)
        ]

    def paper_topics(self, ids: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
        """paper id -> {coarse, fine, x, y, phrases}; all papers when ids is None."""
        cols = "paper_id, coarse, fine, x, y, phrases"
        out: dict[str, dict[str, Any]] = {}

        def add(rows: Any) -> None:
            for pid, co, fi, x, y, ph in rows:
                out[pid] = {"coarse": co, "fine": fi, "x": x, "y": y, "phrases": json.loads(ph)}

        if ids is None:
            add(self._db.conn.execute(f"SELECT {cols} FROM paper_topics"))
            return out
        ids = list(ids)
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            add(
                self._db.conn.execute(
                    f"SELECT {cols} FROM paper_topics WHERE paper_id IN ({','.join('?' * len(chunk))})", chunk
                )
            )
        return out

    def phrase_dfs(self, phrases: Sequence[str]) -> dict[str, int]:
        """Document frequency of each phrase key that the last topic build counted."""
        out: dict[str, int] = {}
        phrases = list(dict.fromkeys(phrases))
        for i in range(0, len(phrases), 900):
            chunk = phrases[i : i + 900]
            out.update(
                self._db.conn.execute(
                    f"SELECT phrase, df FROM phrase_df WHERE phrase IN ({','.join('?' * len(chunk))})", chunk
                )
            )
        return out

    def topic_paper_count(self) -> int:
        return int(self._db.conn.execute("SELECT count(*) FROM paper_topics").fetchone()[0])
