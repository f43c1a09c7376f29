"""The reader page's translate button in a real browser at phone size (390 px): in Chinese the
button shows what is left, a press translates a bounded step through the configured model (a loopback
endpoint, tests/test_translate_full.py's double) and the page comes back with the sections done, side
by side on a wide screen, the English a tap away on a phone; nothing scrolls sideways. Screenshots go
to test-output/screenshots/. Skips without Chromium unless PAPERATLAS_REQUIRE_BROWSER=1."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_topics_browser import ARGS, CHROMIUM, SHOTS, require_browser
from test_translate_full import Endpoint, _glossary_or_translate

from paperatlas import Library
from paperatlas_lab.bench.http import start_server, stop_server

pytestmark = pytest.mark.browser
PDF = Path(__file__).parent / "data" / "pdfs" / "N18-3011.pdf"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Endpoint]]:
    require_browser()
    tmp = tmp_path_factory.mktemp("translate")
    src = tmp / "papers.jsonl"
    title = "Construction of the Literature Graph in Semantic Scholar"
    src.write_text(json.dumps({"id": "N18-3011", "title": title, "abstract": "A literature graph."}) + "\n")
    db = tmp / "lib.db"
    with Library(db, embedder="hashing") as lib:
        lib.ingest([src])
        assert lib.fulltext.add("N18-3011", PDF).ok
    ep = Endpoint(_glossary_or_translate)
    env = {**os.environ, "PAPERATLAS_LLM_URL": ep.url, "PAPERATLAS_LLM_MODEL": "double"}
    env.pop("PAPERATLAS_LLM_MAX_TOKENS", None)
    proc, port = start_server(str(db), env=env)
    yield f"http://127.0.0.1:{port}", ep
    stop_server(proc)
    ep.stop()


def test_translate_button_on_a_phone(site: tuple[str, Endpoint]) -> None:
    from playwright.sync_api import sync_playwright

    base, ep = site
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = b.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.goto(f"{base}/paper/N18-3011/read?lang=en")
        assert page.locator("form.tr-more").count() == 0  # the English page translates nothing
        page.screenshot(path=str(SHOTS / "translate-390-en.png"))
        page.goto(f"{base}/paper/N18-3011/read?lang=zh")
        button = page.locator("form.tr-more button")
        assert button.is_visible() and "翻译接下来的 3 段" in button.inner_text()
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
        assert ep.requests == []  # showing the page sent nothing
        page.screenshot(path=str(SHOTS / "translate-390-zh-before.png"))
        with page.expect_navigation():
            button.click()
        assert page.url.split("#")[0].endswith("/paper/N18-3011/read?lang=zh")
        assert ep.requests  # the press asked the model
        assert page.locator(".zh-col").count() >= 1 and "词" in page.locator(".zh-col").first.inner_text()
        assert page.locator("details.en-toggle").first.is_visible()  # the English a tap away
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
        assert "段待译" in page.locator("form.tr-more").inner_text()
        page.screenshot(path=str(SHOTS / "translate-390-zh-after.png"), full_page=False)
        page.locator(".zh-col").first.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / "translate-390-zh-section.png"))
        assert not errors
        b.close()
