"""The report's themes rising by citations: the themes whose papers gather citations fastest (per
paper with a count), beside the most cited papers once `enrich` has run; marked missing, with the
command, before. CoRL's recorded paper lists, citation records stored as `enrich` stores them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.store.citations import CitationRecord

FILES = sorted((Path(__file__).parent / "data" / "paperlists" / "corl").glob("corl*.json"))


@pytest.fixture(scope="module")
def corl(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = str(tmp_path_factory.mktemp("corl") / "corl.db")
    with Library(db, embedder="hashing") as lib:
        lib.ingest(FILES)
        lib.embed()
        lib.topics.build(seed=0)
    return db


def report(db: str, *args: str) -> CliRunner:
    r = CliRunner().invoke(cli, ["--db", db, "report", "--venue", "CoRL", *args])
    assert r.exit_code == 0, r.output
    return r


def test_rising_themes_by_citations_or_the_command_that_adds_them(corl: str, tmp_path: Path) -> None:
    before = json.loads(report(corl, "--json").stdout)
    assert "cited_themes" not in before and "cited" not in before
    assert any("paperatlas enrich --all" in h for h in before["hints"])

    themes = sorted(before["themes"], key=lambda t: -t["papers"])
    small, big = themes[-1], themes[0]  # the smallest theme rises fastest per paper, the largest gathers most
    now = dt.date.today().year
    records = []
    for t, recent, old in ((small, 30, 1), (big, 4, 200)):
        for pid in t["ids"]:
            years = [{"year": now, "cited_by_count": recent}, {"year": now - 5, "cited_by_count": old}]
            records.append(CitationRecord(pid, f"W{abs(hash(pid)) % 10**9}", True, "doi", 1.0, recent + old, years))
    db = str(tmp_path / "copy.db")
    with Library(corl, embedder="hashing") as lib:
        lib.store.copy_to(db)
    with Library(db, embedder="hashing") as lib:
        lib.store.citations.save(records)

    rep = json.loads(report(db, "--json").stdout)
    rising = rep["cited_themes"]
    assert [r["topic"] for r in rising[:2]] == [small["topic"], big["topic"]], rising
    assert rising[0]["velocity"] == 30.0 and rising[0]["papers"] == small["papers"]
    assert rising[1]["cited_by_count"] == 204 * big["papers"]  # the most cited theme, yet not the fastest
    assert rep["cited"] and not any("paperatlas enrich" in h for h in rep["hints"])
    md = report(db).stdout
    assert "## Themes rising fastest by citations" in md and "30.0 citations per paper this year and last" in md
    out = tmp_path / "r.html"
    report(db, "--format", "html", "-o", str(out))
    html = out.read_text(encoding="utf-8")
    assert 'id="cited-themes"' in html and small["label"] in html
    zh = report(db, "--lang", "zh").stdout
    assert "按引用增长最快的主题" in zh
