"""Passages of papers' bodies by meaning: embedded when a paper matters (a PDF attached by hand, a
saved paper fetched, a paper asked about) and on demand (`fulltext embed`), kept per passage text,
fused with keyword where vectors exist, counted in `fulltext status` and `stats`; and the TL;DR
that reads the body. Real PDFs (tests/data/pdfs), real library files, the packaged embedding model
where meaning is judged, a real PostgreSQL server, loopback model endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_fulltext import GRAPH, PAPERS, SPECTER, run
from test_translate_full import Endpoint

from paperatlas import Library
from paperatlas.fulltext.reader import read_pdf


@pytest.fixture(autouse=True)
def _meaning_weighed(monkeypatch: pytest.MonkeyPatch) -> None:
    # these tests are of passages searched by meaning too, which a weight above 0 turns on (the
    # default is keyword alone: test_by_default_passages_are_searched_by_keyword_and_not_embedded)
    monkeypatch.setenv("PAPERATLAS_FULLTEXT_SEMANTIC_WEIGHT", "0.55")


def _papers(tmp_path: Path) -> Path:
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    return f


@pytest.fixture
def db(tmp_path: Path) -> Path:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        lib.ingest([_papers(tmp_path)])
    return tmp_path / "lib.db"


def test_a_pdf_added_by_hand_is_embedded_and_status_says_what_is_covered(db: Path, runner) -> None:
    r = json.loads(run(runner, db, "fulltext", "add", "specter", str(SPECTER), "--json").stdout)
    assert r["state"] == "read"
    assert r["embedded"] > 50  # every distinct passage text of the paper, at once
    st = json.loads(run(runner, db, "fulltext", "status", "--json").stdout)
    assert st["embedded"] == st["passages"] == r["passages"]
    # a paper whose body is read without embedding (as a fetch of a whole venue does): counted apart
    with Library(db) as lib:
        assert lib.fulltext.add("N18-3011", GRAPH, embed=False).ok
    st = json.loads(run(runner, db, "fulltext", "status", "--json").stdout)
    assert st["embedded"] == r["passages"] < st["passages"]
    out = run(runner, db, "fulltext", "status").stdout
    assert f"{st['passages']} passages; {st['embedded']} of them searchable by meaning" in out
    assert (
        f"fulltext passages: {st['passages']}, {st['embedded']} searchable by meaning"
        in run(runner, db, "stats").stdout
    )
    # the rest on demand: nothing named is a usage error; --all embeds what is left, and again nothing
    assert run(runner, db, "fulltext", "embed").exit_code == 2
    d = json.loads(run(runner, db, "fulltext", "embed", "--all", "--json").stdout)
    assert d["papers"] == 1 and d["passages"] > 50
    st = json.loads(run(runner, db, "fulltext", "status", "--json").stdout)
    assert st["embedded"] == st["passages"]
    again = json.loads(run(runner, db, "fulltext", "embed", "--all", "--json").stdout)
    assert again["papers"] == 0 and again["passages"] == 0


def test_vectors_follow_the_text_of_each_passage(db: Path) -> None:
    """Read again with the same words: the vectors stay (nothing embedded anew); a paragraph whose
    words changed loses its vector, and only it is embedded again."""
    with Library(db) as lib:
        assert lib.fulltext.add("specter", SPECTER).ok
        n = lib.fulltext.vectors.counts()
        assert n["embedded"] == n["passages"]
        assert lib.fulltext.add("specter", SPECTER).ok
        assert lib.fulltext.vectors.counts() == n and lib.fulltext.vectors.todo() == []
        # one paragraph changes (a better reading of the same PDF)
        secs = lib.store.fulltext.sections("specter")
        sections = [
            {
                "heading": s["heading"],
                "number": s["number"],
                "page": s["page"],
                "text_hash": s["text_hash"],
                "paragraphs": [(p["page"], p["text"]) for p in s["paragraphs"]],
            }
            for s in secs
        ]
        first = next(s for s in sections if s["paragraphs"])
        page, text = first["paragraphs"][0]
        first["paragraphs"][0] = (page, text + " Read again.")
        lib.store.fulltext.put_document("specter", {"state": "read", "pages": 11}, sections, [], [])
        assert lib.fulltext.vectors.counts()["embedded"] == n["embedded"] - 1
        # the changed paragraph's old vector is gone, not kept beside the others
        distinct = {r.text for r in lib.store.fulltext.passages_of("specter")}
        kept = lib.store.conn.execute("SELECT count(*) FROM fulltext_vectors WHERE paper_id = 'specter'").fetchone()
        assert kept[0] == len(distinct) - 1
        rep = lib.fulltext.embed(["specter"])
        assert rep.passages == 1 and lib.fulltext.vectors.counts()["embedded"] == n["embedded"]


def test_hybrid_finds_by_meaning_what_keywords_miss() -> None:
    """The packaged model: "learning rate ... optimizer" shares no word with the passage that gives
    "LR: 2e-5" beside Adam, so keyword ranks it low; fused with meaning it is among the first two."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        f = _papers(Path(tmp))
        with Library(Path(tmp) / "lib.db") as lib:
            lib.ingest([f])
            assert lib.fulltext.add("specter", SPECTER, embed=False).ok
            q = "How many papers were held out for validation?"
            kw = lib.fulltext.retrieve(q, ["specter"], per_paper=2, limit=2, mode="keyword")
            assert not any("32k papers for validation" in x.text.lower() for x in kw)
            # nothing embedded yet: hybrid is keyword alone
            assert [x.n for x in lib.fulltext.retrieve(q, ["specter"], 2, 2)] == [x.n for x in kw]
            assert lib.fulltext.embed(["specter"]).passages > 50
            hy = lib.fulltext.retrieve(q, ["specter"], per_paper=2, limit=2)
            assert any("32k papers for validation" in x.text.lower() for x in hy)
            # over the library, a query of nonsense finds no passage by meaning either
            assert lib.fulltext.hits("zzzqqq xylophone") == []
            hits = lib.fulltext.hits("triplet margin loss")
            assert hits and hits[0].paper.id == "specter" and "margin" in hits[0].passage.text.lower()


def test_a_fetch_embeds_the_saved_papers_of_a_venue_and_a_few_named_ones(db: Path) -> None:
    with Library(db) as lib:
        assert lib.fulltext.add("specter", SPECTER, embed=False).ok
        assert lib.fulltext.add("N18-3011", GRAPH, embed=False).ok
        lib.readers.set_feedback(None, ["N18-3011"], "like")
        # a whole venue's fetch: the saved paper only
        lib.fulltext.embed_fetched(["specter", "N18-3011", "glove"], named=False)
        assert lib.fulltext.vectors.todo() == ["specter"]
        # a few papers named by id: those
        lib.fulltext.embed_fetched(["specter"], named=True)
        assert lib.fulltext.vectors.todo() == []


def test_asking_one_paper_embeds_its_passages_first(db: Path) -> None:
    ep = Endpoint(lambda messages: "Not in these papers.")
    try:
        with Library(db) as lib:
            assert lib.fulltext.add("specter", SPECTER, embed=False).ok
            lib.llm.configure(ep.url, "double")
            lib.llm.ask("What margin does the triplet loss use?", limit=5)  # over the library: nothing embedded
            assert lib.fulltext.vectors.todo() == ["specter"]
            lib.llm.ask("What margin does the triplet loss use?", paper="specter")
            assert lib.fulltext.vectors.todo() == []
    finally:
        ep.stop()


def test_passage_vectors_on_postgres(pg_server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pgserver import fresh_db_name

    monkeypatch.setenv("PAPERATLAS_FILES", str(tmp_path / "pdfs"))
    url = pg_server.url(fresh_db_name("passagevec"))
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_papers(tmp_path)])
        r = lib.fulltext.add("specter", SPECTER)
        assert r.ok and r.embedded > 50
        n = lib.fulltext.vectors.counts()
        assert n["embedded"] == n["passages"] == r.passages
        assert lib.fulltext.add("specter", SPECTER, embed=False).ok and lib.fulltext.vectors.counts() == n
        got = lib.fulltext.retrieve("triplet loss margin", ["specter"], per_paper=3, limit=3)
        assert got and any("margin" in x.text.lower() for x in got)
        hits = lib.fulltext.hits("margin")
        assert hits and hits[0].paper.id == "specter"
    # copied to a file, the vectors come along and still match their passages
    from paperatlas.store import open_store
    from paperatlas.store.copy import copy_library

    src, dst = open_store(url), open_store(str(tmp_path / "copy.db"))
    copy_library(src, dst)
    src.close()
    dst.close()
    with Library(tmp_path / "copy.db", embedder="hashing") as lib:
        assert lib.fulltext.vectors.counts() == n and lib.fulltext.vectors.todo() == []
        got = lib.fulltext.retrieve("triplet loss margin", ["specter"], per_paper=3, limit=3)
        assert got and any("margin" in x.text.lower() for x in got)


# -- the TL;DR reads the body -----------------------------------------------------------------------------
def test_tldr_reads_the_body_within_a_small_models_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY", "PAPERATLAS_LLM_MAX_TOKENS"):
        monkeypatch.delenv(k, raising=False)
    doc = read_pdf(GRAPH.read_bytes())
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "N18-3011", "title": doc.title, "abstract": doc.abstract}) + "\n")
    replies = iter(["A graph of the literature.", "A deployed graph of 280M nodes built from PDFs."])
    ep = Endpoint(lambda messages: next(replies))
    try:
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            lib.ingest([f])
            lib.llm.configure(ep.url, "qwen2.5-1.5b-instruct")
            before = lib.llm.tldr("N18-3011")
            assert before.generated and "Passages of the paper" not in ep.requests[-1]["messages"][1]["content"]
            assert lib.fulltext.add("N18-3011", GRAPH).ok
            # the abstract's TL;DR is shown until a new one is made
            shown = lib.llm.stored_tldrs(["N18-3011"])["N18-3011"]
            assert shown.text == before.text and len(ep.requests) == 1
            after = lib.llm.tldr("N18-3011")
            assert after.text.startswith("A deployed graph") and len(ep.requests) == 2
            prompt = ep.requests[-1]["messages"][1]["content"]
            body = prompt.split("Passages of the paper:", 1)[1].split("\n\nWrite a TL;DR", 1)[0]
            passages = [x for x in body.split("\n") if x.startswith("[p.")]
            assert 1 <= len(passages) <= 2  # a small model: two passages at most...
            assert all(len(x) <= 500 + 80 for x in passages)  # ...each cut to its share
            assert len(prompt) < len(doc.abstract) + 2 * 600 + 400
            # stored: asked once, and the lists show the body's TL;DR now
            assert lib.llm.tldr("N18-3011").cached and len(ep.requests) == 2
            assert lib.llm.stored_tldrs(["N18-3011"])["N18-3011"].text == after.text
            # embedding the passages later changes nothing the TL;DR is keyed by
            lib.fulltext.embed(["N18-3011"])
            assert lib.llm.tldr("N18-3011").cached and len(ep.requests) == 2
    finally:
        ep.stop()


def test_tldr_from_the_body_with_a_real_model(tmp_path: Path, llm_proxy) -> None:
    doc = read_pdf(GRAPH.read_bytes())
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "N18-3011", "title": doc.title, "abstract": doc.abstract}) + "\n")
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        lib.ingest([f])
        assert lib.fulltext.add("N18-3011", GRAPH).ok
        lib.llm.configure(llm_proxy.url)
        t = lib.llm.tldr("N18-3011", mode="generate")
        assert t.generated and t.text.strip() and "\n" not in t.text
        assert lib.llm.stored_tldrs(["N18-3011"])["N18-3011"].text == t.text


def test_body_search_says_what_is_searched_by_meaning(web_lib: Library, client, runner, tmp_path: Path) -> None:
    assert web_lib.fulltext.add("specter", SPECTER, embed=False).ok
    d = client.get("/search/body.json?q=triplet+margin+loss").json()
    assert d["coverage"]["embedded"] == 0 and d["coverage"]["passages"] > 50
    web_lib.fulltext.embed(["specter"])
    d = client.get("/search/body.json?q=triplet+margin+loss").json()
    assert d["coverage"]["embedded"] == d["coverage"]["passages"]
    n = d["coverage"]["passages"]
    assert f"By meaning: {n} of {n} passages" in client.get("/search/body?q=margin").text
    assert f"按语义可搜 {n} 段中的 {n} 段" in client.get("/search/body?q=margin&lang=zh").text


def test_cli_body_search_says_its_own_coverage(db: Path, runner) -> None:
    r = run(runner, db, "fulltext", "add", "specter", str(SPECTER))
    assert "passages embedded for search by meaning" in r.stdout
    d = json.loads(run(runner, db, "search", "triplet margin loss", "--in", "body", "--json").stdout)
    assert d["coverage"]["embedded"] == d["coverage"]["passages"] > 50 and d["hits"][0]["id"] == "specter"
    r = run(runner, db, "search", "triplet margin loss", "--in", "body")
    # every passage embedded: no note, and not the papers' note (their abstracts are not embedded here)
    assert r.exit_code == 0 and "note:" not in r.stderr
    with Library(db) as lib:
        assert lib.fulltext.add("N18-3011", GRAPH, embed=False).ok
    r = run(runner, db, "search", "triplet margin loss", "--in", "body")
    n = d["coverage"]["passages"]
    assert f"note: {n} of " in r.stderr and "fulltext embed --all" in r.stderr


def test_an_embed_that_is_stopped_resumes_with_what_is_left(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from paperatlas.fulltext import vectors

    monkeypatch.setattr(vectors, "STEP", 20)  # batches of 20 texts, each stored on its own
    with Library(db) as lib:
        assert lib.fulltext.add("specter", SPECTER, embed=False).ok
        total = lib.fulltext.vectors.counts()["passages"]
        seen: list[tuple[int, int]] = []

        def stop_after_two_batches(done: int, of: int) -> None:
            seen.append((done, of))
            if done >= 40:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            lib.fulltext.embed(progress=stop_after_two_batches)
        kept = lib.fulltext.vectors.counts()["embedded"]
        assert 20 <= kept < total and seen[0] == (0, seen[0][1]) and seen[0][1] >= total - 10
        rep = lib.fulltext.embed()
        assert rep.passages > 0 and rep.passages < total and lib.fulltext.vectors.todo() == []
        assert lib.fulltext.vectors.counts()["embedded"] == total


def test_a_model_that_cannot_run_leaves_the_text_read_and_searchable_by_keyword(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A unit double: an embedder whose model is not installed (the packaged one always is)."""
    import numpy as np

    from paperatlas.embed.onnx import EmbeddingModelMissing

    class Missing:
        id = "missing-model"
        dimensions = 4

        def embed(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
            raise EmbeddingModelMissing("the model's package is not installed", "pip install paperatlas-models")

        def embed_query(self, text: str) -> np.ndarray:
            raise EmbeddingModelMissing("the model's package is not installed", "pip install paperatlas-models")

    with Library(tmp_path / "lib.db", embedder=Missing()) as lib:  # type: ignore[arg-type]
        lib.ingest([_papers(tmp_path)])
        r = lib.fulltext.add("specter", SPECTER)
        assert r.ok and r.embedded == 0 and "not embedded" in caplog.text
        assert lib.fulltext.status()["embedded"] == 0
        hits = lib.fulltext.hits("triplet margin loss")
        assert hits and hits[0].paper.id == "specter"


def test_by_default_passages_are_searched_by_keyword_and_not_embedded(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # on held-out questions keyword alone found the evidence more often than any weight of meaning
    # (benchmarks/fulltext_passage_weight.py): no vector is made on the way, and none is read
    monkeypatch.delenv("PAPERATLAS_FULLTEXT_SEMANTIC_WEIGHT")
    with Library(db) as lib:
        assert lib.fulltext.add("specter", SPECTER).ok
        assert lib.fulltext.vectors.counts()["embedded"] == 0
        got = lib.fulltext.retrieve("What margin does the triplet loss use?", ["specter"], per_paper=2, limit=2)
        assert got == lib.fulltext.retrieve(
            "What margin does the triplet loss use?", ["specter"], per_paper=2, limit=2, mode="keyword"
        )
        assert lib.fulltext.embed(["specter"]).passages > 0  # asked for, it embeds all the same
        # nor does a folder's report send the reader to embed what no search would read
        rep = lib.fulltext.add_folder(SPECTER.parent)
        assert rep.matched and not any("fulltext embed" in n for n in rep.notes)
