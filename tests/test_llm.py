"""The language-model layer: the extractive TL;DR, the client's errors and retries, the cache in
both stores, and the contract of `tldr` / `translate` / `ask` against a real llama.cpp server
(tests/llmserver.py; the Gemma 3 270M fixture: the tests check the protocol, not its prose)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from llmserver import Proxy
from pgserver import fresh_db_name
from ports import free_port

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.llm import LlmClient, LlmConfig, LlmError, NoEndpoint
from paperatlas.llm.capability import NOT_CHINESE_NOTE, is_chinese, parse_faq, parse_questions, resolve_citations
from paperatlas.llm.extractive import extractive_tldr, first_sentence, rouge, sentences

PAPERS = [
    {
        "id": "p-lora",
        "title": "Low-rank adapters for cheap fine-tuning",
        "abstract": "Fine-tuning large models is expensive. We propose low-rank adapters that train 0.1% of the "
        "weights, e.g. in attention layers. They match full fine-tuning on GLUE.",
        "authors": ["Ada Lovelace"],
        "venue": "ICLR",
        "year": 2024,
    },
    {
        "id": "p-graph",
        "title": "Signed graph link prediction with copulas",
        "abstract": "Gaussian copula models capture edge dependency in signed graphs. We show that they predict "
        "links better than embeddings.",
        "authors": ["Grace Hopper"],
        "venue": "ICLR",
        "year": 2024,
    },
    {
        "id": "p-rl",
        "title": "Reinforcement learning for reasoning in language models",
        "abstract": "Policy optimisation improves chain of thought reasoning of large language models.",
        "authors": ["Alan Turing"],
        "venue": "NeurIPS",
        "year": 2023,
    },
]


def _jsonl(tmp_path: Path, papers: list[dict] = PAPERS) -> Path:
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    return f


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("PAPERATLAS_LLM_MAX_TOKENS", "12")  # the fixture model's prose is not the point
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest([_jsonl(tmp_path)])
    lib.embed()
    yield lib
    lib.close()


def _run(runner, db: Path, *args: str, env: dict[str, str] | None = None):
    return runner.invoke(cli, ["--db", str(db), *args], env=env or {}, catch_exceptions=False)


# -- the extractive TL;DR and ROUGE ---------------------------------------------------------------------------
def test_sentences_keep_abbreviations_and_fix_glued_ones() -> None:
    s = sentences("Models forget, e.g. old tasks. We fix it.To see why, read on. Et al. Smith agree.")
    assert s[0] == "Models forget, e.g. old tasks." and s[1] == "We fix it." and s[2] == "To see why, read on."


def test_extractive_picks_the_contribution_not_the_background() -> None:
    a = PAPERS[0]["abstract"]
    assert extractive_tldr(a).startswith("We propose low-rank adapters")
    assert first_sentence(a) == "Fine-tuning large models is expensive."
    assert (
        extractive_tldr("") == ""
        and extractive_tldr("\\emph{One} sentence only here, with enough words.")
        == "One sentence only here, with enough words."
    )


def test_rouge_bounds_and_known_values() -> None:
    assert rouge("the cat sat", "the cat sat") == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0}
    assert rouge("dogs bark", "the cat sat")["rouge1"] == 0.0
    r = rouge("the cat sat on the mat", "the cat lay on the mat")
    assert (
        r["rouge1"] == pytest.approx(5 / 6)
        and r["rouge2"] == pytest.approx(3 / 5)
        and r["rougeL"] == pytest.approx(5 / 6)
    )


def test_citations_map_numbers_to_ids_and_drop_the_rest() -> None:
    text, cited, dropped = resolve_citations("A holds [2]. B too [1, 2]; C [7].", ["x", "y"])
    assert text == "A holds [y]. B too [x][y]; C ." and cited == ["y", "x"] and dropped == 1


def test_faq_and_questions_parse_loosely() -> None:
    items = parse_faq("Q: What problem?\nA: Cost.\nQ: 用了什么方法？\n答：低秩。\nmore")
    assert items == [{"q": "What problem?", "a": "Cost."}, {"q": "用了什么方法？", "a": "低秩。 more"}]
    assert parse_faq("no format") == [{"q": "", "a": "no format"}]
    assert parse_questions("1. Why rank 8?\n- Does it scale?\n\n3) What fails?\n4. Extra?") == [
        "Why rank 8?",
        "Does it scale?",
        "What fails?",
    ]


# -- without an endpoint: useful, and nothing is sent --------------------------------------------------------
def test_without_an_endpoint_tldr_is_extractive_and_the_rest_says_how(lib: Library, runner, tmp_path) -> None:
    g = lib.llm.tldr("p-lora", "zh")
    assert not g.generated and g.lang == "en" and g.model == "extractive-v1" and "no language model" in g.note
    r = _run(runner, tmp_path / "lib.db", "tldr", "p-lora", "--lang", "zh", "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert {"id", "lang", "text", "model", "generated"} <= set(d) and d["generated"] is False
    for args in (["translate", "p-lora"], ["ask", "which papers fine-tune cheaply?"], ["faq", "p-lora"]):
        r = _run(runner, tmp_path / "lib.db", *args)
        assert r.exit_code == 1 and "no language-model endpoint is configured" in r.output, r.output
        assert "--llm-url" in r.output
    with pytest.raises(NoEndpoint):
        lib.llm.translate("p-lora")


def test_unreachable_endpoint_fails_in_seconds_naming_it(lib: Library, runner, tmp_path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    started = time.monotonic()
    r = _run(runner, tmp_path / "lib.db", "translate", "p-lora", "--llm-url", url, "--llm-model", "m")
    assert r.exit_code == 1 and url in r.output and "connection refused" in r.output, r.output
    assert time.monotonic() - started < 10
    r = _run(runner, tmp_path / "lib.db", "ask", "copulas?", env={"PAPERATLAS_LLM_URL": url})
    assert r.exit_code == 1 and url in r.output


def test_faults_are_retried_then_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proxy = Proxy(free_port()).start()  # nothing behind it: only the injected answers
    try:
        c = LlmClient(LlmConfig(proxy.url, model="m", backoff=0.05))
        proxy.faults = ["503", "503", "503"]
        with pytest.raises(LlmError, match="HTTP 503") as e:
            c.chat([{"role": "user", "content": "hi"}])
        assert proxy.url in str(e.value) and len(proxy.chat_requests()) == 3  # 1 + 2 retries
        proxy.faults = ["malformed"]
        with pytest.raises(LlmError, match="not JSON"):
            c.chat([{"role": "user", "content": "hi"}])
        proxy.faults = ["401"]
        monkeypatch.setenv("PAPERATLAS_LLM_API_KEY", "sk-secret-123")
        with pytest.raises(LlmError) as e:
            c.chat([{"role": "user", "content": "hi"}])
        assert "PAPERATLAS_LLM_API_KEY" in str(e.value) and "sk-secret-123" not in str(e.value)
        assert proxy.seen[-1]["headers"]["Authorization"] == "Bearer sk-secret-123"
    finally:
        proxy.stop()


def test_bad_url_is_refused_before_anything_is_sent(lib: Library) -> None:
    lib.llm.configure("ftp://example.org/v1")
    with pytest.raises(LlmError, match="bad language-model endpoint"):
        lib.llm.translate("p-lora")


# -- the cache in both stores -------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_generated_texts_are_kept_per_key_and_go_stale_with_the_text(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        str(tmp_path / "s.db")
        if backend == "sqlite"
        else request.getfixturevalue("pg_server").url(fresh_db_name("llm"))
    )
    with Library(url, embedder="hashing") as lib:
        s = lib.store.llm
        row = s.put_generated("p1", "tldr", "zh", "m1", "tldr-1", "h1", "一句话")
        assert row["text"] == "一句话" and row["created_at"]
        assert s.get_generated("p1", "tldr", "zh", "m1", "tldr-1", "h1")["text"] == "一句话"
        assert s.get_generated("p1", "tldr", "zh", "m1", "tldr-1", "h2") is None  # edited text: stale
        assert s.get_generated("p1", "tldr", "zh", "m2", "tldr-1", "h1") is None  # another model
        assert s.get_generated("p1", "tldr", "zh", "m1", "tldr-2", "h1") is None  # another prompt
        s.put_generated("p1", "tldr", "zh", "m1", "tldr-1", "h2", "新的")  # replaces, never duplicates
        assert s.latest_generated("p1", "tldr", "zh", "tldr-1", "h2")["text"] == "新的"
        assert s.generated_counts() == [("tldr", "zh", "m1", "tldr-1", 1)]
        assert lib.stats()["generated"] == [
            {"task": "tldr", "lang": "zh", "model": "m1", "prompt_version": "tldr-1", "texts": 1}
        ]


# -- against the real server ----------------------------------------------------------------------------------
def test_tldr_contract_and_a_second_request_sends_nothing(lib: Library, llm_proxy, runner, tmp_path) -> None:
    # English: the fixture model writes no Chinese, and a zh request it answers in English is not stored
    # as zh (tests/test_llm_lang.py)
    env = {"PAPERATLAS_LLM_URL": llm_proxy.url}
    r = _run(runner, tmp_path / "lib.db", "tldr", "p-lora", "--lang", "en", "--json", env=env)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["id"] == "p-lora" and d["lang"] == "en" and d["generated"] is True and d["text"] and d["model"]
    assert d["cached"] is False and d["prompt_version"] == "tldr-1" and d["created_at"]
    sent = len(llm_proxy.chat_requests())
    body = json.loads(llm_proxy.chat_requests()[0]["body"])
    assert "in English" in body["messages"][-1]["content"] and body["max_tokens"] == 12
    r2 = _run(runner, tmp_path / "lib.db", "tldr", "p-lora", "--lang", "en", "--json", env=env)
    d2 = json.loads(r2.stdout)
    assert len(llm_proxy.chat_requests()) == sent and d2["cached"] is True and d2["text"] == d["text"]
    # the stored text is served without an endpoint, marked with the model that made it
    g = lib.llm.tldr("p-lora", "en")
    assert g.generated and g.model == d["model"] and g.text == d["text"]
    st = _run(runner, tmp_path / "lib.db", "stats", "--json")
    assert [x["task"] for x in json.loads(st.stdout)["generated"]] == ["tldr"]


def test_an_edited_abstract_invalidates_its_texts(lib: Library, llm_proxy, tmp_path) -> None:
    lib.llm.configure(llm_proxy.url)
    lib.llm.tldr("p-graph")
    n = len(llm_proxy.chat_requests())
    lib.llm.tldr("p-graph")
    assert len(llm_proxy.chat_requests()) == n
    edited = [dict(PAPERS[1], abstract=PAPERS[1]["abstract"] + " Code is public.")]
    lib.ingest([_jsonl(tmp_path, edited)])
    g = lib.llm.tldr("p-graph")
    assert not g.cached and len(llm_proxy.chat_requests()) == n + 1


def test_translate_contract_streaming_and_retry(lib: Library, llm_proxy, runner, tmp_path) -> None:
    env = {"PAPERATLAS_LLM_URL": llm_proxy.url}
    llm_proxy.faults = ["503"]  # the first request is refused once, then retried
    r = _run(runner, tmp_path / "lib.db", "translate", "p-rl", "--lang", "en", "--json", env=env)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["title"] and d["abstract"] and d["generated"] is True and d["original_title"] == PAPERS[2]["title"]
    # the first request (the model list, or the title) was refused once and retried
    assert llm_proxy.seen[0]["path"] == llm_proxy.seen[1]["path"]
    assert len(llm_proxy.chat_requests()) in (2, 3)  # title and abstract (+ the refused one, when it was a chat)
    sent = len(llm_proxy.chat_requests())
    r = _run(runner, tmp_path / "lib.db", "translate", "p-rl", "--lang", "en", "--json", env=env)
    assert json.loads(r.stdout)["cached"] is True and len(llm_proxy.chat_requests()) == sent
    assert lib.llm.stored_titles(["p-rl", "p-lora"], "en").keys() == {"p-rl"}
    # streaming: the pieces arrive one by one and make the whole answer
    pieces: list[str] = []
    c = LlmClient(LlmConfig(llm_proxy.url))
    done = c.chat([{"role": "user", "content": "Count: one, two, three,"}], max_tokens=8, on_text=pieces.append)
    assert len(pieces) > 1 and "".join(pieces) == done.text and done.model


def test_batch_translation_estimates_resumes_and_skips_what_is_done(lib: Library, llm_proxy) -> None:
    # the batch machinery in English: the fixture model writes no Chinese, and an English text is never
    # kept as the Chinese one (the zh batch below, and tests/test_llm_lang.py)
    lib.llm.configure(llm_proxy.url)
    ids = [p["id"] for p in PAPERS]
    est = lib.llm.estimate(ids, "en", title_only=True)
    assert est["todo"] == 3 and est["seconds_per_100"] > 0 and "nothing measured" in est["basis"]

    def stop_after_first(st) -> None:
        if st.done >= 1:
            lib.llm.stop_batch()  # as a kill would: what is done is stored, the rest is not

    first = lib.llm.translate_batch(ids, "en", title_only=True, progress=stop_after_first)
    assert 1 <= first.done <= 2 and first.not_kept == 0  # two requests run at once: one may finish in flight
    sent = len(llm_proxy.chat_requests())
    assert lib.llm.estimate(ids, "en", title_only=True)["todo"] == 3 - first.done
    second = lib.llm.translate_batch(ids, "en", title_only=True)
    assert second.done == 3 and second.cached == first.done and second.failed == 0
    assert len(llm_proxy.chat_requests()) == sent + (3 - first.done)
    assert "measured" in lib.llm.estimate(ids, "en")["basis"]
    # into Chinese: a title is kept when the model wrote Chinese, else counted as not kept and still to do
    sent = len(llm_proxy.chat_requests())
    zh = lib.llm.translate_batch(["p-rl"], "zh", title_only=True)
    stored = lib.llm.stored_titles(["p-rl"], "zh")
    assert zh.done + zh.not_kept == 1 and zh.failed == 0 and len(llm_proxy.chat_requests()) - sent in (1, 2)
    if zh.not_kept:
        assert stored == {} and zh.not_kept_ids == ["p-rl"] and len(llm_proxy.chat_requests()) - sent == 2
        assert lib.llm.estimate(["p-rl"], "zh", title_only=True)["todo"] == 1
    else:
        assert is_chinese(stored["p-rl"].text)


def test_ask_cites_only_retrieved_papers_and_answers_from_cache(lib: Library, llm_proxy, runner, tmp_path) -> None:
    env = {"PAPERATLAS_LLM_URL": llm_proxy.url}
    r = _run(
        runner, tmp_path / "lib.db", "ask", "How can fine-tuning be made cheap?", "--limit", "2", "--json", env=env
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["answer"] and isinstance(d["cited"], list) and d["lang"] == "en"
    retrieved = [x["id"] for x in d["retrieved"]]
    assert "p-lora" in retrieved and set(d["cited"]) <= set(retrieved)
    body = json.loads(llm_proxy.chat_requests()[-1]["body"])["messages"][-1]["content"]
    assert "[1] Low-rank adapters" in body and "Not in these papers." in body
    n = len(llm_proxy.chat_requests())
    r = _run(
        runner, tmp_path / "lib.db", "ask", "How can fine-tuning  be made cheap?", "--limit", "2", "--json", env=env
    )
    assert json.loads(r.stdout)["cached"] is True and len(llm_proxy.chat_requests()) == n
    # a question in Chinese is answered in Chinese, retrieved with its English rendering too
    lib.llm.configure(llm_proxy.url)
    a = lib.llm.ask("怎样让微调更便宜？", limit=2)
    assert (a.lang, a.note) in (("zh", ""), ("en", NOT_CHINESE_NOTE)) and set(a.cited) <= {x["id"] for x in a.retrieved}
    prompts_sent = [json.loads(s["body"])["messages"][-1]["content"] for s in llm_proxy.chat_requests()[n:]]
    assert any("search query" in p for p in prompts_sent) and any("Simplified Chinese" in p for p in prompts_sent)


def test_a_chinese_search_asks_the_model_once_and_goes_on_when_it_fails(
    lib: Library, llm_proxy, caplog: pytest.LogCaptureFixture
) -> None:
    lib.llm.configure(llm_proxy.url)
    hits = lib.search("怎样让微调更便宜", limit=3)
    asked = [json.loads(s["body"])["messages"][-1]["content"] for s in llm_proxy.chat_requests()]
    assert len(asked) == 1 and "search query" in asked[0] and "怎样让微调更便宜" in asked[0]
    # the rendering is kept: the same query (spaces aside) does not ask again
    again = lib.search(" 怎样让微调更便宜 ", limit=3)
    assert len(llm_proxy.chat_requests()) == 1 and again.read_as == hits.read_as
    assert not any("\u4e00" <= c <= "\u9fff" for c in hits.read_as)  # English, or "" when the model wrote Chinese
    # an English query never asks
    lib.search("cheap fine-tuning", limit=3)
    assert len(llm_proxy.chat_requests()) == 1
    # a failing endpoint: the search still answers, without the rendering, and the log says why
    llm_proxy.faults = ["500", "500", "500"]
    with caplog.at_level("WARNING", logger="paperatlas.llm.capability"):
        failed = lib.search("强化学习的奖励模型", limit=3)
    assert failed.read_as == "" and "without its English rendering" in caplog.text and llm_proxy.url in caplog.text


def test_a_failing_endpoint_mid_request_exits_1_naming_it(lib: Library, llm_proxy, runner, tmp_path) -> None:
    llm_proxy.faults = ["500", "500", "500"]
    r = _run(runner, tmp_path / "lib.db", "tldr", "p-rl", "--json", env={"PAPERATLAS_LLM_URL": llm_proxy.url})
    assert r.exit_code == 1 and llm_proxy.url in r.output and "HTTP 500" in r.output


# -- the web pages ----------------------------------------------------------------------------------------------
@pytest.fixture
def web(lib: Library):
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 50000)) as c:
        yield c


def _csrf(client) -> str:
    client.get("/")
    from paperatlas.web.common import CSRF_COOKIE

    return client.cookies.get(CSRF_COOKIE) or ""


def test_pages_without_an_endpoint_send_nothing_and_say_so(web, lib: Library) -> None:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(web.get("/paper/p-lora").text, "html.parser")
    tl = soup.select_one(".tldr.extractive")
    assert tl is not None and "We propose low-rank adapters" in tl.text and soup.select_one(".llm-actions") is None
    d = web.get("/tldr.json?ids=p-lora,p-graph,nope").json()
    assert [t["id"] for t in d["tldrs"]] == ["p-lora", "p-graph"] and not d["tldrs"][0]["generated"]
    r = web.post("/ask", data={"q": "cheap fine-tuning", "csrf": _csrf(web)}, headers={"accept": "application/json"})
    assert r.status_code == 409 and "PAPERATLAS_LLM_URL" in r.json()["fix"]
    assert web.get("/ask.json?q=cheap+fine-tuning").status_code == 404  # a GET only reads what is stored
    page = web.get("/ask?q=cheap+fine-tuning&lang=zh")
    assert page.status_code == 200 and "尚未配置语言模型" in page.text
    lib.readers.set_feedback("me", ["p-graph"], "like")
    cs = web.get("/cheatsheet.json").json()
    assert [i["id"] for i in cs["items"]] == ["p-graph"] and cs["items"][0]["tldr_generated"] is False


def test_generate_from_the_paper_page_then_it_is_shown_marked(web, lib: Library, llm_proxy) -> None:
    from bs4 import BeautifulSoup

    lib.llm.configure(llm_proxy.url)
    token = _csrf(web)
    # a TL;DR by the page's form (no script): back on the page it came from, marked machine-generated
    page = "http://127.0.0.1/paper/p-rl?lang=en"
    soup = BeautifulSoup(web.get(page).text, "html.parser")
    assert soup.select_one(".llm-actions") is not None and soup.select_one(".tldr.extractive") is not None
    r = web.post(
        "/generate",
        data={"id": "p-rl", "task": "tldr", "lang": "en", "csrf": token},
        headers={"referer": page},
        follow_redirects=False,
    )
    assert r.status_code == 303 and r.headers["location"] == "/paper/p-rl?lang=en", r.text
    tl = BeautifulSoup(web.get(page).text, "html.parser").select_one(".tldr.generated")
    model = lib.llm.stored_tldrs(["p-rl"], "en")["p-rl"].model
    assert tl is not None and f"machine-generated by {model}" in tl.select_one(".machine").text
    # a translation into Chinese by the form: shown marked when the model wrote Chinese; else not kept, and the
    # page says so instead of showing nothing (the JSON label of that case: tests/test_llm_lang.py)
    r = web.post(
        "/generate",
        data={"id": "p-rl", "task": "translate", "lang": "zh", "csrf": token},
        headers={"referer": "http://127.0.0.1/paper/p-rl?lang=zh"},
    )
    assert r.status_code == 200, r.text
    soup = BeautifulSoup(r.text, "html.parser")
    title = soup.select_one(".translated-title")
    stored = lib.llm.stored_titles(["p-rl"], "zh")
    if stored:
        t = stored["p-rl"].text
        assert is_chinese(t) and str(r.url).endswith("/paper/p-rl?lang=zh")
        assert title is not None and t in title.text and "由" in title.select_one(".machine")["title"]
        assert soup.select_one(".translated-abstract .abstract").text == lib.llm.stored_abstract("p-rl").text
    else:
        assert str(r.url).endswith("/paper/p-rl?lang=zh&llm=not-kept") and title is None
        note = soup.select_one(".llm-not-kept")
        assert note is not None and "没有作为中文文本保存" in note.text
    assert web.post("/generate", data={"id": "p-rl", "task": "tldr"}).status_code == 403  # no CSRF token


def _sse(lines) -> list[tuple[str, dict]]:  # type: ignore[no-untyped-def]
    events, kind = [], "message"
    for line in lines:
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            events.append((kind, json.loads(line[6:])))
            kind = "message"
    return events


def test_generation_streams_as_events_then_the_kept_result_and_a_failure_ends_the_stream(
    web, lib: Library, llm_proxy
) -> None:
    lib.llm.configure(llm_proxy.url)
    token = _csrf(web)
    form = {"id": "p-graph", "task": "tldr", "lang": "en", "csrf": token, "stream": "1"}
    with web.stream("POST", "/generate", data=form) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        events = _sse(r.iter_lines())
    pieces = [d["text"] for k, d in events if k == "message"]
    kind, result = events[-1]
    assert kind == "done" and len(pieces) > 1 and result["cached"] is False  # tokens came one event each
    assert result["text"] and result["text"] in " ".join("".join(pieces).split())
    assert lib.llm.stored_tldrs(["p-graph"], "en")["p-graph"].text == result["text"]  # kept as before
    n = len(llm_proxy.chat_requests())
    with web.stream("POST", "/generate", data=form) as r:
        again = _sse(r.iter_lines())
    assert again == [("done", dict(result, cached=True))] and len(llm_proxy.chat_requests()) == n
    # ask streams too (a POST: asking spends the model and stores the answer)
    ask = {"q": "signed graph links", "limit": "1", "stream": "1", "csrf": token}
    with web.stream("POST", "/ask", data=ask) as r:
        asked = _sse(r.iter_lines())
    assert asked[-1][0] == "done" and set(asked[-1][1]["cited"]) <= {x["id"] for x in asked[-1][1]["retrieved"]}
    # a failing endpoint ends the stream with one error event naming it and the fix
    llm_proxy.faults = ["500", "500", "500"]
    with web.stream("POST", "/generate", data=dict(form, id="p-lora")) as r:
        failed = _sse(r.iter_lines())
    kind, err = failed[-1]
    assert kind == "error" and err["status"] == 502 and llm_proxy.url in err["error"] and "HTTP 500" in err["error"]
    assert err["fix"] and "p-lora" not in lib.llm.stored_tldrs(["p-lora"], "en")


# -- MCP ------------------------------------------------------------------------------------------------------
def _mcp(lib: Library, body) -> None:  # type: ignore[no-untyped-def]
    import anyio
    from mcp import Client

    from paperatlas.mcp.server import create_server

    async def main() -> None:
        async with Client(create_server(lib), read_timeout_seconds=300) as c:
            await body(c)

    anyio.run(main)


def test_mcp_tools_share_the_shapes_and_need_no_endpoint_for_tldr(lib: Library) -> None:
    async def body(c) -> None:  # type: ignore[no-untyped-def]
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert {"tldr", "translate", "ask"} <= set(tools)
        r = await c.call_tool("tldr", {"id": "p-lora", "lang": "zh"})
        assert not r.is_error and r.structured_content == lib.llm.tldr("p-lora", "zh").to_dict()
        r = await c.call_tool("ask", {"question": "cheap fine-tuning?"})
        assert r.is_error and "PAPERATLAS_LLM_URL" in r.content[0].text

    _mcp(lib, body)


def test_mcp_ask_against_the_server(lib: Library, llm_proxy) -> None:
    lib.llm.configure(llm_proxy.url)

    async def body(c) -> None:  # type: ignore[no-untyped-def]
        r = await c.call_tool("ask", {"question": "Which papers predict links in signed graphs?", "limit": 2})
        assert not r.is_error, r.content[0].text
        d = r.structured_content
        assert set(d["cited"]) <= {x["id"] for x in d["retrieved"]} and "p-graph" in {x["id"] for x in d["retrieved"]}

    _mcp(lib, body)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_translations_are_keyword_searchable_in_chinese(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from paperatlas.store.vector_cache import text_hash

    url = (
        str(tmp_path / "s.db")
        if backend == "sqlite"
        else request.getfixturevalue("pg_server").url(fresh_db_name("llmkw"))
    )
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path)])
        # the translation's own words, without the glossary's English reading of the query (which
        # would find the English title "Reinforcement learning ..." by itself)
        lib.engine.settings.glossary = False
        assert not lib.search("强化学习", mode="keyword")
        p = lib.get("p-rl")
        lib.store.llm.put_generated(
            "p-rl", "translate_title", "zh", "m", "title-1", text_hash(p.title), "语言模型推理的强化学习"
        )
        assert [h.paper.id for h in lib.search("强化学习", mode="keyword")] == ["p-rl"]
        # a translation of a title that has since changed is not searched
        lib.store.llm.put_generated(
            "p-graph", "translate_title", "zh", "m", "title-1", text_hash("old title"), "符号图"
        )
        assert not lib.search("符号图", mode="keyword")


def test_results_show_the_chinese_title_and_a_tldr_on_demand(web, lib: Library) -> None:
    from bs4 import BeautifulSoup

    from paperatlas.store.vector_cache import text_hash

    p = lib.get("p-rl")
    lib.store.llm.put_generated(
        "p-rl", "translate_title", "zh", "m", "title-1", text_hash(p.title), "语言模型推理的强化学习"
    )
    soup = BeautifulSoup(web.get("/search?q=强化学习&lang=zh&mode=keyword").text, "html.parser")
    item = soup.select_one('li.paper-item[data-id="p-rl"]')
    assert item is not None and item.select_one(".translated-title").text.startswith("语言模型推理的强化学习")
    assert "机器翻译" in item.select_one(".translated-title .machine").text
    tl = item.select_one("details.tldr-more .tldr.extractive")
    assert tl is not None and "Policy optimisation" in tl.text
    soup = BeautifulSoup(web.get("/search?q=reasoning&lang=en").text, "html.parser")
    assert soup.select_one(".translated-title") is None  # English pages show the original only


def test_digests_carry_a_tldr_marked_by_its_origin(lib: Library) -> None:
    from paperatlas.store.vector_cache import text_hash

    lib.readers.set_feedback("me", ["p-graph"], "like")
    md = lib.recommend.digest("me", format="markdown")
    assert "TL;DR: We propose low-rank adapters" in md and "machine-generated" not in md
    p = lib.get("p-lora")
    lib.store.llm.put_generated("p-lora", "tldr", "en", "qwen-test", "tldr-1", text_hash(p.text), "Cheap adapters.")
    html = lib.recommend.digest("me", format="html")
    assert '<div class="tldr">TL;DR: Cheap adapters. (machine-generated by qwen-test)</div>' in html


def test_cheatsheet_page_uses_stored_tldrs_and_the_saved_page_links_it(web, lib: Library) -> None:
    from bs4 import BeautifulSoup

    from paperatlas.store.vector_cache import text_hash

    lib.readers.set_feedback("me", ["p-lora", "p-graph"], "like")
    p = lib.get("p-lora")
    lib.store.llm.put_generated("p-lora", "tldr", "zh", "m", "tldr-1", text_hash(p.text), "低秩适配器让微调更便宜。")
    soup = BeautifulSoup(web.get("/cheatsheet?lang=zh").text, "html.parser")
    items = {i.select_one("h2 a").text: i for i in soup.select("ol.cheatsheet > li")}
    assert set(items) == {PAPERS[0]["title"], PAPERS[1]["title"]}
    lora, graph = items[PAPERS[0]["title"]], items[PAPERS[1]["title"]]
    assert "低秩适配器" in lora.select_one(".tldr").text and "由 m 机器生成" in lora.select_one(".machine").text
    assert "摘自摘要原句" in graph.select_one(".machine").text
    saved = BeautifulSoup(web.get("/saved").text, "html.parser")
    assert saved.select_one('a[href="/cheatsheet"]') is not None


@pytest.mark.parametrize(
    "reply, query",
    [
        ('Search query in English: "Home loan interest rate"', "Home loan interest rate"),
        ("User simulator", "User simulator"),
        ("“Adoption of stray dogs”", "Adoption of stray dogs"),
        ("Translation: reward models\n\nNote: a literal rendering.", "reward models"),
        ("English: diffusion models", "diffusion models"),
    ],
)
def test_a_rendered_query_loses_the_label_and_quotes_a_small_model_adds(reply: str, query: str) -> None:
    from paperatlas.llm.capability import _query_text

    assert _query_text(reply) == query


def test_closest_sentences_quote_only_what_shares_most_of_the_question() -> None:
    from paperatlas.llm.capability import closest_sentences

    evidence = [
        {"id": "a", "page": None, "section": "abstract", "text": "We study graphs. Sampling is slow in general."},
        {
            "id": "b",
            "page": 4,
            "section": "Method",
            "text": "Our method speeds up sampling of diffusion models by 2-4x. Diffusion is popular.",
        },
    ]
    got = closest_sentences("How can sampling from diffusion models be sped up?", evidence)
    # "Sampling is slow" shares one word of four: not enough; "Diffusion is popular" shares one too
    assert got == [
        {
            "id": "b",
            "page": 4,
            "section": "Method",
            "text": "Our method speeds up sampling of diffusion models by 2-4x.",
        }
    ]
    assert closest_sentences("diffusion", evidence) == []  # one word is no ground to quote anything
