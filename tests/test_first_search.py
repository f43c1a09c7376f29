"""Time to first search: stored papers are keyword-searchable before any embedding, hybrid uses the
vectors that exist and says how many papers still wait, and `serve` embeds them in the background."""

from __future__ import annotations

import json
import os
import time
import urllib.request
from pathlib import Path

from click.testing import CliRunner
from starlette.testclient import TestClient

from conftest import EXAMPLES
from paperatlas import Library
from paperatlas.bench.http import start_server, stop_server
from paperatlas.cli import cli
from paperatlas.web import create_app


def test_stored_papers_are_keyword_searchable_before_embedding(tmp_path: Path) -> None:
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest(EXAMPLES)
    assert lib.embedding_status() == {"model": lib.embedder.id, "papers": 29, "embedded": 0, "waiting": 29}
    assert lib.search("user simulators", mode="keyword")
    assert lib.search("user simulators", mode="hybrid")  # keyword only, for now
    lib.embed()
    assert lib.embedding_status()["waiting"] == 0
    lib.close()


def test_cli_says_how_many_papers_wait(tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    env = {"PAPERATLAS_EMBEDDER": "hashing"}
    r = CliRunner().invoke(cli, ["--db", db, "ingest", "--no-embed", *map(str, EXAMPLES)], env=env)
    assert r.exit_code == 0
    r = CliRunner().invoke(cli, ["--db", db, "search", "user simulators", "--json"], env=env)
    assert r.exit_code == 0 and json.loads(r.stdout)["hits"]
    assert "none of the 29 papers is embedded yet" in r.stderr
    r = CliRunner().invoke(cli, ["--db", db, "search", "user simulators", "--mode", "keyword"], env=env)
    assert "embedded" not in r.stderr
    # half embedded: hybrid uses the vectors there are and says how many papers wait
    lib = Library(db, embedder="hashing")
    lib.embed()
    extra = tmp_path / "more.txt"
    extra.write_text("ICML 2026\n\nWe study graph neural networks for molecules and show they work well.\n", "utf-8")
    lib.ingest([extra])
    lib.close()
    r = CliRunner().invoke(cli, ["--db", db, "search", "graph neural networks", "--json"], env=env)
    assert r.exit_code == 0 and any(h["abstract"].startswith("We study graph") for h in json.loads(r.stdout)["hits"])
    assert "1 of 30 papers are not embedded yet: they match by keyword only" in r.stderr
    r = CliRunner().invoke(cli, ["--db", db, "ingest", str(extra), *map(str, EXAMPLES)], env=env)
    assert "keyword search works now; embedding 1 papers" in r.stderr
    r = CliRunner().invoke(cli, ["--db", db, "search", "graph neural networks", "--json"], env=env)
    assert "not embedded" not in r.stderr


def test_web_banner_stats_and_search_json_say_what_waits(tmp_path: Path) -> None:
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest(EXAMPLES)
    with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
        page = c.get("/search?q=user+simulators").text
        assert "Search by meaning covers 0 of 29 papers so far" in page
        assert c.get("/search.json?q=user+simulators").json()["not_embedded"] == 29
        assert c.get("/search.json?q=user+simulators&mode=keyword").json()["not_embedded"] == 0
        assert c.get("/stats.json").json()["embedding"]["waiting"] == 29
        assert "0 of 29 papers (0%)" in c.get("/stats").text
        lib.embed()
        assert "Search by meaning covers" not in c.get("/search?q=user+simulators").text
        assert c.get("/stats.json").json()["embedding"]["embedded"] == 29
    lib.close()


def test_serve_embeds_in_the_background(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    lib = Library(db, embedder="hashing")
    lib.ingest(EXAMPLES)
    lib.close()
    proc, port = start_server(str(db), env={**os.environ, "PAPERATLAS_EMBEDDER": "hashing"})
    try:
        deadline = time.monotonic() + 60
        status: dict = {}  # type: ignore[type-arg]
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats.json") as resp:
                status = json.loads(resp.read())["embedding"]
            if status["waiting"] == 0:
                break
            time.sleep(0.2)
        assert status["embedded"] == 29 and status["waiting"] == 0
    finally:
        stop_server(proc)
    out = proc.stdout.read() if proc.stdout else ""
    assert "embedded 29 of 29 papers" in out  # the progress line (the announcement comes before the URL)
