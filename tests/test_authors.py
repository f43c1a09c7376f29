"""Authors (issue 11 #6): tolerant name matching, `search --author` / author:"Name", author pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.authors import name_tokens, names_match, split_author_filters
from paperatlas.cli import cli

from conftest import DATA, EXAMPLES

AUTHORS = DATA / "authors.jsonl"
PERCY = {"iclr2024/pdf-218fcaae4d72", "iclr2024/pdf-394bc531aa1b", "iclr2024/pdf-c50486991ac0"}
PAUL = "iclr2024/pdf-43740f583263"


@pytest.mark.parametrize(
    "query, author, same",
    [
        ("P. Liang", "Percy Liang", True),
        ("percy liang", "Percy Liang", True),
        ("PERCY LIANG", "Percy Liang", True),
        ("Liang, Percy", "Percy Liang", True),
        ("Percy Liang", "Percy S. Liang", True),  # a middle name the query leaves out
        ("Bernhard Scholkopf", "Bernhard Schölkopf", True),
        ("bernhard schölkopf", "Bernhard Scholkopf", True),
        ("J.-P. Vert", "Jean-Philippe Vert", True),
        ("Zhang Hao", "Hao Zhang", True),  # family name first
        ("Liang", "Percy Liang", True),
        ("Q. Liang", "Percy Liang", False),
        ("Percy Liang", "Percy Liangx", False),
        ("Percy Liang", "Liang Percival", False),
        ("Percy Liang", "Yingbin Liang", False),
        ("", "Percy Liang", False),
    ],
)
def test_names_match(query: str, author: str, same: bool) -> None:
    assert names_match(name_tokens(query), name_tokens(author)) is same


def test_split_author_filters() -> None:
    assert split_author_filters('author:"P. Liang" language models') == ("language models", ["P. Liang"])
    assert split_author_filters("Author:Liang watermark author:'B. Schölkopf'") == (
        "watermark",
        ["Liang", "B. Schölkopf"],
    )
    assert split_author_filters("no filter here: authorship") == ("no filter here: authorship", [])


@pytest.fixture
def lib(tmp_path: Path):
    lib = Library(tmp_path / "a.db", embedder="hashing")
    lib.ingest([AUTHORS, *EXAMPLES])
    lib.embed()
    yield lib
    lib.close()


def test_search_by_author(lib: Library) -> None:
    ids = {h.paper.id for h in lib.search("", author="percy liang", limit=50)}
    assert ids == PERCY
    # initials: "P. Liang" is Percy or Paul Pu
    assert {h.paper.id for h in lib.search("", author="P. Liang", limit=50)} == PERCY | {PAUL}
    # an author filter inside the query, combined with words: only Percy's watermarking paper
    hits = lib.search('author:"Percy Liang" watermark distillation', mode="keyword")
    assert [h.paper.id for h in hits] == ["iclr2024/pdf-218fcaae4d72"]
    for mode in ("hybrid", "semantic", "keyword"):
        got = {h.paper.id for h in lib.search("language models", mode=mode, author="Percy Liang", limit=50)}
        assert got and got <= PERCY, mode
    assert len(lib.search("", author="Bernhard Scholkopf")) == 2  # accents forgiven
    assert lib.search("", author="Nobody Atall") == []
    assert lib.search("language models", author="Nobody Atall") == []


def test_author_profile(lib: Library) -> None:
    prof = lib.authors.get("P Liang")
    assert set(prof["names"]) == {"Percy Liang", "Paul Pu Liang"}
    assert prof["name"] == "Percy Liang"  # the spelling with the most papers first
    co = {c["name"]: c["papers"] for c in prof["coauthors"]}
    assert co["Tatsunori Hashimoto"] == 2 and co["Xiang Lisa Li"] == 2
    assert "Percy Liang" not in co
    topics = {t["topic"]: t["papers"] for t in prof["topics"]}
    assert topics["large language models"] == 2  # keywords, counted once per paper, case-insensitive


def test_cli_search_author_json(lib: Library, runner) -> None:  # type: ignore[no-untyped-def]
    r = runner.invoke(cli, ["--db", lib.path, "search", "--author", "p. LIANG", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.stdout)["hits"]
    assert {row["id"] for row in rows} == PERCY | {PAUL}
    assert all(any("Liang" in a for a in row["authors"]) for row in rows)
    r = runner.invoke(
        cli, ["--db", lib.path, "search", "consistency", "--author", "Percy Liang", "--json", "--mode", "keyword"]
    )
    assert [row["id"] for row in json.loads(r.stdout)["hits"]] == ["iclr2024/pdf-c50486991ac0"]
    r = runner.invoke(cli, ["--db", lib.path, "search", "--author", "Nobody Atall"])
    assert r.exit_code == 4
    assert "no author by that name" in r.stderr


def test_author_pages(lib: Library) -> None:
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
        paper = c.get("/paper/iclr2024/pdf-218fcaae4d72")
        assert 'href="/author/Percy%20Liang"' in paper.text
        page = c.get("/author/Percy%20Liang")
        assert page.status_code == 200
        assert "Tatsunori Hashimoto" in page.text and 'href="/author/Tatsunori%20Hashimoto"' in page.text
        assert page.text.count('class="paper-item"') == 3
        js = c.get("/author/percy%20liang.json").json()
        assert js["name"] == "Percy Liang" and js["count"] == 3
        assert {p["id"] for p in js["papers"]} == PERCY
        assert all(p["page"].startswith("/paper/") for p in js["papers"])
        assert c.get("/author/Sch%C3%B6lkopf.json").json()["count"] == 2
        assert c.get("/author/Nobody%20Atall.json").status_code == 404
        # search in the web UI: author:"..." inside q, and the author= parameter
        s = c.get("/search.json", params={"q": 'author:"P. Liang"', "per_page": 50}).json()
        assert {h["id"] for h in s["hits"]} == PERCY | {PAUL}
        s = c.get("/search.json", params={"q": "language models", "author": "Percy Liang"}).json()
        assert s["hits"] and {h["id"] for h in s["hits"]} <= PERCY
        html = c.get("/search", params={"q": 'author:"Percy Liang"'}).text
        assert html.count('class="paper-item"') == 3
        spec = c.get("/openapi.json").json()
        assert "/author/{name}.json" in spec["paths"]
        names = [p["name"] for p in spec["paths"]["/search.json"]["get"]["parameters"]]
        assert "author" in names
