"""The shortcuts that keep a long paste fast (ingest/textlist.py) decide exactly as the whole test
does, and `paperatlas bench paste` measures the reader beside its baselines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import DATA

from paperatlas.cli import cli
from paperatlas.ingest import textlist

PASTES = DATA / "pastes"
EXPECT = json.loads((PASTES / "expect.json").read_text(encoding="utf-8"))

NAMES = [
    "Ada Lovelace",
    "zheng zhang",
    "Hao Zhang2*",
    "Aaron Archer¹*",
    "Ludwig van Beethoven",
    "Qi Liu1,3",
    "\u202aYotam Alexander\u202c",
    "Niki Parmar (Google Research)",
    "张三",
]


def long_author_lines() -> list[str]:
    """Author lines past the prefix the shortcut reads, cut at every kind of place."""
    out = []
    for sep in (", ", "; ", " · ", " and "):
        for k in range(len(NAMES)):
            names = (NAMES[k:] + NAMES[:k]) * 5
            out += [sep.join(names), sep.join(names) + ", et al.", sep.join(names[:-1]) + " and " + names[-1]]
    return out


def corpus_lines() -> list[str]:
    files = [p for p in PASTES.rglob("*") if p.suffix in (".txt", ".md") and p.name != "README.md"]
    lines = {ln.strip() for p in files for ln in p.read_text(encoding="utf-8").split("\n") if ln.strip()}
    for want in EXPECT.values():
        lines |= {p["abstract"] for p in want["papers"] if p["abstract"]}
    return sorted(lines)


def test_long_author_lines_stay_author_lines() -> None:
    lines = long_author_lines()
    assert all(len(s) > textlist._PREFIX_CHARS for s in lines)
    assert all(not textlist._prefix_has_no_name(s) for s in lines)
    assert all(textlist.is_author_line.__wrapped__(s) for s in lines)


def test_the_prefix_shortcut_decides_as_the_whole_line_test(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = corpus_lines() + long_author_lines()
    fast = [textlist.is_author_line.__wrapped__(s) for s in lines]
    monkeypatch.setattr(textlist, "_PREFIX_CHARS", 10**9)  # the shortcut off: every line split whole
    textlist._author_parts.cache_clear()
    whole = [textlist.is_author_line.__wrapped__(s) for s in lines]
    assert fast == whole
    # the shortcut did turn lines away before the whole split (else this test proves nothing)
    monkeypatch.setattr(textlist, "_PREFIX_CHARS", 240)
    assert sum(textlist._prefix_has_no_name(s) for s in lines if len(s) > 240) >= 20


def test_et_al_only_where_the_line_ends_with_it() -> None:
    assert textlist._drop_et_al("Kaiming He, Xiangyu Zhang, et al.") == "Kaiming He, Xiangyu Zhang"
    assert textlist._drop_et_al("Kaiming He, Xiangyu Zhang ET AL  ") == "Kaiming He, Xiangyu Zhang"
    assert textlist._drop_et_al("张三，李四 等") == "张三，李四"
    assert textlist._drop_et_al("et al. in the middle, Ada Lovelace") == "et al. in the middle, Ada Lovelace"


def test_bench_paste_reads_every_title_and_prints_its_baselines(tmp_path: Path) -> None:
    records = [
        {"title": p["title"], "authors": [p["first_author"], "Ada Lovelace"], "abstract": p["abstract"]}
        for w in EXPECT.values()
        for p in w["papers"]
        if p["abstract"] and p["first_author"] and "\n" not in p["title"]
    ][:40]
    src = tmp_path / "records.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    res = CliRunner().invoke(cli, ["bench", "paste", str(src), "--repeats", "1", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    shapes = out["shapes"]
    assert out["papers"] == len(records) == 40
    assert set(shapes) == {
        "numbered, no blank lines",
        "title blocks, blank lines",
        "baseline: untitled abstracts (seed shape)",
        "baseline: JSON lines",
    }
    assert shapes["baseline: JSON lines"]["exact_titles"] == 40
    assert shapes["numbered, no blank lines"]["rows"] == 40
    assert shapes["numbered, no blank lines"]["exact_titles"] >= 38
    assert shapes["title blocks, blank lines"]["exact_titles"] >= 38
    assert shapes["numbered, no blank lines"]["cpu_vs_jsonl"] > 0
    table = CliRunner().invoke(cli, ["bench", "paste", str(src), "--repeats", "1"]).stdout
    assert "vs jsonl" in table and "baseline: JSON lines" in table
