"""Paper lists in the shapes people paste (ingest/textlist.py), and the paperlists file-name rule.

The fixtures in tests/data/pasted are written from real records (see the README there)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import DATA, EXAMPLES, SHARED
from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.ingest.formats import read_file, venue_year_from_name
from paperatlas.ingest.textlist import is_author_line, is_title_like, read_blocks

PASTED = DATA / "pasted"
EXPECTED = json.loads((PASTED / "expected.json").read_text(encoding="utf-8"))


def _ws(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _ingest(tmp_path: Path, name: str) -> tuple[Library, list]:  # type: ignore[type-arg]
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    report = lib.ingest([PASTED / name])
    return lib, report


@pytest.mark.parametrize(
    "name, venue, year, with_authors",
    [
        ("title_author_abstract.txt", "NeurIPS", 2026, True),
        ("title_author_abstract_paragraphs.txt", "ICML", 2026, True),
        ("numbered_full.txt", "COLM", 2025, True),
        ("labelled_en.txt", "ICLR", 2026, True),
        ("labelled_zh.txt", "NeurIPS", 2026, True),
        ("title_then_abstract.txt", "NeurIPS", 2026, False),
        ("title_wrapped_abstract.txt", "NeurIPS", 2026, True),
    ],
)
def test_given_titles_and_authors_are_kept(
    tmp_path: Path, name: str, venue: str, year: int, with_authors: bool
) -> None:
    lib, report = _ingest(tmp_path, name)
    assert report.new == len(EXPECTED) and not report.bad  # not doubled, none lost
    papers = lib.papers()
    assert [p.title for p in papers] == [r["title"] for r in EXPECTED]
    assert not any(p.title_derived for p in papers)
    for p, r in zip(papers, EXPECTED):
        assert p.authors == (r["authors"] if with_authors else [])
        assert (
            _ws(p.abstract)[:200] == _ws(r["abstract"]).replace("$", "")[:200]
            or _ws(p.abstract).split()[:5] == _ws(r["abstract"]).split()[:5]
        )
        assert not any(a in p.abstract for a in r["authors"][:1]), "authors glued into the abstract"
        assert (p.venue, p.year) == (venue, year)
    assert report.notes and "4 papers" in report.notes[0]
    lib.close()


def test_labelled_fields_keep_the_tldr(tmp_path: Path) -> None:
    lib, _ = _ingest(tmp_path, "labelled_en.txt")
    first = lib.papers()[0]
    assert first.extra.get("tldr") == EXPECTED[0]["tldr"]
    lib.close()


def test_numbered_titles_alone(tmp_path: Path) -> None:
    lib, report = _ingest(tmp_path, "numbered_titles.txt")
    papers = lib.papers()
    assert [p.title for p in papers] == [r["title"] for r in EXPECTED]
    assert all(p.abstract == "" and not p.title_derived and p.venue == "ICLR" for p in papers)
    lib.close()


def test_wrapped_untitled_abstracts_stay_untitled(tmp_path: Path) -> None:
    lib, report = _ingest(tmp_path, "untitled_wrapped.txt")
    papers = lib.papers()
    assert len(papers) == 4 and all(p.title_derived for p in papers)
    assert [_ws(p.abstract).split()[:6] for p in papers] == [_ws(r["abstract"]).split()[:6] for r in EXPECTED]
    assert report.notes == []
    lib.close()


def _old_reader(text: str) -> list[dict[str, str]]:
    """The seed-format reader as it was: one untitled abstract per paragraph after the header."""
    paras = [p for p in re.split(r"\n\s*\n", text.strip())]
    return [{"abstract": " ".join(x.strip() for x in p.split("\n") if x.strip())} for p in paras[1:]]


@pytest.mark.parametrize("path", [*EXAMPLES, *sorted((SHARED / "seeds").glob("*.txt"))], ids=lambda p: p.name)
def test_the_seed_format_reads_exactly_as_before(path: Path) -> None:
    rr = read_file(path)
    assert [row for _, row in rr.rows] == _old_reader(path.read_text(encoding="utf-8"))
    assert rr.defaults["year"] == 2026 and rr.notes == []


def test_an_ambiguous_block_is_reported(tmp_path: Path) -> None:
    # a Title Case line above an abstract wrapped at 80 columns, with no author line: a guess
    r = EXPECTED[2]
    import textwrap

    text = f"{r['title']}\n" + textwrap.fill(r["abstract"], 80) + "\n"
    reading = read_blocks([(n + 1, ln) for n, ln in enumerate(text.split("\n"))])
    assert [row.get("title") for _, row in reading.rows] == [r["title"]]
    # named by its line and title, with the fix
    assert any(p.startswith("line 1: ") and r["title"][:40] in p and "Title:" in p for p in reading.problems)


def test_ingest_prints_how_it_read_the_blocks(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "x.db"), "ingest", "--no-embed", str(PASTED / "title_author_abstract.txt")]
    )
    assert res.exit_code == 0, res.output
    assert "4 new" in res.stdout
    assert "note: " in res.stderr and "4 with an author line" in res.stderr


def test_line_classes() -> None:
    assert is_author_line("Yang Zhao, Hao Zhang, Xiuyuan Hu")
    assert is_author_line("Diederik Kingma")
    assert is_author_line("Ludwig van Beethoven and J. S. Bach")
    assert is_author_line("张三、李四")
    assert not is_author_line("Clifford Group Equivariant Neural Networks")
    assert not is_author_line("Deep Residual Learning")
    assert not is_author_line("We study the problem of learning.")
    assert is_title_like("When Will Gradient Regularization Be Harmful?")
    assert not is_title_like("We show that this condition holds for a number of models.")


def test_paperlists_file_name_gives_venue_and_year(tmp_path: Path) -> None:
    assert venue_year_from_name("colm2025.json") == {"venue": "COLM", "year": 2025}
    assert venue_year_from_name("nips2023.json.gz") == {"venue": "NeurIPS", "year": 2023}
    assert venue_year_from_name("papers.jsonl") == {}
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest([PASTED / "colm2025.json"])
    papers = lib.papers()
    assert [(p.venue, p.year) for p in papers] == [("COLM", 2025)] * 2
    assert papers[0].authors[:2] == ["Yixiao Song", "Katherine Thai"]
    # a record's own venue/year wins over the file name
    own = tmp_path / "iclr2020.jsonl"
    own.write_text(
        json.dumps({"title": "A", "abstract": "B c d.", "venue": "ICML", "year": 2024})
        + "\n"
        + json.dumps({"title": "C", "abstract": "D e f."})
        + "\n",
        encoding="utf-8",
    )
    lib.ingest([own])
    got = {p.title: (p.venue, p.year) for p in lib.papers()}
    assert got["A"] == ("ICML", 2024) and got["C"] == ("ICLR", 2020)
    lib.close()


def test_author_lines_as_conference_pages_write_them(tmp_path: Path) -> None:
    """Affiliation marks after names are dropped; `A · B` (NeurIPS virtual site) splits like commas."""
    r1, r2 = EXPECTED[1], EXPECTED[2]
    marked = ", ".join(f"{a}{i + 1}{'*' if i == 0 else ''}" for i, a in enumerate(r1["authors"]))
    text = (
        f"ICML 2026\n\n{r1['title']}\n{marked}\n{r1['abstract']}\n\n"
        f"{r2['title']}\n{' · '.join(r2['authors'])}\n{r2['abstract']}\n"
    )
    f = tmp_path / "list.txt"
    f.write_text(text, encoding="utf-8")
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest([f])
    assert [p.authors for p in lib.papers()] == [r1["authors"], r2["authors"]]
    lib.close()
