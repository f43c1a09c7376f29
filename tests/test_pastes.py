"""Pasted paper lists as people copy them from conference pages (ingest/textlist.py), the paste corpus
in tests/data/pastes (see the README there), and what an ingest says about them.

The corpus scores are held as floors: the reading may get better, never worse."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA

from paperatlas.cli import cli
from paperatlas.cli.common import EXIT_BAD_INPUT, EXIT_WARNINGS
from paperatlas_lab.eval.pastes import eval_pastes, totals
from paperatlas.ingest.formats import parse_list_header
from paperatlas.ingest.textlist import is_author_line, location_of, presentation_of, read_blocks

PASTES = DATA / "pastes"
EXPECT = json.loads((PASTES / "expect.json").read_text(encoding="utf-8"))

# per file: (papers stored, exact titles, exact first authors, abstracts intact, fields kept), as measured
# after the reader was rebuilt (docs/pastes.md has the table before and after); every file is read perfectly
FLOORS = {name: (len(w["papers"]),) * 4 + (sum(len(p["fields"]) for p in w["papers"]),) for name, w in EXPECT.items()}


def run(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def scores() -> dict[str, object]:
    return {s.file: s for s in eval_pastes(PASTES)}


def test_the_corpus_is_read_at_least_as_well_as_measured(scores: dict) -> None:
    assert set(scores) == set(EXPECT)
    low = []
    for name, (stored, titles, authors, abstracts, fields) in FLOORS.items():
        s = scores[name]
        got = (s.titles, s.first_authors, s.abstracts, s.fields)
        if s.stored != stored or got < (titles, authors, abstracts, fields) or not s.venue_year:
            low.append(
                f"{name}: stored {s.stored}/{stored}, titles/authors/abstracts/fields {got}, venue/year {s.venue_year}"
            )
    assert not low, "\n".join(low)
    t = totals(list(scores.values()))
    assert t["stored"] == t["expected"] == 132 and t["fields"] == t["fields_expected"] == 70


def test_the_held_out_pastes_stay_read_as_on_their_first_run() -> None:
    heldout = PASTES / "heldout"
    want = json.loads((heldout / "expect.json").read_text(encoding="utf-8"))
    scores = eval_pastes(heldout)
    assert [s.file for s in scores] == list(want)
    assert all(s.perfect for s in scores), [s.to_dict() for s in scores if not s.perfect]


def test_the_contract_ingest_then_list_json(tmp_path: Path) -> None:
    """`--db DB ingest FILE`, then `list --json --limit 100000`: title, authors, venue, year and the
    presentation/location fields where the paste had them."""
    db = str(tmp_path / "lib.db")
    code, out, err = run("--db", db, "ingest", "--no-embed", str(PASTES / "messy.txt"))
    assert code == 0, err
    assert "5 new" in out and "read 5 papers as a virtual-site page" in err
    code, out, _ = run("--db", db, "list", "--json", "--limit", "100000")
    papers = json.loads(out)
    want = EXPECT["messy.txt"]["papers"]
    assert [p["title"] for p in papers] == [w["title"] for w in want]
    assert [p["authors"][0] for p in papers] == [w["first_author"] for w in want]
    assert papers[4]["authors"][:2] == ["zheng zhang", "Qi Liu"]  # the lower-case author line is authors
    assert {(p["venue"], p["year"]) for p in papers} == {("NeurIPS", 2023)}
    for p, w in zip(papers, want):
        assert {k: p["extra"][k] for k in w["fields"]} == w["fields"]
        assert p["status"] == "Poster"
        assert not p["abstract"].startswith("Abstract")


@pytest.mark.parametrize("name", ["messy.txt", "r-virtual-nolf.txt", "real-md-table.md"])
def test_dry_run_writes_nothing(tmp_path: Path, name: str) -> None:
    db = tmp_path / "new.db"
    code, out, err = run("--db", str(db), "ingest", "--dry-run", str(PASTES / name))
    assert code == 0, err
    assert not db.exists() and list(tmp_path.iterdir()) == []  # not even an empty library file
    n = len(EXPECT[name]["papers"])
    assert f": {n} papers as " in out and "dry run: nothing was written" in err
    for w in EXPECT[name]["papers"]:
        assert w["title"] in out and w["first_author"] in out
    if EXPECT[name]["papers"][0]["fields"].get("poster_position"):
        assert EXPECT[name]["papers"][0]["fields"]["poster_position"] in out


def test_dry_run_leaves_an_existing_library_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    assert run("--db", str(db), "ingest", "--no-embed", str(PASTES / "numbered.txt"))[0] == 0
    before = {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()}
    code, out, _ = run("--db", str(db), "ingest", "--dry-run", "--json", str(PASTES / "r-oneliners.txt"))
    assert code == 0
    d = json.loads(out)
    assert d["dry_run"] and len(d["files"][0]["papers"]) == 8 and d["files"][0]["shape"] == "one line per paper"
    assert {p.name: hashlib.sha1(p.read_bytes()).hexdigest() for p in tmp_path.iterdir()} == before
    assert len(json.loads(run("--db", str(db), "list", "--json")[1])) == 7


DAMAGED = """ICLR 2024 accepted papers

1. Generative Pre-training for Speech with Flow Matching
Alexander H. Liu, Matthew Le, Apoorv Vyas
Generative models have gained more and more attention in recent years for their remarkable success in tasks.
2. Let Models Speak Ciphers: Multiagent Debate through Embeddings
Chau Pham, Boyi Liu, Yingxiang Yang
4. RLIF: Interactive Imitation Learning as Reinforcement Learning
Jianlan Luo, Perry Dong, Yuexiang Zhai
Although reinforcement learning methods offer a powerful framework for automatic skill acquisition, it is hard.
Searching for High-Value Molecules Using Reinforcement Learning and Transformers
Reinforcement learning with text-based representations for molecules is studied here in depth and at length.
"""


def test_damage_is_named_and_the_exit_code_says_so(tmp_path: Path) -> None:
    f = tmp_path / "pasted.txt"
    f.write_text(DAMAGED, encoding="utf-8")
    db = str(tmp_path / "lib.db")
    code, out, err = run("--db", db, "ingest", "--no-embed", str(f))
    assert code == EXIT_WARNINGS, err
    warnings = [ln for ln in err.splitlines() if ln.startswith("warning: ")]
    # a paper without an abstract, by line and title
    assert any("no abstract" in w and "line 6: 'Let Models Speak Ciphers" in w for w in warnings), warnings
    # the numbering disagrees with the papers found
    assert any("numbered 1-4" in w and "numbers missing: 3" in w for w in warnings), warnings
    # a title-like line without its author line went into the abstract above it: named, with the fix
    assert any("line 11" in w and "'RLIF: Interactive" in w and "title-like" in w for w in warnings), warnings
    assert "3 new" in out and "warnings: the papers they name are stored" in err
    code, out, _ = run("--db", db, "ingest", "--no-embed", "--json", str(f))
    assert code == EXIT_WARNINGS and len(json.loads(out)["warnings"]) == len(warnings)
    # the dry run says the same, and exits the same way
    code, _, err2 = run("--db", str(tmp_path / "other.db"), "ingest", "--dry-run", str(f))
    assert code == EXIT_WARNINGS and [ln for ln in err2.splitlines() if ln.startswith("warning: ")] == warnings


def test_dry_run_of_bad_input_exits_3(tmp_path: Path) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text('{"title": "A", "abstract": "B c d."}\n{"nope\n', encoding="utf-8")
    code, _, err = run("--db", str(tmp_path / "x.db"), "ingest", "--dry-run", str(f))
    assert code == EXIT_BAD_INPUT and "line 2" in err and not (tmp_path / "x.db").exists()


def test_a_clean_list_has_no_warnings(tmp_path: Path) -> None:
    for name in ("numbered.txt", "r-virtual-spaced.txt", "r-arxiv-listing.txt", "zhfields.txt"):
        code, _, err = run("--db", str(tmp_path / f"{name}.db"), "ingest", "--no-embed", str(PASTES / name))
        assert code == 0 and "warning:" not in err, (name, err)


@pytest.mark.parametrize(
    "line, want",
    [
        ("COLM 2025 accepted papers (copied from the conference site)", ("COLM", 2025)),
        ("ICML 2024 接收论文列表（从会议官网复制）", ("ICML", 2024)),
        ("Accepted papers at ICLR 2024", ("ICLR", 2024)),
        ("2025年ICML接收论文", ("ICML", 2025)),
        ("NeurIPS 2026 论文列表", ("NeurIPS", 2026)),
        ("# ICLR 2024 papers", ("ICLR", 2024)),
        ("We show in 2023 that our method works on many benchmarks and accepted tasks.", None),
        ("New submissions (showing 6 of 6 entries)", None),
    ],
)
def test_header_sentences_name_venue_and_year(line: str, want: tuple[str, int] | None) -> None:
    got = parse_list_header(line)
    assert (got and (got["venue"], got["year"])) == want if want else got is None


def test_line_classes() -> None:
    assert presentation_of("Poster") == "poster" and presentation_of("San Diego Oral") == "oral"
    assert presentation_of("Spotlight Poster") == "spotlight" and presentation_of("Highlight") == "highlight"
    assert presentation_of("Posterior Sampling for Deep RL") is None
    assert location_of("Exhibit Hall C,D,E #2504") == {"room": "Exhibit Hall C,D,E", "poster_position": "#2504"}
    assert location_of("Great Hall & Hall B1+B2 #600") == {"room": "Great Hall & Hall B1+B2", "poster_position": "#600"}
    assert location_of("We reach a 12% gain over #1.") is None
    assert is_author_line("zheng zhang · Qi Liu · Hao Jiang")
    assert is_author_line("Aaron Archer¹*, Matthew Fahrbach², Kuikui Liu³ and Prakash Prabhu¹†")
    assert is_author_line("Ada Lovelace (University of London), Alan Turing (Princeton)")
    assert not is_author_line("of view and cannot be applied to maximum likelihood training, in a scalable way")


def test_affiliations_in_parentheses_become_fields() -> None:
    text = (
        "Attention Is All You Need\nAshish Vaswani (Google Brain), Noam Shazeer (Google Brain), "
        "Niki Parmar (Google Research)\nThe dominant sequence transduction models are based on complex networks."
    )
    ((_, row),) = read_blocks([(n + 1, ln) for n, ln in enumerate(text.split("\n"))]).rows
    assert row["authors"] == ["Ashish Vaswani", "Noam Shazeer", "Niki Parmar"]
    assert row["affiliations"][2] == {"author": "Niki Parmar", "institution": "Google Research", "country": ""}


def test_tex_in_titles_is_kept_as_written(tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    assert run("--db", db, "ingest", "--no-embed", str(PASTES / "numbered.txt"))[0] == 0
    papers = json.loads(run("--db", db, "list", "--json")[1])
    tex = next(p for p in papers if "Realizable" in p["title"])
    assert "$q^\\pi$-Realizable" in tex["title"]
    assert "q^π" in tex["abstract"] and "$" not in tex["abstract"]  # abstracts are rendered, for reading


def test_the_help_documents_the_exit_codes() -> None:
    code, out, _ = run("ingest", "--help")
    assert code == 0 and "--dry-run" in out
    assert re.search(r"5\s+stored, with warnings", out) and "3 bad input" in out


def test_clean_title_keeps_math_and_dashes_and_strip_braces_spares_math() -> None:
    from paperatlas.ingest.clean import clean_title, strip_braces

    assert (
        clean_title(r"Online RL in Linearly $q^\pi$-Realizable MDPs -- \emph{x}")
        == r"Online RL in Linearly $q^\pi$-Realizable MDPs -- x"
    )
    assert (
        strip_braces(clean_title(r"{$(ε, u)$-Adaptive} the {ELBO} and $\mathcal{O}(n)$"))
        == r"$(ε, u)$-Adaptive the ELBO and $\mathcal{O}(n)$"
    )
    assert clean_title("A plain title") == "A plain title"


def test_et_al_is_not_an_author() -> None:
    from paperatlas.ingest.textlist import split_author_line

    assert is_author_line("Kaiming He, Xiangyu Zhang, Shaoqing Ren, et al.")
    assert split_author_line("Kaiming He, Xiangyu Zhang, Shaoqing Ren, et al.")[0] == [
        "Kaiming He",
        "Xiangyu Zhang",
        "Shaoqing Ren",
    ]
    assert split_author_line("Hao Zhang1,2, Qi Liu3*, Wei Chen1†")[0] == ["Hao Zhang", "Qi Liu", "Wei Chen"]
