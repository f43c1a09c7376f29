"""Every export of hostile papers, opened in Chromium, runs nothing (issue 16 #7).

The papers carry `<script>`, `<svg onload>`, `<img onerror>`, `javascript:`/`data:` URLs, Markdown links to
`javascript:` and spreadsheet formulas. They go through a real ingest into a real library; then the
Markdown and CSV exports (CLI), the Markdown and HTML digests and the paper page of a real `serve` are
rendered in Chromium: Markdown through markdown-it-py in CommonMark mode, which passes raw HTML through
as a Markdown viewer would. Every payload would set `window.__pwned` or open a dialog; every link that
is not http(s) is clicked. Nothing may leave loopback: other requests are aborted.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys

import pytest

from paperatlas import Library
from paperatlas_lab.bench.http import start_server, stop_server
from paperatlas.models import Hit
from paperatlas.recommend.digest import markdown as digest_markdown
from paperatlas.recommend.digest import to_html as digest_html

from .conftest import CHROMIUM, CHROMIUM_ARGS, ROOT, _require_browser

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUN = "window.__pwned=(window.__pwned||0)+1"
HOSTILE = [
    {
        "id": "evil/script",
        "title": f"<script>{RUN}</script>Script title",
        "abstract": f'<script>{RUN}</script> An abstract with a script. <b onmouseover="{RUN}">bold</b>',
        "authors": [f'<img src=x onerror="{RUN}">Ann', '=HYPERLINK("http://evil.example","x")'],
        "url": f"javascript:{RUN}",
        "venue": "EvilConf",
        "year": 2026,
    },
    {
        "id": "evil/svg",
        "title": f'<svg onload="{RUN}"></svg>SVG title',
        "abstract": f'[click me](javascript:{RUN}) and <a href="javascript:{RUN}">a link</a> and '
        f'<iframe src="javascript:{RUN}"></iframe>',
        "authors": ["@SUM(1+1)", "+cmd|' /C calc'!A0"],
        "url": f"data:text/html,<script>{RUN}</script>",
        "venue": "EvilConf",
        "year": 2026,
    },
    {
        "id": "evil/md",
        "title": f'[Title link](javascript:{RUN}) ![img](x "t" onerror={RUN})',
        "abstract": f'-2+3 formula start. <details open ontoggle="{RUN}">x</details> <!-- <script>{RUN}</script> -->',
        "authors": ["-Negative Name"],
        "url": f" JaVaScRiPt:{RUN}",
        "venue": "=EvilConf",
        "year": 2026,
    },
    {
        "id": "good/1",
        "title": "A harmless paper",
        "abstract": "Nothing to see.",
        "authors": ["Bo Li"],
        "url": "https://example.org/harmless",
        "venue": "EvilConf",
        "year": 2026,
    },
]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    _require_browser()
    tmp = tmp_path_factory.mktemp("export-safety")
    src = tmp / "hostile.jsonl"
    src.write_text("".join(json.dumps(p) + "\n" for p in HOSTILE), encoding="utf-8")
    db = tmp / "lib.db"
    env = {**os.environ, "PAPERATLAS_EMBEDDER": "hashing", "PAPERATLAS_VECTOR_CACHE": str(tmp / "v.sqlite")}
    env.pop("PAPERATLAS_DB", None)
    cmd = [sys.executable, "-m", "paperatlas", "--db", str(db)]
    subprocess.run([*cmd, "ingest", str(src)], check=True, env=env, capture_output=True)
    files = {}
    for fmt in ("markdown", "csv"):
        out = tmp / f"export.{fmt}"
        subprocess.run([*cmd, "export", "--format", fmt, "-o", str(out)], check=True, env=env, capture_output=True)
        files[fmt] = out.read_text(encoding="utf-8")
    with Library(db) as lib:
        hits = [Hit(p, 1.0, reason=f"because <script>{RUN}</script>") for p in lib.papers()]
    files["digest.md"] = digest_markdown(hits, "Digest <script>", "sub <img src=x onerror=alert(1)>")
    files["digest.html"] = digest_html(hits, "Digest <script>", "sub")
    return {"tmp": tmp, "db": db, "env": env, "files": files}


@pytest.fixture(scope="module")
def chromium(hostile):  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _render_markdown(text: str) -> str:
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").render(text)  # CommonMark passes raw HTML through, like most viewers
    return f"<!doctype html><html><head><meta charset='utf-8'></head><body>{body}</body></html>"


def _assert_inert(chromium, url: str | None = None, html: str | None = None) -> list[str]:  # type: ignore[no-untyped-def]
    """Open the document, hover and click every non-http(s) link; returns the hrefs it has."""
    ctx = chromium.new_context()
    page = ctx.new_page()
    events: list[str] = []
    page.on("dialog", lambda d: (events.append(f"dialog: {d.message}"), d.dismiss()))

    def route(r):  # type: ignore[no-untyped-def]
        u = r.request.url
        ok = u.startswith(("file:", "about:", "data:")) or u.startswith(("http://127.0.0.1", "http://localhost"))
        (r.continue_() if ok else r.abort())

    page.route("**/*", route)
    if url:
        page.goto(url)
    else:
        page.set_content(html or "")
    page.wait_for_timeout(300)
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    page.eval_on_selector_all("*", "els => els.forEach(e => e.dispatchEvent(new MouseEvent('mouseover')))")
    page.eval_on_selector_all("a[href]", "els => els.filter(e => !/^https?:/i.test(e.href)).forEach(e => e.click())")
    page.wait_for_timeout(300)
    pwned = page.evaluate("window.__pwned || 0")
    ctx.close()
    assert pwned == 0 and not events, (pwned, events)
    return hrefs


def _no_live_links(hrefs: list[str]) -> None:
    for h in hrefs:
        assert not h.strip().lower().startswith(("javascript:", "data:", "vbscript:")), h


def test_markdown_export_renders_inert(hostile, chromium) -> None:  # type: ignore[no-untyped-def]
    md = hostile["files"]["markdown"]
    assert "<script" not in md.lower() and "javascript:" not in md.lower()
    _no_live_links(_assert_inert(chromium, html=_render_markdown(md)))


def test_digest_markdown_and_html_render_inert(hostile, chromium) -> None:  # type: ignore[no-untyped-def]
    md = hostile["files"]["digest.md"]
    assert "<script" not in md.lower() and "javascript:" not in md.lower()
    _no_live_links(_assert_inert(chromium, html=_render_markdown(md)))
    f = hostile["tmp"] / "digest.html"
    f.write_text(hostile["files"]["digest.html"], encoding="utf-8")
    hrefs = _assert_inert(chromium, url=f.as_uri())  # opened as a file, the way the finding ran it
    _no_live_links(hrefs)
    assert "https://example.org/harmless" in hrefs


def test_csv_export_has_no_formula_and_renders_inert(hostile, chromium) -> None:  # type: ignore[no-untyped-def]
    text = hostile["files"]["csv"]
    cells = [c for row in csv.reader(io.StringIO(text)) for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")], "a cell starts a formula"
    assert "javascript:" not in text.lower()
    f = hostile["tmp"] / "export.csv.txt"  # Chromium downloads .csv; as text it shows the file
    f.write_text(text, encoding="utf-8")
    _assert_inert(chromium, url=f.as_uri())
    # and as a Markdown table cell by cell, the way CSVs get pasted into notes and issue trackers
    table = "| a |\n|---|\n" + "".join("| " + c.replace("|", "\\|").replace("\n", " ") + " |\n" for c in cells)
    _assert_inert(chromium, html=_render_markdown(table))


def test_paper_pages_render_inert(hostile, chromium) -> None:  # type: ignore[no-untyped-def]
    proc, port = start_server(str(hostile["db"]), env=hostile["env"], cwd=str(ROOT), timeout=60)
    try:
        for p in HOSTILE:
            hrefs = _assert_inert(chromium, url=f"http://127.0.0.1:{port}/paper/{p['id']}")
            _no_live_links(hrefs)
        _assert_inert(chromium, url=f"http://127.0.0.1:{port}/search?q=title&mode=keyword")
    finally:
        stop_server(proc)
