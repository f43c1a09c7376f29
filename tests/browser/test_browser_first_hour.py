"""At desktop and phone size: the /ask box takes its row, keyboard hints hide on a phone, the report's
bar charts fit a 390 px screen, the agenda of the owner before any star is not a sign-in request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import _require_browser, serve_examples, shot

pytestmark = [pytest.mark.browser]


def test_ask_box_is_wide_on_desktop_and_key_hints_hide_on_a_phone(browser, server) -> None:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(base_url=server, viewport={"width": 1200, "height": 900})
    page = ctx.new_page()
    page.goto("/ask?lang=en")
    box = page.locator("form.ask-form input[name=q]").bounding_box()
    assert box is not None and box["width"] >= 500, box  # was ~220 px, the placeholder cut
    assert page.locator("footer.site [data-show-keys]").is_visible()
    shot(page, "first-hour-ask-desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/ask?lang=en")
    assert not page.locator("footer.site [data-show-keys]").is_visible()
    assert not page.locator("footer.site").inner_text().rstrip().endswith("·")  # no separator left dangling
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    ctx.close()


@pytest.fixture(scope="module")
def corl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The examples and a CoRL year whose papers give their institutions and countries (no topics)."""
    _require_browser()
    corl = Path(__file__).parents[1] / "data" / "paperlists" / "corl" / "corl2024.json"
    yield from serve_examples(tmp_path_factory.mktemp("first-hour"), [corl])


def test_report_bars_fit_a_phone_and_the_agenda_is_mine(browser, corl_server) -> None:  # type: ignore[no-untyped-def]
    ctx = browser.new_context(base_url=corl_server, viewport={"width": 390, "height": 844})
    page = ctx.new_page()
    page.goto("/report?lang=en")
    assert page.locator(".report .chart-wrap").count() > 0
    # no chart scrolls sideways (the wide one did: its numbers were cut at the screen's edge)
    overflow = page.evaluate(
        "[...document.querySelectorAll('.report .chart-wrap')].map(w => w.scrollWidth - w.clientWidth)"
    )
    assert max(overflow) <= 1, overflow
    shot(page, "first-hour-report-phone", full_page=True)
    page.goto("/agenda?lang=en")
    assert "Sign in to see your agenda" not in page.content()
    assert "reader" in page.locator("header.site").inner_text()
    ctx.close()
