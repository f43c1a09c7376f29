"""All SQL in paperatlas lives in this package: the SQLite store (the default), the PostgreSQL store
(`postgresql://` URLs, for a library shared by several hosts) and the vector cache."""

from __future__ import annotations

from pathlib import Path

from .postgres import PostgresStore, is_postgres_url, redact
from .sqlite import SQLiteStore

__all__ = ["PostgresStore", "SQLiteStore", "is_postgres_url", "open_store", "redact"]


def open_store(path: str | Path) -> SQLiteStore:
    """The store for `path`: a PostgreSQL URL, else a SQLite file (created if missing)."""
    if is_postgres_url(str(path)):
        return PostgresStore(str(path))
    return SQLiteStore(path)
