"""Score vectors a recommender derived, saved beside the library so that a new process (a CLI call, a
server worker) reuses them instead of refitting.

A vector is saved under a key that hashes everything it was computed from (the corpus's feature
matrices and the training rows), so an entry can never be stale: a changed library or history is a
different key. Plain .npy files (nothing that unpickles); the oldest are dropped past `keep`.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import numpy as np

from .base import Corpus

FOLDER = "recommend-saved"


def fingerprint(corpus: Corpus) -> str:
    """A hash of the corpus's features (TF-IDF and embeddings), computed once per corpus."""
    fp = corpus.cache.get("fingerprint")
    if fp is None:
        h = hashlib.sha1()
        x = corpus.tfidf
        for a in (x.indptr, x.indices, x.data):
            h.update(np.ascontiguousarray(a).tobytes())
        h.update(repr(x.shape).encode())
        if corpus.emb is not None:
            h.update(np.ascontiguousarray(corpus.emb).tobytes())
        fp = corpus.cache["fingerprint"] = h.hexdigest()
    return str(fp)


def key(corpus: Corpus, *parts: Any) -> str:
    """The key of a vector computed from `corpus` and `parts` (arrays, numbers, strings)."""
    h = hashlib.sha1(fingerprint(corpus).encode())
    for p in parts:
        h.update(b"\x00")
        h.update(np.ascontiguousarray(p).tobytes() if isinstance(p, np.ndarray) else repr(p).encode())
    return h.hexdigest()


class SavedScores:
    """One folder of saved score vectors (None: nothing is saved, e.g. an in-memory library)."""

    def __init__(self, folder: Path | None, keep: int = 256) -> None:
        self.folder = folder
        self.keep = keep

    def get(self, key: str, n: int) -> np.ndarray | None:
        if self.folder is None:
            return None
        try:
            v = np.load(self.folder / f"{key}.npy", allow_pickle=False)
        except (OSError, ValueError):
            return None
        return v if v.shape == (n,) and v.dtype == np.float32 else None

    def put(self, key: str, v: np.ndarray) -> None:
        """Write beside, then rename (a reader never sees half a file); a read-only folder saves nothing."""
        if self.folder is None:
            return
        tmp = self.folder / f".{key}.{os.getpid()}.tmp"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as fh:
                np.save(fh, np.asarray(v, dtype=np.float32))
            os.replace(tmp, self.folder / f"{key}.npy")
            files = sorted(self.folder.glob("*.npy"), key=lambda f: f.stat().st_mtime)
            for f in files[: max(0, len(files) - self.keep)]:
                f.unlink(missing_ok=True)
        except OSError:
            tmp.unlink(missing_ok=True)


def saved_scores(corpus: Corpus) -> SavedScores:
    """The corpus's folder of saved vectors (set by whoever built the corpus; none: nothing saved)."""
    s = corpus.cache.get("saved")
    return s if isinstance(s, SavedScores) else SavedScores(None)
