"""TopicPipeline: embeddings -> 2-D layout + coarse/fine clusters -> c-TF-IDF labels.

The parts are swappable (a layout from REDUCERS, a clusterer from CLUSTERERS); the
pipeline is a pure function of (ids, vectors, texts, seed), so tests and evaluations run
it without a library, and `lib.topics.build` runs it on a library and stores the result.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import PaperatlasError
from .cluster import CLUSTERERS, Clustering, split_fine, unit
from .labels import ClassLabel, PhraseMatrix, label_keys, paper_phrases, phrase_matrix, written_forms
from .layout import REDUCERS, NeighborGraph, NeighborLayout

LEVELS = ("coarse", "fine")
Progress = Callable[[str], None]


@dataclass
class Topic:
    """One topic: its label (2-4 key phrases), size, most central papers and map position."""

    level: str
    topic: int
    size: int
    label: str
    phrases: list[str]
    central: list[str] = field(default_factory=list)  # paper ids, most central first
    parent: int | None = None  # the coarse topic of a fine topic
    x: float = 0.0
    y: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TopicModel:
    """Everything one build computes; `xy` is normalised to [-1, 1] on both axes."""

    ids: list[str]
    coarse: np.ndarray
    fine: np.ndarray
    xy: np.ndarray
    topics: list[Topic]
    paper_phrases: list[list[str]]  # each paper's own key phrases, as usually written
    phrase_df: list[tuple[str, int]]
    meta: dict[str, Any] = field(default_factory=dict)

    def level(self, level: str) -> list[Topic]:
        return [t for t in self.topics if t.level == level]


def _normalise_xy(xy: np.ndarray) -> np.ndarray:
    xy = np.asarray(xy, dtype=np.float64)
    if not len(xy):
        return xy.astype(np.float32)
    lo, hi = np.percentile(xy, 0.5, axis=0), np.percentile(xy, 99.5, axis=0)
    mid = (lo + hi) / 2
    half = max(float(np.max(hi - lo)) / 2, 1e-9)
    # 99% of the papers fill [-0.9, 0.9] (a margin for labels); outliers are clipped to the border
    return np.clip((xy - mid) / half * 0.9, -1.0, 1.0).astype(np.float32)


def _central(x: np.ndarray, rows: np.ndarray, center: np.ndarray, ids: Sequence[str], n: int) -> list[str]:
    sims = x[rows] @ center
    order = np.lexsort((rows, -sims))[:n]
    return [ids[int(rows[i])] for i in order]


def _anchor(xy: np.ndarray, rows: np.ndarray) -> tuple[float, float]:
    """Where a topic's label goes: the member nearest the members' median (inside the cloud)."""
    med = np.median(xy[rows], axis=0)
    i = rows[int(np.argmin(((xy[rows] - med) ** 2).sum(axis=1)))]
    return float(xy[i, 0]), float(xy[i, 1])


class TopicPipeline:
    """Layout, two-level clustering and labels, with swappable parts.

    Example:
        >>> model = TopicPipeline(seed=0).fit(ids, vectors, texts)  # doctest: +SKIP
        >>> [t.label for t in model.level("coarse")][:2]  # doctest: +SKIP
        ['diffusion models, image generation, ...', ...]
    """

    def __init__(
        self,
        layout: str = "neighbors",
        clusterer: str = "kmeans",
        seed: int = 0,
        k: int | None = None,
        k_min: int = 10,
        k_max: int = 40,
        fine_k_max: int = 8,
        n_central: int = 5,
        n_neighbors: int = 15,
        cluster_dims: int = 5,
        layout_options: dict[str, Any] | None = None,
    ) -> None:
        self.n_neighbors, self.cluster_dims = n_neighbors, cluster_dims
        self.layout = layout
        self.clusterer = clusterer
        self.seed = seed
        self.k, self.k_min, self.k_max, self.fine_k_max = k, k_min, k_max, fine_k_max
        self.n_central = n_central
        self.layout_options = layout_options or {}

    def cluster(self, x: np.ndarray) -> Clustering:
        c = CLUSTERERS.create(self.clusterer, k=self.k, k_min=self.k_min, k_max=self.k_max, seed=self.seed)
        return c.fit(x)

    def fit(
        self, ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], progress: Progress | None = None
    ) -> TopicModel:
        """Topics of the papers `ids` (rows of `vectors`; `texts` = title + abstract)."""
        say = progress or (lambda s: None)
        n = len(ids)
        if n == 0:
            raise PaperatlasError("no embedded papers to build topics from", "run `paperatlas embed` first")
        if vectors.shape[0] != n or len(texts) != n:
            raise ValueError("ids, vectors and texts must have the same length")
        seconds: dict[str, float] = {}
        x = unit(vectors)

        t = time.perf_counter()
        say("neighbour graph")
        graph = NeighborGraph.build(x, self.n_neighbors, seed=self.seed) if n >= 4 else None
        seconds["graph"] = time.perf_counter() - t

        t = time.perf_counter()
        say("clustering")
        space = graph.embed(self.cluster_dims, min_dist=0.0, seed=self.seed) if graph is not None else x
        coarse_cl = self.cluster(space)
        coarse = coarse_cl.labels
        fine, parents = split_fine(space, coarse, self.seed, self.fine_k_max)
        seconds["cluster"] = time.perf_counter() - t

        t = time.perf_counter()
        say("layout")
        if self.layout == "neighbors":
            reducer = NeighborLayout(seed=self.seed, **self.layout_options)
            xy = reducer.fit_transform(x, graph=graph)
        else:
            xy = REDUCERS.create(self.layout, seed=self.seed, **self.layout_options).fit_transform(x)
        xy = _normalise_xy(xy)
        seconds["layout"] = time.perf_counter() - t

        t = time.perf_counter()
        say("labels")
        pm = phrase_matrix(texts, min_df=2 if n < 2000 else 3)
        coarse_keys = label_keys(pm, coarse, coarse_cl.k)
        fine_keys = label_keys(pm, fine, len(parents), avoid=[coarse_keys[p] for p in parents])
        own = [[pm.keys[j] for j in ph] for ph in paper_phrases(pm)]
        # one pass over the texts finds how every chosen phrase is usually written
        forms = written_forms(texts, {k for ks in (*coarse_keys, *fine_keys, *own) for k in ks})
        coarse_labels = [ClassLabel([forms.get(k, k) for k in ks], ks) for ks in coarse_keys]
        fine_labels = [ClassLabel([forms.get(k, k) for k in ks], ks) for ks in fine_keys]
        own_forms = [[forms.get(k, k) for k in ks] for ks in own]
        seconds["labels"] = time.perf_counter() - t

        topics: list[Topic] = []
        for level, labels, names, parent_of in (
            ("coarse", coarse, coarse_labels, None),
            ("fine", fine, fine_labels, parents),
        ):
            for c, lab in enumerate(names):
                rows = np.flatnonzero(labels == c)
                if not len(rows):
                    continue
                ax, ay = _anchor(xy, rows)
                center = unit(x[rows].mean(axis=0, keepdims=True))[0]
                topics.append(
                    Topic(
                        level=level,
                        topic=c,
                        size=len(rows),
                        label=_label_text(lab, c),
                        phrases=lab.phrases,
                        central=_central(x, rows, center, ids, self.n_central),
                        parent=None if parent_of is None else int(parent_of[c]),
                        x=ax,
                        y=ay,
                    )
                )
        keep = pm.df >= 3
        phrase_df = [(pm.keys[j], int(pm.df[j])) for j in np.flatnonzero(keep)]
        meta = {
            "papers": n,
            "seed": self.seed,
            "layout": self.layout,
            "clusterer": self.clusterer,
            "k": {"coarse": int(coarse_cl.k), "fine": int(len(parents))},
            "silhouette": {str(k): round(v, 5) for k, v in coarse_cl.scores.items()},
            "seconds": {k: round(v, 3) for k, v in seconds.items()},
        }
        return TopicModel(list(ids), coarse, fine, xy, topics, own_forms, phrase_df, meta)


def _label_text(lab: ClassLabel, c: int) -> str:
    return ", ".join(lab.phrases[:3]) if lab.phrases else f"topic {c}"


__all__ = ["LEVELS", "Topic", "TopicModel", "TopicPipeline", "PhraseMatrix"]
