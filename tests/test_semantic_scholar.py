"""`enrich --semantic-scholar`: TL;DR, external ids and influential citations from Semantic
Scholar's Graph API (real recorded bodies on the loopback fault server), shown first on the paper.

The recordings and where they come from: tests/data/sources/semantic_scholar/README.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas.cli import cli

from conftest import cli_library
from sourceserver import SourceServer

DATA = Path(__file__).parent / "data" / "sources" / "semantic_scholar"
TURING = json.loads((DATA / "Paper_Turing1950.json").read_text(encoding="utf-8"))
CITATION = json.loads((DATA / "Citation.json").read_text(encoding="utf-8"))  # influential
REFERENCE = json.loads((DATA / "Reference.json").read_text(encoding="utf-8"))
CITING_0 = json.loads((DATA / "citing_paper_0.json").read_text(encoding="utf-8"))

PAPERS = [
    {"id": "turing", "title": TURING["title"], "abstract": "Can machines think?", "doi": "10.1093/mind/lix.236.433"},
    {
        "id": "throw",
        "title": CITATION["citingPaper"]["title"],
        "abstract": "Robots learn to throw.",
        "doi": "10.1109/LRA.2022.3229266",
    },
    {"id": "dao", "title": CITING_0["title"], "abstract": "Embodied intelligence.", "doi": "10.1109/jas.2024.124407"},
    {"id": "nvil", "title": REFERENCE["citedPaper"]["title"], "abstract": "Belief networks.", "arxiv_id": "1402.0030"},
    {"id": "plain", "title": "A paper with no identifier at all", "abstract": "Nothing to look up by."},
]


def page(edges: list[dict]) -> bytes:
    return json.dumps({"offset": 0, "data": edges}).encode()


@pytest.fixture
def s2() -> Iterator[SourceServer]:
    tid = TURING["paperId"]
    edges = [CITATION, {"isInfluential": False, "contexts": [], "intents": [], "citingPaper": CITING_0}]
    s = SourceServer(
        routes={
            "/paper/DOI:10.1093/mind/lix.236.433": json.dumps(TURING).encode(),
            f"/paper/{tid}/citations": lambda q: page(edges),
            # S2 lists a reference it could not resolve with a null paper
            f"/paper/{tid}/references": lambda q: page([REFERENCE, {"isInfluential": False, "citedPaper": None}]),
            "/works": lambda q: json.dumps({"meta": {"count": 0}, "results": []}).encode(),  # OpenAlex knows none
        }
    ).start()
    yield s
    s.stop()


@pytest.fixture
def db(tmp_path: Path) -> str:
    return cli_library(tmp_path, PAPERS, "--no-embed")


def test_influential_citations_first_with_tldr_and_ids(s2: SourceServer, db: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PAPERATLAS_S2_API_KEY", "test-key")
    s2.faults[f"/paper/{TURING['paperId']}/citations"] = ["429:1", "cut"]  # waited out, then fetched again
    args = ["--db", db, "enrich", "--all", "--base-url", s2.url, "--s2-base-url", s2.url, "--delay", "0"]
    r = CliRunner().invoke(cli, [*args, "--semantic-scholar", "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)["semantic_scholar"]
    assert rep["matched"] == 1 and rep["unmatched"] == 3 and rep["no_id"] == 1 and rep["influential"] == 1, rep
    asked = [h for h in s2.seen if h.path.startswith("/paper/")]
    assert {h.path for h in asked} >= {"/paper/DOI:10.1109/lra.2022.3229266", "/paper/ARXIV:1402.0030"}
    keys = [{k.lower(): v for k, v in h.headers.items()}.get("x-api-key") for h in asked]
    assert keys == ["test-key"] * len(asked)  # the key from the settings, on every request
    assert asked[0].query["fields"][0].split(",")[-1] == "tldr"

    shown = CliRunner().invoke(cli, ["--db", db, "show", "turing", "--json"])
    assert shown.exit_code == 0, shown.output
    got = json.loads(shown.stdout)
    assert got["influential_cited_by"] == ["throw"]
    assert got["cited_by"] == ["throw", "dao"]  # the influential citation first
    meta = got["semantic_scholar"]
    assert meta["paper_id"] == TURING["paperId"] and meta["tldr"].startswith("If the meaning of the words")
    assert meta["tldr_model"] == "tldr@v2.0.0" and meta["external_ids"]["DBLP"] == "journals/x/Turing50"
    assert meta["citation_count"] == 10059 and meta["influential_citation_count"] == 530
    text = CliRunner().invoke(cli, ["--db", db, "show", "turing"]).output
    assert "influential citations in this library: throw" in text and "TL;DR (Semantic Scholar): If the" in text

    page = CliRunner().invoke(cli, ["--db", db, "serve", "--get", "/paper/turing"])
    assert page.exit_code == 0, page.output
    assert page.output.count('class="badge influential"') == 1 and "If the meaning of the words" in page.output
    twin = json.loads(CliRunner().invoke(cli, ["--db", db, "serve", "--get", "/paper/turing.json"]).stdout)
    assert twin["influential_cited_by"] == ["throw"] and twin["cited_by"][0] == "throw"

    again = CliRunner().invoke(cli, [*args, "--semantic-scholar", "--json"])  # fresh records are not asked again
    assert json.loads(again.stdout)["semantic_scholar"]["looked_up"] == 0


def test_semantic_scholar_down_keeps_what_came_before(s2: SourceServer, db: str) -> None:
    s2.faults["/paper/DOI:10.1093/mind/lix.236.433"] = ["503"] * 10
    r = CliRunner().invoke(
        cli,
        ["--db", db, "enrich", "--all", "--base-url", s2.url, "--s2-base-url", s2.url, "--delay", "0",
         "--retries", "1", "--semantic-scholar"],
    )  # fmt: skip
    assert r.exit_code == 1 and "503" in r.output and "Traceback" not in r.output, r.output
