"""Exports and digests of hostile papers carry nothing live (issue 16, finding 7)."""

from __future__ import annotations

import csv
import io
import re

import pytest

from paperatlas.export import export
from paperatlas.models import Hit, Paper
from paperatlas.recommend.digest import render
from paperatlas.safety import csv_cell, md_link, md_text, safe_url

HOSTILE = [
    Paper(
        id="x1",
        title="<script>alert(1)</script> Attention",
        url="javascript:alert(1)",
        authors=["<svg onload=alert(2)>"],
        abstract='=HYPERLINK("http://evil","x")',
        venue="@SUM(A1)",
    ),
    Paper(
        id="x2",
        title="[click](javascript:alert(3))",
        url="JaVa\tScRiPt:alert(4)",
        authors=["+cmd|' /C calc'!A0"],
        abstract="<img src=x onerror=alert(5)>",
        keywords=["-2+3"],
    ),
    Paper(
        id="x3",
        title="Good paper\n<script>alert(6)</script>",
        url="https://example.org/p?a=1&b=(2)",
        abstract="data:text/html,<script>alert(7)</script>",
        status="\tlead",
    ),
]


@pytest.mark.parametrize(
    "url,ok",
    [
        ("https://arxiv.org/abs/2106.09685", True),
        ("http://x.org", True),
        ("javascript:alert(1)", False),
        (" JAVASCRIPT:alert(1)", False),
        ("java\tscript:alert(1)", False),
        ("data:text/html,x", False),
        ("vbscript:x", False),
        ("//evil.example/x", False),
        ("/relative", False),
        ("", False),
        ("http://", False),
        ("\x00javascript:alert(1)", False),
    ],
)
def test_safe_url(url: str, ok: bool) -> None:
    assert bool(safe_url(url)) is ok


def test_markdown_export_is_inert() -> None:
    md = export(HOSTILE, "markdown")
    assert "<script" not in md.lower() and "<svg" not in md.lower() and "<img" not in md.lower()
    assert "javascript:" not in md.lower() and "data:" not in md.lower()
    assert "](<https://example.org/p?a=1&b=(2)>)" in md  # the safe link survives
    assert md.count("\n- ") == 2 and md.startswith("- ")  # one item per paper, no injected blocks


def test_csv_export_neutralises_formulas() -> None:
    rows = list(csv.reader(io.StringIO(export(HOSTILE, "csv"))))
    cells = [c for row in rows[1:] for c in row]
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells)
    assert [r[rows[0].index("url")] for r in rows[1:]] == ["", "", "https://example.org/p?a=1&b=(2)"]
    assert rows[1][rows[0].index("abstract")] == '\'=HYPERLINK("http://evil","x")'  # data kept, made inert
    assert csv_cell(2023) == 2023 and csv_cell("plain") == "plain"


def test_csv_cells_carry_no_script_tag_or_live_scheme() -> None:
    cell = csv_cell("See <SCRIPT>alert(1)</script> and [x](JavaScript:alert(2)) or vbscript :x")
    assert isinstance(cell, str)
    low = cell.lower()
    assert "<script" not in low and "javascript:" not in low and "vbscript:" not in low
    assert cell.replace("\u2060", "").replace("vbscript:", "vbscript :") == (
        "See <SCRIPT>alert(1)</script> and [x](JavaScript:alert(2)) or vbscript :x"
    )  # reads the same
    assert csv_cell("x < y and a:b") == "x < y and a:b"


@pytest.mark.parametrize("title", ["Digest <script>alert(1)</script>", "[x](javascript:alert(1))"])
def test_digest_markdown_title_is_escaped(title: str) -> None:
    out = render([], "markdown", title, subtitle="<img src=x onerror=alert(1)>").lower()
    assert "<script" not in out and "javascript:" not in out and "<img" not in out


@pytest.mark.parametrize("fmt", ["markdown", "html", "atom"])
def test_digests_are_inert(fmt: str) -> None:
    out = render([Hit(p, 1.0, reason="<script>alert(8)</script>") for p in HOSTILE], fmt, "digest")
    low = out.lower()
    assert "<script" not in low
    if fmt == "markdown":
        assert "javascript:" not in low
    assert not re.search(r'href="(?!https?://)', out)
    if fmt != "markdown":
        assert 'href="https://example.org/p?a=1&amp;b=(2)"' in out


def test_md_helpers() -> None:
    assert md_text("a <b> *c*") == r"a &lt;b&gt; \*c\*"
    assert md_link("t", "javascript:x") == "t"
    assert md_link("t", "https://a.org/x y") == "t"  # spaces inside a URL: refused, not a broken link
