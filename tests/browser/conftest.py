"""Browser tests: Playwright drives Debian's Chromium against a real `paperatlas serve`.

Without /usr/bin/chromium (or the playwright package) they skip with a clear message,
unless PAPERATLAS_REQUIRE_BROWSER=1 (set by .ci/run), which turns the skip into a failure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paperatlas_lab.bench.http import start_server, stop_server

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("PAPERATLAS_CHROMIUM", "/usr/bin/chromium")  # overridable to test the skip
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
SHOTS = ROOT / "test-output" / "screenshots"
SKIP_MESSAGE = "chromium not found, browser tests skipped"

XSS_PAPER = {
    "id": "xss/attempt",
    "title": '<img src=x onerror="window.__y=1">Escapingtoken title',
    "abstract": "<script>window.__x=1</script> An abstract that tries to run a script: escapingtoken.",
    "venue": "TestConf",
    "year": 2024,
}


def _require_browser() -> None:
    missing = None
    if not Path(CHROMIUM).exists():
        missing = SKIP_MESSAGE
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "the playwright package is not installed, browser tests skipped (pip install -e '.[test]')"
    if missing:
        if os.environ.get("PAPERATLAS_REQUIRE_BROWSER") == "1":
            pytest.fail(
                f"{missing}, but PAPERATLAS_REQUIRE_BROWSER=1 requires them (install it: apt-get install -y chromium)",
                pytrace=False,
            )
        pytest.skip(missing)


def serve_examples(tmp: Path, extra: list[Path], *setup: list[str]) -> Iterator[str]:
    """Ingest the 29 examples and `extra` into tmp/lib.db, run each `setup` command on it, serve it.

    Yields the server's URL. No --host: start_server accepts only a 127.0.0.1 URL, so this also
    checks that the default is loopback."""
    db = tmp / "lib.db"
    # the test session's vector cache (tests/conftest.py): the first browser module embeds the examples,
    # the others on this worker find their vectors there (each module used to embed them again, 10-20 s)
    env = {**os.environ}
    env.pop("PAPERATLAS_DB", None)
    cmd = [sys.executable, "-m", "paperatlas", "--db", str(db)]
    examples = sorted(str(p) for p in (ROOT / "examples").glob("*.txt"))
    for args in (["ingest", *examples, *map(str, extra)], *setup):
        subprocess.run([*cmd, *args], check=True, env=env, cwd=ROOT, capture_output=True)
    try:
        proc, port = start_server(str(db), host=None, env=env, cwd=str(ROOT), timeout=60)
    except RuntimeError as e:
        pytest.fail(str(e))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `paperatlas serve` on a free loopback port, over the 29 examples + an XSS paper."""
    _require_browser()
    tmp = tmp_path_factory.mktemp("browser")
    xss = tmp / "xss.jsonl"
    xss.write_text(json.dumps(XSS_PAPER) + "\n", encoding="utf-8")
    yield from serve_examples(tmp, [xss])


@pytest.fixture(scope="module")  # closed after this module: Playwright's loop must not outlive it
def browser(server: str):  # type: ignore[no-untyped-def]
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser, server: str):  # type: ignore[no-untyped-def]
    """A fresh browser context (cookies: a new visitor) per test; fails on any page error."""
    ctx = browser.new_context(base_url=server, viewport={"width": 1200, "height": 900}, accept_downloads=True)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    # our own pages must live within our Content-Security-Policy (no inline scripts or styles)
    pg.on("console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None)
    pg.set_default_timeout(10_000)
    yield pg
    ctx.close()
    assert not errors, errors


def shot(page, name: str, full_page: bool = False) -> None:  # type: ignore[no-untyped-def]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=full_page)
