"""Ingest of every supported format, idempotence, merging and bad input."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from conftest import DATA, EXAMPLES, SCIFACT, VENUE_PAPERS, need
from paperatlas import Library
from paperatlas.errors import IngestError
from paperatlas.ingest.formats import Format, parse_list_header, read_file, sniff


def test_examples_give_29_papers(library: Library) -> None:
    report = library.ingest(EXAMPLES)
    assert (report.new, report.updated, report.unchanged) == (29, 0, 0)
    assert library.count() == 29
    assert library.count(venue="NeurIPS") == 10
    assert library.count(venue="ICLR") == 19
    assert library.count(year=2026) == 29
    assert all(p.title_derived and p.title for p in library.papers())


def test_reingest_changes_nothing(library: Library) -> None:
    library.ingest(EXAMPLES)
    before = [p.to_dict() for p in library.papers()]
    report = library.ingest(EXAMPLES)
    assert report.summary() == "0 new, 0 updated, 29 unchanged"
    assert [p.to_dict() for p in library.papers()] == before


def test_edited_untitled_abstract_is_updated_not_new(library: Library, tmp_path: Path) -> None:
    src = tmp_path / "neurips-2026.txt"
    shutil.copy(EXAMPLES[1], src)
    library.ingest(src)
    old = library.papers()[2]
    text = src.read_text(encoding="utf-8").replace("catastrophic forgetting", "catastrophic interference", 1)
    src.write_text(text, encoding="utf-8")
    report = library.ingest(src)
    assert (report.new, report.updated) == (0, 1), report.summary()
    assert library.count() == 10
    assert "catastrophic interference" in library.get(old.id).abstract


def test_edited_record_with_id_is_updated(library: Library, tmp_path: Path) -> None:
    rows = [{"id": "a1", "title": "First", "abstract": "One."}, {"id": "a2", "title": "Second", "abstract": "Two."}]
    f = tmp_path / "p.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows))
    assert library.ingest(f).new == 2
    rows[1]["abstract"] = "Two, revised."
    f.write_text("\n".join(json.dumps(r) for r in rows))
    r = library.ingest(f)
    assert (r.new, r.updated, r.unchanged) == (0, 1, 1)
    assert library.get("a2").abstract == "Two, revised."


def test_duplicates_across_files_are_merged(library: Library, tmp_path: Path) -> None:
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.csv"
    a.write_text(json.dumps({"id": "x1", "title": "Deep Sets", "abstract": "Permutation invariant functions."}))
    b.write_text('id,title,abstract\ny9,"Deep  sets","Permutation-invariant functions."\n')
    library.ingest([a])
    r = library.ingest([b])
    assert r.merged == 1 and r.new == 0
    assert library.count() == 1
    assert library.get("y9").id == "x1"  # the alias resolves to the kept paper
    assert library.ingest([b]).summary() == "0 new, 0 updated, 1 unchanged"


@pytest.mark.parametrize(
    ("name", "fmt", "n", "check"),
    [
        (
            "openreview_v2.json",
            Format.JSON,
            2,
            lambda p: (
                p.id == "aBcD123xyz"
                and p.venue == "ICLR"
                and p.year == 2024
                and p.status == "Spotlight"
                and p.authors == ["Ada Lovelace", "Alan Turing"]
                and "SMoLE" in p.abstract
                and p.url.endswith("aBcD123xyz")
                and p.extra["primary_area"].startswith("transfer")
            ),
        ),
        (
            "arxiv_snapshot.jsonl",
            Format.JSONL,
            2,
            lambda p: (
                p.id == "2106.09685"
                and p.year == 2021
                and p.authors[0] == "Edward J. Hu"
                and "cs.CL" in p.keywords
                and p.url == "https://arxiv.org/abs/2106.09685"
            ),
        ),
        (
            "arxiv_api.xml",
            Format.ATOM,
            2,
            lambda p: (
                p.id == "2006.11239"
                and p.year == 2020
                and p.venue == "arXiv"
                and p.authors == ["Jonathan Ho", "Ajay Jain", "Pieter Abbeel"]
                and "\n" not in p.abstract
            ),
        ),
        (
            "refs.bib",
            Format.BIBTEX,
            2,
            lambda p: (
                p.id == "kingma2023understanding"
                and p.title.startswith("Understanding Diffusion Objectives as the ELBO")
                and p.authors == ["Diederik Kingma", "Ruiqi Gao"]
                and p.venue == "NeurIPS"
                and p.year == 2023
            ),
        ),
        (
            "papers.csv",
            Format.CSV,
            2,
            lambda p: (
                p.id == "p1"
                and p.status == "Oral"
                and p.authors == ["A. Author", "B. Author"]
                and p.keywords == ["proteins", "generative models"]
                and '"geometric"' in p.abstract
            ),
        ),
        (
            "papers.tsv",
            Format.TSV,
            1,
            lambda p: p.title == "Tabular Diffusion" and p.year == 2023 and p.authors == ["D. Author", "E. Author"],
        ),
    ],
)
def test_formats(library: Library, name: str, fmt: Format, n: int, check) -> None:  # type: ignore[no-untyped-def]
    assert read_file(DATA / name).format is fmt
    report = library.ingest(DATA / name)
    assert report.new == n, report.summary()
    first = library.papers()[0]
    assert check(first), first
    assert library.ingest(DATA / name).unchanged == n


def test_bibtex_latex_is_cleaned(library: Library) -> None:
    library.ingest(DATA / "refs.bib")
    p = library.get("doe2024graphs")
    assert p.title == "Signed Graph Learning with Copulas"
    assert "40%" in p.abstract
    assert p.url == "https://doi.org/10.1234/tmlr.5678"


def test_list_headers() -> None:
    assert parse_list_header("NeurIPS 2026 论文列表") == {"venue": "NeurIPS", "year": 2026}
    assert parse_list_header("ICML 2025") == {"venue": "ICML", "year": 2025}
    assert parse_list_header("Venue: CoRL, Year: 2024") == {"venue": "CoRL", "year": 2024}
    assert parse_list_header("We study 2024 elections in detail and find that the polls were wrong.") is None


def test_force_format_and_overrides(library: Library, tmp_path: Path) -> None:
    f = tmp_path / "list.dat"
    f.write_text("First abstract about graphs.\n\nSecond abstract about proteins.\n")
    r = library.ingest(f, format="text", venue="MyWorkshop", year=2025)
    assert r.new == 2
    assert {(p.venue, p.year) for p in library.papers()} == {("MyWorkshop", 2025)}


def test_venue_papers_8088_and_idempotent(library: Library) -> None:
    path = need(VENUE_PAPERS)
    assert library.ingest(path).new == 8088
    assert library.count(venue="ICLR", year=2024) == 2260
    assert library.ingest(path).summary() == "0 new, 0 updated, 8088 unchanged"


def test_scifact_beir_corpus(library: Library) -> None:
    path = need(SCIFACT / "corpus.jsonl.gz")
    assert library.ingest(path).new == 5183
    assert library.get("4983").title.startswith("Microstructural development")


# --- bad input: a clear error naming file, place and fix; the library exactly as before ---


def _malformed_copy(src: Path, dst: Path, line_no: int) -> None:
    with gzip.open(src, "rt", encoding="utf-8") as f:
        lines = f.readlines()
    lines[line_no - 1] = lines[line_no - 1][: len(lines[line_no - 1]) // 2] + "\n"
    with gzip.open(dst, "wt", encoding="utf-8") as f:
        f.writelines(lines)


def test_malformed_line_in_the_middle(library: Library, tmp_path: Path) -> None:
    library.ingest(EXAMPLES)
    bad = tmp_path / "broken.jsonl.gz"
    _malformed_copy(need(VENUE_PAPERS), bad, 4000)
    with pytest.raises(IngestError) as e:
        library.ingest(bad)
    assert "broken.jsonl.gz" in str(e.value) and "line 4000" in str(e.value) and "--skip-bad" in str(e.value)
    assert library.count() == 29
    r = library.ingest(bad, skip_bad=True)
    assert r.new == 8087 and len(r.bad) == 1 and "line 4000" in str(r.bad[0])


@pytest.mark.parametrize(
    ("content", "expect"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"),
        ("NeurIPS 2026\n\nUn résumé très intéressant.\n".encode("latin-1"), "--encoding latin-1"),
        (gzip.compress(b'{"title": "a", "abstract": "b"}\n' * 200, mtime=0)[:-30], "gzip"),
        (b"", "empty"),
        (b"   \n\n  ", "empty"),
        (b"title,authors\nA paper,Someone\n", "no abstract column"),
        (b'[{"title": "x", "abstract": "y"}, {"title": ', "not valid JSON"),
        (b"@article{broken, title = {Unclosed\n", "BibTeX"),
        (b"<feed><entry><title>x</title></feed>", "malformed XML"),
    ],
)
def test_bad_files_fail_cleanly(library: Library, tmp_path: Path, content: bytes, expect: str) -> None:
    library.ingest(EXAMPLES)
    f = tmp_path / "input.dat"
    f.write_bytes(content)
    with pytest.raises(IngestError) as e:
        library.ingest(f)
    msg = str(e.value)
    assert "input.dat" in msg and expect.lower() in msg.lower(), msg
    assert "Fix:" in msg
    assert library.count() == 29


def test_bad_file_among_good_ones_stores_nothing(library: Library, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "ok", "abstract": "fine"}\n{nope\n')
    with pytest.raises(IngestError):
        library.ingest([*EXAMPLES, bad])
    assert library.count() == 0


def test_record_without_title_or_abstract(library: Library, tmp_path: Path) -> None:
    f = tmp_path / "p.jsonl"
    f.write_text('{"title": "Good", "abstract": "Fine."}\n{"authors": ["Nobody"]}\n')
    with pytest.raises(IngestError, match="line 2"):
        library.ingest(f)
    assert library.ingest(f, skip_bad=True).new == 1


def test_sniff() -> None:
    assert sniff('{"a": 1}\n{"a": 2}\n') is Format.JSONL
    assert sniff('[{"a": 1}]') is Format.JSON
    assert sniff("@article{x, title={y}}") is Format.BIBTEX
    assert sniff("title,abstract\nx,y\n") is Format.CSV
    assert sniff("title\tabstract\nx\ty\n") is Format.TSV
    assert sniff("ICLR 2026\n\nSome abstract.") is Format.TEXT


def _venue_sample(tmp_path: Path, n: int, bad_line: int | None = None) -> Path:
    rows = []
    with gzip.open(need(VENUE_PAPERS), "rt", encoding="utf-8") as f:
        for line in f:
            rows.append(line.rstrip("\n"))
            if len(rows) == n:
                break
    if bad_line is not None:
        rows[bad_line - 1] = json.dumps({"authors": ["Nobody"], "venue": "ICLR"})
    out = tmp_path / "sample.jsonl"
    out.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return out


def test_parallel_normalisation_matches_sequential(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample = _venue_sample(tmp_path, 2500)
    libs = {}
    for workers in ("1", "2"):
        monkeypatch.setenv("PAPERATLAS_INGEST_WORKERS", workers)
        lib = Library(tmp_path / f"w{workers}.db")
        assert lib.ingest(sample).new == 2500
        libs[workers] = {p.id: p.to_dict() for p in lib.papers(limit=None)}
        assert lib.ingest(sample).unchanged == 2500
        lib.close()
    assert len(libs["1"]) == 2500 and libs["1"] == libs["2"]


def test_parallel_normalisation_bad_record_stores_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERATLAS_INGEST_WORKERS", "2")
    sample = _venue_sample(tmp_path, 2500, bad_line=1800)
    lib = Library(tmp_path / "lib.db")
    lib.ingest(EXAMPLES)
    with pytest.raises(IngestError, match="line 1800"):
        lib.ingest(sample)
    assert lib.count() == 29
    assert lib.ingest(sample, skip_bad=True).new == 2499
    lib.close()
