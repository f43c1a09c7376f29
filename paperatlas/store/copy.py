"""`paperatlas copy SRC DST`: a whole library from one store to another (SQLite <-> PostgreSQL).

Table by table, in the order of the schema, with everything personal and every vector. The
destination must be empty: copying into a library that already has papers would have to merge
two histories (ids, readers, tokens), which `ingest` and `import-reader` do with their own rules.
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import PaperatlasError
from .sqlite import SQLiteStore

# Parents before children (feedback and friends reference readers); what is not listed follows.
_ORDER = [
    "meta",
    "papers",
    "records",
    "aliases",
    "vectors",
    "readers",
    "feedback",
    "tags",
    "notes",
    "choices",
    "saved_searches",
    "topics",
    "paper_topics",
    "phrase_df",
]
# Bookkeeping of each store itself, never copied.
_OWN = {"schema_migrations", "pa_changes"}


def copy_library(
    src: SQLiteStore, dst: SQLiteStore, progress: Callable[[str, int], None] | None = None
) -> dict[str, int]:
    """Copy every table of `src` into the empty library `dst`; returns rows copied per table."""
    if dst.count_papers() or dst.readers.list_readers():
        raise PaperatlasError(
            f"{_where(dst)} already holds papers or readers",
            "copy into a new, empty library (a new file path or an empty database)",
        )
    if src.schema_version != dst.schema_version:
        raise PaperatlasError(
            f"the two libraries are at different schema versions ({src.schema_version} and {dst.schema_version})",
            "open both with this paperatlas version first",
        )
    dst_tables = set(dst.table_names())
    tables = [t for t in src.table_names() if t not in _OWN and t in dst_tables]
    tables.sort(key=lambda t: (_ORDER.index(t) if t in _ORDER else len(_ORDER), t))
    counts: dict[str, int] = {}
    for table in tables:
        wanted = set(dst.table_columns(table))
        cols = [c for c in src.table_columns(table) if c in wanted]
        n = 0
        for rows in src.read_rows(table, cols):
            if table == "vectors":  # BLOB (SQLite) and BYTEA (psycopg) both arrive as bytes-like
                at = cols.index("vec")
                rows = [(*r[:at], bytes(r[at]), *r[at + 1 :]) for r in rows]
            dst.insert_rows(table, cols, rows)
            n += len(rows)
            if progress:
                progress(table, n)
        counts[table] = n
    dst.after_bulk_load()
    return counts


def _where(store: SQLiteStore) -> str:
    from .postgres import redact

    return redact(store.path)
