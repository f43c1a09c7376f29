"""A refusal on the ask page in a real browser: beside "Not in these papers." the sentences read that
share most of the question's words, quoted, each linking to its passage on the reader page; on a
phone, in English and Chinese.

The model is a loopback endpoint that always refuses (what the 1.5B local model does for most
questions whose answer it was sent): the page's handling of a refusal is what is tested, and the
real fixture model cannot be made to refuse on purpose."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, _require_browser, serve_examples, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SPECTER = ROOT / "tests" / "data" / "pdfs" / "2020.acl-main.207.pdf"
QUESTION = "Which hyperparameter m sets the loss margin of the triplet objective?"


class _Refuses(BaseHTTPRequestHandler):
    def _send(self, body: dict) -> None:
        out = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        message = {"role": "assistant", "content": "Not in these papers."}
        self._send({"id": "x", "object": "chat.completion", "model": "refuses", "choices": [
            {"index": 0, "message": message, "finish_reason": "stop"}]})  # fmt: skip

    def do_GET(self) -> None:  # noqa: N802
        self._send({"data": [{"id": "refuses"}]})

    def log_message(self, *a: object) -> None:
        pass


def test_a_refusal_quotes_the_closest_sentences_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    model = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
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
