"""PostgresStore: the same library in a PostgreSQL database, for several hosts sharing one library.

The SQL of SQLiteStore (and of its parts: readers, topics, sources) is written once, in SQLite's dialect; this
module runs it on PostgreSQL through a thin connection wrapper that rewrites the few constructs the
two dialects spell differently (`?` placeholders, INSERT OR REPLACE/IGNORE, strftime, BLOB, rowid
tables). What has no PostgreSQL counterpart is replaced, not emulated:

- FTS5 (papers_fts and its triggers): keyword search runs on the local bm25s index of each host;
  the optional `fts5` keyword index uses PostgreSQL's own full-text search instead.
- PRAGMA data_version: a change counter in the database (`pa_changes`), bumped by statement
  triggers, tells each host when its local search indexes (files under the cache folder,
  keyed by the library's data version) must be rebuilt.
- BEGIN IMMEDIATE: writers take a transaction-scoped advisory lock, so write transactions are
  serialised across hosts exactly as SQLite serialises them within one.

Vectors stay float32 bytes (BYTEA) searched by the local indexes; where pgvector exists they could
live in a `vector(384)` column and be searched in the database instead (docs/scale.md).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import numpy as np

from ..errors import PaperatlasError, StoreUnavailable
from .migrations import MIGRATIONS
from .sqlite import SQLiteStore, _split_sql

_INGEST_LOCK = 0x7061_7069  # held through a whole ingest or embed (SQLiteStore.write_lock)
_EMBED_LOCK = 0x7061_706D  # held through a whole embed (SQLiteStore.embed_lock)
_WRITE_LOCK = 0x7061_7065  # "pape": the advisory lock id every write transaction takes
_SCHEME = re.compile(r"^postgres(?:ql)?(?:\+psycopg)?://", re.IGNORECASE)


def is_postgres_url(path: str | Path | None) -> bool:
    return isinstance(path, str) and bool(_SCHEME.match(path))


_SECRET_PARAMS = {"password", "sslpassword"}  # libpq's connection parameters that hold a secret


def redact(url: str | Path) -> str:
    """The URL without its secrets, for messages and banners: the password of `user:password@host`
    and of the `?password=` / `?sslpassword=` parameters libpq also reads."""
    if not is_postgres_url(url):
        return str(url)
    assert isinstance(url, str)
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        host = netloc.rpartition("@")[2]
        netloc = f"{parts.username}:***@{host}" if parts.username else f":***@{host}"
    query = parts.query
    if query:
        pairs = []
        for piece in query.split("&"):
            key, eq, _ = piece.partition("=")
            pairs.append(f"{key}=***" if eq and unquote_plus(key).strip().lower() in _SECRET_PARAMS else piece)
        query = "&".join(pairs)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


# -- the dialect -----------------------------------------------------------------------------
_STRFTIME = re.compile(r"strftime\('([^']*)',\s*'now'\)", re.IGNORECASE)
_INSERT_OR = re.compile(r"^\s*INSERT\s+OR\s+(REPLACE|IGNORE)\s+INTO\s+(\w+)\s*\(([^)]*)\)", re.IGNORECASE | re.DOTALL)
_SKIP = re.compile(r"^\s*(PRAGMA\b|INSERT\s+INTO\s+papers_fts\b)", re.IGNORECASE)


def _to_char(fmt: str) -> str:
    pg = (
        fmt.replace("%Y", "YYYY")
        .replace("%m", "MM")
        .replace("%d", "DD")
        .replace("%H", "HH24")
        .replace("%M", "MI")
        .replace("%S", "SS")
        .replace("%f", "SS.MS")
    )
    # SQLite's %f is "SS.SSS" and is written after %S's place: "%S" never appears with "%f"
    pg = pg.replace("T", '"T"').replace("Z", '"Z"')
    return f"to_char(now() AT TIME ZONE 'UTC', '{pg}')"


def translate(sql: str, conflict_keys: dict[str, list[tuple[str, ...]]]) -> str | None:
    """SQLite-dialect `sql` as PostgreSQL (None: nothing to run there, e.g. a PRAGMA).

    `conflict_keys` maps a table to its primary key and unique column sets, to turn SQLite's
    INSERT OR REPLACE into ON CONFLICT (...) DO UPDATE."""
    if _SKIP.match(sql):
        return None
    sql = _STRFTIME.sub(lambda m: _to_char(m.group(1)), sql)
    suffix = ""
    m = _INSERT_OR.match(sql)
    if m:
        verb, table, cols = m.group(1).upper(), m.group(2), [c.strip() for c in m.group(3).split(",")]
        sql = f"INSERT INTO {table} ({', '.join(cols)})" + sql[m.end() :]
        if verb == "IGNORE":
            suffix = " ON CONFLICT DO NOTHING"
        else:
            key = next((k for k in conflict_keys.get(table.lower(), []) if set(k) <= set(cols)), None)
            if key is None:
                raise PaperatlasError(
                    f"no key to replace on in table {table} for {cols}", "this is a bug in paperatlas: please report it"
                )
            rest = [c for c in cols if c not in key]
            action = ("DO UPDATE SET " + ", ".join(f"{c} = EXCLUDED.{c}" for c in rest)) if rest else "DO NOTHING"
            suffix = f" ON CONFLICT ({', '.join(key)}) {action}"
    sql = sql.replace("%", "%%").replace("?", "%s")
    return sql.rstrip().rstrip(";") + suffix


def translate_ddl(stmt: str) -> str | None:
    """One migration statement as PostgreSQL DDL (None: SQLite-only, e.g. FTS5 and its triggers)."""
    s = stmt.strip()
    if re.search(r"\bfts5\b|papers_fts|\bTRIGGER\b", s, re.IGNORECASE):
        return None
    s = re.sub(
        r"\b(\w+)\s+INTEGER\s+PRIMARY\s+KEY\b",
        r"\1 BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
        s,
        flags=re.IGNORECASE,
    )
    s = re.sub(r"\bBLOB\b", "BYTEA", s, flags=re.IGNORECASE)
    s = re.sub(r"\bREAL\b", "DOUBLE PRECISION", s, flags=re.IGNORECASE)
    s = re.sub(r"\)\s*WITHOUT\s+ROWID", ")", s, flags=re.IGNORECASE)
    s = _STRFTIME.sub(lambda m: _to_char(m.group(1)), s)
    return s.rstrip().rstrip(";")


def _plain(v: Any) -> Any:
    """numpy scalars as Python values (psycopg adapts Python types only)."""
    return v.item() if isinstance(v, np.generic) else v


class _Cursor:
    """The part of sqlite3.Cursor the store uses, over a psycopg cursor (or nothing)."""

    def __init__(self, cur: Any = None) -> None:
        self._cur = cur

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount if self._cur is not None else 0

    def fetchone(self) -> Any:
        return self._cur.fetchone() if self._cur is not None and self._cur.description else None

    def fetchall(self) -> list[Any]:
        return self._cur.fetchall() if self._cur is not None and self._cur.description else []

    def fetchmany(self, n: int) -> list[Any]:
        return self._cur.fetchmany(n) if self._cur is not None and self._cur.description else []

    def __iter__(self) -> Iterator[Any]:
        if self._cur is None or not self._cur.description:
            return iter(())
        return iter(self._cur)


class _Connection:
    """sqlite3.Connection's execute/executemany over psycopg, translating the dialect.

    A statement that finds the connection dead (the database server restarted, or a network cut) is
    run once more on a fresh connection when it was not inside a transaction, so the first request
    after a restart is answered; inside a transaction, or while the server is still down, it raises
    StoreUnavailable instead of psycopg's own error."""

    def __init__(
        self,
        raw: Any,
        conflict_keys: dict[str, list[tuple[str, ...]]],
        reopen: Callable[[], Any] | None = None,
        where: str = "",
    ) -> None:
        self.raw = raw
        self.keys = conflict_keys
        self._reopen = reopen
        self.where = where

    def _run(self, op: Callable[[Any], None]) -> Any:
        psycopg = _psycopg()
        for attempt in (0, 1):
            idle = not self.raw.broken and self.raw.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            try:
                cur = self.raw.cursor()
                op(cur)
                return cur
            except psycopg.OperationalError as e:
                if not self.raw.broken:  # a statement error (a cancelled query ...), not a lost server
                    raise
                if attempt == 0 and idle and self._reopen is not None:
                    self.raw = self._reopen()  # StoreUnavailable while the server is still down
                    continue
                raise unavailable(self.where, e) from None
        raise AssertionError("unreachable")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Cursor:
        pg = translate(sql, self.keys)
        if pg is None:
            return _Cursor()
        args = [_plain(p) for p in params]
        return _Cursor(self._run(lambda cur: cur.execute(pg, args)))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> _Cursor:
        pg = translate(sql, self.keys)
        rows = [[_plain(v) for v in r] for r in rows]
        if pg is None or not rows:
            return _Cursor()
        return _Cursor(self._run(lambda cur: cur.executemany(pg, rows)))

    def close(self) -> None:
        self.raw.close()


def unavailable(where: str, e: BaseException | None = None) -> StoreUnavailable:
    why = (str(e).strip().splitlines() or [""])[0] if e is not None else ""
    return StoreUnavailable(
        f"the library's database {where} is not answering" + (f" ({why})" if why else ""),
        "check that PostgreSQL runs there; paperatlas reconnects by itself as soon as it answers again "
        "(nothing written before this was lost)",
    )


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise PaperatlasError(
            "a postgresql:// library needs the psycopg package", "pip install 'paperatlas[scale]'"
        ) from e
    return psycopg


class PostgresStore(SQLiteStore):
    """A library in PostgreSQL. Same methods as SQLiteStore; one connection per thread."""

    backend = "postgresql"

    def __init__(self, url: str) -> None:
        self.path = url
        self.url = url
        self._local = threading.local()
        self._lock = threading.Lock()
        self._writer = threading.RLock()
        self._writer_depth = 0
        self._embedding = threading.Lock()
        self._conns: list[Any] = []
        self._keys: dict[str, list[tuple[str, ...]]] = {}
        self._migrate()
        self._attach_parts()

    # -- connections -----------------------------------------------------------------
    @property
    def conn(self) -> Any:
        """This thread's connection; one the server dropped (a restart) is replaced by a new one."""
        c = getattr(self._local, "conn", None)
        if c is not None and (c.raw.broken or c.raw.closed):
            try:
                c.raw.close()
            except Exception:  # noqa: BLE001 - closing what is already dead
                pass
            c.raw = self._open_raw(unavailable_error=True)
        if c is None:
            c = self._connect()
            self._local.conn = c
        return c

    def _open_raw(self, unavailable_error: bool = False) -> Any:
        psycopg = _psycopg()
        try:
            raw = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.Error as e:
            if unavailable_error:  # the library was open: its server went away
                raise unavailable(redact(self.url), e) from None
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise PaperatlasError(
                f"cannot open library {redact(self.url)}: {msg}",
                "check that PostgreSQL runs at that host and port, and that the user and database exist "
                "(createdb NAME), or pass a SQLite file path to --db",
            ) from None
        if self.read_only:
            raw.execute("SET default_transaction_read_only = on")
        return raw

    def _connect(self) -> Any:
        return _Connection(
            self._open_raw(), self._keys, lambda: self._open_raw(unavailable_error=True), redact(self.url)
        )

    def ping(self) -> None:
        """Raises StoreUnavailable unless the database server answers now (for /healthz)."""
        self.conn.execute("SELECT 1").fetchone()

    def set_read_only(self) -> None:
        """Every later statement runs in a read-only transaction (`serve --read-only`)."""
        self.read_only = True
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.raw.execute("SET default_transaction_read_only = on")

    @contextmanager
    def _hold_write_lock(self, on_wait: Callable[[str], None] | None, kind: str = "write") -> Iterator[None]:
        """Across hosts: a session-level advisory lock (write_lock adds reentrancy, as on SQLite)."""
        raw = self.conn.raw
        key = _INGEST_LOCK if kind == "write" else _EMBED_LOCK
        (got,) = raw.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
        if not got:
            if on_wait:
                doing = "writing to" if kind == "write" else "embedding the papers of"
                on_wait(f"another paperatlas process is {doing} {redact(self.url)}; waiting for it to finish")
            raw.execute("SELECT pg_advisory_lock(%s)", (key,))
        try:
            yield
        finally:
            raw.execute("SELECT pg_advisory_unlock(%s)", (key,))

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """One atomic write; writers queue on an advisory lock (SQLite's BEGIN IMMEDIATE). A server
        lost mid-way rolls the whole transaction back: StoreUnavailable, nothing half-written."""
        c = self.conn
        psycopg = _psycopg()
        try:
            with c.raw.transaction():
                c.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
                yield c
        except psycopg.OperationalError as e:
            if not c.raw.broken:
                raise
            raise unavailable(redact(self.url), e) from None

    def _migrate(self) -> None:
        c = self.conn
        with c.raw.transaction():
            c.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            c.raw.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                " applied_at TEXT NOT NULL DEFAULT (" + _to_char("%Y-%m-%dT%H:%M:%SZ") + "))"
            )
            applied = {v for (v,) in c.raw.execute("SELECT version FROM schema_migrations")}
            for version, (name, sql) in enumerate(MIGRATIONS, start=1):
                if version in applied:
                    continue
                for stmt in _split_sql(sql):
                    pg = translate_ddl(stmt)
                    if pg:
                        c.raw.execute(pg)
                c.raw.execute("INSERT INTO schema_migrations(version, name) VALUES (%s, %s)", (version, name))
            self._install_change_counter(c.raw)
        self._keys.update(self._conflict_keys(c.raw))

    @staticmethod
    def _install_change_counter(raw: Any) -> None:
        """pa_changes: 'papers' moves when papers change, 'all' when papers, vectors or generated texts do."""
        raw.execute("CREATE TABLE IF NOT EXISTS pa_changes (name TEXT PRIMARY KEY, n BIGINT NOT NULL)")
        raw.execute("INSERT INTO pa_changes VALUES ('papers', 0), ('all', 0) ON CONFLICT DO NOTHING")
        raw.execute("""
            CREATE OR REPLACE FUNCTION pa_bump() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE pa_changes SET n = n + 1 WHERE name = 'all' OR (name = 'papers' AND TG_ARGV[0] = 'papers');
                RETURN NULL;
            END $$""")
        # llm_texts: a new translation changes what Chinese keywords find (the keyword index reads them)
        for table in ("papers", "vectors", "aliases", "llm_texts"):
            raw.execute(
                f"CREATE OR REPLACE TRIGGER pa_bump_{table} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
                f" ON {table} FOR EACH STATEMENT EXECUTE FUNCTION pa_bump('{table}')"
            )

    @staticmethod
    def _conflict_keys(raw: Any) -> dict[str, list[tuple[str, ...]]]:
        """table -> its primary key and unique column sets (primary key first)."""
        rows = raw.execute("""
            SELECT tc.table_name, tc.constraint_name, tc.constraint_type, kcu.column_name
            FROM information_schema.table_constraints tc
            JOIN information_schema.key_column_usage kcu
              ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
            WHERE tc.table_schema = current_schema() AND tc.constraint_type IN ('PRIMARY KEY', 'UNIQUE')
            ORDER BY tc.table_name, tc.constraint_type, tc.constraint_name, kcu.ordinal_position""").fetchall()
        found: dict[tuple[str, str, str], list[str]] = {}
        for table, cname, ctype, col in rows:
            found.setdefault((table, ctype, cname), []).append(col)
        out: dict[str, list[tuple[str, ...]]] = {}
        for (table, ctype, _), cols in sorted(found.items(), key=lambda kv: (kv[0][0], kv[0][1] != "PRIMARY KEY")):
            out.setdefault(table, []).append(tuple(cols))
        return out

    # -- what SQLite answers from the file itself --------------------------------------
    @property
    def schema_version(self) -> int:
        return self.conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0

    def change_token(self) -> tuple[int, int]:
        """Moves whenever papers or vectors change, on any host (the shared change counter)."""
        n = self.conn.execute("SELECT n FROM pa_changes WHERE name = 'all'").fetchone()[0]
        return threading.get_ident(), int(n)

    def data_version(self) -> tuple[int, str]:
        """(paper count, papers change counter): the key of every host's local indexes."""
        n, v = self.conn.execute(
            "SELECT (SELECT count(*) FROM papers), (SELECT n FROM pa_changes WHERE name = 'papers')"
        ).fetchone()
        return int(n), f"pg:{int(v)}"

    @property
    def index_root(self) -> Path:
        """Local indexes of this library on this host: under the cache folder, one per database."""
        from ..embed.quantize import cache_dir

        parts = urlsplit(self.url)
        ident = f"{parts.hostname}:{parts.port}/{parts.path.lstrip('/')}?{parts.username}"
        digest = hashlib.sha256(ident.encode()).hexdigest()[:16]
        return cache_dir() / "postgres" / f"{parts.path.lstrip('/') or 'db'}-{digest}"

    def fts_search(
        self, match: str, limit: int, weights: tuple[float, ...] = (3.0, 1.0, 0.5, 1.0)
    ) -> list[tuple[str, float]]:
        """The `fts5` keyword index on PostgreSQL: its own full-text search over the same fields."""
        terms = [t for t in re.findall(r'"((?:[^"]|"")*)"', match) if t.strip()]
        if not terms:
            return []
        words = [re.sub(r"[^\w]+", " ", t.replace('""', '"')).split() for t in terms]
        tsq = " | ".join("(" + " <-> ".join(w) + ")" for w in words if w)
        if not tsq:
            return []
        title_w = min(1.0, weights[0] / 3.0)
        q = (
            "SELECT id, ts_rank_cd(setweight(to_tsvector('english', title), 'A') ||"
            " setweight(to_tsvector('english', abstract || ' ' || authors || ' ' || keywords), 'D'),"
            " q, 1) AS s FROM papers, to_tsquery('english', %s) q"
            " WHERE (to_tsvector('english', title || ' ' || abstract || ' ' || authors || ' ' || keywords)) @@ q"
            " ORDER BY s DESC, id LIMIT %s"
        )
        del title_w  # the A/D weights of ts_rank_cd stand for the title weight
        return [(pid, float(s)) for pid, s in self.conn.raw.execute(q, (tsq, int(limit)))]

    def copy_to(self, path: str | Path) -> None:
        raise PaperatlasError(
            "a PostgreSQL library is not copied as a file",
            "use `paperatlas copy SRC DST` to copy it into a SQLite file",
        )

    def file_size(self) -> int:
        return int(self.conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])

    def after_bulk_load(self) -> None:
        """After rows were copied in with their ids: move each identity sequence past them."""
        for table, col in (("papers", "rowid"), ("readers", "id"), ("choices", "id"), ("saved_searches", "id")):
            self.conn.raw.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{col}'),"
                f" coalesce((SELECT max({col}) FROM {table}), 0) + 1, false)"
            )

    def table_names(self) -> list[str]:
        return [
            r[0]
            for r in self.conn.raw.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
                " AND table_type = 'BASE TABLE' ORDER BY table_name"
            )
        ]

    def table_columns(self, table: str) -> list[str]:
        return [
            r[0]
            for r in self.conn.raw.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
                " AND table_name = %s ORDER BY ordinal_position",
                (table,),
            )
        ]
