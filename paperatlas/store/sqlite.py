"""SQLiteStore: all SQL in paperatlas lives in this package.

One file holds papers, their FTS5 index (filled per batch, kept in sync by triggers), vectors and
everything personal. WAL mode lets readers (search, the web UI) run while an
ingest writes; each batch is one transaction, so a crash leaves whole batches.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

try:
    import fcntl
except ImportError:  # Windows: no advisory file locks; concurrent ingests there still race
    fcntl = None  # type: ignore[assignment]

from ..errors import PaperatlasError
from ..models import Paper
from .fulltext import FulltextStore
from .llm import LlmStore
from .migrations import MIGRATIONS
from .personal import PersonalStore
from .programme import ProgrammeStore
from .citations import CitationStore
from .own_papers import OwnPaperStore
from .semantic_scholar import S2Store
from .report import ReportStore
from .sources import SourceStore
from .topics import TopicStore

PAPER_COLUMNS = (
    "id, title, title_derived, abstract, authors, venue, year, status, track, keywords, url, source, raw, extra"
)

# Columns a caller may sort or filter papers by; user input never reaches SQL otherwise.
SORTABLE = {"id", "title", "venue", "year", "status", "added_at", "rowid"}


def _row_to_paper(row: sqlite3.Row | tuple[Any, ...]) -> Paper:
    (pid, title, derived, abstract, authors, venue, year, status, track, keywords, url, source, raw, extra) = tuple(
        row
    )[:14]
    return Paper(
        id=pid,
        title=title,
        title_derived=bool(derived),
        abstract=abstract,
        authors=json.loads(authors),
        venue=venue,
        year=year,
        status=status,
        track=track,
        keywords=json.loads(keywords),
        url=url,
        source=source,
        raw=raw,
        extra=json.loads(extra),
    )


# json.dumps with keyword arguments builds a new encoder per call; ingest encodes 3 fields per paper
_to_json = json.JSONEncoder(ensure_ascii=False, default=str).encode


def _paper_params(p: Paper) -> tuple[Any, ...]:
    return (
        p.id,
        p.title,
        int(p.title_derived),
        p.abstract,
        _to_json(p.authors),
        p.venue,
        p.year,
        p.status,
        p.track,
        _to_json(p.keywords),
        p.url,
        p.source,
        p.raw,
        _to_json(p.extra),
    )


class SQLiteStore:
    """The library file. Thread-safe: one connection per thread.

    The papers, their vectors and the library's settings are here; each capability's own tables
    are a part held as an attribute (`readers`, `topics`, `sources`, `programme`, `report`, `llm`), built
    over this store's connection and transactions, so a part works unchanged in the PostgreSQL
    store, which subclasses this one and translates its SQL."""

    backend = "sqlite"

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._writer = threading.RLock()
        self._writer_depth = 0
        self._embedding = threading.Lock()
        self._conns: list[sqlite3.Connection] = []  # every thread's, for close_all()
        if self.path != ":memory:":
            parent = Path(self.path).expanduser().resolve().parent
            if not parent.exists():
                raise PaperatlasError(
                    f"cannot create library {self.path}: folder {parent} does not exist",
                    "create the folder or pass another --db path",
                )
        self._migrate()
        self._attach_parts()

    def _attach_parts(self) -> None:
        self.readers = PersonalStore(self)
        self.topics = TopicStore(self)
        self.sources = SourceStore(self)
        self.programme = ProgrammeStore(self)
        self.report = ReportStore(self)
        self.llm = LlmStore(self)
        self.citations = CitationStore(self)
        self.fulltext = FulltextStore(self)
        self.own_papers = OwnPaperStore(self)
        self.s2 = S2Store(self)

    # -- connections ---------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        c = getattr(self._local, "conn", None)
        if c is None:
            c = self._connect()
            self._local.conn = c
            with self._lock:
                self._conns.append(c)
        return c

    def _connect(self) -> sqlite3.Connection:
        try:
            c = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            c.execute("PRAGMA busy_timeout=30000")
            _set_wal(c)
            c.execute("PRAGMA synchronous=NORMAL")
            c.execute("PRAGMA foreign_keys=ON")
            if self.read_only:
                c.execute("PRAGMA query_only=ON")
        except sqlite3.DatabaseError as e:
            raise PaperatlasError(
                f"{self.path} is not a paperatlas library ({e})",
                "point --db at a paperatlas library file, or at a new path to create one",
            ) from e
        return c

    def close(self) -> None:
        """Close every thread's connection (see close_all); a later call opens fresh ones."""
        self.close_all()

    def close_all(self) -> None:
        """Close every thread's connection (a server that is stopping): SQLite removes the -wal
        and -shm files beside the library when its last connection closes, so a read-only server
        leaves the folder as it found it."""
        with self._lock:
            conns, self._conns = self._conns, []
        for c in conns:
            try:
                c.close()
            except Exception:  # noqa: BLE001, S110 - closing is best effort: the process is ending
                pass
        self._local = threading.local()  # a later call opens a fresh connection per thread

    @contextmanager
    def write_lock(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Hold the library's write lock: one ingest or embed at a time, across processes.

        An ingest plans its writes from what the library holds when it starts, so two ingests of one
        file must not interleave (the second would insert papers the first just stored). The lock is
        an flock on `<library>.lock`: the kernel drops it when its process dies, even by kill -9.
        Reentrant within a process; `on_wait` hears, once, that another process holds it."""
        with self._writer:
            if self._writer_depth:
                self._writer_depth += 1
                try:
                    yield
                finally:
                    self._writer_depth -= 1
                return
            with self._hold_write_lock(on_wait):
                self._writer_depth = 1
                try:
                    yield
                finally:
                    self._writer_depth = 0

    @contextmanager
    def embed_lock(self, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """Held through a whole embed, apart from the write lock: two embeds of one library never
        compute the same vectors (the second waits, then finds what is left), while ingests, likes
        and fetches, which take the write lock only, go on. An flock on `<library>.embed.lock`."""
        with self._embedding, self._hold_write_lock(on_wait, "embed"):
            yield

    @contextmanager
    def _hold_write_lock(self, on_wait: Callable[[str], None] | None, kind: str = "write") -> Iterator[None]:
        """The cross-process part of write_lock and embed_lock (the PostgreSQL store holds an
        advisory lock instead)."""
        if self.path == ":memory:" or fcntl is None:
            yield
            return
        fd = os.open(self.path + (".lock" if kind == "write" else f".{kind}.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                if on_wait:
                    on_wait(
                        f"another paperatlas process{f' (pid {holder})' if holder else ''} is "
                        f"{'writing to' if kind == 'write' else 'embedding the papers of'} {self.path}; "
                        "waiting for it to finish"
                    )
                fcntl.flock(fd, fcntl.LOCK_EX)
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            yield
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write: BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error."""
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            yield c
        except BaseException:
            c.execute("ROLLBACK")
            raise
        else:
            c.execute("COMMIT")

    def _migrate(self) -> None:
        c = self.conn
        c.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')))"
        )
        applied = {v for (v,) in c.execute("SELECT version FROM schema_migrations")}
        for version, (name, sql) in enumerate(MIGRATIONS, start=1):
            if version in applied:
                continue
            with self.transaction():
                # another process may have applied it while we waited for the write lock
                if c.execute("SELECT 1 FROM schema_migrations WHERE version=?", (version,)).fetchone():
                    continue
                # executescript would COMMIT our transaction; run statement by statement instead
                for stmt in _split_sql(sql):
                    c.execute(stmt)
                c.execute("INSERT INTO schema_migrations(version, name) VALUES (?, ?)", (version, name))

    @property
    def schema_version(self) -> int:
        return self.conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] or 0

    # -- meta ------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def meta_setdefault(self, key: str, value: str) -> str:
        """The stored value of `key`; `value` is stored first when there is none (race-free)."""
        self.conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)", (key, value))
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0])

    def ping(self) -> None:
        """Raises unless the library answers a query now (for /healthz)."""
        self.conn.execute("SELECT 1").fetchone()

    # -- read-only serving -------------------------------------------------------------
    read_only = False

    def set_read_only(self) -> None:
        """Refuse every write from now on, on every connection (`serve --read-only`).

        SQLite's query_only makes any INSERT/UPDATE/DELETE fail, so a code path that would
        write (a profile refresh, a cache) fails loudly instead of changing the file; derived
        indexes go to the cache folder instead of beside the library."""
        self.read_only = True
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.execute("PRAGMA query_only=ON")

    # -- ingest support --------------------------------------------------------------
    def record_hashes(self) -> dict[str, str]:
        """record_hash -> paper id for every record ever ingested."""
        return dict(self.conn.execute("SELECT record_hash, paper_id FROM records"))

    def ident_index(self) -> tuple[dict[str, str], dict[str, str], dict[tuple[str, int], str]]:
        """(id -> content_hash, dedup_key -> id, (source, pos) -> id) over all papers."""
        by_id: dict[str, str] = {}
        by_key: dict[str, str] = {}
        by_pos: dict[tuple[str, int], str] = {}
        for pid, chash, key, source, pos in self.conn.execute(
            "SELECT id, content_hash, dedup_key, source, source_pos FROM papers"
        ):
            by_id[pid] = chash
            by_key.setdefault(key, pid)
            if pos is not None:
                by_pos[(source, pos)] = pid
        for alias, pid in self.conn.execute("SELECT alias, paper_id FROM aliases"):
            by_id.setdefault(alias, "")
        return by_id, by_key, by_pos

    def write_batch(
        self,
        inserts: Sequence[tuple[Paper, str, str, int | None]],
        updates: Sequence[tuple[Paper, str, str, int | None]],
        aliases: Sequence[tuple[str, str]],
        records: Sequence[tuple[str, str]],
        state: tuple[str, str] | None = None,
        title_keys: Sequence[tuple[str, str]] = (),
        absorbs: Sequence[tuple[str, str]] = (),
    ) -> None:
        """Write one batch in one transaction: (paper, content_hash, dedup_key, source_pos) rows,
        and with `state` (key, json) a fetch's position, so the two can never disagree."""
        with self.transaction() as c:
            if inserts:
                (last,) = c.execute("SELECT coalesce(max(rowid), 0) FROM papers").fetchone()
                c.executemany(
                    f"INSERT INTO papers ({PAPER_COLUMNS}, content_hash, dedup_key, source_pos)"
                    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [(*_paper_params(p), h, k, pos) for p, h, k, pos in inserts],
                )
                # the FTS5 rows of the new papers in one statement (a new rowid is max(rowid) + 1,
                # so the new rows are exactly those past `last`)
                c.execute(
                    "INSERT INTO papers_fts(rowid, title, abstract, authors, keywords)"
                    " SELECT rowid, title, abstract, authors, keywords FROM papers WHERE rowid > ?",
                    (last,),
                )
            if updates:
                c.executemany(
                    "UPDATE papers SET title=?, title_derived=?, abstract=?, authors=?, venue=?, year=?,"
                    " status=?, track=?, keywords=?, url=?, source=?, raw=?, extra=?, content_hash=?,"
                    " dedup_key=?, source_pos=?, updated_at=strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id=?",
                    [(*_paper_params(p)[1:], h, k, pos, p.id) for p, h, k, pos in updates],
                )
            if title_keys:
                c.executemany("UPDATE papers SET title_key=? WHERE id=?", [(k, pid) for pid, k in title_keys])
            for old, new in absorbs:
                self._absorb(c, old, new)
            if aliases:
                c.executemany("INSERT OR IGNORE INTO aliases(alias, paper_id) VALUES (?, ?)", aliases)
            if records:
                c.executemany("INSERT OR REPLACE INTO records(record_hash, paper_id) VALUES (?, ?)", records)
            if state is not None:
                c.execute(
                    "INSERT OR REPLACE INTO source_state(key, state, updated_at)"
                    " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
                    state,
                )

    @staticmethod
    def _absorb(c: Any, old: str, new: str) -> None:
        """Paper `old` becomes an alias of `new`: what readers did with it (likes, tags, notes, triage
        answers), its other aliases and its ingest records move over; its row, vector and topics go."""
        for table, cols in (
            ("feedback", "reader_id, paper_id, kind, created_at"),
            ("tags", "reader_id, paper_id, tag, created_at"),
            ("notes", "reader_id, paper_id, note, updated_at"),
        ):
            moved = cols.replace("paper_id", "?")
            c.execute(
                f"INSERT OR IGNORE INTO {table} ({cols}) SELECT {moved} FROM {table} WHERE paper_id=?", (new, old)
            )
            c.execute(f"DELETE FROM {table} WHERE paper_id=?", (old,))
        c.execute("UPDATE choices SET winner=? WHERE winner=?", (new, old))
        c.execute("UPDATE choices SET loser=? WHERE loser=?", (new, old))
        c.execute("UPDATE aliases SET paper_id=? WHERE paper_id=?", (new, old))
        c.execute("UPDATE records SET paper_id=? WHERE paper_id=?", (new, old))
        c.execute("UPDATE programme_events SET paper_id=? WHERE paper_id=?", (new, old))
        c.execute("DELETE FROM vectors WHERE paper_id=?", (old,))
        c.execute("DELETE FROM paper_topics WHERE paper_id=?", (old,))
        c.execute("DELETE FROM papers WHERE id=?", (old,))
        c.execute("INSERT OR IGNORE INTO aliases(alias, paper_id) VALUES (?, ?)", (old, new))

    def fill_title_keys(self, key: Any) -> int:
        """Give papers written before title keys existed theirs (`key(title) -> str`), once."""
        todo = list(
            self.conn.execute(
                "SELECT id, title, title_derived FROM papers WHERE title_key = ''"
                " AND title_derived = 0 AND length(title) >= 20"
            )
        )
        rows = [(k, pid) for pid, title, _ in todo if (k := key(title))]
        if rows:
            with self.transaction() as c:
                c.executemany("UPDATE papers SET title_key=? WHERE id=?", rows)
        return len(rows)

    def title_matches(self, keys: Sequence[str]) -> dict[str, list[tuple[str, str, list[str]]]]:
        """title key -> [(id, venue, authors)] of the papers with that normalised title."""
        out: dict[str, list[tuple[str, str, list[str]]]] = {}
        keys = [k for k in dict.fromkeys(keys) if k]
        for i in range(0, len(keys), 900):
            chunk = keys[i : i + 900]
            q = f"SELECT title_key, id, venue, authors FROM papers WHERE title_key IN ({','.join('?' * len(chunk))})"
            for k, pid, venue, authors in self.conn.execute(q, chunk):
                out.setdefault(k, []).append((pid, venue, json.loads(authors)))
        return out

    def aliases_of(self, pid: str) -> list[str]:
        """The other ids a paper is known by (merged duplicates, its arXiv preprint)."""
        return [r[0] for r in self.conn.execute("SELECT alias FROM aliases WHERE paper_id=? ORDER BY alias", (pid,))]

    # -- reading papers --------------------------------------------------------------
    def resolve_id(self, pid: str) -> str | None:
        row = self.conn.execute("SELECT id FROM papers WHERE id=?", (pid,)).fetchone()
        if row:
            return row[0]
        row = self.conn.execute("SELECT paper_id FROM aliases WHERE alias=?", (pid,)).fetchone()
        return row[0] if row else None

    def get_paper(self, pid: str) -> Paper | None:
        real = self.resolve_id(pid)
        if real is None:
            return None
        row = self.conn.execute(f"SELECT {PAPER_COLUMNS} FROM papers WHERE id=?", (real,)).fetchone()
        return _row_to_paper(row) if row else None

    def get_papers(self, ids: Sequence[str]) -> dict[str, Paper]:
        out: dict[str, Paper] = {}
        ids = list(ids)
        for i in range(0, len(ids), 900):
            chunk = ids[i : i + 900]
            q = f"SELECT {PAPER_COLUMNS} FROM papers WHERE id IN ({','.join('?' * len(chunk))})"
            for row in self.conn.execute(q, chunk):
                out[row[0]] = _row_to_paper(row)
        return out

    @staticmethod
    def _filters(
        venue: str | None = None,
        year: int | None = None,
        status: str | None = None,
        ids: Iterable[str] | None = None,
    ) -> tuple[str, list[Any]]:
        where: list[str] = []
        params: list[Any] = []
        if venue:
            where.append("lower(venue) = lower(?)")
            params.append(venue)
        if year:
            where.append("year = ?")
            params.append(int(year))
        if status:
            where.append("lower(status) = lower(?)")
            params.append(status)
        if ids is not None:
            ids = list(ids)
            where.append(f"id IN ({','.join('?' * len(ids))})" if ids else "1 = 0")
            params.extend(ids)
        return (" WHERE " + " AND ".join(where)) if where else "", params

    def list_papers(
        self,
        venue: str | None = None,
        year: int | None = None,
        status: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "rowid",
        descending: bool = False,
    ) -> list[Paper]:
        if order not in SORTABLE:
            raise PaperatlasError(f"cannot sort by {order!r}", f"use one of: {', '.join(sorted(SORTABLE))}")
        where, params = self._filters(venue, year, status)
        q = f"SELECT {PAPER_COLUMNS} FROM papers{where} ORDER BY {order} {'DESC' if descending else 'ASC'}, rowid"
        if limit is not None:
            q += " LIMIT ? OFFSET ?"
            params += [int(limit), int(offset)]
        return [_row_to_paper(r) for r in self.conn.execute(q, params)]

    def count_papers(self, venue: str | None = None, year: int | None = None, status: str | None = None) -> int:
        where, params = self._filters(venue, year, status)
        return self.conn.execute(f"SELECT count(*) FROM papers{where}", params).fetchone()[0]

    def filter_ids(
        self, venue: str | None = None, year: int | None = None, status: str | None = None
    ) -> set[str] | None:
        """Ids passing the filters, or None when there is no filter (everything passes)."""
        if not (venue or year or status):
            return None
        where, params = self._filters(venue, year, status)
        return {r[0] for r in self.conn.execute(f"SELECT id FROM papers{where}", params)}

    def facet_counts(self) -> list[tuple[str, int | None, str, int]]:
        """(venue, year, status, count) for every combination present."""
        return list(
            self.conn.execute(
                "SELECT venue, year, status, count(*) FROM papers GROUP BY venue, year, status"
                " ORDER BY venue, year, status"
            )
        )

    def all_texts(self) -> list[tuple[str, str, bool, str]]:
        """(id, title, title_derived, abstract) of every paper in rowid order: the input of indexes."""
        return [
            (i, t, bool(d), a)
            for i, t, d, a in self.conn.execute("SELECT id, title, title_derived, abstract FROM papers ORDER BY rowid")
        ]

    def iter_authors(self, batch: int = 20_000) -> Iterator[tuple[str, list[str]]]:
        """(id, author names) of every paper in rowid order: the input of the author index."""
        cur = self.conn.execute("SELECT id, authors FROM papers ORDER BY rowid")
        while rows := cur.fetchmany(batch):
            for pid, authors in rows:
                yield pid, json.loads(authors or "[]")

    def paper_ids(self) -> list[str]:
        """Every paper id in rowid order (the order of all_texts / iter_texts)."""
        return [r[0] for r in self.conn.execute("SELECT id FROM papers ORDER BY rowid")]

    def iter_texts(self, batch: int = 20_000) -> Iterator[list[tuple[str, str, bool, str]]]:
        """all_texts() in batches of `batch` rows, so a million-paper index build stays small."""
        cur = self.conn.execute("SELECT id, title, title_derived, abstract FROM papers ORDER BY rowid")
        while rows := cur.fetchmany(batch):
            yield [(i, t, bool(d), a) for i, t, d, a in rows]

    def iter_keyword_texts(self, batch: int = 20_000) -> Iterator[list[tuple[str, str, bool, str, list[str]]]]:
        """iter_texts() with each paper's keywords: what the keyword index reads."""
        cur = self.conn.execute("SELECT id, title, title_derived, abstract, keywords FROM papers ORDER BY rowid")
        while rows := cur.fetchmany(batch):
            yield [(i, t, bool(d), a, json.loads(k) if k else []) for i, t, d, a, k in rows]

    def vector_ids(self, model: str) -> list[str]:
        """Paper ids that have a vector of `model`, in the order of load_vectors / iter_vectors."""
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT v.paper_id FROM vectors v JOIN papers p ON p.id = v.paper_id WHERE v.model=? ORDER BY p.rowid",
                (model,),
            )
        ]

    def iter_vectors(self, model: str, batch: int = 50_000) -> Iterator[tuple[list[str], np.ndarray]]:
        """load_vectors() in batches of `batch` rows: (ids, float32 matrix) each."""
        cur = self.conn.execute(
            "SELECT v.paper_id, v.vec FROM vectors v JOIN papers p ON p.id = v.paper_id"
            " WHERE v.model=? ORDER BY p.rowid",
            (model,),
        )
        while rows := cur.fetchmany(batch):
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
            yield [r[0] for r in rows], mat

    def vector_count(self, model: str) -> int:
        return self.conn.execute("SELECT count(*) FROM vectors WHERE model=?", (model,)).fetchone()[0]

    def change_token(self) -> tuple[int, int, int]:
        """Changes whenever anything in the file may have changed (O(1), unlike data_version):
        (thread, commits by other connections, changes by this thread's connection)."""
        c = self.conn
        return threading.get_ident(), c.execute("PRAGMA data_version").fetchone()[0], c.total_changes

    def data_version(self) -> tuple[int, str]:
        """Changes whenever papers change: (count, max updated_at); cheap cache key for indexes."""
        n, ts = self.conn.execute("SELECT count(*), coalesce(max(updated_at), '') FROM papers").fetchone()
        return n, ts

    def papers_signature(self) -> str:
        """A hash of every paper's id and content hash: unlike data_version (whose timestamp has a
        one-second resolution) it changes with any edit of a paper, for caches kept across processes."""
        h = hashlib.sha1()
        for pid, chash in self.conn.execute("SELECT id, content_hash FROM papers ORDER BY id"):
            h.update(f"{pid}\x00{chash}\x00".encode("utf-8", "surrogatepass"))
        return h.hexdigest()

    # -- FTS5 --------------------------------------------------------------------------
    def fts_search(
        self, match: str, limit: int, weights: tuple[float, ...] = (3.0, 1.0, 0.5, 1.0)
    ) -> list[tuple[str, float]]:
        """Ranked FTS5 match; `match` must already be a safe FTS5 expression."""
        w = ", ".join(str(float(x)) for x in weights)
        q = (
            f"SELECT p.id, bm25(papers_fts, {w}) AS s FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
            " WHERE papers_fts MATCH ? ORDER BY s LIMIT ?"
        )
        return [(pid, -s) for pid, s in self.conn.execute(q, (match, int(limit)))]

    # -- vectors -----------------------------------------------------------------------
    def vector_models(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT model, count(*) FROM vectors GROUP BY model"))

    def text_hashes_for_model(self, model: str) -> dict[str, str]:
        return dict(self.conn.execute("SELECT paper_id, content_hash FROM vectors WHERE model=?", (model,)))

    def put_vectors(self, model: str, rows: Sequence[tuple[str, str, np.ndarray]]) -> None:
        with self.transaction() as c:
            c.executemany(
                "INSERT OR REPLACE INTO vectors(paper_id, model, content_hash, vec) VALUES (?, ?, ?, ?)",
                [(pid, model, h, np.asarray(v, dtype=np.float32).tobytes()) for pid, h, v in rows],
            )

    def load_vectors(self, model: str) -> tuple[list[str], np.ndarray]:
        """All vectors of `model` for papers still in the library, in paper rowid order."""
        ids: list[str] = []
        blobs: list[bytes] = []
        for pid, blob in self.conn.execute(
            "SELECT v.paper_id, v.vec FROM vectors v JOIN papers p ON p.id = v.paper_id"
            " WHERE v.model=? ORDER BY p.rowid",
            (model,),
        ):
            ids.append(pid)
            blobs.append(blob)
        if not blobs:
            return [], np.zeros((0, 0), dtype=np.float32)
        mat = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        return ids, mat

    def delete_vectors(self, model: str | None = None) -> int:
        with self.transaction() as c:
            if model is None:
                return c.execute("DELETE FROM vectors").rowcount
            return c.execute("DELETE FROM vectors WHERE model=?", (model,)).rowcount

    # -- when papers arrived (digests) ---------------------------------------------------
    def papers_added_since(self, since: str) -> set[str]:
        """Ids of papers first added at or after `since` (an ISO date or timestamp)."""
        return {r[0] for r in self.conn.execute("SELECT id FROM papers WHERE added_at >= ?", (since,))}

    def papers_added_at(self, paper_ids: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for i in range(0, len(paper_ids), 900):
            chunk = paper_ids[i : i + 900]
            q = f"SELECT id, added_at FROM papers WHERE id IN ({','.join('?' * len(chunk))})"
            out.update(dict(self.conn.execute(q, chunk)))
        return out

    def copy_to(self, path: str | Path) -> None:
        """A consistent copy of the whole library file (SQLite's online backup), e.g. for benchmarks."""
        dst = sqlite3.connect(str(path))
        try:
            with dst:
                self.conn.backup(dst)
        finally:
            dst.close()

    def file_size(self) -> int:
        if self.path == ":memory:":
            return 0
        p = Path(self.path)
        return sum(f.stat().st_size for f in (p, Path(self.path + "-wal")) if f.exists())

    @property
    def index_root(self) -> Path | None:
        """Where this host keeps the library's derived indexes (None: in memory only)."""
        if self.path == ":memory:":
            return None
        if self.read_only:  # nothing may appear beside a library served read-only
            from ..embed.quantize import cache_dir

            real = Path(self.path).expanduser().resolve()
            digest = hashlib.sha256(str(real).encode()).hexdigest()[:16]
            return cache_dir() / "read-only" / f"{real.name}-{digest}"
        return Path(self.path + ".index")

    # -- whole tables, for `paperatlas copy` -------------------------------------------------
    def table_names(self) -> list[str]:
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                " AND name NOT LIKE 'papers_fts%' ORDER BY name"
            )
        ]

    def table_columns(self, table: str) -> list[str]:
        return [r[1] for r in self.conn.execute(f"PRAGMA table_info({_ident(table)})")]

    def read_rows(self, table: str, columns: Sequence[str], batch: int = 5_000) -> Iterator[list[tuple[Any, ...]]]:
        cols = ", ".join(_ident(c) for c in columns)
        cur = self.conn.execute(f"SELECT {cols} FROM {_ident(table)}")
        while rows := cur.fetchmany(batch):
            yield [tuple(r) for r in rows]

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        cols = ", ".join(_ident(c) for c in columns)
        marks = ", ".join("?" * len(columns))
        with self.transaction() as c:
            c.executemany(f"INSERT INTO {_ident(table)} ({cols}) VALUES ({marks})", rows)

    def after_bulk_load(self) -> None:
        """After rows were copied in: the FTS5 index from the papers table."""
        self.conn.execute("INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')")
        self.fulltext.rebuild_index()

    def execute_script_for_tests(self, sql: str) -> list[tuple[Any, ...]]:
        """Raw SQL for tests and integrity checks only."""
        return list(self.conn.execute(sql))


def _set_wal(c: sqlite3.Connection, wait: float = 30.0) -> None:
    """WAL mode, waiting while another process holds the file: switching the journal mode of a
    new library does not go through SQLite's busy handler, so two processes creating one library
    at once (two ingests) got 'database is locked' here."""
    deadline = time.monotonic() + wait
    while True:
        try:
            c.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _ident(name: str) -> str:
    """A table or column name from our own schema, checked before it goes into SQL."""
    if not name.replace("_", "").isalnum():
        raise PaperatlasError(f"not a table or column name: {name!r}", "this is a bug in paperatlas: please report it")
    return name


def _split_sql(sql: str) -> list[str]:
    """Split a migration into statements, keeping trigger bodies (BEGIN ... END;) whole."""
    out: list[str] = []
    buf: list[str] = []
    depth = 0
    for line in sql.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        buf.append(line)
        upper = stripped.upper()
        if upper.endswith("BEGIN"):
            depth += 1
        if upper == "END;":
            depth -= 1
        if depth == 0 and stripped.endswith(";"):
            out.append("\n".join(buf))
            buf = []
    if buf:
        out.append("\n".join(buf))
    return out
