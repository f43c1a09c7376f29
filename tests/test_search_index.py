"""Index backends: the built-in BM25 against bm25s, saved indexes, the faiss IVF index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import EXAMPLES
from paperatlas import Library
from paperatlas.index.numpy import NumpyIndex
from paperatlas.search.bm25 import Bm25Index
from paperatlas.search.engine import SearchSettings
from paperatlas.search.keyword import Bm25sIndex
from paperatlas.search.query import parse
from paperatlas.store.vector_cache import VectorCache

QUERIES = [
    "user simulators",
    "reinforcement learning framework",
    "benchmark for user behavior",
    "graph copula edges",
    "chess transformer",
    "reward model omni-modal",
    "the of and",
]


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, bool, str]]:
    lib = Library(tmp_path_factory.mktemp("d") / "d.db")
    lib.ingest(EXAMPLES)
    extra = tmp_path_factory.mktemp("e") / "x.jsonl"
    extra.write_text(
        "\n".join(
            json.dumps({"id": f"t{i}", "title": t, "abstract": a})
            for i, (t, a) in enumerate(
                [
                    ("Simulating users for dialogue evaluation", "User simulators evaluate conversational agents."),
                    ("Chess engines", "Transformers that play chess from board states."),
                ]
            )
        )
    )
    lib.ingest(extra)
    out = lib.store.all_texts()
    lib.close()
    return out


@pytest.mark.parametrize("tw", [1, 3])
def test_bm25_matches_bm25s(docs: list, tw: int) -> None:
    ours, ref = Bm25Index(title_weight=tw), Bm25sIndex(title_weight=tw)
    ours.build(docs)
    ref.build(docs)
    for text in QUERIES:
        q = parse(text)
        a, b = ours.search(q, 10), ref.search(q, 10)
        assert [s for _, s in a] == pytest.approx([s for _, s in b], rel=1e-5), text
        assert {p for p, _ in a} == {p for p, _ in b}


def test_bm25_scores_of_given_docs_and_batches(docs: list) -> None:
    idx = Bm25Index()
    idx.build_batches([docs[:7], docs[7:20], docs[20:]])
    one = Bm25Index()
    one.build(docs)
    q = parse("user behavior benchmark simulators")
    assert idx.search(q, 10) == one.search(q, 10)
    pos, sc = idx.scores(q)
    picked = [int(pos[0]), int(pos[-1]), 0, len(docs) - 1]
    expect = np.zeros(len(docs), np.float32)
    expect[pos] = sc
    assert idx.score_positions(q, picked) == pytest.approx(expect[picked])
    assert idx.search(parse("zzzunknownword"), 5) == [] and idx.score_positions(q, []).shape == (0,)


def test_bm25_saves_and_maps_back(docs: list, tmp_path: Path) -> None:
    idx = Bm25Index()
    ids = idx.build_batches([docs])
    idx.save(tmp_path / "kw")
    back = Bm25Index()
    assert back.load(tmp_path / "kw", ids)
    assert isinstance(back.indices, np.memmap)
    for text in QUERIES:
        assert back.search(parse(text), 10) == idx.search(parse(text), 10)
    assert not Bm25Index(title_weight=1).load(tmp_path / "kw", ids)  # built differently
    assert not Bm25Index().load(tmp_path / "kw", ids[:-1])  # other documents
    assert not Bm25Index().load(tmp_path / "missing", ids)


def test_engine_reuses_saved_index_until_the_library_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "lib.db"
    lib = Library(db, embedder="hashing", vector_cache=VectorCache(tmp_path / "v.sqlite"))
    lib.ingest(EXAMPLES)
    first = [h.paper.id for h in lib.search("user simulators", mode="keyword")]
    lib.close()
    assert (tmp_path / "lib.db.index" / "keyword-bm25" / "engine.json").exists()

    builds: list[int] = []
    real = Bm25Index.build_batches
    monkeypatch.setattr(Bm25Index, "build_batches", lambda self, b: builds.append(1) or real(self, b))
    lib = Library(db, embedder="hashing")
    assert [h.paper.id for h in lib.search("user simulators", mode="keyword")] == first
    assert builds == []  # mapped from disk
    f = tmp_path / "new.jsonl"
    f.write_text(json.dumps({"id": "n1", "title": "User simulators, again", "abstract": "More user simulators."}))
    lib.ingest(f)
    assert lib.search("user simulators", mode="keyword")[0].paper.id == "n1"
    assert builds == [1]
    lib.close()


def test_engine_without_persistence_writes_nothing(tmp_path: Path) -> None:
    lib = Library(tmp_path / "lib.db", search_settings=SearchSettings(persist=False))
    lib.ingest(EXAMPLES)
    assert lib.search("user simulators", mode="keyword")
    assert not (tmp_path / "lib.db.index").exists()
    lib.close()


# -- faiss IVF ----------------------------------------------------------------------------------
def _clustered(n: int, d: int = 64, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, d)).astype(np.float32)
    x = centres[rng.integers(0, 40, n)] + 0.35 * rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_faiss_ivf_recall_filters_and_reload(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    from paperatlas.index.faiss_ivf import FaissIvfIndex

    x = _clustered(6000)
    ids = [f"p{i}" for i in range(len(x))]
    exact, ann = NumpyIndex(), FaissIvfIndex(nlist=32, nprobe=8)
    exact.build(ids, x)
    ann.build(ids, x)
    qs = _clustered(50, seed=1)
    rec = np.mean([len({p for p, _ in ann.search(q, 10)} & {p for p, _ in exact.search(q, 10)}) / 10 for q in qs])
    assert rec >= 0.9
    # a filter keeps only allowed papers, and still fills the page
    allowed = np.zeros(len(x), bool)
    allowed[::50] = True
    for q in qs[:5]:
        got = ann.search(q, 10, allowed)
        assert len(got) == 10 and all(int(p[1:]) % 50 == 0 for p, _ in got)
    assert ann.search(qs[0], 5, np.zeros(len(x), bool)) == []
    v = ann.vector("p7")
    assert v is not None and float(v @ x[7]) > 0.99 and ann.vector("nope") is None
    assert ann.matrix.shape == x.shape
    ann.save(tmp_path / "ivf")
    back = FaissIvfIndex(nprobe=8)
    assert back.load(tmp_path / "ivf", ids) and not FaissIvfIndex().load(tmp_path / "ivf", ids[:10])
    assert back.search(qs[0], 10) == ann.search(qs[0], 10)


def test_engine_picks_the_ann_index_above_the_threshold(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    db = tmp_path / "lib.db"
    settings = SearchSettings(ann_threshold=20)
    lib = Library(db, embedder="hashing", search_settings=settings, vector_cache=VectorCache(tmp_path / "v.sqlite"))
    lib.ingest(EXAMPLES)
    lib.embed()
    assert type(lib.engine.vector_index()).__name__ == "FaissIvfIndex"
    hits = lib.search("user simulators", mode="semantic", limit=5)
    assert len(hits) == 5
    assert lib.similar(hits[0].paper.id, limit=3)[0].paper.id != hits[0].paper.id
    lib.close()
    lib = Library(db, embedder="hashing", search_settings=settings)
    assert [h.paper.id for h in lib.search("user simulators", mode="semantic", limit=5)] == [h.paper.id for h in hits]
    lib.close()
    small = Library(tmp_path / "s.db", embedder="hashing", vector_cache=VectorCache(tmp_path / "v.sqlite"))
    small.ingest(EXAMPLES)
    small.embed()
    assert type(small.engine.vector_index()).__name__ == "NumpyIndex"
    small.close()


def test_bm25_maxscore_pruning_is_exact() -> None:
    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(400)]
    p = 1 / np.arange(1, 401)  # Zipf: a few words in most documents, most words rare
    p /= p.sum()
    words = rng.choice(vocab, (2000, 40), p=p)
    docs = [
        (f"d{i}", " ".join(words[i, :4]), False, " ".join(words[i, 4 : 4 + rng.integers(5, 36)]))
        for i in range(len(words))
    ]
    idx = Bm25Index()
    idx.prune_min_docs = 0
    idx.build(docs)
    allowed = rng.random(len(docs)) < 0.3
    for _ in range(80):
        q = parse(" ".join(rng.choice(vocab, rng.integers(2, 7), p=p)))
        pos, sc = idx.scores(q)  # no k: every matching document
        full = sorted(zip((-sc).tolist(), [idx.ids[i] for i in pos]))[:20]
        assert [round(-s, 5) for s, _ in full] == [round(s, 5) for _, s in idx.search(q, 20)]
        keep = allowed[pos]
        full_f = sorted((-sc[keep]).tolist())[:20]
        assert [round(-s, 5) for s in full_f] == [round(s, 5) for _, s in idx.search(q, 20, allowed)]
