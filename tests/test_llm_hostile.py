"""The standing attack on the language-model layer: a hostile endpoint (tests/hostile_llm.py) per way a
model's reply can hurt (huge, endless, trickle, bigcite, fakeids, ansi, malformed), and a visitor who
would spend the owner's model from another site. A model's reply is untrusted input: bounded in size
and time, checked field by field, never stored when malformed, never printed raw."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

import pytest

from paperatlas.errors import PaperatlasError
from hostile_llm import MODEL_PATH, HostileEndpoint

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.llm import LlmClient, LlmConfig, LlmError, reply
from paperatlas.llm.client import CANCEL, LlmBusy, LlmCancelled
from paperatlas.store.vector_cache import text_hash

PAPERS = [
    {
        "id": "p-lora",
        "title": "Low-rank adapters for cheap fine-tuning",
        "abstract": "Fine-tuning large models is expensive [2]. We propose low-rank adapters that train 0.1% of "
        "the weights [3, 4]. They match full fine-tuning on GLUE.",
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
    {
        "id": "p-quant",
        "title": "Quantised fine-tuning of large language models",
        "abstract": "Four-bit quantisation makes fine-tuning of large language models fit one GPU.",
        "authors": ["Edsger Dijkstra"],
        "venue": "NeurIPS",
        "year": 2023,
    },
]
QUESTION = "How can fine-tuning be made cheap?"


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY", "PAPERATLAS_LLM_MAX_TOKENS"):
        monkeypatch.delenv(k, raising=False)
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest([f])
    lib.embed()
    yield lib
    lib.close()


@pytest.fixture
def endpoint():
    eps: list[HostileEndpoint] = []

    def make(mode: str, **kw) -> HostileEndpoint:  # type: ignore[no-untyped-def]
        ep = HostileEndpoint(mode, **kw).start()
        eps.append(ep)
        return ep

    yield make
    for ep in eps:
        ep.stop()


def _closed(ep: HostileEndpoint, within: float = 3.0) -> bool:
    """Whether the endpoint sees every chat connection closed within `within` seconds."""
    end = time.monotonic() + within
    while time.monotonic() < end:
        if ep.open == 0:
            return True
        time.sleep(0.05)
    return False


def _texts(lib: Library) -> list[str]:
    return [r["text"] for batch in lib.store.llm.iter_generated("tldr", "en") for r in batch]


# -- the reply's fields ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["malformed-usage", "malformed-content"])
def test_a_malformed_reply_is_an_error_naming_the_endpoint_and_nothing_is_stored(lib: Library, endpoint, mode) -> None:
    ep = endpoint(mode)
    lib.llm.configure(ep.url)
    with pytest.raises(LlmError) as e:
        lib.llm.tldr("p-lora", mode="generate")
    assert ep.url in e.value.message and "not a" in e.value.message and e.value.fix
    assert _texts(lib) == []  # `content: {"a": 1}` is not a TL;DR


@pytest.mark.parametrize("mode", ["malformed-chunk", "malformed-delta"])
def test_a_malformed_streamed_piece_is_an_error_naming_the_endpoint(lib: Library, endpoint, mode) -> None:
    ep = endpoint(mode)
    lib.llm.configure(ep.url)
    with pytest.raises(LlmError) as e:
        lib.llm.tldr("p-lora", mode="generate", on_text=lambda piece: None)
    assert ep.url in e.value.message and "streamed" in e.value.message and _texts(lib) == []


def test_the_web_answers_a_malformed_reply_with_502_naming_the_endpoint_without_its_credentials(
    lib: Library, endpoint
) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    ep = endpoint("malformed-content")
    secret_url = ep.url.replace("http://", "http://user:s3cret@") + "?key=k3y"
    lib.llm.configure(secret_url)
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 5)) as c:
        c.get("/")
        token = c.cookies.get("pa_csrf") or ""
        r = c.post(
            "/generate",
            data={"id": "p-lora", "task": "tldr", "lang": "en", "csrf": token},
            headers={"accept": "application/json"},
        )
        assert r.status_code == 502, r.text
        assert ep.url in r.json()["error"] and "s3cret" not in r.text and "k3y" not in r.text
        form = {"id": "p-lora", "task": "tldr", "lang": "en", "csrf": token, "stream": "1"}
        with c.stream("POST", "/generate", data=form) as s:
            body = "".join(s.iter_lines())
        assert '"status": 502' in body and "s3cret" not in body
    assert "s3cret" not in json.dumps(lib.llm.stats()) and _texts(lib) == []


# -- size and time ----------------------------------------------------------------------------------------------
def test_a_huge_reply_is_refused_at_its_cap_and_not_stored(lib: Library, endpoint) -> None:
    ep = endpoint("huge")
    lib.llm.configure(ep.url)
    with pytest.raises(LlmError) as e:
        lib.llm.tldr("p-lora", mode="generate")
    assert "larger than" in e.value.message and _texts(lib) == []
    assert _closed(ep)


def test_an_endless_stream_is_closed_at_the_tasks_cap(lib: Library, endpoint) -> None:
    ep = endpoint("endless")
    lib.llm.configure(ep.url)
    seen: list[str] = []
    started = time.monotonic()
    with pytest.raises(LlmError) as e:
        lib.llm.tldr("p-lora", mode="generate", on_text=seen.append)
    assert "characters where 96 tokens" in e.value.message and time.monotonic() - started < 10
    assert sum(map(len, seen)) <= reply.char_cap(96) and _texts(lib) == []
    assert _closed(ep)  # the upstream request was closed, so the model server stops writing


def test_a_trickling_reply_ends_at_the_total_deadline(lib: Library, endpoint, monkeypatch) -> None:
    ep = endpoint("trickle")
    monkeypatch.setenv("PAPERATLAS_LLM_DEADLINE", "2")
    lib.llm.configure(ep.url)
    started = time.monotonic()
    with pytest.raises(LlmError) as e:
        lib.llm.tldr("p-lora", mode="generate")
    took = time.monotonic() - started
    assert "deadline of 2 s" in e.value.message and "PAPERATLAS_LLM_DEADLINE" in e.value.fix and took < 5
    assert _closed(ep)


def test_a_silent_endpoint_ends_at_the_read_timeout_setting_and_is_closed(lib: Library, endpoint, monkeypatch) -> None:
    ep = endpoint("trickle")
    ep.every = 2.0
    monkeypatch.setenv("PAPERATLAS_LLM_TIMEOUT", "1")
    lib.llm.configure(ep.url)
    started = time.monotonic()
    with pytest.raises(LlmError) as e:
        lib.llm.tldr("p-lora", mode="generate")
    assert "no answer within 1 s" in e.value.message and "PAPERATLAS_LLM_TIMEOUT" in e.value.fix
    assert time.monotonic() - started < 4 and ep.requests == 1  # not repeated: a retry would start it again
    assert _closed(ep, within=8)  # the server notices at its second write after the close


def test_the_timeouts_are_settings_and_a_bad_one_says_how_to_fix_it(monkeypatch) -> None:
    monkeypatch.setenv("PAPERATLAS_LLM_TIMEOUT", "45")
    monkeypatch.setenv("PAPERATLAS_LLM_DEADLINE", "90")
    cfg = LlmConfig.from_env("http://127.0.0.1:9/v1")
    assert cfg is not None and (cfg.read_timeout, cfg.deadline) == (45.0, 90.0)
    monkeypatch.setenv("PAPERATLAS_LLM_TIMEOUT", "soon")
    with pytest.raises(PaperatlasError) as e:  # the settings table's error: it names the variable
        LlmConfig.from_env("http://127.0.0.1:9/v1")
    assert "PAPERATLAS_LLM_TIMEOUT" in e.value.fix


def test_a_cancelled_request_is_closed_upstream(endpoint) -> None:
    ep = endpoint("trickle")
    client = LlmClient(LlmConfig(ep.url, model="m"))
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    CANCEL.set(cancel)
    try:
        started = time.monotonic()
        with pytest.raises(LlmCancelled):
            client.chat([{"role": "user", "content": "hi"}], max_tokens=8)
        assert time.monotonic() - started < 3
    finally:
        CANCEL.set(None)
    assert _closed(ep)


def test_the_queue_per_endpoint_is_bounded(endpoint) -> None:
    ep = endpoint("trickle")
    cfg = LlmConfig(ep.url, model="m", concurrency=1, queue=1, deadline=3)
    errors: list[BaseException] = []

    def call() -> None:
        try:
            LlmClient(cfg).chat([{"role": "user", "content": "hi"}], max_tokens=8)
        except LlmError as e:
            errors.append(e)

    threads = [threading.Thread(target=call) for _ in range(2)]  # one in flight, one waiting
    for t in threads:
        t.start()
        time.sleep(0.3)
    started = time.monotonic()
    with pytest.raises(LlmBusy):  # a third is refused at once, nothing sent
        LlmClient(cfg).chat([{"role": "user", "content": "hi"}], max_tokens=8)
    assert time.monotonic() - started < 1 and ep.requests == 1
    for t in threads:
        t.join(10)
    assert len(errors) == 2 and _closed(ep)


# -- what the reply says -----------------------------------------------------------------------------------------
def test_a_citation_of_thousands_of_digits_is_no_crash(lib: Library, endpoint, runner, tmp_path) -> None:
    text, cited, dropped = reply.resolve_citations("cheap [" + "9" * 5000 + "] and [1].", ["p-lora"])
    assert (cited, dropped) == (["p-lora"], 1) and "999" not in text
    ep = endpoint("bigcite")
    r = runner.invoke(
        cli, ["--db", str(tmp_path / "lib.db"), "ask", QUESTION, "--json"], env={"PAPERATLAS_LLM_URL": ep.url}
    )
    assert r.exit_code == 1 and ep.url in r.output and "Traceback" not in r.output  # over the cap: not kept
    # an answer kept before the checks, with such a citation, is treated as absent: written afresh
    lib.llm.configure(endpoint("ok").url)
    a = lib.llm.ask(QUESTION)
    ids = [x["id"] for x in a.retrieved]
    subject = "ask:" + hashlib.sha1(f"en\x00{QUESTION.lower()}".encode()).hexdigest()[:20]
    h = text_hash("\x00".join(f"{p.id}\x00{text_hash(p.text)}" for p in lib.get_many(ids)))
    lib.store.llm.put_generated(subject, "ask", "en", MODEL_PATH, "ask-1", h, "x [" + "9" * 5000 + "]")
    lib.llm.configure(None)
    assert lib.llm.stored_answer(QUESTION) is None  # never a crash, without an endpoint too
    fresh = endpoint("ok")
    r = runner.invoke(
        cli, ["--db", str(tmp_path / "lib.db"), "ask", QUESTION, "--json"], env={"PAPERATLAS_LLM_URL": fresh.url}
    )
    assert r.exit_code == 0 and json.loads(r.stdout)["cited"] == [ids[0]] and fresh.requests == 1


def test_a_stored_theme_summary_with_a_huge_citation_is_absent_not_a_crash(lib: Library) -> None:
    from paperatlas.report import summaries

    themes = [{"ids": ["p-lora", "p-quant"], "central": ["p-lora", "p-quant"], "label": "fine-tuning, cheap"}]
    papers = lib.get_many(["p-lora", "p-quant"])
    for lang in ("en", "zh"):
        msgs = summaries.messages(["fine-tuning", "cheap"], [(p.title, p.abstract) for p in papers], lang)
        h = text_hash(msgs[-1]["content"])
        bad = "Label: Cheap tuning\nSummary: adapters [" + "7" * 4400 + "]"
        lib.store.llm.put_generated(
            summaries._subject(["p-lora", "p-quant"]), summaries.TASK, lang, "m", summaries.VERSION, h, bad
        )
    notes = summaries.summarise_themes(lib, lib.llm, themes, mode="cached")  # no endpoint configured
    assert "summary" not in themes[0] and notes
    assert summaries.parse("Label: Cheap\nSummary: adapters [" + "7" * 4400 + "][1]", ["p-lora"]) is None
    got = summaries.parse("Label: Cheap\nSummary: adapters [1][2106.00001][" + "7" * 40 + "]", ["p-lora"])
    assert got is not None and got["cites"] == ["p-lora"] and got["dropped_citations"] == 2


def test_citations_of_ids_never_retrieved_are_dropped(lib: Library, endpoint) -> None:
    ep = endpoint("fakeids")
    lib.llm.configure(ep.url)
    a = lib.llm.ask(QUESTION)
    assert a.cited == [a.retrieved[0]["id"]] and a.dropped == 2
    assert "2106.00001" not in a.answer and "h12abcd99ef" not in a.answer and "[sic]" in a.answer


def test_the_prompt_has_no_reference_marks_and_a_small_model_gets_fewer_passages(lib: Library, endpoint) -> None:
    ep = endpoint("ok")
    lib.llm.configure(ep.url, "qwen2.5-1.5b-instruct")
    lib.llm.ask(QUESTION, limit=10)
    prompt = ep.bodies[-1]["messages"][-1]["content"]
    assert "expensive [2]" not in prompt and "[3, 4]" not in prompt and "[4]" not in prompt
    lib.llm.configure(ep.url, "qwen2.5-72b-instruct")
    lib.llm.ask(QUESTION, limit=10)
    assert "[4]" in ep.bodies[-1]["messages"][-1]["content"]  # a large model sees all four papers


def test_terminal_escapes_never_reach_the_store_or_the_terminal(lib: Library, endpoint, runner, tmp_path) -> None:
    ep = endpoint("ansi")
    r = runner.invoke(cli, ["--db", str(tmp_path / "lib.db"), "tldr", "p-lora"], env={"PAPERATLAS_LLM_URL": ep.url})
    assert r.exit_code == 0, r.output
    for bad in ("\x1b", "\x07", "\r", "\x9b", "\x9d"):
        assert bad not in r.output and all(bad not in t for t in _texts(lib))
    assert "cut cost" in r.output and "OVERWRITTEN" in r.output
    # a text kept before the cleaning is treated as absent (and never printed)
    lib.store.llm.put_generated("p-rl", "tldr", "en", "m", "tldr-1", text_hash(lib.get("p-rl").text), "\x1b[2Jhi")
    assert "p-rl" not in lib.llm.stored_tldrs(["p-rl"])


def test_generated_text_is_labelled_with_the_models_name_never_a_path(lib: Library, endpoint) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    ep = endpoint("ok")
    lib.llm.configure(ep.url)
    g = lib.llm.tldr("p-lora", mode="generate")
    assert g.model == "qwen2.5-1.5b-instruct-q4_k_m"
    assert reply.model_name("deepseek-ai/DeepSeek-V3") == "deepseek-ai/DeepSeek-V3"
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 5)) as c:
        page = c.get("/paper/p-lora").text
    assert "qwen2.5-1.5b-instruct-q4_k_m" in page and "/home/someone" not in page


# -- spending the model is a write --------------------------------------------------------------------------
def test_only_a_reader_on_this_sites_pages_may_spend_the_model(lib: Library, endpoint) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    ep = endpoint("ok")
    lib.llm.configure(ep.url)
    app = create_app(lib, owner_signin=True)
    with TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 5)) as owner:
        owner.get("/")
        token = owner.cookies.get("pa_csrf") or ""
        # an <img src=/ask?q=...> on another site: a GET only reads what is stored, and sends nothing
        r = owner.get("/ask?q=cheap+fine-tuning", headers={"sec-fetch-site": "cross-site"})
        assert r.status_code == 200 and ep.requests == 0
        assert owner.get("/ask.json?q=cheap+fine-tuning").status_code == 404
        # a form on another site posting to /ask: refused before any model call
        r = owner.post(
            "/ask", data={"q": "cheap fine-tuning", "csrf": token}, headers={"origin": "http://evil.example"}
        )
        assert r.status_code == 403 and ep.requests == 0
        # Chinese keystrokes from another site's script: search answers, without the model's English
        r = owner.get("/search.json?q=微调", headers={"sec-fetch-site": "cross-site"})
        assert r.status_code == 200 and ep.requests == 0
        # the owner on this site's page: asked once, stored, then shown by a GET
        r = owner.post("/ask", data={"q": "cheap fine-tuning", "csrf": token}, headers={"accept": "application/json"})
        assert r.status_code == 200 and ep.requests == 1, r.text
        assert owner.get("/ask.json?q=cheap+fine-tuning").json()["cited"] == r.json()["cited"]
        r = owner.get("/search.json?q=微调")
        assert r.status_code == 200 and ep.requests == 2  # the owner's own Chinese search asks
    # an anonymous visitor (not this machine): no model call, even with a valid CSRF pair
    with TestClient(app, base_url="http://127.0.0.1", client=("203.0.113.9", 5)) as visitor:
        visitor.get("/")
        token = visitor.cookies.get("pa_csrf") or ""
        r = visitor.post("/ask", data={"q": "graphs", "csrf": token}, headers={"accept": "application/json"})
        assert r.status_code == 401 and ep.requests == 2
        assert visitor.get("/search.json?q=图神经网络").status_code == 200 and ep.requests == 2


def test_a_readers_budget_is_kept(lib: Library, endpoint, monkeypatch) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web import auth, create_app, llm_views

    monkeypatch.setattr(llm_views, "BUDGET", auth.SignupLimit(burst=1, every=3600))
    ep = endpoint("ok")
    lib.llm.configure(ep.url)
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 5)) as c:
        c.get("/")
        token = c.cookies.get("pa_csrf") or ""
        ok = c.post("/ask", data={"q": "graphs", "csrf": token}, headers={"accept": "application/json"})
        over = c.post("/ask", data={"q": "reasoning", "csrf": token}, headers={"accept": "application/json"})
        again = c.post("/ask", data={"q": "graphs", "csrf": token}, headers={"accept": "application/json"})
    assert ok.status_code == 200 and over.status_code == 429 and "budget" in over.json()["error"]
    assert again.status_code == 200 and ep.requests == 1  # a stored answer costs nothing


@pytest.mark.parametrize(("mode", "stream"), [("trickle", "1"), ("trickle", "0")])
def test_clients_that_leave_leave_no_model_work_behind(lib: Library, endpoint, mode: str, stream: str) -> None:
    from hostile_llm import WebServer

    ep = endpoint(mode)
    lib.llm.configure(ep.url)
    srv = WebServer(lib)
    try:
        leaving = [
            threading.Thread(target=srv.abandon, args=("/ask", {"q": f"graphs {i}", "stream": stream}, 1.0))
            for i in range(6)
        ]
        for t in leaving:
            t.start()
        for t in leaving:
            t.join()
        assert ep.requests >= 1  # the model was asked (the rest waited, then gave up with their clients)
        assert _closed(ep, within=5)  # and every request upstream was closed once its client went away
        end = time.monotonic() + 5
        while time.monotonic() < end and any(t.name in ("llm-stream", "llm-watch") for t in threading.enumerate()):
            time.sleep(0.1)
        assert not [t.name for t in threading.enumerate() if t.name in ("llm-stream", "llm-watch")]
    finally:
        srv.stop()
