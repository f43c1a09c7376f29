"""The real embedding model on the 29 example abstracts: a query in other words finds its paper."""

from __future__ import annotations


import pytest

from conftest import EXAMPLES
from paperatlas import Library
from paperatlas.store.vector_cache import VectorCache

pytestmark = pytest.mark.slow

# (query that shares few words with the abstract, the abstract's first words)
PARAPHRASES = [
    (
        "why testing chatbots against fine-tuned fake customers gives skewed results, a cause-and-effect view",
        "Using offline datasets to evaluate conversational agents",
    ),
    (
        "predicting which move a human player of a given rating will make on the board",
        "Chess has played a uniquely important historical role",
    ),
    (
        "when and how often to show adverts so people stay interested in the long run",
        "Optimizing the timing and frequency of advertisements",
    ),
    (
        "electrical implants in the visual cortex that make blind people perceive light",
        "Brain stimulation is a powerful tool",
    ),
    ("look up theorems in a formal proof library by describing them in plain English", "We present Lean Finder"),
]


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Library:
    tmp = tmp_path_factory.mktemp("model")
    lib = Library(tmp / "lib.db", embedder="minilm", vector_cache=VectorCache(tmp / "vectors.sqlite"))
    lib.ingest(EXAMPLES)
    assert lib.embed() == 29
    yield lib
    lib.close()


def _paper_id(lib: Library, prefix: str) -> str:
    (pid,) = [p.id for p in lib.papers() if p.abstract.startswith(prefix)]
    return pid


@pytest.mark.parametrize("query,prefix", PARAPHRASES)
@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_paraphrase_finds_the_paper(lib: Library, query: str, prefix: str, mode: str) -> None:
    top = [h.paper.id for h in lib.search(query, mode=mode, limit=3)]
    assert _paper_id(lib, prefix) in top


def test_semantic_ranks_every_paraphrase_first(lib: Library) -> None:
    for q, prefix in PARAPHRASES:
        assert lib.search(q, mode="semantic", limit=1)[0].paper.id == _paper_id(lib, prefix), q


def test_similar_with_real_vectors(lib: Library) -> None:
    chess = _paper_id(lib, "Chess has played")
    hits = lib.similar(chess, limit=28)
    assert len(hits) == 28 and chess not in [h.paper.id for h in hits]
    assert all(a.score >= b.score for a, b in zip(hits, hits[1:]))
