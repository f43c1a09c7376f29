"""An on-disk cache of embeddings keyed by (model id, sha1 of the text).

Shared by every library, evaluation and benchmark on the machine, so the slow
part (a transformer on 2 cores) runs once per text. Location: $PAPERATLAS_VECTOR_CACHE,
else ~/.cache/paperatlas/vectors.sqlite. Set PAPERATLAS_VECTOR_CACHE=off to disable.

The cache is bounded ($PAPERATLAS_VECTOR_CACHE_MB, default 512 MB; 0 = no bound): past the bound the
least recently used vectors go (each read or write stamps its rows), so a machine that embeds many
corpora keeps the ones it still uses instead of growing without end.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import settings


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def default_cache_path() -> Path | None:
    env = settings.get("vector_cache")
    if env and env.lower() in ("off", "0", "none", "false"):
        return None
    return Path(env) if env else Path.home() / ".cache" / "paperatlas" / "vectors.sqlite"


DEFAULT_MAX_MB = int(settings.setting("vector_cache_mb").default)


def default_max_bytes() -> int | None:
    """The size bound from $PAPERATLAS_VECTOR_CACHE_MB (default 512 MB); None when it is 0 (no bound)."""
    mb = int(settings.get("vector_cache_mb"))
    return mb * 1024 * 1024 if mb > 0 else None


def _now() -> int:
    return time.time_ns() // 1000  # microseconds: reads and writes within one second still order


class VectorCache:
    # bytes one entry takes beside its vector (model, hash, stamp, b-tree and index cells): ~ what
    # SQLite files of 384-dimension vectors measure per row
    ENTRY_OVERHEAD = 160
    EVICT_TO = 0.9  # evict down to 90% of the bound, so a full cache does not evict on every write

    def __init__(self, path: Path | None = None, max_bytes: int | None = -1) -> None:
        """`max_bytes`: the size bound (default from $PAPERATLAS_VECTOR_CACHE_MB; None = no bound)."""
        self.path = path if path is not None else default_cache_path()
        self.max_bytes = default_max_bytes() if max_bytes == -1 else max_bytes
        self._conn: sqlite3.Connection | None = None

    @property
    def enabled(self) -> bool:
        return self.path is not None

    def _c(self) -> sqlite3.Connection:
        if self._conn is None:
            assert self.path is not None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            c = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            c.execute("PRAGMA journal_mode=WAL")
            c.execute(
                "CREATE TABLE IF NOT EXISTS vec (model TEXT, hash TEXT, v BLOB, used INTEGER NOT NULL DEFAULT 0,"
                " PRIMARY KEY (model, hash)) WITHOUT ROWID"
            )
            if "used" not in {row[1] for row in c.execute("PRAGMA table_info(vec)")}:
                c.execute("ALTER TABLE vec ADD COLUMN used INTEGER NOT NULL DEFAULT 0")  # a cache from before the bound
            c.execute("CREATE INDEX IF NOT EXISTS vec_used ON vec(used)")
            self._conn = c
        return self._conn

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        if not self.enabled or not hashes:
            return {}
        out: dict[str, np.ndarray] = {}
        c = self._c()
        for i in range(0, len(hashes), 900):
            chunk = list(hashes[i : i + 900])
            q = f"SELECT hash, v FROM vec WHERE model=? AND hash IN ({','.join('?' * len(chunk))})"
            hit = []
            for h, blob in c.execute(q, [model, *chunk]):
                out[h] = np.frombuffer(blob, dtype=np.float32)
                hit.append(h)
            if hit and self.max_bytes is not None:  # stamp what was used, so eviction spares it
                c.execute(
                    f"UPDATE vec SET used=? WHERE model=? AND hash IN ({','.join('?' * len(hit))})",
                    [_now(), model, *hit],
                )
        return out

    def put_many(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        if not self.enabled or not items:
            return
        c = self._c()
        now = _now()
        rows = [(model, h, np.asarray(v, dtype=np.float32).tobytes(), now) for h, v in items]
        c.execute("BEGIN IMMEDIATE")
        try:
            c.executemany("INSERT OR REPLACE INTO vec (model, hash, v, used) VALUES (?, ?, ?, ?)", rows)
            if self.max_bytes is not None:
                self._evict(c, len(rows[0][2]) + self.ENTRY_OVERHEAD)
        except BaseException:
            c.execute("ROLLBACK")
            raise
        c.execute("COMMIT")

    def _evict(self, c: sqlite3.Connection, entry_bytes: int) -> None:
        """Drop the least recently used rows once the cache holds more than max_bytes (rows counted at the
        size of the vectors just written); freed pages are reused, so the file stops growing."""
        assert self.max_bytes is not None
        cap = max(1, self.max_bytes // entry_bytes)
        (n,) = c.execute("SELECT count(*) FROM vec").fetchone()
        if n > cap:
            drop = n - int(cap * self.EVICT_TO)
            c.execute(
                "DELETE FROM vec WHERE (model, hash) IN (SELECT model, hash FROM vec ORDER BY used LIMIT ?)", (drop,)
            )

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def embed_cached(
    embedder, texts: Sequence[str], cache: VectorCache | None = None, batch_size: int = 64, progress=None
) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Embed `texts` through the cache: only texts never seen by this model run the model."""
    cache = cache or VectorCache()
    hashes = [text_hash(t) for t in texts]
    found = cache.get_many(embedder.id, list(dict.fromkeys(hashes)))
    todo = [i for i, h in enumerate(hashes) if h not in found]
    done = len(texts) - len(todo)
    if progress:
        progress(done, len(texts))
    for s in range(0, len(todo), batch_size):
        idx = todo[s : s + batch_size]
        vecs = embedder.embed([texts[i] for i in idx])
        cache.put_many(embedder.id, [(hashes[i], v) for i, v in zip(idx, vecs)])
        for i, v in zip(idx, vecs):
            found[hashes[i]] = v
        done += len(idx)
        if progress:
            progress(done, len(texts))
    if not texts:
        return np.zeros((0, embedder.dimensions), dtype=np.float32)
    return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)
