"""Zotero out: `export --format ris|csl-json` (CLI and the Saved page), read back by maintained parsers.

RIS is parsed back with `rispy`; CSL-JSON is validated against the CSL schema (tests/data/zotero/
csl-data.json, from citation-style-language/schema) and rendered by `citeproc-py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rispy
from click.testing import CliRunner

from conftest import DATA, EXAMPLES
from paperatlas import Library
from paperatlas.cli import cli

EXTRA = [
    {
        "id": "2106.09685",
        "title": "LoRA: Low-Rank Adaptation of Large Language Models",
        "abstract": "We propose low-rank adaptation, which freezes the pretrained weights and injects\n\ntrainable "
        "rank decomposition matrices into each layer of the Transformer.",
        "authors": ["Edward J. Hu", "Yelong Shen", "Phillip Wallis"],
        "venue": "ICLR",
        "year": 2022,
        "keywords": ["low-rank", "fine-tuning"],
    },
    {
        "id": "lecun2015",
        "title": "Deep learning",
        "doi": "10.1038/nature14539",
        "abstract": "Deep learning allows computational models composed of multiple processing layers to learn "
        "representations of data with multiple levels of abstraction.",
        "authors": ["Yann LeCun", "Yoshua Bengio", "Geoffrey Hinton"],
        "venue": "Nature",
        "year": 2015,
    },
    {
        "id": "weird",
        "title": 'Braces {and} "quotes" & <tags>, one-word author',
        "abstract": "An abstract with a = formula, a newline\nand a tab\tinside.",
        "authors": ["Plato"],
    },
]


@pytest.fixture
def lib_path(tmp_path: Path) -> str:
    extra = tmp_path / "extra.jsonl"
    extra.write_text("".join(json.dumps(p) + "\n" for p in EXTRA), encoding="utf-8")
    path = tmp_path / "lib.db"
    with Library(path, embedder="hashing") as lib:
        lib.ingest(EXAMPLES)
        lib.ingest([extra])
        lib.readers.set_feedback("alice", ["2106.09685", "h4185992fcd6e189"], "like")
    return str(path)


def _papers(path: str) -> dict[str, object]:
    with Library(path) as lib:
        return {p.id: p for p in lib.papers()}


def _norm(s: str) -> str:
    return " ".join(s.split())


def test_ris_export_parses_back_with_rispy(lib_path: str, tmp_path: Path) -> None:
    out = tmp_path / "atlas.ris"
    r = CliRunner().invoke(cli, ["--db", lib_path, "export", "--format", "ris", "-o", str(out)])
    assert r.exit_code == 0, r.output
    records = rispy.loads(out.read_text(encoding="utf-8"))
    papers = _papers(lib_path)
    assert len(records) == len(papers) == 32
    by_id = {rec["id"]: rec for rec in records}
    assert set(by_id) == set(papers)
    for pid, p in papers.items():
        rec = by_id[pid]
        assert rec["title"] == _norm(p.title) and _norm(rec.get("abstract", "")) == _norm(p.abstract)
        assert rec["type_of_reference"] == ("CONF" if p.venue else "GEN")
    lora = by_id["2106.09685"]
    assert lora["authors"] == ["Hu, Edward J.", "Shen, Yelong", "Wallis, Phillip"]
    assert (lora["secondary_title"], lora["year"]) == ("ICLR", "2022")
    assert lora["urls"] == ["https://arxiv.org/abs/2106.09685"] and lora["keywords"] == ["low-rank", "fine-tuning"]
    assert by_id["lecun2015"]["doi"] == "10.1038/nature14539"
    assert by_id["weird"]["authors"] == ["Plato"]
    derived = by_id["h4185992fcd6e189"]
    assert derived["notes"] == ["Title derived from the abstract by paperatlas"]


def test_csl_json_export_is_valid_csl_and_renders(lib_path: str) -> None:
    import jsonschema
    from citeproc import Citation, CitationItem, CitationStylesBibliography, CitationStylesStyle, formatter
    from citeproc.source.json import CiteProcJSON

    r = CliRunner().invoke(cli, ["--db", lib_path, "export", "--format", "csl-json"])
    assert r.exit_code == 0, r.output
    items = json.loads(r.stdout)
    jsonschema.validate(items, json.loads((DATA / "zotero" / "csl-data.json").read_text(encoding="utf-8")))
    by_id = {it["id"]: it for it in items}
    assert len(by_id) == 32
    lora = by_id["2106.09685"]
    assert lora["type"] == "paper-conference" and lora["container-title"] == "ICLR"
    assert lora["author"][0] == {"family": "Hu", "given": "Edward J."} and lora["issued"] == {"date-parts": [[2022]]}
    assert lora["number"] == "arXiv:2106.09685" and lora["URL"] == "https://arxiv.org/abs/2106.09685"
    assert by_id["lecun2015"]["DOI"] == "10.1038/nature14539"
    assert by_id["weird"]["author"] == [{"literal": "Plato"}] and by_id["weird"]["type"] == "article"

    # citeproc-py reads the same items and formats a bibliography (the style it ships)
    import citeproc

    style_path = Path(citeproc.__file__).parent / "data" / "styles" / "harvard-cite-them-right.csl"
    bib = CitationStylesBibliography(
        CitationStylesStyle(str(style_path), validate=False),
        CiteProcJSON([by_id["2106.09685"], by_id["lecun2015"]]),
        formatter.plain,
    )
    for key in ("2106.09685", "lecun2015"):
        bib.register(Citation([CitationItem(key)]))
    text = "\n".join(str(entry) for entry in bib.bibliography())
    assert "Hu, E.J." in text and "LoRA: Low-Rank Adaptation of Large Language Models" in text
    assert "LeCun, Y." in text and "(2015)" in text


def test_export_reader_json_to_stdout(lib_path: str) -> None:
    r = CliRunner().invoke(cli, ["--db", lib_path, "export", "--reader", "alice", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert [p["id"] for p in json.loads(r.stdout)] == ["2106.09685", "h4185992fcd6e189"]
    r = CliRunner().invoke(cli, ["--db", lib_path, "export", "--reader", "alice", "--format", "ris"])
    assert [rec["id"] for rec in rispy.loads(r.stdout)] == ["2106.09685", "h4185992fcd6e189"]


def test_saved_page_downloads_ris_and_csl_json(lib_path: str) -> None:
    from bs4 import BeautifulSoup
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    # a loopback server seen from this machine: the owner ("me") is signed in, as for `make demo`
    with (
        Library(lib_path) as lib,
        TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 50000)) as c,
    ):
        lib.readers.set_feedback("me", ["2106.09685", "h4185992fcd6e189"], "like")  # the browser's default reader
        page = c.get("/saved")
        hrefs = [a["href"] for a in BeautifulSoup(page.text, "html.parser").select('a[href^="/saved/export"]')]
        assert "/saved/export?format=ris" in hrefs and "/saved/export?format=csl-json" in hrefs
        ris = c.get("/saved/export", params={"format": "ris"})
        assert ris.status_code == 200 and ris.headers["content-type"].startswith("application/x-research-info-systems")
        assert 'filename="paperatlas-saved.ris"' in ris.headers["content-disposition"]
        assert [rec["id"] for rec in rispy.loads(ris.text)] == ["2106.09685", "h4185992fcd6e189"]
        csl = c.get("/saved/export", params={"format": "csl-json"})
        assert csl.headers["content-type"].startswith("application/vnd.citationstyles.csl+json")
        assert [it["id"] for it in csl.json()] == ["2106.09685", "h4185992fcd6e189"]


def test_export_takes_every_filter_of_search(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """export's filters are the table's (FilterCommand): an author's papers export without a query."""
    import json

    from click.testing import CliRunner

    from paperatlas.cli import cli

    src = tmp_path / "papers.jsonl"
    rows = [
        {"id": "a1", "title": "Graphs one", "abstract": "About graphs.", "authors": ["Ada Lovelace"], "venue": "X"},
        {"id": "a2", "title": "Graphs two", "abstract": "More graphs.", "authors": ["Alan Turing"], "venue": "X"},
        {"id": "a3", "title": "Graphs three", "abstract": "Still graphs.", "authors": ["A. Lovelace"], "venue": "Y"},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "lib.db"
    assert CliRunner().invoke(cli, ["--db", str(db), "ingest", str(src), "--no-embed"]).exit_code == 0
    r = CliRunner().invoke(cli, ["--db", str(db), "export", "--author", "Ada Lovelace"])
    assert r.exit_code == 0, r.output
    assert [json.loads(line)["id"] for line in r.stdout.splitlines() if line.strip()] == ["a1", "a3"]
    r = CliRunner().invoke(cli, ["--db", str(db), "export", "--author", "Ada Lovelace", "--venue", "Y"])
    assert [json.loads(line)["id"] for line in r.stdout.splitlines() if line.strip()] == ["a3"]
    help_text = CliRunner().invoke(cli, ["export", "--help"]).output
    assert "--institution" in help_text and "--session" in help_text
    r = CliRunner().invoke(cli, ["--db", str(db), "export", "--venue", "Nowhere"])
    assert r.exit_code == 4 and "venue=Nowhere" in r.stderr
