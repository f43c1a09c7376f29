"""What the recommenders derive is saved beside the library (recommend/features.CorpusCache,
recommend/saved.py): a new process reads it back instead of rebuilding it, and a changed library or
reading history never gets an old answer."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from paperatlas import Library
from paperatlas.recommend import saved
from paperatlas.recommend.features import corpus_from_papers

WORDS = {
    "diffusion": ["diffusion", "denoising", "score", "generative", "image", "sampler", "noise", "likelihood"],
    "bandits": ["bandit", "regret", "exploration", "arm", "reward", "confidence", "dueling", "online"],
    "graphs": ["graph", "node", "message", "passing", "edge", "molecule", "neighbourhood", "gnn"],
}


def _papers(per_topic: int = 15) -> list[dict]:
    rng = np.random.default_rng(0)
    return [
        {
            "id": f"{t}-{i}",
            "title": f"{t.title()} study {i}: {' '.join(rng.choice(words, 3))}",
            "abstract": " ".join(rng.choice(words, 25).tolist()),
            "venue": "TestConf",
            "year": 2026,
            "status": "Oral" if i == 0 else "Poster",
            "authors": [f"Author {t} {i % 3}"],
            "keywords": [t],
        }
        for t, words in WORDS.items()
        for i in range(per_topic)
    ]


def _write(path: Path, papers: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(p) for p in papers), encoding="utf-8")
    return path


@pytest.fixture
def db(tmp_path: Path) -> Path:
    with Library(tmp_path / "t.db", embedder="hashing") as lib:
        lib.ingest([_write(tmp_path / "papers.jsonl", _papers())])
        lib.embed()
        lib.readers.set_feedback("me", ["graphs-1", "graphs-2", "graphs-3"], "like")
        lib.readers.set_feedback("me", ["bandits-4"], "dislike")
    return tmp_path / "t.db"


def _no_papers() -> list:
    raise AssertionError("the corpus was rebuilt from the papers instead of read back")


def test_a_new_process_reads_the_saved_corpus_back_equal_to_a_fresh_build(db: Path) -> None:
    with Library(db, embedder="hashing") as lib:
        built = lib.recommend.corpus()
    with Library(db, embedder="hashing") as lib:
        lib.papers = _no_papers  # type: ignore[method-assign]
        loaded = lib.recommend.corpus()
    with Library(db, embedder="hashing") as lib:
        index = lib.engine.vector_index()
        fresh = corpus_from_papers(lib.papers(), (index.ids, index.matrix), None, None)
    for c in (built, loaded):
        assert c.ids == fresh.ids and c.titles == fresh.titles
        assert (c.tfidf != fresh.tfidf).nnz == 0
        assert list(c.vocab) == list(fresh.vocab)
        assert np.array_equal(c.label_mask, fresh.label_mask) and np.array_equal(c.prior, fresh.prior)
        assert c.keywords == fresh.keywords and c.venues == fresh.venues
        assert np.array_equal(c.years, fresh.years)
        assert np.allclose(c.emb, fresh.emb)
        assert (c.svm_space is None) == (fresh.svm_space is None)
    # the features' hash read back is the hash of the features
    assert loaded.cache["fingerprint"] == saved.fingerprint(fresh)
    # a phrase is vectorised the same by the loaded vocabulary as by the fitted one
    assert (loaded.vectorizer.transform(["graph node"]) != fresh.vectorizer.transform(["graph node"])).nnz == 0


def test_a_changed_library_is_never_answered_from_the_saved_corpus(db: Path, tmp_path: Path) -> None:
    with Library(db, embedder="hashing") as lib:
        before = [h.paper.id for h in lib.recommend.for_reader("me", limit=5)]
        assert all(pid.startswith("graphs") for pid in before)
    # another process adds a paper made of the liked papers' words: the next call must see it
    new = {**_papers()[30], "id": "graphs-new", "title": "Graph node message passing gnn"}
    new["abstract"] = "graph node message passing edge molecule gnn " * 4
    with Library(db, embedder="hashing") as lib:
        lib.ingest([_write(tmp_path / "new.jsonl", [new])])
        lib.embed()
    with Library(db, embedder="hashing") as lib:
        corpus = lib.recommend.corpus()
        assert "graphs-new" in corpus.ids
        after = [h.paper.id for h in lib.recommend.for_reader("me", limit=50)]
    # a new graph paper ranks among the graph papers, above every other topic
    assert "graphs-new" in after[: after.index(next(p for p in after if not p.startswith("graphs")))]


def test_the_classifier_is_fitted_once_per_history(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sklearn import svm

    fits: list[int] = []
    real_fit = svm.LinearSVC.fit

    def counting_fit(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        fits.append(1)
        return real_fit(self, *args, **kwargs)

    monkeypatch.setattr(svm.LinearSVC, "fit", counting_fit)
    runs = []
    for _ in range(2):  # two processes, the same history
        with Library(db, embedder="hashing") as lib:
            runs.append([(h.paper.id, h.score) for h in lib.recommend.for_reader("me", limit=8)])
    assert len(fits) == 1 and runs[0] == runs[1]
    # a new like is a new history: fitted again, and the answer follows it
    with Library(db, embedder="hashing") as lib:
        lib.readers.set_feedback("me", ["diffusion-1", "diffusion-2", "diffusion-3", "diffusion-4"], "like")
        again = [h.paper.id for h in lib.recommend.for_reader("me", limit=8)]
    assert len(fits) == 2
    assert any(pid.startswith("diffusion") for pid in again)


def test_the_command_line_says_when_it_builds_the_features(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    import paperatlas.recommend.capability as capability
    from paperatlas.cli import cli

    monkeypatch.setattr(capability, "BUILD_NOTICE", 10)  # a large library's notice, on this small one
    runner = CliRunner()
    first = runner.invoke(cli, ["--db", str(db), "recommend", "--json"])
    assert first.exit_code == 0, first.output
    assert "building the recommendation features of 45 papers" in first.stderr
    json.loads(first.stdout)  # the answer itself stays clean JSON
    again = runner.invoke(cli, ["--db", str(db), "recommend", "--json"])  # read back: nothing to say
    assert again.exit_code == 0, again.output
    assert "building" not in again.stderr
