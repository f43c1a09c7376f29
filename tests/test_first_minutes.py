"""The small stumbles of a newcomer's first ten minutes: each test failed before its fix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.search.snippets import highlight

from sourceserver import SourceServer

COLT = (Path(__file__).parent / "data" / "sources" / "colt2024.json").read_bytes()


@pytest.fixture
def server() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/colt/colt2024.json": COLT}).start()
    yield s
    s.stop()


# -- fetch into a new library ---------------------------------------------------------------------
def test_a_failed_fetch_into_a_new_db_leaves_no_library_file(server: SourceServer, tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    server.faults["/colt/colt2024.json"] = ["503"] * 10
    r = CliRunner().invoke(
        cli,
        [
            "--db",
            str(db),
            "fetch",
            "paperlists",
            "colt",
            "2024",
            "--base-url",
            server.url,
            "--retries",
            "0",
            "--no-embed",
        ],
    )
    assert r.exit_code == 1 and "Fix:" in r.output, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # bad arguments: no file either
    r = CliRunner().invoke(cli, ["--db", str(db), "fetch", "paperlists", "colt", "--no-embed"])
    assert r.exit_code == 1 and not db.exists(), r.output


def test_a_failed_fetch_keeps_an_existing_library(server: SourceServer, tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    Library(db).close()  # existed before, even empty: the user made it, it stays
    server.faults["/colt/colt2024.json"] = ["503"] * 10
    r = CliRunner().invoke(
        cli,
        [
            "--db",
            str(db),
            "fetch",
            "paperlists",
            "colt",
            "2024",
            "--base-url",
            server.url,
            "--retries",
            "0",
            "--no-embed",
        ],
    )
    assert r.exit_code == 1 and db.exists(), r.output


def test_follow_after_a_fetch_of_the_same_source_knows_it_was_fetched(server: SourceServer, tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    runner = CliRunner()
    args = ["paperlists", "colt", "2024", "--base-url", server.url]
    r = runner.invoke(cli, ["--db", db, "fetch", *args, "--no-embed"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["--db", db, "follow", *args])
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["--db", db, "follow"])
    assert "not fetched yet" not in r.output and "fetched before following" in r.output, r.output
    assert "\t-\t" not in r.output  # the time of that fetch, not "-"
    # a later one-off fetch of a followed source is its latest run
    r = runner.invoke(cli, ["--db", db, "fetch", *args, "--no-embed"])
    r = runner.invoke(cli, ["--db", db, "follow", "--json"])
    row = json.loads(r.output)[0]
    assert "0 new" in row["last_summary"] and row["last_run_at"], row


# -- snippets ------------------------------------------------------------------------------------
def test_snippets_do_not_mark_stop_words() -> None:
    s = highlight(
        "Methods for learning a model of the world for agents", ["methods", "for", "the", "world"], whole=True
    )
    assert s == "<mark>Methods</mark> for learning a model of the <mark>world</mark> for agents"


def test_search_snippet_of_a_real_query_marks_no_stop_word(examples_library: Library) -> None:
    hits = examples_library.search("adaptation for the language models", mode="keyword", limit=5)
    assert hits and any("<mark>" in h.snippet.html() for h in hits)
    for h in hits:
        for stop in ("for", "the", "For", "The"):
            assert f"<mark>{stop}</mark>" not in h.snippet.html()


# -- recommend -----------------------------------------------------------------------------------
def test_recommend_shows_no_negative_scores(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Library(db, embedder="hashing") as lib:
        lib.ingest(EXAMPLES)
        lib.embed()
        ids = [p.id for p in lib.papers(limit=100)]
        lib.readers.set_feedback("me", ids[:2], "like")
        lib.readers.set_feedback("me", ids[2:4], "dislike")
    r = CliRunner().invoke(cli, ["--db", str(db), "recommend", "--limit", "100", "--json"])
    assert r.exit_code == 0, r.output
    scores = [h["score"] for h in json.loads(r.output)]
    assert len(scores) == len(ids) - 4
    assert all(0.0 <= s <= 1.0 for s in scores), scores
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[-1]
    r = CliRunner().invoke(cli, ["--db", str(db), "recommend", "--limit", "100"])
    assert r.exit_code == 0 and "· -" not in r.output, r.output
