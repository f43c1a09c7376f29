"""Retired embedders (training runs a later run replaced): no longer offered, yet every library made
with one opens with it, its vectors searched as they are (real packaged models, real library files)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.embed.base import DEFAULT_EMBEDDER, EMBEDDERS, RETIRED, RetiredEmbedder
from paperatlas.registry import UnknownBackend
from paperatlas.store.vector_cache import VectorCache

PAPERS = (
    '{"id": "a", "title": "Sparse attention", "abstract": "Local attention windows let transformers scale."}\n'
    '{"id": "b", "title": "Protein folding", "abstract": "Predicting structures from amino-acid sequences."}\n'
    '{"id": "c", "title": "Coral reefs", "abstract": "Ocean warming bleaches reef corals."}\n'
)


@pytest.fixture
def papers(tmp_path: Path) -> Path:
    f = tmp_path / "p.jsonl"
    f.write_text(PAPERS, encoding="utf-8")
    return f


def made_with(path: Path, name: str, papers: Path, cache: VectorCache) -> None:
    """A library embedded with `name`, as one made before it retired (the lab still creates them so)."""
    lib = Library(path, embedder=name, vector_cache=cache)
    lib.ingest([papers])
    assert lib.embed() == 3
    lib.close()


def test_retired_embedders_are_not_offered_but_stay_registered() -> None:
    assert set(RETIRED) == {"minilm-tuned", "minilm-tuned-r5", "minilm-tuned-r9", "minilm-tuned-r11-plain"}
    assert not set(RETIRED) & set(EMBEDDERS.names()) and DEFAULT_EMBEDDER in EMBEDDERS.names()
    assert set(RETIRED) <= set(EMBEDDERS.names(hidden=True)) and all(n in EMBEDDERS for n in RETIRED)
    with pytest.raises(UnknownBackend) as e:  # an unknown name lists the offered ones only
        EMBEDDERS.create("minilm-tuned-r7")
    assert "minilm-tuned-r11" in e.value.fix and "minilm-tuned-r9" not in e.value.fix


def test_a_library_recorded_with_a_retired_name_opens_with_its_vectors(tmp_path: Path, papers: Path) -> None:
    cache = VectorCache(tmp_path / "v.sqlite")
    db = tmp_path / "r9.db"
    made_with(db, "minilm-tuned-r9", papers, cache)
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone() == ("minilm-tuned-r9",)
    lib = Library(db, vector_cache=cache)
    assert lib.embedder_name == "minilm-tuned-r9"
    assert lib.embedder.id == "minilm-l6-paperatlas-r9-onnx@256+dynamic-int8"
    assert lib.embed() == 0  # its vectors are kept: nothing is embedded again
    hits = lib.search("protein structure prediction", mode="semantic")
    assert hits and hits[0].paper.id == "b"
    lib.close()
    # recorded before the name was (vectors only): found among the retired names too
    db5 = tmp_path / "r5.db"
    made_with(db5, "minilm-tuned-r5", papers, cache)
    with sqlite3.connect(db5) as c:
        c.execute("DELETE FROM meta WHERE key = 'embedder'")
    old = Library(db5, vector_cache=cache)
    assert old.embedder_name == "minilm-tuned-r5" and old.embed() == 0
    old.close()


def test_the_cli_keeps_a_retired_library_and_refuses_the_name_for_others(
    tmp_path: Path, papers: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = VectorCache(tmp_path / "v.sqlite")
    db = tmp_path / "r9.db"
    made_with(db, "minilm-tuned-r9", papers, cache)
    runner = CliRunner()
    r = runner.invoke(cli, ["--db", str(db), "embed"])
    assert r.exit_code == 0, r.output
    assert "nothing to embed" in r.stdout
    assert "'minilm-tuned-r9' (run 9 of our fine-tune) is retired" in r.stderr
    assert f"`paperatlas embed --rebuild --embedder {DEFAULT_EMBEDDER}`" in r.stderr
    r = runner.invoke(cli, ["--db", str(db), "embed", "--embedder", "minilm-tuned-r9"])  # its own model
    assert r.exit_code == 0, r.output

    fresh = tmp_path / "new.db"
    Library(fresh, vector_cache=cache).close()  # a library with no vectors yet
    r = runner.invoke(cli, ["--db", str(fresh), "embed", "--embedder", "minilm-tuned-r9"])
    assert r.exit_code == 1, r.output
    assert "--embedder 'minilm-tuned-r9' is retired" in r.output and "Fix: choose one of:" in r.output
    assert "minilm-tuned-r11" in r.output
    other = tmp_path / "other.db"
    made_with(other, DEFAULT_EMBEDDER, papers, cache)  # nor for a library made with another model
    r = runner.invoke(cli, ["--db", str(other), "embed", "--embedder", "minilm-tuned-r9"])
    assert r.exit_code == 1 and "is retired" in r.output, r.output

    # the setting chooses for a library that recorded none: not a retired one, unless its vectors say so
    monkeypatch.setenv("PAPERATLAS_EMBEDDER", "minilm-tuned-r5")
    with pytest.raises(RetiredEmbedder, match="PAPERATLAS_EMBEDDER 'minilm-tuned-r5' is retired"):
        Library(tmp_path / "empty.db", vector_cache=cache).embedder  # noqa: B018
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM meta WHERE key = 'embedder'")
    monkeypatch.setenv("PAPERATLAS_EMBEDDER", "minilm-tuned-r9")
    assert Library(db, vector_cache=cache).embedder_name == "minilm-tuned-r9"
    monkeypatch.delenv("PAPERATLAS_EMBEDDER")

    # run 11 without its query map made the default's very vectors: the note's command moves it on as they are
    plain = tmp_path / "plain.db"
    made_with(plain, "minilm-tuned-r11-plain", papers, cache)
    r = runner.invoke(cli, ["--db", str(plain), "embed"])
    assert f"`paperatlas embed --embedder {DEFAULT_EMBEDDER}` moves it on" in r.stderr, r.output
    r = runner.invoke(cli, ["--db", str(plain), "embed", "--embedder", DEFAULT_EMBEDDER])
    assert r.exit_code == 0 and "nothing to embed" in r.stdout and "retired" not in r.stderr, r.output
    lib = Library(plain, vector_cache=cache)
    assert lib.embedder_name == DEFAULT_EMBEDDER and lib.embed() == 0
    lib.close()

    # the note's command moves the library to the current model
    r = runner.invoke(cli, ["--db", str(db), "embed", "--rebuild", "--embedder", DEFAULT_EMBEDDER])
    assert r.exit_code == 0 and "embedded 3 papers" in r.stdout and "retired" not in r.stderr, r.output
    lib = Library(db, vector_cache=cache)
    assert lib.embedder_name == DEFAULT_EMBEDDER and lib.embed() == 0
    lib.close()
