"""Hostile paper fields in the web UI: bidi text is isolated, only http(s) URLs become links (issue 16 #5, #7)."""

from __future__ import annotations

import re

from bs4 import BeautifulSoup
from starlette.testclient import TestClient

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: without isolation it reverses the text that follows it on the page
PAPERS = [
    {
        "id": "bidi/1",
        "title": f"Graph kernels {RLO}txet desrever",
        "abstract": "Graph kernels for molecules.",
        "authors": [f"Mallory {RLO}yrollaM", "אבי כהן"],
        "venue": "TestConf",
        "year": 2024,
        "url": "javascript:alert(document.domain)",
    },
    {
        "id": "bidi/2",
        "title": "Graph kernels with a safe link",
        "abstract": "Graph kernels, again.",
        "authors": ["Ann Lee"],
        "venue": "TestConf",
        "year": 2024,
        "url": "https://example.org/paper",
    },
    {
        "id": "bidi/3",
        "title": "Graph kernels with a data link",
        "abstract": "Graph kernels, once more.",
        "venue": "TestConf",
        "year": 2024,
        "url": "data:text/html,<script>alert(1)</script>",
    },
]


def _isolated(soup: BeautifulSoup, text: str) -> bool:
    """`text` sits inside an element that isolates its direction (<bdi> or dir="auto")."""
    for node in soup.find_all(string=re.compile(re.escape(text))):
        el = node.parent
        while el is not None and el.name not in ("body", "li", "article"):
            if el.name == "bdi" or el.get("dir") == "auto":
                return True
            el = el.parent
    return False


def test_bidi_titles_and_authors_are_isolated(client: TestClient) -> None:
    for path in ("/paper/bidi/1", "/search?q=graph+kernels&mode=keyword", "/browse?venue=TestConf&year=2024"):
        r = client.get(path)
        assert r.status_code == 200, path
        soup = BeautifulSoup(r.text, "html.parser")
        assert _isolated(soup, "txet desrever"), f"title not isolated on {path}"
        assert _isolated(soup, "yrollaM"), f"author not isolated on {path}"


def test_paper_page_links_only_http_urls(client: TestClient) -> None:
    for pid in ("bidi/1", "bidi/3"):
        html = client.get(f"/paper/{pid}").text
        hrefs = [a.get("href", "") for a in BeautifulSoup(html, "html.parser").find_all("a")]
        assert not any(h.lower().startswith(("javascript:", "data:")) for h in hrefs), hrefs
        assert "Open at source" not in html
    html = client.get("/paper/bidi/2").text
    assert 'href="https://example.org/paper"' in html
