"""BEIR evaluation: our metrics against trec_eval (pytrec_eval), and the command end to end."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from paperatlas.cli import cli
from paperatlas_lab.eval.beir import canonical_qrels, eval_beir, evaluate, load_beir, mrr_at_k, ndcg_at_k, recall_at_k


def test_metrics_by_hand() -> None:
    rels = {"a": 1, "b": 2}
    # b at rank 1 (gain 2), a at rank 3 (gain 1 / log2(4)); ideal: 2, then 1 / log2(3)
    assert ndcg_at_k(["b", "x", "a"], rels) == pytest.approx((2 + 0.5) / (2 + 1 / 1.5849625))
    assert ndcg_at_k(["x"] * 10 + ["a"], rels) == 0.0
    assert recall_at_k(["a", "x"], rels, 100) == 0.5 and recall_at_k(["a"], {}, 100) == 0.0
    assert mrr_at_k(["x", "y", "b"], rels) == pytest.approx(1 / 3) and mrr_at_k(["x"] * 10 + ["a"], rels) == 0.0


def test_metrics_match_pytrec_eval() -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(300)]
    qrels = {f"q{i}": {d: rng.choice([1, 1, 2]) for d in rng.sample(docs, rng.randint(1, 12))} for i in range(60)}
    run = {q: rng.sample(docs, 150) for q in qrels}
    run["q0"] = list(qrels["q0"]) + run["q0"]  # one query with everything on top
    ours = evaluate(run, qrels)
    trec_run = {q: {d: float(1000 - i) for i, d in enumerate(dict.fromkeys(r))} for q, r in run.items()}
    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"})
    res = ev.evaluate(trec_run)
    assert ours["ndcg@10"] == pytest.approx(sum(r["ndcg_cut_10"] for r in res.values()) / len(res), abs=1e-5)
    assert ours["recall@100"] == pytest.approx(sum(r["recall_100"] for r in res.values()) / len(res), abs=1e-5)
    cut = {q: {d: s for d, s in r.items() if s > 1000 - 10 + 0.5} for q, r in trec_run.items()}  # top 10
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
    assert ours["mrr@10"] == pytest.approx(sum(r["recip_rank"] for r in rr.values()) / len(qrels), abs=1e-5)


def test_a_query_that_retrieves_nothing_counts_as_zero() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    assert evaluate({"q1": ["a"]}, qrels)["ndcg@10"] == pytest.approx(0.5)


def test_canonical_qrels_merge_duplicates() -> None:
    out = canonical_qrels({"q": {"dup": 1, "orig": 2, "other": 1}}, {"dup": "orig", "orig": "orig"}.get)
    assert out == {"q": {"orig": 2, "other": 1}}


def _beir(folder: Path, with_split_field: bool) -> Path:
    docs = [
        ("d1", "Zebrafish fin regeneration", "Zebrafish regrow amputated fins through blastema formation."),
        ("d2", "Vitamin D and bone density", "Supplementing vitamin D raises bone mineral density in the elderly."),
        ("d3", "Statins lower cholesterol", "Statins reduce LDL cholesterol and cardiovascular events."),
        ("d4", "Sleep and memory", "Sleep consolidates declarative memory in adolescents."),
        ("d5", "Sleep and memory", "Sleep consolidates declarative memory in adolescents."),  # duplicate of d4
    ]
    (folder / "qrels").mkdir(parents=True)
    with gzip.open(folder / "corpus.jsonl.gz", "wt", encoding="utf-8") as f:
        for i, t, a in docs:
            f.write(json.dumps({"_id": i, "title": t, "text": a}) + "\n")
    queries = [
        ("q1", "fish regrowing fins", "test"),
        ("q2", "vitamin D bones", "test"),
        ("q3", "cholesterol drugs", "train"),
        ("q4", "does sleep help memory", "test"),
    ]
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for q, t, s in queries:
            f.write(json.dumps({"_id": q, "text": t, **({"split": s} if with_split_field else {})}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq4\td5\t1\n")
    (folder / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nq3\td3\t1\n")
    return folder


@pytest.mark.parametrize("with_split_field", [True, False])
def test_load_beir(tmp_path: Path, with_split_field: bool) -> None:
    data = load_beir(_beir(tmp_path, with_split_field), "test")
    assert data.queries == {"q1": "fish regrowing fins", "q2": "vitamin D bones", "q4": "does sleep help memory"}
    assert data.qrels["q4"] == {"d5": 1}
    assert list(load_beir(tmp_path, "train").queries) == ["q3"]


def test_load_beir_explains_a_wrong_folder(tmp_path: Path) -> None:
    from paperatlas.errors import PaperatlasError

    _beir(tmp_path, True)
    with pytest.raises(PaperatlasError, match="splits here: test, train"):
        load_beir(tmp_path, "dev")


def test_eval_beir_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERATLAS_VECTOR_CACHE", str(tmp_path / "v.sqlite"))
    res = eval_beir(_beir(tmp_path / "b", True), "test", embedder="hashing")
    info = res.pop("_info")
    assert info["queries"] == 3 and info["papers"] == 4 and info["merged_duplicates"] == 1
    assert set(res) == {"keyword", "semantic", "hybrid"}
    # every query shares a word with its one relevant paper; the duplicate's qrel follows it
    assert res["keyword"] == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
    assert all(0 < v <= 1 for m in res.values() for v in m.values())


def test_eval_beir_cli_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runner) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PAPERATLAS_VECTOR_CACHE", str(tmp_path / "v.sqlite"))
    folder = _beir(tmp_path / "b", True)
    r = runner.invoke(cli, ["eval", "beir", str(folder), "--embedder", "hashing", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert set(out) == {"keyword", "semantic", "hybrid"}
    assert set(out["hybrid"]) == {"ndcg@10", "recall@100", "mrr@10"}
    r = runner.invoke(cli, ["eval", "beir", str(folder), "--split", "dev"])
    assert r.exit_code != 0 and "splits here" in r.output


def test_paraphrase_eval_on_the_examples(tmp_path: Path, runner) -> None:  # type: ignore[no-untyped-def]
    from conftest import DATA, EXAMPLES
    from paperatlas import Library
    from paperatlas_lab.eval.beir import eval_paraphrases, load_paraphrases
    from paperatlas.store.vector_cache import VectorCache

    db = tmp_path / "ex.db"
    lib = Library(db, embedder="hashing", vector_cache=VectorCache(tmp_path / "v.sqlite"))
    lib.ingest(EXAMPLES)
    lib.embed()
    rows = [json.loads(x) for x in (DATA / "paraphrase_queries.jsonl").read_text().splitlines()]
    assert len(rows) == 20 and len({r["query"] for r in rows}) == 20
    mine = tmp_path / "q.jsonl"
    # the example rows of the shipped file, with one id made stale: the abstract prefix still finds it
    ex_rows = [r for r in rows if "abstract_prefix" in r]
    ex_rows[0] = {**ex_rows[0], "paper_id": "stale-id"}
    mine.write_text("\n".join(json.dumps(r) for r in ex_rows))
    pairs = load_paraphrases(mine, lib)
    assert len(pairs) == 5 and all(lib.get(pid) for _, pid in pairs)
    res = eval_paraphrases(lib, pairs)
    assert set(res) == {"keyword", "semantic", "hybrid", "_queries"}
    assert all(0 <= res[m]["hit@10"] <= 1 for m in ("keyword", "semantic", "hybrid"))
    lib.close()
    r = runner.invoke(cli, ["eval", "paraphrase", str(mine), "--db", str(db), "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["keyword"]["hit@10"] == res["keyword"]["hit@10"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "x", "paper_id": "nope"}))
    r = runner.invoke(cli, ["eval", "paraphrase", str(bad), "--db", str(db)])
    assert r.exit_code != 0 and "not in this library" in r.output
