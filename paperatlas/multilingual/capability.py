"""Multilingual: the library setting, the build (resumable, batch by batch) and its progress."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ..core import heard
from ..embed.base import EMBEDDERS, MULTILINGUAL_EMBEDDER, Embedder
from ..ingest.pipeline import Progress
from ..store.vector_cache import embed_cached, text_hash

if TYPE_CHECKING:
    from ..core import LibraryCore


class Multilingual:
    """The library's multilingual index.

    Example:
        >>> lib.multilingual.build()  # doctest: +SKIP
        >>> lib.multilingual.status()["embedded"]  # doctest: +SKIP
    """

    def __init__(self, lib: LibraryCore) -> None:
        self._lib = lib
        self._store = lib.store
        self._embedder: Embedder | None = None
        self._build_embedder: Embedder | None = None
        self._lock = threading.Lock()  # one build at a time per library (the server may start one too)
        self._claim = threading.Lock()  # two first Chinese queries at once claim one build
        self._build: dict[str, Any] = {}  # the build in progress (see status)

    @property
    def embedder(self) -> Embedder:
        """The model of the second index, which queries in CJK script search (see embed/multilingual.py)."""
        if self._embedder is None:
            self._embedder = EMBEDDERS.create(MULTILINGUAL_EMBEDDER)
        return self._embedder

    def build_embedder(self) -> Embedder:
        """The build's own instance of the model: each instance runs one call at a time, so a query's
        embedding never waits behind a batch of the build (the engine allocates its buffers per call and
        maps the weights read-only, so a second instance costs little memory)."""
        if self._build_embedder is None:
            self._build_embedder = EMBEDDERS.create(MULTILINGUAL_EMBEDDER)
        return self._build_embedder

    def search_embedder(self) -> Embedder:
        """The model queries in CJK script are searched with (the library's search engine asks for it)."""
        return self.embedder

    def side_models(self) -> set[str]:
        """The models whose vectors this capability keeps beside the library's own (not a mismatch)."""
        return {self.embedder.id}

    @property
    def enabled(self) -> bool:
        """The library setting: keep a multilingual index (`paperatlas embed --multilingual` turns it on)."""
        return self._store.get_meta("multilingual") == "on"

    def set_enabled(self, on: bool) -> None:
        """Turn the multilingual index on (built by `build`) or off (its vectors dropped)."""
        self._store.set_meta("multilingual", "on" if on else "off")
        if not on:
            self._store.delete_vectors(self.embedder.id)

    def todo(self) -> list[tuple[str, str, str]]:
        """(paper id, text hash, text) of the papers whose multilingual vector is missing or stale."""
        from ..embed.multilingual import passage_text

        have = self._store.text_hashes_for_model(self.embedder.id)
        todo = []
        for batch in self._store.iter_texts():
            for pid, title, derived, abstract in batch:
                text = passage_text(title, abstract, derived)
                h = text_hash(text)
                if have.get(pid) != h:
                    todo.append((pid, h, text))
        return todo

    def build(self, progress: Progress | None = None, batch_size: int = 16) -> int:
        """Embed the papers missing from the multilingual index (title + first 60 words of the
        abstract), batch by batch: each batch is committed, so an interrupted run resumes and
        search uses what exists. Turns the setting on. Returns the number of papers embedded.

        Cost: ~7 papers/s on one core, 3-4x MiniLM's time (`paperatlas bench crosslingual`)."""
        with self._lock:
            if not self.enabled:
                self._store.set_meta("multilingual", "on")
            todo = self.todo()
            emb = self.build_embedder()
            state = self._build = {"done": 0, "total": len(todo), "started": time.monotonic()}
            try:
                step = max(batch_size * 4, 64)
                for s in range(0, len(todo), step):
                    chunk = todo[s : s + step]

                    def sub(done: int, total: int, s: int = s) -> None:
                        state["done"] = s + done
                        if progress:
                            progress(s + done, len(todo))

                    vecs = embed_cached(emb, [t for _, _, t in chunk], self._lib.vector_cache, batch_size, sub)
                    self._store.put_vectors(emb.id, [(pid, h, v) for (pid, h, _), v in zip(chunk, vecs)])
            finally:
                self._build = {}
        return len(todo)

    def after_embed(self, listener: Any = None) -> int:
        """The library's hook after its own vectors are brought up to date: the multilingual index
        follows, when it is on. Returns the papers it embedded."""
        if not self.enabled:
            return 0
        return heard(listener, "multilingual", self.embedder.id, len(self.todo()), lambda update: self.build(update))

    def claim(self) -> bool:
        """Announce a build about to start elsewhere (a server's background thread): `status` shows it
        building from now on. False when a build already runs or is claimed; `release` undoes a claim
        whose build never ran."""
        with self._claim:
            if self._build or self._lock.locked():
                return False
            waiting = max(0, self._lib.count() - self._store.vector_count(self.embedder.id))
            self._build = {"done": 0, "total": waiting, "started": time.monotonic()}  # until the build counts
            return True

    def release(self) -> None:
        self._build = {}

    def status(self) -> dict[str, Any]:
        """Whether Chinese (CJK) queries can search by meaning, and the build's progress and ETA:
        {"enabled", "model", "papers", "embedded", "building", "done", "total", "eta_s"}."""
        model = self.embedder.id
        papers = self._lib.count()
        st: dict[str, Any] = {
            "enabled": self.enabled,
            "model": model,
            "papers": papers,
            "embedded": min(self._store.vector_count(model), papers),
            "building": False,
        }
        b = dict(self._build)
        if b:
            elapsed = time.monotonic() - b["started"]
            rate = b["done"] / elapsed if elapsed > 0 and b["done"] else 0.0
            left = b["total"] - b["done"]
            st.update(
                building=True,
                done=b["done"],
                total=b["total"],
                papers_per_s=round(rate, 2),
                eta_s=round(left / rate) if rate else None,
            )
        return st
