"""The programme pages in Chromium on a 390x844 phone, English and Chinese, and offline once opened;
search results and the map's point details saying when and where a paper is presented.

A real `paperatlas serve` over a library holding the recorded NeurIPS 2025 feed records
(tests/data/programme), with the owner's likes; screenshots go to test-output/screenshots.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest


from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, _require_browser, serve_examples, shot

FEED = ROOT / "tests" / "data" / "programme" / "neurips-2025-orals-posters.json"
SESSION = "/session/neurips-2025-san-diego-poster-session-6"


@pytest.fixture(scope="module")
def prog_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _require_browser()
    tmp = tmp_path_factory.mktemp("programme")
    yield from serve_examples(
        tmp, [FEED], ["like", "7HVADbW8fh", "1tzlbKySxX", "1kPO9vCRbg"], ["topics", "build", "--k", "3"]
    )


@pytest.fixture(scope="module")
def phone(prog_server: str):  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _context(browser, server: str, lang: str = "en"):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(
        base_url=server,
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        locale="zh-CN" if lang == "zh" else "en-US",
    )
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    pg.set_default_timeout(15_000)
    return ctx, pg, errors


def _fits(pg) -> None:  # type: ignore[no-untyped-def]
    width = pg.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_agenda_session_and_programme_on_a_phone(phone, prog_server: str, lang: str) -> None:  # type: ignore[no-untyped-def]
    ctx, pg, errors = _context(phone, prog_server, lang)
    q = f"?lang={lang}"
    pg.goto("/agenda" + q)
    items = pg.locator("ol.posters li")
    assert items.count() == 3
    assert pg.locator("ol.posters li .pos").first.inner_text() == "#2449"  # poster-number order
    assert pg.locator("a[download]").get_attribute("href").startswith("/feeds/agenda/me.ics?key=")
    if lang == "zh":
        assert "我的日程" in pg.locator("h1").inner_text()
    _fits(pg)
    shot(pg, f"programme-agenda-phone-{lang}", full_page=True)
    pg.goto(SESSION + q)
    assert pg.locator("ol.stops li").count() == 2  # both liked posters on the walk
    _fits(pg)
    shot(pg, f"programme-session-phone-{lang}", full_page=True)
    pg.goto("/programme" + q)
    assert pg.locator("ul.sessions li").count() == 2
    _fits(pg)
    shot(pg, f"programme-days-phone-{lang}", full_page=True)
    ctx.close()
    assert not errors, errors


def test_pages_keep_working_offline_once_opened(phone, prog_server: str) -> None:  # type: ignore[no-untyped-def]
    ctx, pg, errors = _context(phone, prog_server)
    pg.goto("/agenda")
    pg.wait_for_function(
        "navigator.serviceWorker && navigator.serviceWorker.controller !== null || "
        "navigator.serviceWorker.ready.then(() => true)"
    )
    pg.reload()  # now controlled by the worker: this load is saved, and the agenda's sessions are fetched
    pg.wait_for_function("navigator.serviceWorker.controller !== null")
    pg.wait_for_timeout(1500)  # the worker saves the sessions the agenda names
    ctx.set_offline(True)
    pg.goto("/agenda")
    assert pg.locator("ol.posters li").count() == 3
    assert pg.locator("[data-offline-state]").first.is_visible()
    pg.goto(SESSION)  # never opened before: saved because the agenda names it
    assert pg.locator("ol.stops li").count() == 2
    pg.locator("ol.stops li").first.locator("a[data-walk=done]").click()
    assert "gone" in (pg.locator("ol.stops li").first.get_attribute("class") or "")
    shot(pg, "programme-session-phone-offline", full_page=True)
    ctx.set_offline(False)
    ctx.close()
    assert not errors, errors


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_search_says_where_and_filters_by_day_and_session_on_a_phone(phone, prog_server: str, lang: str) -> None:  # type: ignore[no-untyped-def]
    ctx, pg, errors = _context(phone, prog_server, lang)
    pg.goto(f"/search?q=graph&mode=keyword&lang={lang}")
    event = pg.locator("li.paper-item[data-id='7HVADbW8fh'] .event")
    assert "2025-12-05 16:30–19:30 (UTC-08:00) · Exhibit Hall C,D,E #2504" in event.inner_text()
    assert event.inner_text().startswith("海报" if lang == "zh" else "Poster")
    assert event.locator("a").get_attribute("href") == "/session/neurips-2025-san-diego-poster-session-6"
    from playwright.sync_api import expect

    assert pg.locator("ol.papers > li").count() > 1
    pg.select_option("select[name=day]", "2025-12-05")  # the menu filters as you choose
    expect(pg.locator("ol.papers > li")).to_have_count(1)
    assert "day=2025-12-05" in pg.url
    pg.fill("#q", "")
    pg.select_option("select[name=session]", "neurips-2025-san-diego-poster-session-6")  # no words: its papers
    expect(pg.locator("ol.papers > li")).to_have_count(2)
    _fits(pg)
    shot(pg, f"programme-search-phone-{lang}", full_page=True)
    ctx.close()
    assert not errors, errors


def test_the_map_point_says_where_on_a_phone(phone, prog_server: str) -> None:  # type: ignore[no-untyped-def]
    ctx, pg, errors = _context(phone, prog_server)
    pg.goto("/map")
    pg.wait_for_selector("#atlas[data-ready='1'], #atlas[data-error]", timeout=30_000)
    assert pg.get_attribute("#atlas", "data-error") is None
    pg.fill("#atlas-search", "Heterophilic")
    first = pg.locator("#atlas-results li button").first
    first.wait_for(timeout=10_000)
    first.click()
    pg.wait_for_selector("#atlas-info[data-paper='7HVADbW8fh']", state="attached", timeout=5_000)
    line = pg.locator("#atlas-info .atlas-event")
    assert line.text_content() == (
        "Poster · San Diego Poster Session 6 · 2025-12-05 16:30–19:30 (UTC-08:00) · Exhibit Hall C,D,E #2504"
    )
    pg.wait_for_timeout(800)  # the fly-to transition; the drawer closed to show the point
    pg.click("#atlas-drawer")
    line.wait_for(state="visible", timeout=5_000)
    _fits(pg)
    shot(pg, "programme-map-point-phone")
    ctx.close()
    assert not errors, errors
