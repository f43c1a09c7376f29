"""The reader page's translate button: POST /paper/{id}/translate spends the model like POST /ask
(this site's pages, a reader or the local owner, the reader's budget), sends at most `max` passages a
request, and the page then shows the sections that are done; a real PDF (tests/data/pdfs), a loopback
endpoint."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from test_translate_full import Endpoint, _glossary_or_translate

from paperatlas import Library
from paperatlas.web import auth, create_app, llm_views

PDF = Path(__file__).parent / "data" / "pdfs" / "N18-3011.pdf"


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY", "PAPERATLAS_LLM_MAX_TOKENS"):
        monkeypatch.delenv(k, raising=False)
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "N18-3011", "title": "Construction of the Literature Graph in Semantic Scholar"}))
    lib.ingest([f])
    assert lib.fulltext.add("N18-3011", PDF).ok
    yield lib
    lib.close()


def _passages(ep: Endpoint) -> int:
    """Passages the endpoint was asked for (not the glossary, not a heading, not a firmer second try)."""
    return sum(
        1
        for r in ep.requests
        if len(r["messages"]) == 2
        and not r["messages"][1]["content"].startswith("Render each term")
        and "(a section heading)" not in r["messages"][1]["content"]
    )


def _owner(lib: Library) -> TestClient:
    return TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 5))


def test_the_button_translates_a_bounded_step_and_the_page_shows_it(lib: Library) -> None:
    ep = Endpoint(_glossary_or_translate)
    try:
        lib.llm.configure(ep.url, "double")
        with _owner(lib) as c:
            page = c.get("/paper/N18-3011/read?lang=zh")
            assert page.status_code == 200 and "这篇论文尚未翻译" in page.text
            assert 'action="/paper/N18-3011/translate"' in page.text and "翻译接下来的 3 段" in page.text
            assert ep.requests == []  # a page view sends nothing
            token = c.cookies.get("pa_csrf") or ""
            r = c.post("/paper/N18-3011/translate", data={"csrf": token, "max": "2"}, follow_redirects=False)
            assert r.status_code == 303 and r.headers["location"].startswith("/paper/N18-3011/read?lang=zh")
            assert _passages(ep) == 2  # the bound of one request
            for _ in range(3):
                r = c.post(
                    "/paper/N18-3011/translate",
                    data={"csrf": token, "max": "10"},
                    headers={"accept": "application/json"},
                )
                assert r.status_code == 200 and r.json()["spent_chunks"] <= 10
            page = c.get("/paper/N18-3011/read?lang=zh").text
            done = len(re.findall(r'class="zh-col"', page))
            assert done >= 1 and "词" in page  # the double's Chinese, shown beside the English
            d = c.get("/paper/N18-3011/read.json?lang=zh").json()["translation"]
            assert sum(s["done"] for s in d["sections"]) == done
    finally:
        ep.stop()


def test_translating_is_a_write_of_this_sites_reader_within_the_budget(
    lib: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    ep = Endpoint(_glossary_or_translate)
    try:
        lib.llm.configure(ep.url, "double")
        app = create_app(lib, owner_signin=True)
        with TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 5)) as owner:
            owner.get("/")
            token = owner.cookies.get("pa_csrf") or ""
            # a form on another site posting to the button's address: refused before any model call
            r = owner.post("/paper/N18-3011/translate", data={"csrf": token}, headers={"origin": "http://evil.example"})
            assert r.status_code == 403 and ep.requests == []
            assert owner.post("/paper/N18-3011/translate", data={}).status_code == 403  # no CSRF token
            assert ep.requests == []
            r = owner.post("/paper/N18-3011/translate", data={"csrf": token, "max": "11"})
            assert r.status_code == 400 and ep.requests == []  # past the cap of one request
        # an anonymous visitor (not this machine), even with a valid CSRF pair
        with TestClient(app, base_url="http://127.0.0.1", client=("203.0.113.9", 5)) as visitor:
            visitor.get("/")
            token = visitor.cookies.get("pa_csrf") or ""
            r = visitor.post("/paper/N18-3011/translate", data={"csrf": token}, headers={"accept": "application/json"})
            assert r.status_code == 401 and ep.requests == []
        # the budget counts every request the translation sends; what was stored stays stored
        monkeypatch.setattr(llm_views, "BUDGET", auth.SignupLimit(burst=3, every=3600))
        with _owner(lib) as c:
            c.get("/")
            token = c.cookies.get("pa_csrf") or ""
            r = c.post(
                "/paper/N18-3011/translate", data={"csrf": token, "max": "10"}, headers={"accept": "application/json"}
            )
            assert r.status_code == 429 and "budget" in r.json()["error"] and len(ep.requests) == 3
    finally:
        ep.stop()


def test_without_a_model_the_page_says_how_and_the_post_is_refused(lib: Library) -> None:
    with _owner(lib) as c:
        page = c.get("/paper/N18-3011/read?lang=zh").text
        assert (
            "paperatlas translate N18-3011 --full" in page
            and "/translate" not in page.split("<main")[-1].split("paperatlas translate")[0]
        )
        token = c.cookies.get("pa_csrf") or ""
        r = c.post("/paper/N18-3011/translate", data={"csrf": token}, headers={"accept": "application/json"})
        assert r.status_code == 409 and "PAPERATLAS_LLM_URL" in r.json()["fix"]


# -- the real model server of the tests ------------------------------------------------------------------
TRAP = "Let $a}{b$ and $\\{x\\}$ cost \\$5 while $$ \\begin{cases} 1 \\end{cases} $$ holds; $5 and $6 are prices (Smith et al., 2020)."
LONG = " ".join(f"Sentence {i} cites [{i % 90 + 1}] and uses $x_{{{i}}}^2$ in the analysis." for i in range(400))


def test_hostile_sections_against_the_real_fixture_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, llm_proxy
) -> None:
    """A formula full of `}`/`$` traps and a 20,000-character section, sent to llama.cpp's server with the
    Gemma 270M fixture (a base model: it echoes, loops and answers in English): every passage it spoils
    is kept in English with a note naming what was lost, nothing of it is stored, the cap of the run
    holds, and a second run sends the refused passages again (nothing half-stored stands in their way)."""
    from paperatlas.translate import SectionText, Translator

    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("PAPERATLAS_LLM_MAX_TOKENS", "48")  # the fixture writes to its cap: keep it short
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "p1", "title": "A paper", "abstract": "An abstract."}) + "\n")
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        lib.ingest([f])
        lib.llm.configure(llm_proxy.url)
        sections = [SectionText(0, "Method", 1, [TRAP]), SectionText(1, "Analysis", 2, [LONG])]
        tr = Translator(lib, lib.llm, lambda pid: sections)
        assert len(LONG) > 20_000 and tr.estimate(["p1"]).chunks > 12
        out = tr.translate("p1", max_chunks=1)  # the trap only: the long section waits for the next run
        assert out.spent_chunks == 1 and "run it again to go on" in out.stopped
        assert not out.sections[1].done and out.sections[1].text == ""
        trap = out.sections[0]
        stored = lib.store.llm.generated_counts()
        # the fixture answers in English (or echoes the placeholders away): refused, said, not stored
        assert not trap.done and "kept in the original" in trap.note and trap.text == "", trap.note
        assert not any(t == "translate_section" for t, *_ in stored)
        chats = len(llm_proxy.chat_requests())
        again = tr.translate("p1", max_chunks=1)
        assert again.spent_chunks == 1 and len(llm_proxy.chat_requests()) > chats  # asked again, not skipped
        md = again.markdown()
        assert "$a}{b$" in md and "Sentence 399" in md  # the English stands where no translation was kept
