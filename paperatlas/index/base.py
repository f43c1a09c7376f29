"""VectorIndex protocol and registry: nearest neighbours over L2-normalised vectors."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from ..registry import Registry


class VectorIndex(Protocol):
    def build(self, ids: list[str], vectors: np.ndarray) -> None: ...

    def search(self, query: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[tuple[str, float]]:
        """Top-k (id, cosine) for one query vector; `allowed` is a bool mask over build order."""
        ...

    def __len__(self) -> int: ...


VECTOR_INDEXES: Registry[VectorIndex] = Registry("vector index")


@VECTOR_INDEXES.register("numpy")
def _numpy(**options: Any) -> VectorIndex:
    from .numpy import NumpyIndex

    return NumpyIndex(**options)


@VECTOR_INDEXES.register("faiss-ivf")
def _faiss_ivf(**options: Any) -> VectorIndex:
    from .faiss_ivf import FaissIvfIndex

    return FaissIvfIndex(**options)
