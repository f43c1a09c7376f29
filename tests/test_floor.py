"""The relevance floor (issue 11 #4): no hits for a query with no real match, in semantic and
hybrid search, with the real packaged model; the calibration command runs end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.search.floor import Floor, apply_floor, content_stems, coverage, floor_for

from conftest import DATA, EXAMPLES

NONSENSE = ["asdkjhqwe", "banana bread", "qwzx plomb vrtk", "best pizza in naples", "football world cup final score"]
REAL = [
    "controllable user simulators",
    "watermarks for language models",
    "second-order optimizer for pretraining",
    "causal consistency of user simulators",
]


def test_coverage_counts_content_words() -> None:
    q = content_stems("the best networks for graphs")
    assert q == {"best", "network", "graph"}  # stop words out, stemmed
    assert coverage(q, "Graph neural networks") == pytest.approx(2 / 3)
    assert coverage(set(), "anything") == 0.0


def test_apply_floor() -> None:
    fl = Floor(gate_cosine=0.3, coverage=0.67, hit_cosine=0.2)
    fused = [("a", 1.0), ("b", 0.5), ("c", 0.1)]
    lists = {"semantic": [("a", 0.45), ("b", 0.1), ("c", 0.25)], "keyword": [("b", 2.0), ("a", 0.0), ("c", 0.0)]}
    # past the gate: b shares a word, c is close enough by meaning, a both
    assert apply_floor(fused, lists, fl) == fused
    lists["semantic"] = [("a", 0.15), ("b", 0.1), ("c", 0.12)]
    assert apply_floor(fused, lists, fl) == []  # nothing close, no keyword hit covering the query
    assert apply_floor(fused, lists, fl, keyword_coverage=1.0) == [("b", 0.5)]  # an exact-word match passes
    # the support tier: a weaker cosine passes only with some of the query's words in a top hit
    tiered = Floor(gate_cosine=0.3, coverage=0.67, hit_cosine=0.1, support_cosine=0.14, support_coverage=0.25)
    assert apply_floor(fused, lists, tiered, keyword_coverage=0.2) == []
    assert apply_floor(fused, lists, tiered, keyword_coverage=0.3) == fused
    lists["semantic"] = [("a", 0.13), ("b", 0.1), ("c", 0.12)]
    assert apply_floor(fused, lists, tiered, keyword_coverage=0.5) == []  # below the support cosine
    assert floor_for("minilm-l6-int8-onnx@256") is not None
    assert floor_for("hashing-v1") is None  # uncalibrated models search without a floor


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory):
    """The examples and seven ICLR records, embedded with the real packaged model."""
    lib = Library(tmp_path_factory.mktemp("floor") / "f.db")
    lib.ingest([*EXAMPLES, DATA / "authors.jsonl"])
    lib.embed()
    yield lib
    lib.close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_nonsense_gets_nothing_real_queries_keep_answers(lib: Library, mode: str) -> None:
    for q in NONSENSE:
        hits = lib.search(q, mode)
        assert hits == [] and hits.no_good_match, (q, [h.paper.title for h in hits])
    for q in REAL:
        hits = lib.search(q, mode)
        assert hits and not hits.no_good_match, q
        assert hits.total >= len(hits)
    if mode == "hybrid":  # a name embeds weakly, but one paper holds the word: hybrid answers it
        assert lib.search("Sophia", mode)[0].paper.id == "iclr2024/pdf-394bc531aa1b"
    lib.engine.settings.floor = False
    try:
        assert lib.search("asdkjhqwe", mode)  # without the floor: the nearest junk
    finally:
        lib.engine.settings.floor = True


@pytest.mark.slow
def test_cli_queries_file_json(lib: Library, tmp_path: Path, runner) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "q.txt"
    f.write_text("asdkjhqwe\ncontrollable user simulators\nbanana bread\n", encoding="utf-8")
    r = runner.invoke(cli, ["--db", lib.path, "search", "--queries", str(f), "--json"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [row["query"] for row in rows] == ["asdkjhqwe", "controllable user simulators", "banana bread"]
    assert rows[0]["hits"] == [] and rows[2]["hits"] == []
    assert rows[1]["hits"]
    assert "2 of 3 queries found nothing" in r.stderr
    r = runner.invoke(cli, ["--db", lib.path, "search", "asdkjhqwe"])
    assert r.exit_code == 4 and "no good match" in r.stderr


@pytest.mark.slow
def test_web_says_no_good_matches_and_counts(lib: Library) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
        html = c.get("/search", params={"q": "banana bread"}).text
        assert "No good matches" in html
        js = c.get("/search.json", params={"q": "banana bread"}).json()
        assert js["hits"] == [] and js["no_good_match"] is True and js["total"] == 0
        js = c.get("/search.json", params={"q": "user simulators", "per_page": 5}).json()
        assert len(js["hits"]) == 5 and js["total"] > 5 and js["no_good_match"] is False
        html = c.get("/search", params={"q": "user simulators", "per_page": 5}).text
        assert f"of {js['total']}" in html


def _beir(folder: Path) -> Path:
    import gzip

    (folder / "qrels").mkdir(parents=True)
    docs = [
        ("d1", "Zebrafish fin regeneration", "Zebrafish regrow amputated fins through blastema formation."),
        ("d2", "Vitamin D and bone density", "Supplementing vitamin D raises bone mineral density."),
        ("d3", "Statins lower cholesterol", "Statins reduce LDL cholesterol and cardiovascular events."),
    ]
    with gzip.open(folder / "corpus.jsonl.gz", "wt", encoding="utf-8") as f:
        for i, t, a in docs:
            f.write(json.dumps({"_id": i, "title": t, "text": a}) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for q, t in (("q1", "fish regrowing fins"), ("q2", "vitamin D bones"), ("q3", "cholesterol drugs")):
            f.write(json.dumps({"_id": q, "text": t}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td3\t1\n")
    (folder / "nonsense.txt").write_text("# comment\nasdkjhqwe\nbanana bread\n")
    return folder


def test_eval_floor_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PAPERATLAS_VECTOR_CACHE", str(tmp_path / "v.sqlite"))
    folder = _beir(tmp_path / "b")
    r = runner.invoke(
        cli, ["eval", "floor", str(folder), "--embedder", "hashing", "--nonsense", str(folder / "nonsense.txt")]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["nonsense_queries"] == 2
    assert set(out["distributions"]) == {
        "train best cosine",
        "nonsense best cosine",
        "train coverage",
        "nonsense coverage",
    }
    picked = out["picked"]
    rep = out["picked on test"]
    assert rep["train false-empty"]["rate"] <= 0.0025  # the gate keeps (nearly) every real query
    assert picked["coverage"] > out["distributions"]["nonsense coverage"]["p100"]
    assert rep["nonsense answered"]["count"] == 0
    assert set(rep["test hybrid ndcg@10"]) == {"no floor", "floor", "delta", "empty answers"}


def test_eval_floor_tunes_on_the_listed_queries_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner) -> None:  # type: ignore[no-untyped-def]
    """--tune-ids: a fine-tuned model's floor comes from the split's queries it never trained on; an id
    that is not a query of the split is an error that names it, before anything is embedded."""
    monkeypatch.setenv("PAPERATLAS_VECTOR_CACHE", str(tmp_path / "v.sqlite"))
    folder = _beir(tmp_path / "b")
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td3\t1\nq2\td2\t1\n")
    ids = tmp_path / "dev.txt"
    ids.write_text("# held out of training\nq3\n")
    args = ["eval", "floor", str(folder), "--embedder", "hashing", "--nonsense", str(folder / "nonsense.txt")]
    whole = json.loads(runner.invoke(cli, args).stdout)
    r = runner.invoke(cli, [*args, "--tune-ids", str(ids)])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert whole["tune_queries"] == 2 and out["tune_queries"] == 1
    assert out["picked on test"]["train false-empty"]["of"] == 1
    ids.write_text("# only a comment\n")
    r = runner.invoke(cli, [*args, "--tune-ids", str(ids)])
    assert r.exit_code != 0 and "the --tune-ids list holds no query ids" in r.output
    ids.write_text("q3\nq9\n")
    r = runner.invoke(cli, [*args, "--tune-ids", str(ids)])
    assert r.exit_code != 0 and "1 of the --tune-ids are not queries of the 'train' split (first: q9)" in r.output
