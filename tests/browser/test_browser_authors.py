"""The author page in a real browser at phone size (issue 11 #6): author links on a paper page lead
to the author's papers, co-authors and topics; a co-author link leads on."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from paperatlas_lab.bench.http import start_server, stop_server

from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, _require_browser, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]
AUTHORS = ROOT / "tests" / "data" / "authors.jsonl"


@pytest.fixture(scope="module")
def author_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _require_browser()
    tmp = tmp_path_factory.mktemp("authors")
    db = tmp / "lib.db"
    env = {**os.environ, "PAPERATLAS_VECTOR_CACHE": str(tmp / "vectors.sqlite")}
    env.pop("PAPERATLAS_DB", None)
    subprocess.run(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "ingest", "--no-embed", str(AUTHORS)],
        check=True,
        env=env,
        cwd=ROOT,
        capture_output=True,
    )
    proc, port = start_server(str(db), host=None, env=env, cwd=str(ROOT), timeout=60)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


def test_author_page_on_a_phone(author_server: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx = b.new_context(base_url=author_server, viewport={"width": 390, "height": 844}, is_mobile=True)
        page = ctx.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("/paper/iclr2024/pdf-218fcaae4d72")
        page.locator(".paper .authors a", has_text="Percy Liang").click()
        page.wait_for_url("**/author/Percy%20Liang")
        assert page.locator("h1").inner_text() == "Percy Liang"
        assert page.locator(".author-papers .paper-item").count() == 3
        assert page.locator(".coauthors li", has_text="Tatsunori Hashimoto").is_visible()
        assert page.locator(".author-topics li").count() >= 1
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width  # nothing wider than the phone
        shot(page, "author-phone", full_page=True)
        page.locator(".coauthors a", has_text="Tatsunori Hashimoto").click()
        page.wait_for_url("**/author/Tatsunori%20Hashimoto")
        assert page.locator(".author-papers .paper-item").count() == 2
        # searching by an author inside the query, in the web UI
        page.goto("/search?q=" + "author%3A%22P.+Liang%22")
        assert page.locator("#results .paper-item").count() == 4
        shot(page, "author-search-phone")
        ctx.close()
        b.close()
        assert errors == [], errors
