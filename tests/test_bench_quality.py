"""`paperatlas bench quality` end to end on a tiny copy of each evaluation's data shape: every part
runs, prints its figure and its time, a second run reads the kept library and the vector cache,
and a part whose data is missing says so while the others still run."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path

import pytest

from paperatlas.cli import cli

VENUE = [
    ("v1", "Diffusion models as the evidence lower bound", "We show diffusion objectives are weighted ELBOs."),
    ("v2", "Conformal prediction with decaying step sizes", "Online coverage guarantees for arbitrary sequences."),
    ("v3", "Graph neural networks for molecules", "Message passing predicts molecular properties."),
    ("v4", "Watermarking language model outputs", "A hidden signature in generated text, detectable later."),
    ("v5", "Offline reinforcement learning from logged data", "Policies learned without interaction."),
    ("v6", "Job shop scheduling with learned heuristics", "A policy improves complete machine schedules."),
    ("v7", "Controllable user simulators", "Simulated users test dialogue systems with causal control."),
    ("v8", "Sparse attention for long documents", "Attention restricted to local windows scales linearly."),
]


def _gz(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def _lines(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bench-quality-data")
    _gz(
        root / "ml_venue_papers" / "papers.jsonl.gz",
        [
            {"id": f"venue/{i}", "title": t, "abstract": a, "venue": "ICLR", "year": 2024, "authors": ["A. Author"]}
            for i, t, a in VENUE
        ],
    )
    sf = root / "scifact"
    _gz(sf / "corpus.jsonl.gz", [{"_id": i, "title": t, "text": a} for i, t, a in VENUE])
    _lines(sf / "queries.jsonl", [{"_id": "q1", "text": "weighted ELBO objectives of diffusion"}])
    (sf / "qrels").mkdir()
    (sf / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tv1\t1\n", encoding="utf-8")
    acm = root / "acm_cr"
    _gz(acm / "corpus.jsonl.gz", [{"_id": f"doi/{i}", "title": t, "text": a} for i, t, a in VENUE])
    _lines(
        acm / "citations.jsonl",
        [
            {"paper_doi": "c1", "title": "x", "cited_in_collection": ["doi/v1", "doi/v2", "doi/v3", "doi/v4"]},
            {"paper_doi": "c2", "title": "y", "cited_in_collection": ["doi/v5", "doi/v6", "doi/v7", "doi/v8"]},
        ],
    )
    _lines(
        root / "para.jsonl",
        [
            {"query": "hidden signature in generated text", "paper_id": "venue/v4", "split": "test"},
            {"query": "policies from logged data without interaction", "paper_id": "venue/v5", "split": "train"},
        ],
    )
    _lines(
        root / "zh.jsonl",
        [
            {"q": "用户模拟器", "title": "Controllable user simulators", "kind": "short", "split": "test"},
            {"q": "分子 图神经网络", "title": "Graph neural networks for molecules", "kind": "short", "split": "train"},
            {"q": "红烧肉的家常做法", "title": None, "kind": "off-domain", "split": "test"},
        ],
    )
    return root


def _run(runner, data: Path, tmp: Path, *extra: str) -> dict:
    args = [
        "bench",
        "quality",
        "--embedder",
        "hashing",
        "--data",
        str(data),
        "--workdir",
        str(tmp / "work"),
        "--vector-cache",
        str(tmp / "vectors.sqlite"),
        "--paraphrases",
        str(data / "para.jsonl"),
        "--zh-queries",
        str(data / "zh.jsonl"),
        "--acm-pool",
        "8",
        "--sizes",
        "8k,300",
        "--queries",
        "5",
        "--no-examples",  # the venue papers alone: the multilingual model embeds 8 papers, not 37
        *extra,
    ]
    r = runner.invoke(cli, args)
    assert r.exit_code == 0, r.output
    return r


def test_every_part_runs_on_tiny_data_and_reports_its_time(runner, data: Path, tmp_path: Path) -> None:
    r = _run(runner, data, tmp_path, "--json")
    res = json.loads(r.stdout)
    parts = res["parts"]
    assert set(parts) == {"scifact", "paraphrase", "acm", "zh", "speed", "latency"}
    assert all("skipped" not in p and p["seconds"] >= 0 for p in parts.values()), parts
    assert res["embedder"] == "hashing"
    # SciFact shape: the one claim's paper shares its words, so keyword search finds it first
    assert parts["scifact"]["keyword"]["ndcg@10"] == 1.0 and parts["scifact"]["queries"] == 1
    for split in ("train", "test"):
        p = parts["paraphrase"][split]
        assert p["queries"] == 1 and p["keyword"]["mrr@10"] == 1.0
    assert parts["paraphrase"]["papers"] == 8  # the venue papers (the examples left out)
    acm = parts["acm"]
    assert acm["pool"] == 8 and set(acm["test"]) == {"default", "svm"}
    assert acm["ratio_ndcg@10"] == pytest.approx(
        acm["test"]["default"]["ndcg@10"] / max(1e-9, acm["test"]["svm"]["ndcg@10"]), abs=1e-3
    )
    zh = parts["zh"]
    assert zh["test"]["queries"] == 1 and zh["train"]["queries"] == 1 and 0 <= zh["test"]["mrr@10"] <= 1
    sp = parts["speed"]
    assert sp["papers"] == sp["embedded"] == 8 and sp["all_venue_papers"] and sp["first_answer_hits"] > 0
    assert sp["papers_per_s"] > 0 and sp["ingest_to_hybrid_s"] >= sp["embed_s"]
    rows = {row["size"]: row for row in parts["latency"]["rows"]}
    assert rows["8k"]["data"] == "real" and rows["300"]["papers"] == 300 and rows["300"]["data"].startswith("synthetic")
    assert all(row["hybrid"]["p50_ms"] > 0 and row["rss_mib"] > 0 for row in rows.values())

    # the second run keeps the library: nothing is ingested or embedded again; the table names every part
    r2 = _run(runner, data, tmp_path, "--only", "paraphrase,speed", "--ready-papers", "3")
    assert "embedded" not in r2.stderr.replace("embedded 3", "")  # speed embeds, cache off, by design
    assert "0 new, 0 updated" in r2.stderr
    assert "paraphrases test (1 queries, 8 papers) MRR@10: hybrid" in r2.stdout
    assert "the first 3 venue papers only" in r2.stdout
    assert "[speed," in r2.stdout and " s]" in r2.stdout


def test_missing_data_skips_that_part_and_bad_parts_are_refused(runner, data: Path, tmp_path: Path) -> None:
    part = tmp_path / "data"
    (part / "ml_venue_papers").mkdir(parents=True)
    for f in ("ml_venue_papers/papers.jsonl.gz", "para.jsonl", "zh.jsonl"):
        (part / f).write_bytes((data / f).read_bytes())
    r = _run(runner, part, tmp_path, "--only", "scifact,speed")
    assert "[scifact, " in r.stdout and "skipped: missing data: " in r.stdout and "scifact" in r.stdout
    assert "papers/s" in r.stdout  # the part with its data still ran
    bad = runner.invoke(cli, ["bench", "quality", "--only", "scifact,nope", "--data", str(data)])
    assert bad.exit_code == 2 and "unknown part 'nope'" in bad.output
    bad = runner.invoke(cli, ["bench", "quality", "--embedder", "nope", "--data", str(data)])
    assert bad.exit_code == 2 and "--embedder" in bad.output


def test_the_paraphrase_part_scores_every_split_a_file_has_and_no_other(runner, data: Path, tmp_path: Path) -> None:
    """A file with dev rows (and one without a split) is scored on those, not printed as an empty test split."""
    other = tmp_path / "more.jsonl"
    _lines(
        other,
        [
            {"query": "hidden signature in generated text", "paper_id": "venue/v4", "split": "dev"},
            {"query": "policies from logged data without interaction", "paper_id": "venue/v5", "split": "dev"},
            {"query": "simulated people who talk to dialogue agents", "paper_id": "venue/v7"},
        ],
    )
    r = _run(runner, data, tmp_path, "--only", "paraphrase", "--paraphrases", str(other), "--json")
    part = json.loads(r.stdout)["parts"]["paraphrase"]
    assert part["splits"] == ["all", "dev"] and "test" not in part and "train" not in part
    assert part["dev"]["queries"] == 2 and part["all"]["queries"] == 1
    text = _run(runner, data, tmp_path, "--only", "paraphrase", "--paraphrases", str(other)).stdout
    assert "paraphrases dev (2 queries" in text and "paraphrases all (1 queries" in text
    assert "paraphrases test" not in text
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    text = _run(runner, data, tmp_path, "--only", "paraphrase", "--paraphrases", str(empty)).stdout
    assert f"skipped: {empty} holds no queries" in text
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query": "fine", "paper_id": "venue/v4"}\n{"paper_id": "venue/v5"\n', encoding="utf-8")
    text = _run(runner, data, tmp_path, "--only", "paraphrase", "--paraphrases", str(broken)).stdout
    assert f"skipped: {broken}, line 2: not a JSON object" in text and "Fix:" in text


@functools.cache
def _venue_titles() -> dict[str, str] | None:
    """Venue paper id -> title, read once for every test that checks a paraphrase file (None: no data here)."""
    from paperatlas_lab.bench.quality import default_data_root

    root = default_data_root()
    if root is None:
        return None
    with gzip.open(root / "ml_venue_papers" / "papers.jsonl.gz", "rt", encoding="utf-8") as f:
        return {d["id"]: d["title"] for d in map(json.loads, f)}


def _shares_title_words(rows: list[dict]) -> list[tuple[str, set[str]]]:
    """The queries that share a content word (stemmed as BM25 stems) with their paper's title."""
    from paperatlas.search.bm25 import Analyzer

    terms = Analyzer().terms
    titles = _venue_titles()
    if titles is None:
        pytest.skip("the venue papers (../shared/data) are not here")
    allowed = {"use", "base", "from", "through"}  # words that name no idea
    out = []
    for r in rows:
        shared = terms(r["query"]) & terms(titles[r["paper_id"]]) - allowed
        if shared:
            out.append((r["query"], shared))
    return out


def _rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def test_the_paraphrase_set_avoids_title_words_and_keeps_its_split() -> None:
    import hashlib

    from paperatlas_lab.bench.quality import PARAPHRASES

    rows = _rows(PARAPHRASES)
    assert len(rows) >= 60 and len({r["paper_id"] for r in rows}) == len(rows)
    for r in rows:
        assert r["split"] == ("test" if hashlib.sha1(r["paper_id"].encode()).digest()[0] % 2 == 0 else "train")
    assert sum(r["split"] == "test" for r in rows) >= 30
    # the rule was first checked case-sensitively, which missed capitalised title words: 10 of the 80 queries
    # (3 test) share one or two, mostly generic ("learn", "method"). The set is frozen (every figure since
    # issue 25 was filed is on it), so they stay, counted here so no new one slips in
    shared = _shares_title_words(rows)
    assert len(shared) == 10 and all(len(words) <= 2 for _, words in shared)


def test_the_written_2k_set_is_disjoint_from_every_other_paraphrase_file_and_keeps_its_split() -> None:
    """2,000 more written paraphrases: none of their papers is a target of the evaluation set, the
    Chinese set or another written file (run 5 trained on one; run 11 on this one's train rows), and dev/train
    follow the hash of the paper id."""
    import hashlib

    from paperatlas_lab.bench.quality import PARAPHRASES

    root = Path(__file__).resolve().parents[1]
    rows = _rows(root / "benchmarks" / "data" / "paraphrase_written_2k.jsonl")
    ids = [r["paper_id"] for r in rows]
    assert len(rows) == 2000 and len(set(ids)) == 2000
    for r in rows:
        dev = hashlib.sha1(r["paper_id"].encode()).digest()[0] % 5 == 0
        assert r["split"] == ("dev" if dev else "train") and 12 <= len(r["query"].split()) <= 40
    assert 300 < sum(r["split"] == "dev" for r in rows) < 500
    others = {r["paper_id"] for r in _rows(PARAPHRASES)}
    others |= {r["paper_id"] for r in _rows(root / "benchmarks" / "train_embedder" / "paraphrases_train.jsonl")}
    others |= {r["paper_id"] for r in _rows(root / "tests" / "data" / "paraphrase_queries.jsonl")}
    assert not others & set(ids)
    # written under the case-sensitive check (above): 781 share a title word. Frozen: run 11 trained on its
    # train rows and was chosen on its dev rows
    assert len(_shares_title_words(rows)) == 781


def test_the_written_test_set_is_held_out_clean_and_disjoint_from_every_other_paraphrase_file() -> None:
    """1,200 written paraphrases drawn after run 11 was chosen, as a test set: all `test`, no paper of
    another paraphrase file (trained on, chosen on or evaluated), and no title word by the fixed check."""
    from paperatlas_lab.bench.quality import PARAPHRASES

    root = Path(__file__).resolve().parents[1]
    rows = _rows(root / "benchmarks" / "data" / "paraphrase_written_test.jsonl")
    ids = {r["paper_id"] for r in rows}
    assert len(rows) == 1200 == len(ids) and {r["split"] for r in rows} == {"test"}
    assert all(12 <= len(r["query"].split()) <= 40 for r in rows)
    for other in (
        PARAPHRASES,
        root / "benchmarks" / "data" / "paraphrase_written_2k.jsonl",
        root / "benchmarks" / "train_embedder" / "paraphrases_train.jsonl",
        root / "tests" / "data" / "paraphrase_queries.jsonl",
    ):
        assert not ids & {r["paper_id"] for r in _rows(other)}, other.name
    assert not _shares_title_words(rows)


def test_baseline_runs_both_embedders_in_one_run_and_prints_ratios(runner, data: Path, tmp_path: Path) -> None:
    base = _run(runner, data, tmp_path, "--only", "paraphrase,speed", "--baseline", "minilm-int8", "--json")
    pair = json.loads(base.stdout)
    assert pair["baseline"]["embedder"] == "minilm-int8" and pair["candidate"]["embedder"] == "hashing"
    for side in pair.values():
        assert set(side["parts"]) == {"paraphrase", "speed"} and side["parts"]["speed"]["embedded"] == 8
    # part by part: the baseline's paraphrase, the candidate's, then both speeds (same load for each pair)
    log = base.stderr
    assert log.index("== minilm-int8") < log.index("== hashing") < log.rindex("== minilm-int8") < log.rindex("-- speed")
    r = _run(runner, data, tmp_path, "--only", "paraphrase,speed", "--baseline", "minilm-int8")
    assert "candidate hashing vs baseline minilm-int8 (same run):" in r.stdout
    lines = {ln.split(":")[0].strip(): ln for ln in r.stdout.splitlines() if ln.startswith("  ")}
    assert {"papers/s", "paraphrases test MRR@10 hybrid", "ingest -> first hybrid answer s"} <= set(lines)
    for ln in lines.values():
        base_value = float(ln.split(":")[1].split("->")[0])
        assert ln.rstrip().endswith("x)" if base_value else "(no ratio: baseline 0)"), ln


def test_a_baseline_can_be_the_same_embedder_with_other_search_settings(runner, data: Path, tmp_path: Path) -> None:
    from paperatlas_lab.bench.quality import Bench

    r = _run(
        runner, data, tmp_path, "--only", "paraphrase", "--baseline", "hashing",
        "--baseline-settings", "norm=minmax,semantic_weight=0.5", "--json",
    )  # fmt: skip
    pair = json.loads(r.stdout)
    assert pair["baseline"]["search_settings"] == {"norm": "minmax", "semantic_weight": 0.5}
    assert pair["candidate"]["search_settings"] == {} and "paraphrase" in pair["baseline"]["parts"]
    r = _run(
        runner, data, tmp_path, "--only", "paraphrase", "--baseline", "hashing", "--baseline-settings", "norm=minmax"
    )
    assert "candidate hashing vs baseline hashing [norm=minmax] (same run):" in r.stdout
    # the settings reach the library each part opens
    b = Bench(data, "hashing", tmp_path / "work", search={"norm": "zscore", "semantic_weight": 0.3})
    try:
        s = b.venue_library().engine.settings
        assert (s.norm, s.semantic_weight) == ("zscore", 0.3)
    finally:
        b.close()
    r = runner.invoke(cli, ["bench", "quality", "--data", str(data), "--baseline-settings", "norm=unknown"])
    assert r.exit_code != 0 and "unknown norm 'unknown'" in r.output and "max, minmax, zscore" in r.output
    r = runner.invoke(cli, ["bench", "quality", "--data", str(data), "--settings", "wieght=1"])
    assert r.exit_code != 0 and "not a search setting: 'wieght=1'" in r.output and "semantic_weight" in r.output


def test_search_settings_overrides_are_read_as_their_fields_types() -> None:
    from paperatlas.errors import PaperatlasError
    from paperatlas.search.engine import SearchSettings

    got = SearchSettings.parse_overrides(" norm=minmax , semantic_weight=0.5,depth=50,floor=false,")
    assert got == {"norm": "minmax", "semantic_weight": 0.5, "depth": 50, "floor": False}
    assert SearchSettings(**got).depth == 50 and SearchSettings.parse_overrides("") == {}
    for bad, says in (("depth=1.5", "takes a int"), ("floor=maybe", "takes a bool"), ("norm", "not a search setting")):
        with pytest.raises(PaperatlasError, match=says):
            SearchSettings.parse_overrides(bad)


def test_zh_with_an_endpoint_runs_the_chinese_queries_again_with_the_models_english(
    runner, data: Path, tmp_path: Path, llm_proxy
) -> None:
    """The real model server (the Gemma fixture, through the counting proxy): each Chinese query is
    rendered once, the default figures stay the no-model ones, the train split is swept."""
    r = _run(runner, data, tmp_path, "--only", "zh", "--llm-url", llm_proxy.url, "--json")
    zh = json.loads(r.stdout)["parts"]["zh"]
    e = zh["with_endpoint"]
    assert e["endpoint"] == llm_proxy.url and e["model"] and e["translate_s_per_query"] > 0
    assert set(e["train_mrr@10_by_weight"]) >= {"0.3", "0.5", "0.7", "0.9"}
    for split in ("train", "test"):
        assert e[split]["queries"] == zh[split]["queries"] == 1 and 0 <= e[split]["mrr@10"] <= 1
    assert "no_answer_emptied" in e["test"] and "no_answer_emptied" in zh["test"]
    asked = [json.loads(s["body"])["messages"][-1]["content"] for s in llm_proxy.chat_requests()]
    assert len(asked) == 3 and all("search query" in a for a in asked)  # once per query, then kept
    # the table says which model and weight, and a second run asks nothing (the renderings are kept)
    r = _run(runner, data, tmp_path, "--only", "zh", "--llm-url", llm_proxy.url)
    assert "with endpoint (" in r.stdout and "train MRR@10 by weight" in r.stdout
    assert len(llm_proxy.chat_requests()) == 3
