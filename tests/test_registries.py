"""One contract per registry, run against every backend registered in it (tests/test_store_backends.py
is the stores' own). A backend added to a registry is held to its protocol without a new test."""

from __future__ import annotations

import numpy as np
import pytest

from paperatlas.embed.base import EMBEDDERS
from paperatlas.errors import PaperatlasError
from paperatlas.index.base import VECTOR_INDEXES
from paperatlas.models import Paper
from paperatlas.recommend import RECOMMENDERS, Signals
from paperatlas.recommend.features import corpus_from_papers
from paperatlas.registry import Registry, UnknownBackend
from paperatlas.search.keyword import KEYWORD_INDEXES
from paperatlas.sources import SOURCES, create_source

ALL = [EMBEDDERS, VECTOR_INDEXES, RECOMMENDERS, SOURCES, KEYWORD_INDEXES]


def _backend(registry: Registry, name: str):
    try:
        return registry.create(name)
    except PaperatlasError as e:  # an optional extra that is not installed says which one
        if "pip install" in (e.fix or "") or "not installed" in e.message:
            pytest.skip(f"{registry.kind} {name}: {e.message}")
        raise


@pytest.mark.parametrize("registry", ALL, ids=lambda r: r.kind)
def test_an_unknown_name_lists_the_valid_ones(registry: Registry) -> None:
    assert registry.names(), f"nothing registered as a {registry.kind}"
    with pytest.raises(UnknownBackend) as e:
        registry.create("no-such-backend")
    assert all(name in e.value.fix for name in registry.names())


# -- embedders --------------------------------------------------------------------------------------
TEXTS = [
    "Diffusion models generate images by reversing a noising process.",
    "Graph neural networks pass messages along the edges of a graph.",
    "Denoising diffusion probabilistic models for image synthesis.",
]


@pytest.mark.parametrize("name", EMBEDDERS.names(hidden=True))  # the retired too: their libraries still open
def test_embedder_contract(name: str) -> None:
    emb = _backend(EMBEDDERS, name)
    assert isinstance(emb.id, str) and emb.id and emb.dimensions > 0
    v = emb.embed(TEXTS)
    assert v.shape == (3, emb.dimensions) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-3)  # rows L2-normalised
    assert np.allclose(emb.embed(TEXTS[::-1])[::-1], v, atol=1e-4)  # input order, batch-independent
    q = emb.embed_query("diffusion models")
    assert q.shape == (emb.dimensions,) and abs(float(np.linalg.norm(q)) - 1.0) < 1e-3
    assert emb.embed([]).shape[0] == 0


# -- vector indexes ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", VECTOR_INDEXES.names())
def test_vector_index_contract(name: str) -> None:
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(300, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [f"p{i}" for i in range(300)]
    index = _backend(VECTOR_INDEXES, name)
    index.build(ids, vecs)
    assert len(index) == 300
    hits = index.search(vecs[7], 5)
    assert len(hits) == 5 and hits[0][0] == "p7" and abs(hits[0][1] - 1.0) < 0.05
    assert all(a[1] >= b[1] for a, b in zip(hits, hits[1:]))  # best first
    allowed = np.zeros(300, dtype=bool)
    allowed[[3, 9, 200]] = True
    kept = index.search(vecs[7], 5, allowed)
    assert kept and {pid for pid, _ in kept} <= {"p3", "p9", "p200"}


# -- recommenders -----------------------------------------------------------------------------------
def _corpus():
    topics = {
        "diffusion": "denoising diffusion models generate images from noise",
        "graphs": "graph neural networks pass messages between nodes",
        "bandits": "multi-armed bandits balance exploration and exploitation",
    }
    papers = [
        Paper(f"{t}-{i}", f"{t.title()} paper {i}", f"{text} variant {i}", authors=[f"A{i}"], venue="V", year=2024)
        for t, text in topics.items()
        for i in range(6)
    ]
    return corpus_from_papers(papers)


@pytest.mark.parametrize("name", RECOMMENDERS.names())
def test_recommender_contract(name: str) -> None:
    corpus = _corpus()
    rec = _backend(RECOMMENDERS, name)
    scored = rec.fit(corpus, Signals(likes=["graphs-0", "graphs-1"], dislikes=["bandits-0"]))
    assert scored.scores.shape == (len(corpus),) and np.isfinite(scored.scores).all()
    best = [corpus.ids[i] for i in np.argsort(-scored.scores)[:6]]
    assert sum(pid.startswith("graphs") for pid in best) >= 3, best  # what the reader liked comes first
    why = scored.explain([0, 1, 2])
    assert len(why) == 3 and all(isinstance(w, str) for w in why)
    cold = rec.fit(corpus, Signals())  # no likes yet: still one score per paper, and a reason
    assert cold.scores.shape == (len(corpus),) and all(cold.explain([0]))


# -- sources ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", SOURCES.names())
def test_source_contract(name: str) -> None:
    """Every source names itself, is polite, and refuses what it does not take with the fix."""
    cls = SOURCES._factories[name]
    assert getattr(cls, "name", name) == name and getattr(cls, "polite_delay", 0) >= 0
    with pytest.raises(PaperatlasError) as e:
        create_source(name, [], no_such_option="x")
    assert e.value.fix, f"{name}: an error without its fix"


# -- keyword indexes --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", KEYWORD_INDEXES.names())
def test_keyword_index_is_reachable_through_search(name: str, tmp_path) -> None:
    from paperatlas import Library
    from paperatlas.search.engine import SearchSettings

    if name == "bm25s":
        pytest.importorskip("bm25s")
    with Library(tmp_path / "k.db", embedder="hashing", search_settings=SearchSettings(keyword_index=name)) as lib:
        src = tmp_path / "p.jsonl"
        src.write_text("".join(f'{{"id": "p{i}", "title": "{t}"}}\n' for i, t in enumerate(TEXTS)), encoding="utf-8")
        lib.ingest([src])
        hits = lib.search("graph messages", mode="keyword", limit=2)
        assert hits and hits[0].paper.id == "p1"
