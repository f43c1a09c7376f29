"""Ask and a paper's TL;DR in a real browser against a real model server: the text shows as the model
writes it (server-sent events), then the page with what was kept; on a phone too."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CHROMIUM, CHROMIUM_ARGS, _require_browser, serve_examples, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Kept across the page load that follows the stream: the longest text the live answer held.
WATCH_LIVE = """
new MutationObserver(() => {
  const live = document.querySelector(".answer-live, .generate-live");
  const n = live ? live.textContent.length : 0;
  if (n > Number(sessionStorage.getItem("liveMax") || 0)) sessionStorage.setItem("liveMax", String(n));
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def test_ask_streams_the_answer_then_shows_its_page(tmp_path: Path, llm_proxy, monkeypatch: pytest.MonkeyPatch) -> None:
    _require_browser()
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("PAPERATLAS_LLM_URL", llm_proxy.url)
    monkeypatch.setenv("PAPERATLAS_LLM_MAX_TOKENS", "24")
    served = serve_examples(tmp_path, [])
    base = next(served)
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            ctx = b.new_context(base_url=base, viewport={"width": 1200, "height": 900})
            page = ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.add_init_script(WATCH_LIVE)
            page.set_default_timeout(120_000)
            page.goto("/ask")
            page.fill("form.ask-form input[name=q]", "which papers simulate users?")
            page.click("form.ask-form button[type=submit]")
            page.wait_for_url("**/ask?q=*")
            page.wait_for_selector(".answer .answer-text")
            assert "stream=1" not in page.url  # the page after the stream is the plain, cached one
            assert int(page.evaluate("sessionStorage.getItem('liveMax') || 0")) > 0, "nothing was shown live"
            assert page.locator(".answer .sources li").count() > 0
            assert len(llm_proxy.chat_requests()) == 1, "the page after the stream asked the model again"
            shot(page, "ask-streamed-desktop")
            page.set_viewport_size({"width": 390, "height": 844})
            shot(page, "ask-streamed-phone", full_page=True)
            assert page.evaluate("document.documentElement.scrollWidth") <= 390 + 1  # nothing wider than the phone
            # the paper page's TL;DR button streams too, then the page shows the kept TL;DR
            page.evaluate("sessionStorage.removeItem('liveMax')")
            page.set_viewport_size({"width": 1200, "height": 900})
            page.goto(page.locator(".answer .sources li a").first.get_attribute("href"))
            page.click(".llm-actions form:has(input[name=task][value=tldr]) button")
            page.wait_for_selector(".tldr.generated")
            assert int(page.evaluate("sessionStorage.getItem('liveMax') || 0")) > 0, "the TL;DR was not shown live"
            assert len(llm_proxy.chat_requests()) == 2
            shot(page, "generate-streamed-desktop")
            assert not errors, errors
            ctx.close()
            b.close()
    finally:
        served.close()
