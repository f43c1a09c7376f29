"""Passages of papers' bodies by meaning: embedded with the library's own model (through the shared
vector cache), stored per paper and passage text, and searched beside the keyword index.

Embedding is the expensive part (a conference is ~300,000 passages; docs/fulltext.md gives the
measured rate), so it is done for the papers that matter when they matter (a PDF attached by hand,
a paper saved or scheduled, a paper asked about) and on demand for the rest (`fulltext embed`).
The model runs outside the write lock; each batch is stored in a short transaction of its own, so
a run that is stopped resumes with what is left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import LibraryCore
from ..index.numpy import NumpyIndex
from ..store.vector_cache import embed_cached

#: passages embedded between two writes: a batch is searchable (and survives a kill) soon after it is made
STEP = 256


@dataclass
class EmbedReport:
    """What `fulltext embed` did."""

    papers: int = 0  # papers whose passages were embedded (or completed)
    passages: int = 0  # passage texts embedded and stored
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class PassageVectors:
    """`lib.fulltext.vectors`: embed passages and find the nearest ones to a question."""

    def __init__(self, lib: LibraryCore) -> None:
        self.lib = lib
        self._index: tuple[Any, str, NumpyIndex] | None = None  # (change token, model, index)

    @property
    def store(self) -> Any:
        return self.lib.store.fulltext

    @property
    def model(self) -> str:
        return self.lib.embedder.id

    def todo(self, paper_ids: Sequence[str] | None = None) -> list[str]:
        """The papers (of `paper_ids`, or every paper read) with a passage not embedded yet."""
        return self.store.papers_to_embed(self.model, paper_ids)

    def embed(
        self,
        paper_ids: Sequence[str] | None = None,
        progress: Callable[[int, int], None] | None = None,
        batch_size: int = 32,
    ) -> EmbedReport:
        """Embed the passages of these papers (None: every paper read) that have no vector yet.

        `progress(done, total)` counts passages. Each batch is written in its own short transaction
        under the write lock. The papers' embed lock is not taken: an embed of a whole library's
        papers never makes a PDF attached meanwhile wait (two passage embeds at once only repeat
        work; the shared vector cache and INSERT OR IGNORE keep one vector per text)."""
        report = EmbedReport(model=self.model)
        if self.lib.read_only:
            return report
        with self.lib.store.write_lock(self.lib.on_wait):
            self.store.fill_hashes()  # passages stored before their text was hashed
        papers = self.todo(paper_ids)
        if not papers:
            return report
        # the passages to embed, paper by paper, in steps of about STEP texts
        chunks: list[list[tuple[str, str, str]]] = []
        current: list[tuple[str, str, str]] = []
        for s in range(0, len(papers), 200):
            for row in self.store.passages_to_embed(self.model, papers[s : s + 200]):
                current.append(row)
                if len(current) >= STEP:
                    chunks.append(current)
                    current = []
        if current:
            chunks.append(current)
        total = sum(len(c) for c in chunks)
        done = 0
        if progress:
            progress(0, total)
        for chunk in chunks:

            def sub(n: int, _m: int, base: int = done) -> None:
                if progress:
                    progress(base + n, total)

            vecs = embed_cached(self.lib.embedder, [t for _, _, t in chunk], self.lib.vector_cache, batch_size, sub)
            with self.lib.store.write_lock(self.lib.on_wait):
                report.passages += self.store.put_passage_vectors(
                    self.model, [(pid, h, v) for (pid, h, _), v in zip(chunk, vecs)]
                )
            done += len(chunk)
        report.papers = len(papers)
        if report.passages:
            self.lib.remember_embedder()
        return report

    def counts(self) -> dict[str, int]:
        """Passages embedded by the library's model, of all stored."""
        return {"embedded": self.store.embedded_count(self.model), "passages": self.store.passage_count()}

    def query_vector(self, question: str) -> np.ndarray:
        return self.lib.engine.query_vector(question)

    def index_for(self, paper_ids: Sequence[str] | None = None) -> NumpyIndex:
        """The embedded passages of these papers (None: of the library), as a vector index whose ids
        are the passages' rowids (as text); empty when none is embedded."""
        if paper_ids is None:
            return self._library_index()
        index = NumpyIndex()
        rowids, mat = self.store.passage_vectors(self.model, paper_ids)
        if rowids:
            index.build([str(r) for r in rowids], mat)
        return index

    def _library_index(self) -> NumpyIndex:
        """Every embedded passage, loaded once per change of the library."""
        token = self.lib.store.change_token()
        if self._index is not None and self._index[0] == token and self._index[1] == self.model:
            return self._index[2]
        rowids, mat = self.store.passage_vectors(self.model)
        index = NumpyIndex()
        if rowids:
            index.build([str(r) for r in rowids], mat)
        self._index = (token, self.model, index)
        return index
