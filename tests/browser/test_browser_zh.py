"""The UI in Chinese in a real browser: chosen by the browser's language, switched and remembered,
glyphs that render (not tofu boxes), and a phone-sized layout that still fits.

Screenshots (test-output/screenshots/zh-*.png, en-*.png) are for a person to look at."""

from __future__ import annotations

import re

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the `server` fixture skips (or fails in CI) with the reason
    expect = None

from .conftest import shot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Draws two different CJK characters in the page's font and compares the pixels: a missing font
# draws both as the same empty box ("tofu"), a real one draws different glyphs.
GLYPHS_DIFFER = """() => {
  const c = document.createElement("canvas"); c.width = 40; c.height = 40;
  const g = c.getContext("2d");
  g.font = "32px " + getComputedStyle(document.body).fontFamily;
  const draw = (ch) => { g.clearRect(0, 0, 40, 40); g.fillText(ch, 2, 32); return Array.from(g.getImageData(0, 0, 40, 40).data).join(); };
  const a = draw("搜"), b = draw("索"), blank = (g.clearRect(0, 0, 40, 40), Array.from(g.getImageData(0, 0, 40, 40).data).join());
  return a !== b && a !== blank;
}"""


def zh_context(browser, server, **kw):  # type: ignore[no-untyped-def]
    """A new visitor whose browser asks for Chinese (Accept-Language: zh-CN)."""
    opts = {"viewport": {"width": 1200, "height": 900}, **kw}
    return browser.new_context(base_url=server, locale="zh-CN", **opts)


def test_chinese_from_the_browser_language_then_switched(browser, server) -> None:  # type: ignore[no-untyped-def]
    ctx = zh_context(browser, server)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto("/")
    assert pg.evaluate("document.documentElement.lang") == "zh-CN"
    nav = pg.locator("header nav").inner_text()
    assert "搜索" in nav and "浏览" in nav and "收藏" in nav and "Search" not in nav
    assert pg.evaluate(GLYPHS_DIFFER), "CJK glyphs do not render: install fonts-noto-cjk (or fonts-wqy-zenhei)"
    # search as you type: the count line and the empty state are Chinese
    pg.locator("#q").press_sequentially("user simul", delay=40)
    pg.locator("#results .paper-item").first.wait_for()
    expect(pg.locator("#results .count")).to_contain_text("的结果：第 1–")
    expect(pg.locator("#results .count")).to_contain_text("混合")  # the mode, translated
    shot(pg, "zh-search")
    # a star: the toast comes from the script catalogue
    pg.locator("#results .paper-item button.star").first.click()
    expect(pg.locator(".toast")).to_have_text("已收藏 ★")
    expect(pg.locator("#results .paper-item button.star").first).to_have_attribute("aria-label", "取消收藏")
    # the paper page: headings and buttons in Chinese, the paper itself as it is
    pg.locator("#results .paper-item a.title").first.click()
    pg.wait_for_url(re.compile(r"/paper/"))
    expect(pg.locator(".related h2")).to_have_text("相关论文")
    expect(pg.locator("button[data-copy]")).to_have_text("复制 BibTeX")
    assert pg.evaluate("document.documentElement.lang") == "zh-CN"
    shot(pg, "zh-paper")
    pg.go_back()
    pg.locator("#results .paper-item").first.wait_for()
    # the key help (press ?) is Chinese too
    pg.locator("body").click(position={"x": 5, "y": 300})
    pg.keyboard.press("?")
    expect(pg.locator(".keyhelp")).to_contain_text("下一篇 / 上一篇论文")
    pg.keyboard.press("?")
    # switch to English with the header link; the choice sticks to the next page (cookie)
    pg.locator("a.lang-switch").click()
    pg.wait_for_url(re.compile(r"lang=en"))
    assert pg.evaluate("document.documentElement.lang") == "en"
    assert "Search" in pg.locator("header nav").inner_text()
    pg.goto("/saved")
    assert pg.evaluate("document.documentElement.lang") == "en"
    expect(pg.locator("h1")).to_contain_text("Saved by")
    shot(pg, "en-saved")
    pg.locator("a.lang-switch").click()
    pg.wait_for_url(re.compile(r"lang=zh"))
    expect(pg.locator("h1")).to_contain_text("的收藏")
    shot(pg, "zh-saved", full_page=True)
    ctx.close()
    assert not errors, errors


def test_chinese_pages_on_a_phone(browser, server) -> None:  # type: ignore[no-untyped-def]
    ctx = zh_context(browser, server, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    pg = ctx.new_page()
    for path, name, check in [
        ("/search?q=user+simulators", "zh-search-phone", "的结果"),
        ("/foryou", "zh-foryou-phone", "为你推荐"),
        ("/triage", "zh-triage-phone", "A 还是 B？"),
        ("/profile", "zh-profile-phone", "兴趣档案"),
        ("/stats", "zh-stats-phone", "统计"),
    ]:
        pg.goto(path)
        expect(pg.locator("main")).to_contain_text(check)
        assert pg.evaluate("document.documentElement.lang") == "zh-CN"
        # nothing overflows sideways: Chinese lines wrap (no spaces to break at)
        assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        shot(pg, name)
    assert pg.evaluate(GLYPHS_DIFFER)
    ctx.close()


HEADER_ROWS = """() => {
  const nav = document.querySelector('header.site nav');
  const tops = new Set([...nav.querySelectorAll('a')].map(a => Math.round(a.getBoundingClientRect().top)));
  const h = document.querySelector('header.site').getBoundingClientRect().height;
  const inside = [...document.querySelectorAll('header.site a, header.site button')]
    .every(e => e.getBoundingClientRect().right <= window.innerWidth + 0.5);
  return {navRows: tops.size, header: h, inside};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_header_fits_a_phone(browser, server, lang: str) -> None:  # type: ignore[no-untyped-def]
    """390x844: the ten links in two rows (they took three, plus a row each for language and reader)."""
    ctx = browser.new_context(base_url=server, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    pg = ctx.new_page()
    for path in ("/", "/search?q=user+simulators", "/signin", "/stats"):
        pg.goto(path + ("&" if "?" in path else "?") + f"lang={lang}")
        got = pg.evaluate(HEADER_ROWS)
        assert got["navRows"] <= 2 and got["header"] <= 115 and got["inside"], (path, got)
        assert pg.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), path
        # the language switch and the reader indicator share the brand's row
        brand = pg.locator("header.site .brand").bounding_box()
        for sel in ("header.site .lang-switch", "header.site .reader"):
            box = pg.locator(sel).bounding_box()
            assert abs(box["y"] + box["height"] / 2 - (brand["y"] + brand["height"] / 2)) < 12, (sel, box, brand)
    pg.goto(f"/?lang={lang}")
    shot(pg, f"{lang}-header-phone")
    ctx.close()
