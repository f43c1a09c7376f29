"""The reader on the real PDFs of benchmarks/data/pdfs (provenance and licences in the README there):
each test holds one thing a paper of that corpus showed the reader getting wrong."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from paperatlas.cli import cli
from paperatlas.fulltext.reader import Document, parse_reference, read_pdf

CORPUS = Path(__file__).resolve().parent.parent / "benchmarks" / "data" / "pdfs"
SPANISH = "f2235cd28c171f9f3b6a8bcebe246159c464980c"  # an MPRA working paper, in Spanish
JOURNAL = "24e6b80e338a4e543de6b49cada07156c9149d22"  # Applied and Environmental Microbiology, 2011


@cache
def read(stem: str) -> Document:
    return read_pdf((CORPUS / f"{stem}.pdf").read_bytes())


def headings(doc: Document) -> list[str]:
    return [f"{s.number} {s.heading}".strip() for s in doc.sections]


def test_a_reference_list_headed_in_spanish_is_read_as_references() -> None:
    doc = read(SPANISH)
    assert len(doc.references) >= 35  # "7. Bibliografía": 39 entries in the S2ORC parse
    assert not any("Bibliograf" in h for h in headings(doc))
    assert not any(p.startswith("Barbosa, J.") for s in doc.sections for p in s.paragraphs)


def test_an_apa_entry_gives_the_title_after_the_year_in_parentheses() -> None:
    ref = parse_reference("Barbosa, J. y Neiman, G. (2005) Acerca de la globalización en la agricultura. Territorios.")
    assert (ref.title, ref.year) == ("Acerca de la globalización en la agricultura", 2005)
    quoted = parse_reference("Berdegué, J. (2002) “Las reformas de los sistemas de extensión”. Santiago: RIMISP")
    assert quoted.title == "Las reformas de los sistemas de extensión"
    titles = {r.title for r in read(SPANISH).references}
    assert "Acerca de la globalización en la agricultura" in titles


def test_a_journal_sets_its_captions_and_headings_in_capitals() -> None:
    doc = read(JOURNAL)
    figures = {c.label for c in doc.captions if c.kind == "figure"}
    assert {f"Figure {n}" for n in range(1, 8)} <= figures  # "FIG. 1." … "FIG. 7."
    assert "Table 1" in {c.label for c in doc.captions}
    assert "MATERIALS AND METHODS" in headings(doc)


def test_a_reference_entry_after_an_initial_is_no_appendix_section() -> None:
    # "D A. Stahl. 2009. Ammonia oxidation …" once opened an appendix "D" and lost the entries after it
    doc = read(JOURNAL)
    assert not any("Stahl" in h for h in headings(doc))
    assert len(doc.references) >= 60
    assert not any(h.startswith("A P A S") for h in headings(read("mono04")))  # a figure's letters


def test_a_heading_that_wraps_onto_a_second_line_is_read_whole() -> None:
    hs = headings(read("2023.eacl-main.121"))
    assert "3.1 RQ1: Does inter-annotator agreement improve using fine-grained annotations?" in hs
    assert "2 Algunas condiciones compartidas por el medio rural regional" in headings(read(SPANISH))
    # a bold run-in paragraph heading under a subsection is not part of it
    assert "2.2 Edge Types" in headings(read_pdf((CORPUS.parents[2] / "tests/data/pdfs/N18-3011.pdf").read_bytes()))


def test_the_title_block_gives_no_sections_for_addresses_or_authors() -> None:
    assert not any("University Station" in h for h in headings(read("bunescu-acl07")))
    citesee = headings(read("2302.07302v1"))
    assert not any(h in citesee for h in ("Amy X. Zhang", "Jonathan Bragg", "Daniel S. Weld"))
    assert {"ABSTRACT", "CCS CONCEPTS", "KEYWORDS", "1 INTRODUCTION"} <= set(citesee)
    # a title that starts with "A " is the title, not an appendix
    assert headings(read("mooney05"))[1] == "A Statistical Semantic Parser that Integrates Syntax and Semantics"


def test_a_numbered_list_in_a_font_that_is_all_bold_makes_no_sections() -> None:
    hs = headings(read("map-reduce"))
    assert not any(h.startswith(("1 The MapReduce library", "3 A worker")) for h in hs)
    assert {"3.2 Master Data Structures", "4 Refinements", "6.1 Large-Scale Indexing"} <= set(hs)
    assert "5.1 A Solution for Type I Bias" in headings(read("bunescu-acl07"))


def test_the_arxiv_stamp_in_the_margin_is_not_text_of_the_paper() -> None:
    for stem in ("2302.07302v1", "2206.10883v3"):
        doc = read(stem)
        assert not any("arXiv:" in p for s in doc.sections for p in s.paragraphs)
        assert stem.split("v")[0] in doc.first_page  # still there to match the paper by its arXiv id


def test_a_cover_page_logo_is_not_the_title() -> None:
    doc = read(SPANISH)  # MPRA's cover page: "MPRA" in 63-point type above the paper's title
    assert doc.title == "Territorial Rural Development in Latin America and the Caribbean: Discourses and Realities"


def test_an_abstract_without_a_heading_is_page_ones_first_long_paragraph() -> None:
    assert read(JOURNAL).abstract.startswith("Marine group I Crenarchaeota (MGI) represents a ubiquitous")
    assert read("1903.10676").abstract == ""  # one page from inside a paper: no abstract, no table text


def test_the_title_heading_is_the_whole_title_and_no_author_name() -> None:
    # the reader page shows it: the first author's name was glued to the title, and a title line
    # starting with "and" was cut off into the text
    citesee = read("2302.07302v1")
    assert citesee.sections[0].heading == citesee.title
    assert citesee.title.endswith("Persistent and Personalized Historical Context")
    journal = [s.heading for s in read(JOURNAL).sections]
    assert journal[1].endswith("in the Euphotic and Upper Mesopelagic Zones of the East China Sea")


def test_a_footnote_is_kept_as_its_own_passage_and_does_not_cut_the_paragraph_it_falls_in() -> None:
    paragraphs = [p for s in read("mono04").sections for p in s.paragraphs]
    assert any("The quality of these clusters is generally good" in p for p in paragraphs)
    notes = [p for p in paragraphs if p.startswith("2 We hand-tagged 1,150 articles")]
    assert notes and "95% F-measure" in notes[0]
    specter = read_pdf((CORPUS.parents[2] / "tests" / "data" / "pdfs" / "2020.acl-main.207.pdf").read_bytes())
    assert any("underperformed the L2 loss" in p for s in specter.sections for p in s.paragraphs)


def test_the_authors_are_the_names_of_the_title_block_and_nothing_else() -> None:
    assert read("2020.acl-main.447").authors[:3] == ["Kyle Lo", "Lucy Lu Wang", "Mark Neumann"]  # "Kyle Lo† Lucy…"
    assert read("proto06").authors == ["Aria Haghighi", "Dan Klein"]  # "Computer Science Division" is none
    assert read(JOURNAL).authors == ["Anyi Hu", "Nianzhi Jiao", "Rui Zhang", "Zao Yang"]  # "Anyi Hu,1,2"
    assert read("1903.10676").authors == []  # a page from inside a paper has no title block


# -- a newcomer's folder of PDFs, through the CLI ---------------------------------------------------
def run(runner, db: Path, *args: str):
    return runner.invoke(cli, ["--db", str(db), *args], catch_exceptions=False)


def folder_of(tmp_path: Path, *stems: str) -> Path:
    folder = tmp_path / "Downloads" / "papers"
    (folder / "older").mkdir(parents=True)
    for i, stem in enumerate(stems):
        (folder / ("older" if i else "") / f"{stem}.pdf").write_bytes((CORPUS / f"{stem}.pdf").read_bytes())
    return folder


def test_ingest_of_a_folder_makes_a_paper_of_every_pdf_in_it_and_below(tmp_path: Path, runner) -> None:
    folder = folder_of(tmp_path, "bohnet09", "mono04", "P07-1088")
    (folder / "notes.txt").write_text("my reading notes, not a paper list\n")
    db = tmp_path / "lib.db"
    r = run(runner, db, "ingest", str(folder), "--no-embed")
    assert r.exit_code == 0, r.output
    assert "3 PDFs" in r.output and "3 new" in r.output
    # each file's line says the title read from it: a wrong read shows at once
    assert "mono04.pdf: pdf-" in r.output and "(new)  Monolingual Machine Translation for Paraphrase" in r.output
    listed = {p["title"]: p["authors"] for p in json.loads(run(runner, db, "list", "--json").stdout)}
    assert listed["Monolingual Machine Translation for Paraphrase Generation"][0] == "Chris QUIRK"
    assert len(listed) == 3 and all(listed.values())  # every paper made from a PDF has its authors
    (folder / "excerpt.pdf").write_bytes((CORPUS / "1903.10676.pdf").read_bytes())  # no title on its page
    assert run(runner, db, "ingest", str(folder / "excerpt.pdf"), "--no-embed").exit_code == 0
    d = json.loads(run(runner, db, "fulltext", "add-folder", str(folder), "--json").stdout)
    assert len(d["already"]) == 4 and not d["unmatched"]  # the folder, read again: every file is a paper
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run(runner, db, "ingest", str(empty))
    assert r.exit_code == 3 and "no PDF" in r.output and "Fix:" in r.output


def test_ingest_names_every_unreadable_pdf_and_skip_bad_stores_the_others(tmp_path: Path, runner) -> None:
    folder = folder_of(tmp_path, "bohnet09", "mono04")
    (folder / "cut.pdf").write_bytes((CORPUS / "ding11.pdf").read_bytes()[:30000])
    (folder / "older" / "login.pdf").write_text("<html><body>Sign in</body></html>")
    db = tmp_path / "lib.db"
    r = run(runner, db, "ingest", str(folder), "--no-embed")
    assert r.exit_code == 3 and "nothing was stored" in r.output
    assert "cut.pdf" in r.output and "login.pdf" in r.output and "--skip-bad" in r.output
    assert not db.exists()
    r = run(runner, db, "ingest", str(folder), "--no-embed", "--skip-bad", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["new"] == 2 and len(out["bad"]) == 2
    assert sorted(Path(b.split(",")[0]).name for b in out["bad"]) == ["cut.pdf", "login.pdf"]


def test_no_control_character_is_read_as_text() -> None:
    # a formula's glyph without a Unicode mapping came out as "\x11" in SPECTER's margin passage
    import re

    from paperatlas.fulltext.reader import read_pdf

    pdf = Path(__file__).parent / "data" / "pdfs" / "2020.acl-main.207.pdf"
    doc = read_pdf(pdf.read_bytes())
    texts = [p for s in doc.sections for p in s.paragraphs] + [s.heading for s in doc.sections]
    assert any("loss margin hyperparameter" in t for t in texts)
    assert not [t for t in texts if re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", t)]
