"""Honest answers from the CLI: read commands never create a library, an empty answer is said
out loud (stderr, exit 4, with the filters and a hint), and the reader commands keep --reader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import EXAMPLES
from paperatlas.cli import EXIT_EMPTY, cli

HASHING = {"PAPERATLAS_EMBEDDER": "hashing"}


def run(runner: CliRunner, db: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(cli, ["--db", str(db), *args], catch_exceptions=False, env={**HASHING, **(env or {})})


@pytest.fixture
def demo_db(runner: CliRunner, tmp_path: Path) -> Path:
    db = tmp_path / "demo.db"
    r = run(runner, db, "ingest", *map(str, EXAMPLES))
    assert r.exit_code == 0, r.output
    return db


READ_COMMANDS = [
    ["search", "user simulators"],
    ["search", "--queries", "QFILE"],
    ["list"],
    ["show", "h123"],
    ["stats"],
    ["serve", "--get", "/search.json?q=x"],
    ["similar", "h123"],
    ["recommend", "--reader", "alice"],
    ["export", "--format", "json"],
    ["export", "--reader", "alice", "--format", "json"],
    ["embed"],
    ["topics"],
    ["topics", "build"],
    ["map", "--out", "MAPFILE"],
    ["readers"],
    ["readers", "add", "alice"],
    ["like", "h123"],
    ["tag", "to-read"],
    ["triage"],
    ["profile"],
    ["digest"],
    ["group", "--readers", "a,b"],
    ["import-reader", "QFILE"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_read_commands_never_create_a_library(runner: CliRunner, tmp_path: Path, args: list[str]) -> None:
    qfile = tmp_path / "queries.txt"
    qfile.write_text("user simulators\n", encoding="utf-8")
    args = [str(qfile) if a == "QFILE" else str(tmp_path / "map.html") if a == "MAPFILE" else a for a in args]
    db = tmp_path / "missing.db"
    r = run(runner, db, *args)
    assert r.exit_code == 1, r.output
    assert f"no library at {db}" in r.stderr and "nothing was created" in r.stderr
    assert "Fix:" in r.stderr and "ingest" in r.stderr
    assert not db.exists() and not list(tmp_path.glob("missing.db*"))


def test_the_default_library_is_not_created_by_a_read(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAPERATLAS_DB", raising=False)
    r = runner.invoke(cli, ["search", "controllable user simulators", "--json"])
    assert r.exit_code == 1 and "paperatlas.db" in r.stderr
    assert not (tmp_path / "paperatlas.db").exists()


def test_ingest_creates_the_library(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    assert run(runner, db, "ingest", "--no-embed", str(EXAMPLES[0])).exit_code == 0
    assert db.exists()


def test_search_json_is_the_envelope_every_surface_gives(runner: CliRunner, demo_db: Path) -> None:
    """The CLI's answer is `Hits.to_dict`, as the web's `.json` and MCP: the total, the page, the
    filters and the notes beside the hits (a bare list said none of them)."""
    from paperatlas import Library

    r = run(runner, demo_db, "search", "user simulators", "--limit", "2", "--mode", "keyword", "--json")
    assert r.exit_code == 0, r.output
    answer = json.loads(r.stdout)
    with Library(str(demo_db), create=False) as lib:
        expected = lib.search("user simulators", "keyword", 2)
        keys = set(expected.to_dict())
    assert set(answer) == keys
    assert (answer["query"], answer["mode"], answer["page"], answer["per_page"]) == ("user simulators", "keyword", 1, 2)
    assert answer["total"] == expected.total > len(answer["hits"]) == 2 and answer["has_more"] is True
    assert [h["id"] for h in answer["hits"]] == [h.paper.id for h in expected]


def test_empty_search_is_said_with_filters_and_hint(runner: CliRunner, demo_db: Path) -> None:
    r = run(runner, demo_db, "search", "user simulators", "--venue", "Nowhere", "--json")
    assert r.exit_code == EXIT_EMPTY
    answer = json.loads(r.stdout)
    assert answer["hits"] == [] and answer["total"] == 0 and answer["filters"] == {"venue": "Nowhere"}
    assert "nothing found" in r.stderr and "venue=Nowhere" in r.stderr and "mode=hybrid" in r.stderr
    assert "Hint:" in r.stderr and "--venue" in r.stderr
    r = run(runner, demo_db, "search", "zzqxjv", "--mode", "keyword")
    assert r.exit_code == EXIT_EMPTY and r.stdout == ""
    assert "no papers match 'zzqxjv'" in r.stderr and "--mode hybrid" in r.stderr


def test_an_empty_query_is_a_usage_error_not_an_empty_result(runner: CliRunner, demo_db: Path) -> None:
    for blank in ("", "   "):
        r = run(runner, demo_db, "search", blank)
        assert r.exit_code == 2, r.output
        assert "the query is empty" in r.stderr and "--author" in r.stderr
    # a blank query beside a filter that selects papers on its own is that filter's search (the
    # examples name no authors, so it is answered as an author search that found no one)
    r = run(runner, demo_db, "search", "", "--author", "a", "--json")
    assert r.exit_code == EXIT_EMPTY and "the query is empty" not in r.stderr
    assert "no papers by an author matching 'a'" in r.stderr


def test_empty_list_export_and_batch_search(runner: CliRunner, demo_db: Path, tmp_path: Path) -> None:
    r = run(runner, demo_db, "list", "--year", "1999")
    assert r.exit_code == EXIT_EMPTY and "year=1999" in r.stderr and "paperatlas stats" in r.stderr
    r = run(runner, demo_db, "list", "--offset", "500")
    assert r.exit_code == EXIT_EMPTY and "past the end" in r.stderr and "29 papers" in r.stderr
    r = run(runner, demo_db, "export", "--venue", "Nowhere")
    assert r.exit_code == EXIT_EMPTY and r.stdout == "" and "venue=Nowhere" in r.stderr
    q = tmp_path / "q.txt"
    q.write_text("zzqxjv\nuser simulators\n", encoding="utf-8")
    r = run(runner, demo_db, "search", "--queries", str(q), "--json", "--mode", "keyword")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["hits"] == [] for x in lines] == [True, False]
    assert r.exit_code == 0 and "1 of 2 queries found nothing" in r.stderr
    q.write_text("zzqxjv\n", encoding="utf-8")
    r = run(runner, demo_db, "search", "--queries", str(q), "--json", "--mode", "keyword")
    assert r.exit_code == EXIT_EMPTY and json.loads(r.stdout)["hits"] == []


def test_list_shows_the_total(runner: CliRunner, demo_db: Path) -> None:
    r = run(runner, demo_db, "list", "--limit", "5")
    assert "papers 1-5 of 29" in r.stdout
    assert "29 papers" in run(runner, demo_db, "list").stdout


def test_empty_reader_answers_keep_the_reader(runner: CliRunner, demo_db: Path) -> None:
    r = run(runner, demo_db, "recommend", "--reader", "alice", "--venue", "Nowhere")
    assert r.exit_code == EXIT_EMPTY and "reader=alice" in r.stderr and "venue=Nowhere" in r.stderr
    assert "drop --venue" in r.stderr
    r = run(runner, demo_db, "tag", "to-read", "--reader", "alice")
    assert r.exit_code == EXIT_EMPTY and "no papers tagged 'to-read' by alice" in r.stderr
    assert "paperatlas tag to-read ID --reader alice" in r.stderr
    r = run(runner, demo_db, "topics")
    assert r.exit_code == 1 and "topics build" in r.stderr  # not built yet: an error with its fix


def test_triage_hint_keeps_the_reader(runner: CliRunner, demo_db: Path) -> None:
    r = run(runner, demo_db, "triage", "--reader", "alice")
    assert r.exit_code == 0, r.output
    answer = next(x for x in r.stdout.splitlines() if x.startswith("answer:"))
    assert answer.count("--reader alice") == 2
    # the printed command, run as printed, records the answer for alice, not for "me"
    cmd = answer.removeprefix("answer: paperatlas ").split("   (")[0].split()
    assert run(runner, demo_db, *cmd).exit_code == 0
    prof = json.loads(run(runner, demo_db, "profile", "--reader", "alice", "--json").stdout)
    assert prof["choices"] == 1
    assert json.loads(run(runner, demo_db, "profile", "--json").stdout)["choices"] == 0


def test_tag_takes_either_order_and_names_a_wrong_argument(runner: CliRunner, demo_db: Path) -> None:
    ids = [p["id"] for p in json.loads(run(runner, demo_db, "list", "--json", "--limit", "2").stdout)]
    r = run(runner, demo_db, "tag", ids[0], "to-read", "--reader", "alice")
    assert r.exit_code == 0 and "tagged 1 paper 'to-read' for alice" in r.stdout
    r = run(runner, demo_db, "tag", "to-read", ids[1], "--reader", "alice")
    assert r.exit_code == 0
    listed = json.loads(run(runner, demo_db, "tag", "to-read", "--reader", "alice", "--json").stdout)
    assert sorted(x["id"] for x in listed) == sorted(ids)
    r = run(runner, demo_db, "tag", "to-read", ids[0], "nope/123")
    assert r.exit_code == 1
    assert "argument 3 ('nope/123') is no paper id" in r.stderr and "paperatlas tag TAG ID..." in r.stderr
    # nothing was half-tagged for the default reader
    assert run(runner, demo_db, "tag", "to-read", "--json").exit_code == EXIT_EMPTY


def test_export_reader_likes_to_stdout(runner: CliRunner, demo_db: Path) -> None:
    papers = json.loads(run(runner, demo_db, "list", "--json", "--limit", "3").stdout)
    assert all(isinstance(p["authors"], list) and p["title"] and p["venue"] and p["year"] for p in papers)
    ids = [p["id"] for p in papers]
    assert run(runner, demo_db, "like", ids[0], ids[2], "--reader", "alice").exit_code == 0
    assert run(runner, demo_db, "like", ids[1], "--reader", "bob").exit_code == 0
    r = run(runner, demo_db, "export", "--reader", "alice", "--format", "json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert [p["id"] for p in got] == [ids[0], ids[2]]
    assert all({"title", "authors", "venue", "year"} <= set(p) for p in got)
    r = run(runner, demo_db, "export", "--reader", "carol", "--format", "json")
    assert r.exit_code == 1 and "no reader 'carol'" in r.stderr
    run(runner, demo_db, "readers", "add", "dave")
    r = run(runner, demo_db, "export", "--reader", "dave", "--format", "json")
    assert r.exit_code == EXIT_EMPTY and "dave has liked no papers" in r.stderr
    assert "paperatlas like ID --reader dave" in r.stderr


def test_triage_on_an_empty_library_says_it_is_empty(runner: CliRunner, db_path: Path) -> None:
    # issue 16 #8: it used to claim "every paper has been judged" with no papers at all
    from paperatlas import Library

    Library(db_path).close()  # an existing library file with no papers
    r = run(runner, db_path, "triage")
    assert r.exit_code == EXIT_EMPTY and "has 0 paper(s)" in r.stderr and "been judged" not in r.stderr
    assert "paperatlas ingest" in r.stderr
