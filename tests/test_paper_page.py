"""The paper page shows what the record has (issue 11 #7): TL;DR, primary area, keywords, decision,
PDF / OpenReview / arXiv links (http(s) only), related papers' reasons in plain words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.links import paper_links
from paperatlas.models import Paper
from paperatlas.web.common import plain_reason

from conftest import DATA, EXAMPLES


def test_paper_links() -> None:
    iclr = Paper("iclr2024/pdf-1", "t", url="https://openreview.net/pdf/218fcaae4d72e8c6.pdf")
    assert paper_links(iclr) == [("PDF", "https://openreview.net/pdf/218fcaae4d72e8c6.pdf")]
    icml = Paper(
        "icml2024/Fw4fBE2rqW",
        "t",
        url="https://openreview.net/forum?id=Fw4fBE2rqW",
        extra={"openreview_id": "Fw4fBE2rqW"},
    )
    assert paper_links(icml) == [
        ("PDF", "https://openreview.net/pdf?id=Fw4fBE2rqW"),
        ("OpenReview", "https://openreview.net/forum?id=Fw4fBE2rqW"),
    ]
    arxiv = Paper("2106.09685", "LoRA", url="https://arxiv.org/abs/2106.09685v2", source="arxiv")
    assert [label for label, _ in paper_links(arxiv)] == ["PDF", "arXiv"]
    evil = Paper("x", "t", url="javascript:alert(1)", extra={"doi": "10.1145/3.4", "openreview_id": '"><script>'})
    assert paper_links(evil) == [("DOI", "https://doi.org/10.1145/3.4")]


def test_plain_reason() -> None:
    assert (
        plain_reason("shares: diffusion models, protein design") == "both discuss diffusion models and protein design"
    )
    assert plain_reason("close in meaning") == "similar in meaning"
    assert plain_reason("shares: a, b, c") == "both discuss a, b and c"
    assert plain_reason("shares: a, b, c, d") == "both discuss a, b, c and d"


def test_plain_reason_in_chinese() -> None:
    from paperatlas.i18n import language

    with language("zh"):
        assert plain_reason("shares: diffusion models, protein design") == "都讨论了 diffusion models 和 protein design"
        assert plain_reason("shares: a, b, c") == "都讨论了 a、b 和 c"
        assert plain_reason("close in meaning") == "含义相近"


@pytest.fixture
def client(tmp_path: Path):
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    evil = tmp_path / "evil.jsonl"
    evil.write_text(
        json.dumps(
            {
                "id": "evil/1",
                "title": "Evil links",
                "abstract": "A paper with a bad link.",
                "url": "javascript:alert(1)",
                "venue": "X",
                "year": 2024,
            }
        )
        + "\n",
        encoding="utf-8",
    )
    lib = Library(tmp_path / "p.db", embedder="hashing")
    lib.ingest([DATA / "authors.jsonl", *EXAMPLES, evil])
    lib.embed()
    with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
        yield c
    lib.close()


def test_paper_page_shows_the_record(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get("/paper/iclr2024/pdf-218fcaae4d72").text
    assert "TL;DR" in html and "Language models can learn to naturally generate watermarked text" in html
    assert "primary area" in html and "general machine learning" in html
    assert "decision" in html and "Poster" in html
    assert ">watermarking</a>" in html  # keywords link to a search
    assert 'href="https://openreview.net/pdf/218fcaae4d72e8c622881df1415344813b0aa3f0.pdf"' in html
    related = html[html.index('class="related"') :]
    assert 'class="why"' in related
    assert "shares:" not in related and "close in meaning" not in related
    assert "score" not in related.lower()
    js = client.get("/paper/iclr2024/pdf-218fcaae4d72.json").json()
    assert js["read_links"][0]["label"] == "PDF"
    assert js["extra"]["tldr"].startswith("Language models")
    assert all(r["reason"] for r in js["related"])


def test_related_reasons_on_a_chinese_paper_page_are_chinese(client) -> None:  # type: ignore[no-untyped-def]
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(client.get("/paper/iclr2024/pdf-218fcaae4d72?lang=zh").text, "html.parser")
    whys = [w.get_text(" ", strip=True) for w in soup.select(".related .why")]
    assert whys
    for why in whys:
        assert "both discuss" not in why and "similar in meaning" not in why and " and " not in why, why
        assert "都讨论了" in why or "含义相近" in why, why
    client.get("/?lang=en")


def test_unsafe_links_never_render(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get("/paper/evil/1").text
    assert 'href="javascript:' not in html and "Source ↗" not in html  # (the BibTeX text may quote it, inert)
    assert client.get("/paper/evil/1.json").json()["read_links"] == []
