"""A deterministic, dependency-free embedder: hashed word and bigram counts.

Fast enough for unit tests of everything that needs vectors; not for real use."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"\w+", re.U)


class HashingEmbedder:
    def __init__(self, dimensions: int = 256) -> None:
        self.dimensions = dimensions
        self.id = f"hashing-{dimensions}"

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dimensions, dtype=np.float32)
        words = [w.lower() for w in _WORD.findall(text)]
        for tok in words + [a + " " + b for a, b in zip(words, words[1:])]:
            h = int.from_bytes(hashlib.blake2b(tok.encode(), digest_size=8).digest(), "little")
            v[h % self.dimensions] += 1.0 if (h >> 63) & 1 else -1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self._vec(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)
