"""A refusal on the ask page in a real browser: beside "Not in these papers." the sentences read that
share most of the question's words, quoted, each linking to its passage on the reader page; on a
phone, in English and Chinese.

The model is a loopback endpoint that always refuses (what the 1.5B local model does for most
questions whose answer it was sent): the page's handling of a refusal is what is tested, and the
real fixture model cannot be made to refuse on purpose."""

from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from test_fulltext import _Chat  # the loopback chat endpoint of the full text's ask tests

from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, _require_browser, serve_examples, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SPECTER = ROOT / "tests" / "data" / "pdfs" / "2020.acl-main.207.pdf"
QUESTION = "Which hyperparameter m sets the loss margin of the triplet objective?"


def test_a_refusal_quotes_the_closest_sentences_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    _Chat.reply = "Not in these papers."
    model = ThreadingHTTPServer(("127.0.0.1", 0), _Chat)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    monkeypatch.setenv("PAPERATLAS_LLM_URL", f"http://127.0.0.1:{model.server_address[1]}/v1")
    served = serve_examples(tmp_path, [SPECTER])  # the examples and a paper made from a real PDF
    base = next(served)
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            ctx = b.new_context(base_url=base, viewport={"width": 390, "height": 844})
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.set_default_timeout(120_000)
            page.goto("/ask")
            page.fill("form.ask-form input[name=q]", QUESTION)
            page.click("form.ask-form button[type=submit]")
            page.wait_for_url("**/ask?q=*")
            page.wait_for_selector(".answer .answer-text")
            assert page.inner_text(".answer .answer-text") == "Not in these papers."
            quotes = page.locator("ul.closest li")
            assert quotes.count() >= 1
            assert "margin" in quotes.first.inner_text().lower()
            href = quotes.first.locator("a").get_attribute("href") or ""
            assert "/read#p-" in href  # to the passage itself
            assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1
            shot(page, "ask-closest-phone", full_page=True)
            page.goto(page.url + "&lang=zh")
            assert page.locator("h2", has_text="读到的最接近的句子").count() == 1
            shot(page, "ask-closest-zh-phone", full_page=True)
            page.goto(href)  # the reader page opens at the quoted passage
            assert page.evaluate("location.hash").startswith("#p-")
            assert page.locator(":target").count() == 1
            assert not errors, errors
            ctx.close()
            b.close()
    finally:
        served.close()
        model.shutdown()
