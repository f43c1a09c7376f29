"""Topics as `lib.topics`: build them from the library's embeddings, store them, read them back, and
the data of the paper map."""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import PaperatlasError
from ..files import swap_in
from ..models import Paper
from ..readers import Readers
from ..safety import safe_url
from .pipeline import LEVELS, Progress, Topic, TopicModel, TopicPipeline

MAP_FORMAT = 1  # bump when the map's paper columns change: a kept one of another format is derived again

if TYPE_CHECKING:
    from ..core import LibraryCore


class Topics:
    """The library's topics at two levels and its 2-D map.

    Example:
        >>> lib.topics.build(seed=0)  # doctest: +SKIP
        >>> [t.label for t in lib.topics.at_level("coarse")][:3]  # doctest: +SKIP
    """

    def __init__(self, lib: LibraryCore, readers: Readers) -> None:
        self._lib = lib
        self._store = lib.store
        self._readers = readers

    # -- building -------------------------------------------------------------------------------
    def vectors(self) -> tuple[list[str], np.ndarray]:
        """(ids, vectors) of every embedded paper, from the library's vector index."""
        idx = self._lib.engine.vector_index()
        if idx is None or not len(idx):
            raise PaperatlasError(
                "this library has no embeddings yet, so it has no topics",
                "run `paperatlas embed`, then `paperatlas topics build`",
            )
        return list(idx.ids), np.asarray(idx.matrix, dtype=np.float32)

    def texts(self, ids: Sequence[str]) -> list[str]:
        """The text (title and abstract) of each paper of `ids`, as its embedding saw it."""
        texts = {pid: Paper(pid, t, a, title_derived=d).text for pid, t, d, a in self._store.all_texts()}
        return [texts.get(pid, "") for pid in ids]

    def build(
        self,
        seed: int = 0,
        layout: str = "neighbors",
        k: int | None = None,
        progress: Progress | None = None,
        **options: Any,
    ) -> TopicModel:
        """Recompute the library's topics and map, and store them (replacing the old ones).

        Args:
            seed: the same seed on the same library gives the same topics and map.
            layout: a registered layout ("neighbors", "umap", "tsne", "pca").
            k: force the number of coarse topics (default: chosen by silhouette).
            progress: called with the name of each step.

        Returns:
            The TopicModel that was stored.

        Raises:
            PaperatlasError: the library has no embeddings yet.
        """
        t0 = time.perf_counter()
        ids, vectors = self.vectors()
        texts = self.texts(ids)
        model = TopicPipeline(layout=layout, seed=seed, k=k, **options).fit(ids, vectors, texts, progress)
        model.meta["embedder"] = self._lib.embedder.id
        model.meta["data_version"] = list(self._store.data_version())
        model.meta["built_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        model.meta["seconds"]["total"] = round(time.perf_counter() - t0, 3)
        self.save(model)
        return model

    def save(self, model: TopicModel) -> None:
        """Store a fitted model's topics and paper placements (replacing the old ones)."""
        topics = [(t.level, t.topic, t.parent, t.size, t.label, t.phrases, t.central, t.x, t.y) for t in model.topics]
        papers = [
            (pid, int(c), int(f), round(float(x), 5), round(float(y), 5), ph)
            for pid, c, f, (x, y), ph in zip(model.ids, model.coarse, model.fine, model.xy, model.paper_phrases)
        ]
        # what was built, unlike built_at (one-second resolution), names each save: the key of derived data
        model.meta["build_id"] = secrets.token_hex(8)
        self._store.topics.replace_topics(topics, papers, model.phrase_df, model.meta)

    # -- reading --------------------------------------------------------------------------------
    def at_level(self, level: str = "coarse") -> list[Topic]:
        """The stored topics of one level, largest first. Raises when none were built."""
        if level not in LEVELS:
            raise PaperatlasError(f"unknown topic level {level!r}", f"use one of: {', '.join(LEVELS)}")
        meta = self._store.topics.topics_meta()
        if not meta:
            raise PaperatlasError("this library has no topics yet", "run `paperatlas topics build`")
        rows = self._store.topics.list_topics(level)
        topics = [
            Topic(
                level=r["level"],
                topic=r["topic"],
                size=r["size"],
                label=r["label"],
                phrases=r["phrases"],
                central=r["central"],
                parent=r["parent"],
                x=r["x"],
                y=r["y"],
            )
            for r in rows
        ]
        return sorted(topics, key=lambda t: (-t.size, t.topic))

    def status(self) -> dict[str, Any]:
        """The last build's metadata, plus whether the library changed since (papers added/edited)."""
        meta = self._store.topics.topics_meta()
        if not meta:
            return {"built": False}
        now = list(self._store.data_version())
        return {"built": True, "stale": meta.get("data_version") != now, **meta}

    def version(self) -> tuple[Any, ...]:
        """Changes when the topics are rebuilt or the papers change (a cache key for map data)."""
        meta = self._store.topics.topics_meta() or {}
        return (meta.get("built_at"), tuple(self._store.data_version()))

    # -- the map --------------------------------------------------------------------------------
    def map_data(self, reader: str | None = None, venue: str | None = None, year: int | None = None) -> dict[str, Any]:
        """Everything the map draws, column-oriented: one entry per paper in each list.

        Keys: ids, title, venue (index into `venues`), year, url, authors (first three),
        x, y (in [-1, 1]), coarse, fine (topic numbers), phrases (per paper: indices into
        `vocab`), topics {"coarse": [...], "fine": [...]} (label, phrases, size, x, y,
        parent, central as paper indices), saved (indices of the reader's liked papers),
        events (paper index as a string -> [[type, session, when, place], ...] for the papers
        the programme presents), meta.

        Raises PaperatlasError when the library has no topics yet.
        """
        store = self._store
        meta = store.topics.topics_meta()
        if not meta:
            raise PaperatlasError(
                "this library has no topics yet, so there is no map",
                "run `paperatlas topics build` (after `paperatlas embed`)",
            )
        data = self._map_papers(meta, venue, year)
        order: list[str] = data["ids"]
        pos = {pid: i for i, pid in enumerate(order)}
        events: dict[str, list[list[str]]] = {}
        # paper ids -> {id: [[type, session, when, place], ...]}: where the papers are presented (a
        # capability's map_places, the programme's), shown in a point's details
        for places in self._lib.contributions("map_places"):
            events.update({str(pos[pid]): evs for pid, evs in places(order).items() if pid in pos})
        saved: list[int] = []
        if reader:
            saved = [pos[p.id] for p in self._readers.liked(reader) if p.id in pos]
        return {**data, "saved": saved, "events": events}

    def _map_papers(self, meta: dict[str, Any], venue: str | None, year: int | None) -> dict[str, Any]:
        """What the map draws of the papers and topics (not the reader's likes nor the programme's
        events): every paper read back from the store, seconds at 100k papers, so it is kept in
        the library's index folder for the next process until the topics or any paper change."""
        store = self._store
        folder = self._lib.engine.index_folder("map")
        # across processes, so keyed by every paper's content too (data_version's timestamp has a
        # one-second resolution)
        key = repr((MAP_FORMAT, sorted(meta.items()), self.version(), store.papers_signature(), venue, year))
        if folder is not None:
            try:
                if (folder / "key.txt").read_text(encoding="utf-8") == key:
                    loaded = json.loads((folder / "map.json").read_text(encoding="utf-8"))
                    if isinstance(loaded, dict):
                        return loaded
            except (OSError, ValueError):
                pass  # none kept yet, or half of one: derive it again
        placed = store.topics.paper_topics()
        allowed = store.filter_ids(venue, year, None)
        papers = store.get_papers([pid for pid in placed if allowed is None or pid in allowed])
        order = sorted(papers, key=lambda pid: (placed[pid]["coarse"], placed[pid]["fine"], pid))
        venues: dict[str, int] = {}
        vocab: dict[str, int] = {}
        pos = {pid: i for i, pid in enumerate(order)}
        cols: dict[str, list[Any]] = {
            k: [] for k in ("ids", "title", "venue", "year", "url", "authors", "x", "y", "coarse", "fine", "phrases")
        }
        for pid in order:
            p, t = papers[pid], placed[pid]
            cols["ids"].append(pid)
            cols["title"].append(p.title)
            cols["venue"].append(venues.setdefault(p.venue or "", len(venues)))
            cols["year"].append(p.year or 0)
            cols["url"].append(safe_url(p.url))  # the map links it: http(s) only
            cols["authors"].append(", ".join(p.authors[:3]) + (" et al." if len(p.authors) > 3 else ""))
            cols["x"].append(round(float(t["x"]), 4))
            cols["y"].append(round(float(t["y"]), 4))
            cols["coarse"].append(int(t["coarse"]))
            cols["fine"].append(int(t["fine"]))
            cols["phrases"].append([vocab.setdefault(ph, len(vocab)) for ph in t["phrases"]])
        topics: dict[str, list[dict[str, Any]]] = {}
        for level in ("coarse", "fine"):
            topics[level] = [
                {
                    "id": t.topic,
                    "label": t.label,
                    "phrases": t.phrases,
                    "size": t.size,
                    "x": round(t.x, 4),
                    "y": round(t.y, 4),
                    "parent": t.parent,
                    "central": [pos[c] for c in t.central if c in pos],
                }
                for t in sorted(self.at_level(level), key=lambda t: t.topic)
            ]
        data = {
            **cols,
            "venues": list(venues),
            "vocab": list(vocab),
            "topics": topics,
            "meta": {k: meta.get(k) for k in ("papers", "k", "layout", "built_at", "seed", "embedder")},
        }
        if folder is not None:

            def write(tmp: Path) -> None:
                (tmp / "map.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
                (tmp / "key.txt").write_text(key, encoding="utf-8")

            swap_in(folder, write)
        return data

    def write_map(self, out: str | Path, title: str = "paperatlas map", reader: str | None = None) -> int:
        """Write the self-contained map page to `out`; returns the number of papers drawn."""
        from .map import render_map_html

        data = self.map_data(reader=reader)
        Path(out).write_text(render_map_html(data, title=title), encoding="utf-8")
        return len(data["ids"])
