"""Topics of a Library: build them from its embeddings, store them, read them back."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import PaperatlasError
from ..models import Paper
from .pipeline import LEVELS, Progress, Topic, TopicModel, TopicPipeline

if TYPE_CHECKING:
    from ..library import Library


def library_vectors(library: Library) -> tuple[list[str], np.ndarray]:
    """(ids, vectors) of every embedded paper, from the library's vector index."""
    idx = library.engine.vector_index()
    if idx is None or not len(idx):
        raise PaperatlasError("this library has no embeddings yet, so it has no topics",
                              "run `paperatlas embed`, then `paperatlas topics build`")
    return list(idx.ids), np.asarray(idx.matrix, dtype=np.float32)


def library_texts(library: Library, ids: list[str]) -> list[str]:
    texts = {pid: Paper(pid, t, a, title_derived=d).text for pid, t, d, a in library.store.all_texts()}
    return [texts.get(pid, "") for pid in ids]


def build_topics(library: Library, seed: int = 0, layout: str = "neighbors", k: int | None = None,
                 progress: Progress | None = None, **options: Any) -> TopicModel:
    """Recompute the library's topics and map, and store them (replacing the old ones).

    Args:
        library: the library (must be embedded).
        seed: the same seed on the same library gives the same topics and map.
        layout: a registered layout ("neighbors", "umap", "tsne", "pca").
        k: force the number of coarse topics (default: chosen by silhouette).
        progress: called with the name of each step.

    Returns:
        The TopicModel that was stored.
    """
    t0 = time.perf_counter()
    ids, vectors = library_vectors(library)
    texts = library_texts(library, ids)
    model = TopicPipeline(layout=layout, seed=seed, k=k, **options).fit(ids, vectors, texts, progress)
    model.meta["embedder"] = library.embedder.id
    model.meta["data_version"] = list(library.store.data_version())
    model.meta["built_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    model.meta["seconds"]["total"] = round(time.perf_counter() - t0, 3)
    save_model(library, model)
    return model


def save_model(library: Library, model: TopicModel) -> None:
    topics = [(t.level, t.topic, t.parent, t.size, t.label, t.phrases, t.central, t.x, t.y) for t in model.topics]
    papers = [
        (pid, int(c), int(f), round(float(x), 5), round(float(y), 5), ph)
        for pid, c, f, (x, y), ph in zip(model.ids, model.coarse, model.fine, model.xy, model.paper_phrases)
    ]
    library.store.replace_topics(topics, papers, model.phrase_df, model.meta)


def list_topics(library: Library, level: str = "coarse") -> list[Topic]:
    """The stored topics of one level, largest first. Raises when none were built."""
    if level not in LEVELS:
        raise PaperatlasError(f"unknown topic level {level!r}", f"use one of: {', '.join(LEVELS)}")
    meta = library.store.topics_meta()
    if not meta:
        raise PaperatlasError("this library has no topics yet", "run `paperatlas topics build`")
    rows = library.store.list_topics(level)
    topics = [Topic(level=r["level"], topic=r["topic"], size=r["size"], label=r["label"], phrases=r["phrases"],
                    central=r["central"], parent=r["parent"], x=r["x"], y=r["y"]) for r in rows]
    return sorted(topics, key=lambda t: (-t.size, t.topic))


def topics_status(library: Library) -> dict[str, Any]:
    """The last build's metadata, plus whether the library changed since (papers added/edited)."""
    meta = library.store.topics_meta()
    if not meta:
        return {"built": False}
    now = list(library.store.data_version())
    return {"built": True, "stale": meta.get("data_version") != now, **meta}
