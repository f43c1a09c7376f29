"""Zotero in: `import-reader FILE` reads Zotero's CSL-JSON, RIS, Better BibLaTeX and Zotero RDF exports.

tests/data/zotero/library.{json,ris,bib,rdf} are one Zotero library of six items exported four ways
(shapes: see PROVENANCE.md): an arXiv preprint (matches by arXiv id), a Nature article (by DOI), an
OpenReview conference paper (by URL), two example papers (by exact and by close title) and one paper
the library lacks. bbt-*.{biblatex,csl.json} are Better BibTeX's own test fixtures, unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, EXAMPLES
from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.refs import read_entries, sniff

Z = DATA / "zotero"
EXTRA = [
    {
        "id": "2106.09685",
        "title": "LoRA: Low-Rank Adaptation of Large Language Models",
        "abstract": "We propose low-rank adaptation of large language models.",
        "venue": "ICLR",
        "year": 2022,
    },
    {
        "id": "lecun2015",
        "title": "Deep learning",
        "doi": "10.1038/nature14539",
        "venue": "Nature",
        "year": 2015,
        "abstract": "Deep learning allows computational models of many layers to learn representations.",
    },
    {
        "id": "2305.14314",
        "title": "QLoRA: Efficient Finetuning of Quantized Large Language Models",
        "url": "https://openreview.net/forum?id=OUIFPHEgJU",
        "venue": "NeurIPS",
        "year": 2023,
        "abstract": "We present QLoRA, an efficient finetuning approach with low-rank adapters on a 4-bit model.",
    },
]
EXPECTED = {  # entry title -> (paper id, how it matched)
    "LoRA: Low-Rank Adaptation of Large Language Models": ("2106.09685", "arxiv"),
    "Deep learning": ("lecun2015", "doi"),
    "QLoRA: Efficient Finetuning of Quantized LLMs": ("2305.14314", "url"),
    "Fair Multi-User Dueling Bandit": ("h70c65e847c18a1c", "title"),
    "BehaviourBench: A Benchmark for Modelling User Decisions from Real-World Behavioural Traces": (
        "h958c00b44c20e36",
        "similar title",
    ),
}
FILES = ["library.json", "library.ris", "library.bib", "library.rdf"]


@pytest.fixture(scope="module")
def lib_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("zotero")
    extra = d / "extra.jsonl"
    extra.write_text("".join(json.dumps(p) + "\n" for p in EXTRA), encoding="utf-8")
    with Library(d / "lib.db", embedder="hashing") as lib:
        lib.ingest(EXAMPLES)
        lib.ingest([extra])
    return str(d / "lib.db")


@pytest.mark.parametrize(
    "name,fmt",
    [("library.json", "csl-json"), ("library.ris", "ris"), ("library.bib", "bibtex"), ("library.rdf", "zotero-rdf")],
)
def test_each_format_is_detected_and_read(name: str, fmt: str) -> None:
    assert sniff((Z / name).read_text(encoding="utf-8")) == fmt
    entries = read_entries(Z / name)
    # attachments, notes, journals skipped (Better BibTeX title-cases English titles: "Deep Learning")
    assert [e.title.casefold() for e in entries] == [t.casefold() for t in [*EXPECTED, "Attention Is All You Need"]]
    lora, nature, qlora = entries[0], entries[1], entries[2]
    assert (lora.arxiv, lora.doi, lora.year) == ("2106.09685", "10.48550/arxiv.2106.09685", 2021)
    assert lora.authors[:2] == ["Edward J. Hu", "Yelong Shen"]
    assert (nature.doi, nature.arxiv, nature.year) == ("10.1038/nature14539", "", 2015)  # RDF: on the journal
    assert "https://openreview.net/forum?id=OUIFPHEgJU" in qlora.ids and not qlora.doi


@pytest.mark.parametrize("name", FILES)
def test_import_reader_matches_by_doi_arxiv_url_and_title(lib_path: str, name: str) -> None:
    reader = "r-" + name.replace(".", "-")
    r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", str(Z / name), "--reader", reader, "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    got = {m["entry"].casefold(): (m["id"], m["how"].split(" (")[0]) for m in rep["matched"]}
    assert got == {t.casefold(): v for t, v in EXPECTED.items()}
    assert rep["unmatched"] == ["Attention Is All You Need"]
    with Library(lib_path) as lib:
        assert {p.id for p in lib.readers.liked(reader)} == {pid for pid, _ in EXPECTED.values()}
    # a re-run is safe: the same answer, nothing liked twice
    again = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", str(Z / name), "--reader", reader, "--json"])
    assert json.loads(again.stdout) == rep
    with Library(lib_path) as lib:
        assert len(lib.readers.liked(reader)) == 5


def test_text_report_names_what_did_not_match(lib_path: str) -> None:
    r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", str(Z / "library.json"), "--reader", "t"])
    assert r.exit_code == 0
    assert "5 matched, 1 not in the library" in r.output
    assert "liked 2106.09685  (arxiv: LoRA" in r.output and "not in the library: Attention Is All You Need" in r.output


def test_better_bibtex_fixtures(lib_path: str) -> None:
    """Better BibTeX's own test fixtures: eprint/eprinttype, {{protected}} words, date, quality-report
    comments; CSL-JSON with a year as a string and HTML in the title."""
    (bib,) = read_entries(Z / "bbt-eprint-170.biblatex")
    assert bib.arxiv == "1412.2970" and bib.year == 2014
    assert bib.title.startswith("Lieb-Robinson Bounds, Arveson Spectrum and Haag-Ruelle Scattering")
    assert bib.authors == ["Sven Bachmann", "Wojciech Dybalski", "Pieter Naaijkens"]
    (csl,) = read_entries(Z / "bbt-csl-372.csl.json")
    assert csl.doi == "10.1086/504343" and csl.year == 2006 and csl.ids == ["Olson2006"]
    assert csl.title == "Codes, costs, and critiques: The organization of information in Library Quarterly, 1931–2004"
    r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", str(Z / "bbt-csl-372.csl.json"), "-r", "b"])
    assert r.exit_code == 4 and "none of the entries" in r.stderr  # nothing matched: said, exit 4


def test_round_trip_through_our_own_exports(lib_path: str, tmp_path: Path) -> None:
    """What `export --format ris|csl-json|bibtex` writes, import-reader reads back: every paper matches."""
    for fmt, ext in (("ris", "ris"), ("csl-json", "json"), ("bibtex", "bib"), ("jsonl", "jsonl"), ("json", "json")):
        out = tmp_path / f"all.{ext}"
        r = CliRunner().invoke(cli, ["--db", lib_path, "export", "--format", fmt, "-o", str(out)])
        assert r.exit_code == 0, r.output
        r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", str(out), "-r", f"rt-{fmt}", "--json"])
        rep = json.loads(r.stdout)
        assert rep["format"] == {"jsonl": "csl-json", "json": "csl-json"}.get(fmt, fmt) and rep["unmatched"] == []
        assert len(rep["matched"]) == 32


@pytest.mark.parametrize(
    "name,text,where",
    [
        ("bad.json", '[\n  {"title": "x"},\n  {"title": \n]', "bad.json, line 4"),
        ("bad.json", '{"items": 3}', "bad.json"),
        ("bad.json", "[1, 2]", "bad.json, item 1"),
        ("bad.jsonl", '{"title": "a"}\n{"title": "b"}\n{"title": \n', "bad.jsonl, line 3"),
        ("bad.ris", "TI  - no type first\nER  - \nTY  - JOUR\n", "bad.ris, line 1"),
        (
            "bad.rdf",
            "<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>\n<oops>\n</rdf:RDF>",
            "bad.rdf, line 3",
        ),
    ],
)
def test_bad_files_are_named_with_the_fix(lib_path: str, tmp_path: Path, name: str, text: str, where: str) -> None:
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", str(f), "-r", "bad"])
    assert r.exit_code == 1, r.output
    assert where in r.stderr and "Fix:" in r.stderr
    with Library(lib_path) as lib:
        assert lib.store.readers.get_reader("bad") is None  # nothing was written


def test_not_utf8_and_forced_format(lib_path: str, tmp_path: Path) -> None:
    f = tmp_path / "latin1.ris"
    f.write_bytes("TY  - JOUR\nTI  - Caf\xe9\nER  - \n".encode("latin-1"))
    r = CliRunner().invoke(cli, ["--db", lib_path, "import-reader", str(f), "-r", "x"])
    assert r.exit_code == 1 and "not UTF-8" in r.stderr and "Fix:" in r.stderr
    # --format overrides detection: a JSON file read as a plain list is one line per entry
    r = CliRunner().invoke(
        cli, ["--db", lib_path, "import-reader", str(Z / "library.ris"), "--format", "csl-json", "-r", "x"]
    )
    assert r.exit_code == 1 and "not valid JSON" in r.stderr
