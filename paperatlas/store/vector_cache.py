"""An on-disk cache of embeddings keyed by (model id, sha1 of the text).

Shared by every library, evaluation and benchmark on the machine, so the slow
part (a transformer on 2 cores) runs once per text. Location: $PAPERATLAS_VECTOR_CACHE,
else ~/.cache/paperatlas/vectors.sqlite. Set PAPERATLAS_VECTOR_CACHE=off to disable.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def default_cache_path() -> Path | None:
    env = os.environ.get("PAPERATLAS_VECTOR_CACHE")
    if env and env.lower() in ("off", "0", "none", "false"):
        return None
    return Path(env) if env else Path.home() / ".cache" / "paperatlas" / "vectors.sqlite"


class VectorCache:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_cache_path()
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
            c.execute("CREATE TABLE IF NOT EXISTS vec (model TEXT, hash TEXT, v BLOB, PRIMARY KEY (model, hash))"
                      " WITHOUT ROWID")
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
            for h, blob in c.execute(q, [model, *chunk]):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, model: str, items: Sequence[tuple[str, np.ndarray]]) -> None:
        if not self.enabled or not items:
            return
        c = self._c()
        c.execute("BEGIN IMMEDIATE")
        c.executemany("INSERT OR REPLACE INTO vec VALUES (?, ?, ?)",
                      [(model, h, np.asarray(v, dtype=np.float32).tobytes()) for h, v in items])
        c.execute("COMMIT")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def embed_cached(embedder, texts: Sequence[str], cache: VectorCache | None = None, batch_size: int = 64,
                 progress=None) -> np.ndarray:  # type: ignore[no-untyped-def]
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
