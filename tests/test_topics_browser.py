"""The map in a real browser: Chromium (Debian's) driven by Playwright.

Opens the self-contained atlas.html from disk (offline) and the web app's /map, and
checks what a reader does: labels on the map, hover for a title, click for the paper,
box selection listing papers and key phrases, search highlighting, venue filter.
Screenshots go to test-output/screenshots/. Skips without /usr/bin/chromium unless
PAPERATLAS_REQUIRE_BROWSER=1.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas_lab.bench.http import start_server, stop_server
from test_topics import synthetic_papers

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("PAPERATLAS_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = ROOT / "test-output" / "screenshots"

pytestmark = pytest.mark.browser


def require_browser() -> None:
    missing = ""
    if not Path(CHROMIUM).exists():
        missing = "chromium not found, browser tests skipped"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "the playwright package is not installed, browser tests skipped"
    if missing:
        if os.environ.get("PAPERATLAS_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{missing}, but PAPERATLAS_REQUIRE_BROWSER=1 requires them", pytrace=False)
        pytest.skip(missing)


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(db, atlas.html) of the synthetic five-theme library."""
    require_browser()
    tmp = tmp_path_factory.mktemp("atlas")
    src = tmp / "papers.jsonl"
    rows = synthetic_papers()
    for r in rows:
        r["url"] = f"https://example.org/{r['id']}"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp / "lib.db"
    with Library(db, embedder="hashing") as lib:
        lib.ingest([src])
        lib.embed()
        lib.topics.build(seed=0)
        out = tmp / "atlas.html"
        lib.topics.write_map(out, title="Synthetic atlas")
    yield db, out


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def open_map(browser, url: str, offline: bool = True):  # type: ignore[no-untyped-def]
    ctx = browser.new_context(viewport={"width": 1280, "height": 800}, offline=offline)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_selector("#atlas[data-ready='1'], #atlas[data-error]", timeout=30_000)
    assert page.get_attribute("#atlas", "data-error") is None, page.get_attribute("#atlas", "data-error")
    assert page.locator("#atlas-msg").is_hidden(), page.locator("#atlas-msg").text_content()
    return page, errors


def point_xy(page, i: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    box = page.locator("#atlas-canvas").bounding_box()
    x, y = page.evaluate(f"window.paperatlasMap.screenPosition({i})")
    return box["x"] + x, box["y"] + y


def isolated_point(page) -> int:  # type: ignore[no-untyped-def]
    """The point on screen farthest from its nearest neighbour (the mouse finds it, or one
    drawn right on top of it)."""
    return int(
        page.evaluate("""() => {
        const m = window.paperatlasMap, n = m.data.ids.length, c = document.getElementById('atlas-canvas');
        const p = [...Array(n).keys()].map(i => m.screenPosition(i));
        let best = -1, far = 0;
        for (let i = 0; i < n; i++) {
            const [x, y] = p[i];
            if (x < 20 || y < 20 || x > c.clientWidth - 60 || y > c.clientHeight - 20) continue;
            // a point under a topic label is the label's to click (it zooms to the topic)
            const r = c.getBoundingClientRect();
            if (document.elementFromPoint(r.left + x, r.top + y) !== c) continue;
            let near = Infinity;
            for (let j = 0; j < n; j++) if (j !== i) near = Math.min(near, Math.hypot(p[j][0] - x, p[j][1] - y));
            if (near > far) { far = near; best = i; }
        }
        return best;
    }""")
    )


def near(page, i: int, px: float = 10) -> set[int]:  # type: ignore[no-untyped-def]
    """Points drawn within px pixels of point i (i included)."""
    return set(
        page.evaluate(f"""() => {{
        const m = window.paperatlasMap, [x, y] = m.screenPosition({i});
        return m.data.ids.map((_, j) => j).filter(j => {{
            const [a, b] = m.screenPosition(j); return Math.hypot(a - x, b - y) <= {px};
        }});
    }}""")
    )


def hover(page, i: int) -> None:  # type: ignore[no-untyped-def]
    """Move onto point i until its tooltip shows (the point index is built in a worker)."""
    x, y = point_xy(page, i)
    for _ in range(20):
        page.mouse.move(x - 15, y - 15)
        page.mouse.move(x, y, steps=4)
        page.wait_for_timeout(150)
        if page.locator("#atlas-tip").is_visible():
            return
    raise AssertionError("no tooltip over the point")


def test_offline_map_draws_labels_hover_click_select_search_filter(atlas, browser) -> None:
    _, html_path = atlas
    page, errors = open_map(browser, html_path.as_uri())
    data = page.evaluate("window.paperatlasMap.data")
    n = len(data["ids"])
    assert n == 120

    # labels: the coarse topics are written on the map
    labels = page.evaluate("window.paperatlasMap.visibleLabels()")
    assert len(labels) >= 2, labels
    assert page.locator("#atlas-topic-list li").count() == len(data["topics"]["coarse"])

    # pixels: the canvas is not blank (WebGL drew the points)
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = page.locator("#atlas-plot").screenshot(path=str(SHOTS / "map.png"))
    assert len(set(shot[i : i + 3] for i in range(0, len(shot) - 3, 997))) > 20

    # hover: the title of the paper under the mouse
    i = isolated_point(page)
    hover(page, i)
    close = near(page, i)
    assert any(data["title"][j] in page.text_content("#atlas-tip") for j in close)

    # click: the paper's panel, with its link
    page.mouse.down()
    page.mouse.up()
    page.wait_for_selector("#atlas-info[data-paper]", timeout=5_000)
    j = data["ids"].index(page.get_attribute("#atlas-info", "data-paper"))
    assert j in close
    assert page.locator("#atlas-info a", has_text="Open paper").get_attribute("href") == data["url"][j]

    # box selection over the middle of the map lists papers and their key phrases
    page.click("[data-mode=box]")
    box = page.locator("#atlas-canvas").bounding_box()
    page.mouse.move(box["x"] + 5, box["y"] + 5)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.6, box["y"] + box["height"] * 0.7, steps=12)
    page.mouse.move(box["x"] + box["width"] - 5, box["y"] + box["height"] - 5, steps=12)
    page.mouse.up()
    page.wait_for_selector("#atlas-info h3:has-text('papers selected')", timeout=5_000)
    selected = int(re.match(r"(\d+)", page.text_content("#atlas-info h3")).group(1))
    assert selected > 20
    assert page.locator("#atlas-info li").count() == min(selected, 300)
    assert page.locator("#atlas-info .atlas-chip").count() >= 3
    page.screenshot(path=str(SHOTS / "map-selection.png"))

    # search highlights matching papers; the venue filter hides the others
    page.fill("#atlas-search", "message passing")
    page.wait_for_function("document.getElementById('atlas').dataset.highlighted > 0", timeout=5_000)
    hits = int(page.get_attribute("#atlas", "data-highlighted"))
    expected = sum(
        1
        for t, a in zip(data["title"], data["phrases"])
        if "message passing" in (t + " " + " ".join(data["vocab"][j] for j in a)).lower()
    )
    assert 0 < hits and hits >= expected
    page.screenshot(path=str(SHOTS / "map-search.png"))
    page.select_option("#atlas-venue", label="SynthConf")
    page.wait_for_function("document.getElementById('atlas').dataset.visible === '60'", timeout=5_000)

    # zooming in reveals subtopic labels
    page.click("#atlas-reset")
    page.click("[data-level=fine]")
    page.wait_for_timeout(300)
    assert len(page.evaluate("window.paperatlasMap.visibleLabels()")) >= len(labels)
    assert errors == [], errors


@pytest.fixture(scope="module")
def server(atlas) -> Iterator[str]:  # type: ignore[no-untyped-def]
    db, _ = atlas
    env = {**os.environ}
    env.pop("PAPERATLAS_DB", None)
    try:  # no --host: start_server accepts only a 127.0.0.1 URL, so serve's default must be loopback
        proc, port = start_server(str(db), host=None, env=env, cwd=str(ROOT), timeout=60)
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


def test_web_map_page_draws_under_its_csp(server, browser) -> None:
    page, errors = open_map(browser, server + "/map", offline=False)
    assert page.evaluate("window.paperatlasMap.data.ids.length") == 120
    assert len(page.evaluate("window.paperatlasMap.visibleLabels()")) >= 2
    data = page.evaluate("window.paperatlasMap.data")
    i = isolated_point(page)
    hover(page, i)
    page.mouse.down()
    page.mouse.up()
    page.wait_for_selector("#atlas-info[data-paper]", timeout=5_000)
    pid = page.get_attribute("#atlas-info", "data-paper")
    assert data["ids"].index(pid) in near(page, i)
    assert page.locator("#atlas-info a", has_text="Open paper").get_attribute("href") == "/paper/" + pid
    page.screenshot(path=str(SHOTS / "map-web.png"))
    assert errors == [], errors


def test_web_map_page_in_chinese(server, browser) -> None:
    """/map?lang=zh: controls, the help text and the script's panel in Chinese; labels come from the papers."""
    page, errors = open_map(browser, server + "/map?lang=zh", offline=False)
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    assert page.get_attribute("#atlas-search", "placeholder") == "搜索标题、作者、关键短语"
    assert page.locator("[data-level=fine]").inner_text() == "子主题"
    i = isolated_point(page)
    hover(page, i)
    page.mouse.down()
    page.mouse.up()
    page.wait_for_selector("#atlas-info[data-paper]", timeout=5_000)
    assert page.locator("#atlas-info a", has_text="打开论文").count() == 1
    assert page.locator("#atlas-info", has_text="主题：").count() == 1
    page.fill("#atlas-search", "protein")
    page.wait_for_function("document.getElementById('atlas-count').textContent.includes('条搜索结果')")
    page.screenshot(path=str(SHOTS / "zh-map-web.png"))
    assert errors == [], errors


def test_map_on_a_phone(server, browser) -> None:  # type: ignore[no-untyped-def]
    """Issue 11 #8: full-height plot, the panel as a drawer, site navigation, search listing papers."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + "/map")
    page.wait_for_selector("#atlas[data-ready='1'], #atlas[data-error]", timeout=30_000)
    assert page.get_attribute("#atlas", "data-error") is None
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "map-phone.png"))
    plot = page.locator("#atlas-canvas").bounding_box()
    assert plot["width"] >= 380 and plot["height"] >= 0.7 * 844, plot  # not a strip
    assert not page.locator("#atlas-panel").is_visible()  # the drawer starts closed
    nav = page.locator("nav.atlas-nav")
    assert (
        nav.locator('a[href="/search"]').is_visible()
        and nav.locator('a[href="/map"]').get_attribute("aria-current") == "page"
    )
    page.click("#atlas-drawer")
    page.wait_for_timeout(400)
    panel = page.locator("#atlas-panel")
    assert panel.is_visible() and page.locator("#atlas-topic-list li").first.is_visible()
    box = panel.bounding_box()
    assert box["y"] > 200 and box["y"] + box["height"] <= 844 + 1  # a drawer from the bottom, the map above
    page.screenshot(path=str(SHOTS / "map-phone-drawer.png"))
    page.click("#atlas-drawer")
    page.wait_for_timeout(400)
    assert not panel.is_visible()
    # search lists the matching papers in the drawer; a tap flies to one and selects it
    word = page.evaluate("window.paperatlasMap.data.title[0].split(' ')[1]")
    page.fill("#atlas-search", word)
    first = page.locator("#atlas-results li button").first
    first.wait_for(timeout=10_000)
    assert panel.is_visible()
    n = page.locator("#atlas-results li button").count()
    assert n == int(page.get_attribute("#atlas", "data-highlighted"))
    page.screenshot(path=str(SHOTS / "map-phone-search.png"))
    i = int(first.get_attribute("data-index"))
    pid = page.evaluate(f"window.paperatlasMap.data.ids[{i}]")
    first.click()
    page.wait_for_selector(f"#atlas-info[data-paper='{pid}']", state="attached", timeout=5_000)
    page.wait_for_timeout(800)  # the fly-to transition
    assert not panel.is_visible()  # closed, so the paper is in view
    x, y = page.evaluate(f"window.paperatlasMap.screenPosition({i})")
    assert 0 <= x <= 390 and 0 <= y <= plot["height"], (x, y)
    page.screenshot(path=str(SHOTS / "map-phone-flown.png"))
    # clearing the search clears the list
    page.fill("#atlas-search", "")
    page.wait_for_function("document.getElementById('atlas-results').hidden", timeout=10_000)
    ctx.close()
    assert errors == [], errors


POINTS_INSIDE = """() => {
    const m = window.paperatlasMap, n = m.data.ids.length, c = document.getElementById('atlas-canvas');
    const r = 4;  // about a point's radius: a point centred closer to the edge is drawn cut
    return [...Array(n).keys()].filter(i => {
        const [x, y] = m.screenPosition(i);
        return !(x >= r && y >= r && x <= c.clientWidth - r && y <= c.clientHeight - r);
    });
}"""

TOOLBAR_FITS = """() => {
    const bar = document.querySelector('.atlas-bar');
    const out = [...bar.children].filter(e => e.offsetParent !== null)
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5).map(e => e.id || e.className);
    return {out, scroll: bar.scrollWidth - bar.clientWidth, page: document.documentElement.scrollWidth - window.innerWidth};
}"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_map_toolbar_points_language_and_reader_on_a_phone(server, browser, lang: str) -> None:  # type: ignore[no-untyped-def]
    """390x844: every toolbar control within the screen (no sideways scroll), every point drawn whole,
    and the site row with the language switch and the reader indicator."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True)
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server + f"/map?lang={lang}")
    page.wait_for_selector("#atlas[data-ready='1'], #atlas[data-error]", timeout=30_000)
    page.wait_for_timeout(300)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"map-phone-toolbar-{lang}.png"))
    fit = page.evaluate(TOOLBAR_FITS)
    assert fit == {"out": [], "scroll": 0, "page": 0}, fit
    assert page.locator("#atlas-search").is_visible() and page.locator("[data-level=fine]").is_visible()
    assert page.evaluate(POINTS_INSIDE) == []
    # the reset button brings the same whole view back after a zoom
    page.evaluate("window.paperatlasMap.flyTo(0)")
    page.wait_for_timeout(900)
    page.click("#atlas-reset")
    page.wait_for_timeout(900)
    assert page.evaluate(POINTS_INSIDE) == []
    other = {"en": "中文", "zh": "English"}[lang]
    switch = page.locator(".atlas-site a.atlas-lang")
    assert switch.inner_text() == other and switch.is_visible()
    reader = page.locator(".atlas-site .atlas-reader")
    assert reader.is_visible() and reader.locator('a[href="/signin"]').count() == 1
    assert reader.inner_text().startswith({"en": "reader", "zh": "读者"}[lang]) or reader.inner_text() in (
        "sign in",
        "登录",
    )
    site = page.locator(".atlas-site").bounding_box()
    assert site["height"] <= 90, site  # brand, language and reader, then the links in two short rows
    switch.click()
    page.wait_for_selector("#atlas[data-ready='1']", timeout=30_000)
    assert page.evaluate("document.documentElement.lang") == {"en": "zh-CN", "zh": "en"}[lang]
    ctx.close()
    assert errors == [], errors
