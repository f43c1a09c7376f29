"""A person's path through the UI in a real browser: search as you type, open a paper,
star it, export the saved list, keyboard use, and an XSS paper that must not execute."""

from __future__ import annotations

import json
import re

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the `server` fixture skips (or fails in CI) with the reason
    expect = None

from .conftest import SHOTS, shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_search_as_you_type(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/")
    shot(page, "home")
    page.locator("#q").press_sequentially("user simul", delay=40)
    first = page.locator("#results .paper-item").first
    first.wait_for()
    # the query is in the URL, so the search can be shared
    page.wait_for_url(re.compile(r"/search\?q=user\+simul"))
    assert page.locator("#results .paper-item mark").count() > 0
    assert page.locator("#results .paper-item .derived").count() > 0  # the examples' titles are derived
    shot(page, "search")
    # switch to keyword mode: results and URL follow without pressing Enter
    page.locator('input[name="mode"][value="keyword"]').check()
    page.wait_for_url(re.compile(r"mode=keyword"))
    expect(page.locator("#results .count")).to_contain_text("keyword")
    # a venue filter
    page.locator('select[name="venue"]').select_option("NeurIPS")
    page.wait_for_url(re.compile(r"venue=NeurIPS"))
    expect(page.locator("#results .count")).to_contain_text("Results")
    metas = page.locator("#results .paper-item .meta")
    expect(metas.first).to_contain_text("NeurIPS")
    # the old results may already start with a NeurIPS paper: wait until none outside the filter is left
    expect(metas.filter(has_not_text="NeurIPS")).to_have_count(0)
    # reloading the shared URL gives the same page
    page.reload()
    assert page.locator("#q").input_value() == "user simul"
    assert page.locator('select[name="venue"]').input_value() == "NeurIPS"


def test_open_star_and_export(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/search?q=controllable+user+simulators")
    page.locator(".paper-item a.title").first.click()
    page.wait_for_url(re.compile(r"/paper/"))
    title = page.locator("h1").inner_text()
    assert "derived" in title.lower()  # the example lists have no titles
    assert "simulat" in page.locator(".abstract").inner_text()
    assert page.locator(".related .paper-item").count() > 0
    shot(page, "paper", full_page=True)

    star = page.locator(".paper-head button.star")
    assert star.get_attribute("aria-pressed") == "false"
    star.click()
    expect(star).to_have_attribute("aria-pressed", "true")
    # the star lives in the library, not in the browser: a reload and the API agree
    page.reload()
    assert page.locator(".paper-head button.star").get_attribute("aria-pressed") == "true"
    paper_id = page.locator("article.paper").get_attribute("data-id")
    saved = page.request.get("/saved.json").json()
    assert [p["id"] for p in saved["papers"]] == [paper_id]

    page.locator(".addtag input[name=tag]").fill("causal")
    page.locator(".addtag button").click()
    page.wait_for_load_state()
    assert page.locator(".taglist").inner_text().startswith("causal")

    page.goto("/saved")
    assert page.locator(".paper-item").count() == 1
    shot(page, "saved")
    with page.expect_download() as dl:
        page.locator("a.button", has_text="BibTeX").click()
    bib = open(dl.value.path(), encoding="utf-8").read()
    assert dl.value.suggested_filename == "paperatlas-saved.bib"
    assert bib.count("@inproceedings") == 1 and "Title derived from the abstract" in bib
    with page.expect_download() as dl:
        page.get_by_role("link", name="JSON", exact=True).click()  # not CSL-JSON
    assert [p["id"] for p in json.load(open(dl.value.path(), encoding="utf-8"))] == [paper_id]
    with page.expect_download() as dl:
        page.locator("a.button", has_text="CSV").click()
    assert open(dl.value.path(), encoding="utf-8").read().startswith("id,title")


def test_keyboard(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/browse?venue=ICLR&year=2026")
    shot(page, "browse")
    page.keyboard.press("j")
    page.keyboard.press("j")
    items = page.locator(".paper-item")
    assert "selected" in (items.nth(1).get_attribute("class") or "")
    page.keyboard.press("k")
    assert "selected" in (items.nth(0).get_attribute("class") or "")
    page.keyboard.press("s")
    expect(page.locator(".paper-item.selected button.star")).to_have_attribute("aria-pressed", "true")
    first_id = items.nth(0).get_attribute("data-id")
    assert first_id in [p["id"] for p in page.request.get("/saved.json").json()["papers"]]
    page.keyboard.press("/")
    page.wait_for_url(re.compile(r"/search"))
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("benchmark")
    page.locator("#results .paper-item").first.wait_for()
    page.keyboard.press("Escape")
    page.keyboard.press("j")
    page.keyboard.press("o")
    page.wait_for_url(re.compile(r"/paper/"))


def test_xss_paper_does_not_execute(page) -> None:  # type: ignore[no-untyped-def]
    page.goto("/search?q=escapingtoken")
    item = page.locator(".paper-item").first
    item.wait_for()
    assert '<img src=x onerror="window.__y=1">' in item.locator("a.title").inner_text()
    page.goto("/paper/xss/attempt")
    assert "<script>window.__x=1</script>" in page.locator(".abstract").inner_text()
    assert page.locator("h1").inner_text().startswith('<img src=x onerror="window.__y=1">')
    assert page.locator("main img").count() == 0
    shot(page, "xss-paper")
    page.goto("/browse?venue=TestConf")
    page.goto("/paper/xss/attempt")
    assert page.evaluate("typeof window.__x") == "undefined"
    assert page.evaluate("typeof window.__y") == "undefined"


def test_phone_and_dark_layouts(browser, server) -> None:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(
        base_url=server, viewport={"width": 390, "height": 844}, color_scheme="dark", is_mobile=True, has_touch=True
    )
    pg = ctx.new_page()
    pg.goto("/search?q=user+simulators")
    # nothing overflows sideways on a phone
    assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    bg = pg.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg != "rgb(251, 251, 249)"  # the dark theme followed the system setting
    shot(pg, "search-phone-dark")
    pg.goto("/stats")
    shot(pg, "stats-phone-dark", full_page=True)
    ctx.close()
    assert len(list(SHOTS.glob("*.png"))) >= 8
