"""Generated-text SQL: TL;DRs, FAQs, translations and answers made by a language model (or the
extractive summariser), each keyed by what it was made from, so a repeated request costs nothing."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


class _HasConn(Protocol):
    @property
    def conn(self) -> sqlite3.Connection: ...

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


_COLS = "subject, task, lang, model, prompt_version, text_hash, text, created_at"


def _row(r: Sequence[Any]) -> dict[str, Any]:
    return dict(zip(("subject", "task", "lang", "model", "prompt_version", "text_hash", "text", "created_at"), r))


class LlmStore:
    """Generated texts, a part of the store (`store.llm`) sharing its connection.

    A row is one text made for a `subject` (a paper id, or "ask:<hash>" for an answer) by one
    `task` ("tldr", "faq", "translate"...), in one `lang`, by one `model` from one `prompt_version`;
    `text_hash` is the hash of the input it was made from: a row whose hash no longer matches the
    paper's text is stale and is never served (it is replaced by the next generation)."""

    def __init__(self, db: _HasConn) -> None:
        self._db = db

    def get_generated(
        self, subject: str, task: str, lang: str, model: str, prompt_version: str, text_hash: str
    ) -> dict[str, Any] | None:
        r = self._db.conn.execute(
            f"SELECT {_COLS} FROM llm_texts WHERE subject=? AND task=? AND lang=? AND model=?"
            " AND prompt_version=? AND text_hash=?",
            (subject, task, lang, model, prompt_version, text_hash),
        ).fetchone()
        return _row(r) if r else None

    def latest_generated(
        self, subject: str, task: str, lang: str, prompt_version: str, text_hash: str
    ) -> dict[str, Any] | None:
        """The newest current text for this subject, task, language and prompt, whatever model made it."""
        r = self._db.conn.execute(
            f"SELECT {_COLS} FROM llm_texts WHERE subject=? AND task=? AND lang=? AND prompt_version=?"
            " AND text_hash=? ORDER BY created_at DESC LIMIT 1",
            (subject, task, lang, prompt_version, text_hash),
        ).fetchone()
        return _row(r) if r else None

    def put_generated(
        self, subject: str, task: str, lang: str, model: str, prompt_version: str, text_hash: str, text: str
    ) -> dict[str, Any]:
        with self._db.transaction() as c:
            c.execute(
                "INSERT OR REPLACE INTO llm_texts(subject, task, lang, model, prompt_version, text_hash, text,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                (subject, task, lang, model, prompt_version, text_hash, text),
            )
            r = c.execute(
                f"SELECT {_COLS} FROM llm_texts WHERE subject=? AND task=? AND lang=? AND model=? AND prompt_version=?",
                (subject, task, lang, model, prompt_version),
            ).fetchone()
        return _row(r)

    def generated_for(self, subjects: Sequence[str], task: str, lang: str) -> dict[str, list[dict[str, Any]]]:
        """subject -> its rows of this task and language (newest first), for pages that show many papers."""
        out: dict[str, list[dict[str, Any]]] = {}
        subjects = list(dict.fromkeys(subjects))
        for i in range(0, len(subjects), 900):
            chunk = subjects[i : i + 900]
            rows = self._db.conn.execute(
                f"SELECT {_COLS} FROM llm_texts WHERE task=? AND lang=? AND subject IN ({','.join('?' * len(chunk))})"
                " ORDER BY created_at DESC",
                (task, lang, *chunk),
            )
            for r in rows:
                d = _row(r)
                out.setdefault(d["subject"], []).append(d)
        return out

    def iter_generated(self, task: str, lang: str, batch: int = 5_000) -> Iterator[list[dict[str, Any]]]:
        cur = self._db.conn.execute(
            f"SELECT {_COLS} FROM llm_texts WHERE task=? AND lang=? ORDER BY subject", (task, lang)
        )
        while rows := cur.fetchmany(batch):
            yield [_row(r) for r in rows]

    def generated_counts(self) -> list[tuple[str, str, str, str, int]]:
        """(task, lang, model, prompt version, rows) for everything generated."""
        return [
            tuple(r)
            for r in self._db.conn.execute(  # type: ignore[misc]
                "SELECT task, lang, model, prompt_version, count(*) FROM llm_texts"
                " GROUP BY task, lang, model, prompt_version ORDER BY task, lang, model, prompt_version"
            )
        ]

    def generated_version(self, task: str) -> tuple[int, str]:
        """(rows, newest time) of one task: changes whenever a text of it is written."""
        n, ts = self._db.conn.execute(
            "SELECT count(*), coalesce(max(created_at), '') FROM llm_texts WHERE task=?", (task,)
        ).fetchone()
        return int(n), str(ts)

    def delete_generated(self, task: str | None = None) -> int:
        with self._db.transaction() as c:
            if task is None:
                return c.execute("DELETE FROM llm_texts").rowcount
            return c.execute("DELETE FROM llm_texts WHERE task=?", (task,)).rowcount

    def translations_version(self) -> tuple[int, str]:
        """(rows, newest time) of the translated titles and abstracts: the keyword index reads them."""
        n, ts = self._db.conn.execute(
            "SELECT count(*), coalesce(max(created_at), '') FROM llm_texts"
            " WHERE task IN ('translate_title', 'translate_abstract')"
        ).fetchone()
        return int(n), str(ts)

    def translated_texts(self, ids_texts: dict[str, tuple[str, str]]) -> dict[str, str]:
        """paper id -> its current translations (any language) joined, for the papers in `ids_texts`
        (id -> (title, abstract)); a translation of an edited title or abstract is left out."""
        from .vector_cache import text_hash

        out: dict[str, str] = {}
        ids = list(ids_texts)
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            rows = self._db.conn.execute(
                "SELECT subject, task, text_hash, text FROM llm_texts WHERE task IN ('translate_title',"
                f" 'translate_abstract') AND subject IN ({','.join('?' * len(chunk))}) ORDER BY subject, task",
                chunk,
            )
            for pid, task, h, text in rows:
                title, abstract = ids_texts[pid]
                if h == text_hash(title if task == "translate_title" else abstract):
                    out[pid] = (out.get(pid, "") + " " + text).strip()
        return out
