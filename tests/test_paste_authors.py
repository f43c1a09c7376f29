"""Author lines as real pages write them (all lower case, nicknames, `Jr.`, initials), what a paste
warning says when a paragraph joins the abstract above it, and a paste that repeats a stored paper
with text glued to its abstract merging into that paper."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import VENUE_PAPERS, need

from paperatlas.cli import cli
from paperatlas_lab.eval.authors import score
from paperatlas.ingest.textlist import is_author_line, read_blocks, split_author_line


def _records(*want: str) -> list[dict]:
    """The venue records (real titles, authors, abstracts) whose author lists hold each name in `want`."""
    out: dict[str, dict] = {}
    with gzip.open(need(VENUE_PAPERS), "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            for w in want:
                if w not in out and w in r["authors"]:
                    out[w] = r
    return [out[w] for w in want]


@pytest.mark.parametrize(
    ("line", "names"),
    [
        (
            "sehyun kwon, jaeseung park, minkyu kim, jaewoong cho, ernest k. ryu, kangwook lee",
            ["sehyun kwon", "jaeseung park", "minkyu kim", "jaewoong cho", "ernest k. ryu", "kangwook lee"],
        ),
        ('Tianlong Chen, Zhangyang "Atlas" Wang', ["Tianlong Chen", 'Zhangyang "Atlas" Wang']),
        ("Tianlong Chen · Zhangyang “Atlas” Wang", ["Tianlong Chen", "Zhangyang “Atlas” Wang"]),
        ("Ruian (Ian) Shi¹, Bo Wang²", ["Ruian (Ian) Shi", "Bo Wang"]),
        ("Timothy Truong, Jr., Mauricio Breternitz", ["Timothy Truong, Jr.", "Mauricio Breternitz"]),
        ("W. Dai, Y. Du, H. Bai and X. Li", ["W. Dai", "Y. Du", "H. Bai", "X. Li"]),
        (
            "Vincent Cohen-Addad; Tommaso d'Orsi; Silvio Lattanzi",
            ["Vincent Cohen-Addad", "Tommaso d'Orsi", "Silvio Lattanzi"],
        ),
        (
            "yuanyuan liu, fanhua shang, weixin an, a. shrivastava",
            ["yuanyuan liu", "fanhua shang", "weixin an", "a. shrivastava"],
        ),
    ],
)
def test_real_author_lines_are_author_lines_and_split_into_their_names(line: str, names: list[str]) -> None:
    assert is_author_line(line)
    assert split_author_line(line)[0] == names


@pytest.mark.parametrize(
    "line",
    [
        "diffusion models, image generation, sampling",
        "differential privacy, robustness, certification",
        "the model, the data and the training",
        "Deep Residual Learning",
    ],
)
def test_lower_case_keyword_lists_and_titles_are_no_author_lines(line: str) -> None:
    assert not is_author_line(line)


def _paste(recs: list[dict], lower: str, blank: bool) -> str:
    out = ["NeurIPS 2023 accepted papers"]
    for r in recs:
        authors = ", ".join(r["authors"])
        out += [r["title"], authors.lower() if lower in r["authors"] else authors, r["abstract"]]
        if blank:
            out.append("")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("blank", [True, False])
def test_a_lower_case_and_a_nickname_author_line_start_their_papers(blank: bool) -> None:
    recs = _records("Lasse Vuursteen", "Sehyun Kwon", "Hadi Vafaii", 'Zhangyang "Atlas" Wang', "Shahriar Talebi")
    text = _paste(recs, "Sehyun Kwon", blank)
    reading = read_blocks(list(enumerate(text.splitlines()[1:], 2)))
    rows = [row for _, row in reading.rows]
    assert [r["title"] for r in rows] == [r["title"] for r in recs]
    assert rows[1]["authors"][0] == "sehyun kwon"
    assert 'Zhangyang "Atlas" Wang' in rows[3]["authors"]
    assert not reading.problems


def test_the_warning_names_what_happened_to_a_paper_that_has_an_author_line(tmp_path: Path) -> None:
    """A paragraph under a paper with an author line is read as more of its abstract: the warning says
    that, not that the paper had no author line."""
    recs = _records("Shahriar Talebi", "Sehyun Kwon", "Hadi Vafaii")
    text = _paste(recs, "Sehyun Kwon", True).replace(", ".join(recs[1]["authors"]).lower(), "sehyun kwon")
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(cli, ["--db", str(tmp_path / "t.db"), "ingest", "--dry-run", str(f)])
    warnings = [ln for ln in res.stderr.splitlines() if recs[0]["title"][:40] in ln]
    assert warnings, res.stderr
    assert not any("no author line" in ln for ln in warnings), warnings
    assert any("read as more of the abstract" in ln for ln in warnings), warnings


def test_a_pasted_paper_with_text_glued_to_its_abstract_merges_with_the_stored_paper(tmp_path: Path) -> None:
    recs = _records("Shahriar Talebi", "Sehyun Kwon", "Hadi Vafaii")
    db = str(tmp_path / "t.db")
    src = tmp_path / "venue.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    assert CliRunner().invoke(cli, ["--db", db, "ingest", str(src)]).exit_code == 0
    # the second paper's one-name author line is no author line: the paper is read into the first's abstract
    text = _paste(recs, "Sehyun Kwon", True).replace(", ".join(recs[1]["authors"]).lower(), "sehyun kwon")
    f = tmp_path / "paste.txt"
    f.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(cli, ["--db", db, "ingest", str(f)])
    assert "merged" in res.stderr + res.stdout
    listed = CliRunner().invoke(cli, ["--db", db, "list", "--json"])
    titles = [p["title"] for p in json.loads(listed.stdout)]
    assert sorted(titles) == sorted(r["title"] for r in recs)


def test_author_line_recognition_on_real_author_lists_holds_its_floors() -> None:
    """`paperatlas eval authors` on the first 1,500 venue records: the figures of docs/pastes.md as floors."""
    from paperatlas.ingest import textlist

    res = score(need(VENUE_PAPERS), {"now": (textlist.is_author_line, textlist.split_author_line)}, 1500)["now"]
    for part in ("tuned", "held out"):
        rate = {k: n / t for k, (n, t) in res[part]["exact"].items()}
        wrong = {k: n / t for k, (n, t) in res[part]["others"].items()}
        assert rate["all"] >= 0.97 and rate["case: lower"] >= 0.94 and rate["case: as written"] >= 0.99, rate
        assert wrong["abstract (whole)"] == 0 and wrong["title (lower)"] <= 0.005, wrong
        assert wrong["keywords (lower)"] <= 0.015 and wrong["title (as written)"] <= 0.035, wrong


def test_a_paper_whose_author_line_is_not_taken_for_one_is_warned_about() -> None:
    """`Naman Deep Singh` (`deep` is a title word) is still no author line: the paper then starts its
    abstract with its authors; the reading says so instead of storing it silently."""
    recs = _records("Shahriar Talebi", "Naman Deep Singh", "Hadi Vafaii")
    reading = read_blocks(list(enumerate(_paste(recs, "", True).splitlines()[1:], 2)))
    rows = [row for _, row in reading.rows]
    assert not rows[1].get("authors")
    assert any("1 of 3 papers has no author line" in p and recs[1]["title"][:30] in p for p in reading.problems), (
        reading.problems
    )
