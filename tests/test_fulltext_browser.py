"""The reader page (/paper/{id}/read) in a real browser at phone size (390 px), in English and in
Chinese: no sideways scrolling, the searched passage highlighted where its #p-N anchor lands, the
page links pointing into the stored PDF. Screenshots go to test-output/screenshots/. Skips without
Chromium unless PAPERATLAS_REQUIRE_BROWSER=1 (the rule of tests/test_topics_browser.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_topics_browser import ARGS, CHROMIUM, SHOTS, require_browser

from paperatlas import Library
from paperatlas_lab.bench.http import start_server, stop_server

pytestmark = pytest.mark.browser
SPECTER = Path(__file__).parent / "data" / "pdfs" / "2020.acl-main.207.pdf"
TITLE = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    require_browser()
    tmp = tmp_path_factory.mktemp("reader")
    src = tmp / "papers.jsonl"
    src.write_text(json.dumps({"id": "specter", "title": TITLE, "abstract": "Representation learning."}) + "\n")
    db = tmp / "lib.db"
    with Library(db, embedder="hashing") as lib:
        lib.ingest([src])
        assert lib.fulltext.add("specter", SPECTER).ok
        n = next(x.n for x in lib.fulltext.search("triplet margin loss", paper_ids=["specter"]))
    proc, port = start_server(str(db))
    yield f"http://127.0.0.1:{port}", n
    stop_server(proc)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_reader_page_on_a_phone(site: tuple[str, int], lang: str) -> None:
    from playwright.sync_api import sync_playwright

    base, n = site
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = b.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/paper/specter/read?lang={lang}&p={n}#p-{n}")
        marked = page.locator(f"#p-{n}")
        assert "marked" in (marked.get_attribute("class") or "")
        assert marked.is_visible() and marked.bounding_box()["y"] < 844  # the anchor brought it into view
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390  # nothing scrolls sideways
        assert page.locator("a.pg").first.get_attribute("href").startswith("/paper/specter.pdf#page=")
        assert ("参考文献" if lang == "zh" else "References") in page.locator(".ft-refs h2").inner_text()
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"reader-390-{lang}.png"))
        page.goto(f"{base}/paper/specter/read?lang={lang}")
        page.screenshot(path=str(SHOTS / f"reader-390-{lang}-top.png"))
        assert not errors
        b.close()
