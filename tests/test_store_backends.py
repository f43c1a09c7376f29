"""The store contract, run against both backends: SQLite (a file) and PostgreSQL (a real server
started by the test session, see tests/pgserver.py). Issue 15."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from paperatlas import Library
from paperatlas.errors import PaperatlasError
from paperatlas.store.copy import copy_library
from paperatlas.store.postgres import redact, translate, translate_ddl

from conftest import EXAMPLES
from pgserver import fresh_db_name

N_EXAMPLES = 29  # the papers of the two bundled example lists

PAPERS = [
    {
        "id": "p-diffusion",
        "title": "Designability of protein backbones with diffusion models",
        "abstract": "We study diffusion generative models for protein backbone design and their designability.",
        "authors": ["Ada Lovelace", "Alan Turing"],
        "venue": "ICML",
        "year": 2024,
    },
    {
        "id": "p-graph",
        "title": "Signed graph link prediction with copulas",
        "abstract": "Gaussian copula models for edge dependency in signed graphs.",
        "authors": ["Grace Hopper"],
        "venue": "ICLR",
        "year": 2024,
    },
    {
        "id": "p-rl",
        "title": "Reinforcement learning for reasoning in language models",
        "abstract": "Policy optimisation improves chain of thought reasoning of large language models.",
        "authors": ["Alan Turing"],
        "venue": "NeurIPS",
        "year": 2023,
    },
]


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "lib.db")
    return request.getfixturevalue("pg_server").url(fresh_db_name())


def _jsonl(tmp_path: Path, papers: list[dict] = PAPERS) -> Path:
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    return f


def test_ingest_is_idempotent(url: str, tmp_path: Path) -> None:
    with Library(url, embedder="hashing") as lib:
        first = lib.ingest([_jsonl(tmp_path), *EXAMPLES])
        again = lib.ingest([_jsonl(tmp_path), *EXAMPLES])
        assert first.new == 3 + N_EXAMPLES and again.new == 0 and again.unchanged == first.new
        assert lib.count() == first.new
        p = lib.get("p-diffusion")
        assert p.authors == ["Ada Lovelace", "Alan Turing"] and p.year == 2024
        assert lib.count(venue="icml") == 1 and lib.count(year=2024) == 2
        assert [x.id for x in lib.papers(venue="ICLR", year=2024)] == ["p-graph"]


def test_edit_and_alias(url: str, tmp_path: Path) -> None:
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path)])
        changed = [dict(PAPERS[0], abstract=PAPERS[0]["abstract"] + " Now with more samples.")]
        report = lib.ingest([_jsonl(tmp_path, changed)])
        assert report.updated == 1
        assert lib.get("p-diffusion").abstract.endswith("more samples.")


def test_search_modes(url: str, tmp_path: Path) -> None:
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path), *EXAMPLES])
        lib.embed()
        for mode in ("keyword", "semantic", "hybrid"):
            hits = lib.search("protein backbone diffusion designability", mode=mode, limit=5)
            assert hits and hits[0].paper.id == "p-diffusion", mode
        hits = lib.search("copula", mode="keyword", venue="ICLR", limit=5)
        assert [h.paper.id for h in hits][:1] == ["p-graph"]


def test_fts5_index_on_both(url: str, tmp_path: Path) -> None:
    """The optional `fts5` keyword index: SQLite's FTS5, or PostgreSQL's own full-text search."""
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path), *EXAMPLES])
        hits = lib.store.fts_search('"designability"', 5)
        assert hits and hits[0][0] == "p-diffusion"
        assert lib.store.fts_search('"zzzqqqxx"', 5) == []


def test_a_second_connection_sees_writes_at_once(url: str, tmp_path: Path) -> None:
    """What the two-host setup relies on: a like written through one Library (host) is seen by another."""
    with Library(url, embedder="hashing") as a, Library(url, embedder="hashing") as b:
        a.ingest([_jsonl(tmp_path)])
        assert b.count() == 3
        a.readers.set_feedback("alice", ["p-rl"], "like")
        assert [p.id for p in b.readers.liked("alice")] == ["p-rl"]
        before = b.store.data_version()
        a.ingest([_jsonl(tmp_path, [dict(PAPERS[1], id="p-new", title="A new paper on graphs")])])
        assert b.store.data_version() != before
        assert any(h.paper.id == "p-new" for h in b.search("new paper graphs", mode="keyword", limit=5))


def test_personal_data(url: str, tmp_path: Path) -> None:
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path)])
        lib.readers.set_feedback("alice", ["p-rl", "p-graph"], "like")
        lib.readers.set_feedback("alice", ["p-graph"], "dislike")  # a dislike replaces the like
        lib.readers.set_feedback("bob", ["p-diffusion"], "like")
        assert [p.id for p in lib.readers.liked("alice")] == ["p-rl"]
        lib.readers.tag("alice", ["p-rl"], "to-read")
        lib.readers.tag("alice", ["p-rl"], "to-read")  # twice: still one tag
        lib.readers.note("alice", "p-rl", "read section 3")
        lib.readers.note("alice", "p-rl", "read section 4")
        alice = lib.readers.get("alice")
        assert lib.store.readers.tags(alice.id) == {"p-rl": ["to-read"]}
        assert lib.store.readers.notes(alice.id) == {"p-rl": "read section 4"}
        lib.store.readers.save_search(alice.id, "rl", "reinforcement", {"year": 2023})
        lib.store.readers.save_search(alice.id, "rl", "reinforcement learning", {})  # same name: replaced
        assert [s["query"] for s in lib.store.readers.saved_searches(alice.id)] == ["reinforcement learning"]
        assert sorted(r.name for r in lib.readers.all()) == ["alice", "bob"]


def test_vectors_round_trip(url: str, tmp_path: Path) -> None:
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path)])
        assert lib.embed() == 3
        ids, mat = lib.store.load_vectors(lib.embedder.id)
        assert ids == ["p-diffusion", "p-graph", "p-rl"] and mat.dtype == np.float32 and mat.shape[0] == 3
        assert lib.embed() == 0  # nothing left to embed


@pytest.mark.parametrize("direction", ["sqlite->postgres", "postgres->sqlite"])
def test_copy_between_stores(direction: str, tmp_path: Path, pg_server) -> None:
    file_url, pg_url = str(tmp_path / "a.db"), pg_server.url(fresh_db_name("copy"))
    src_url, dst_url = (file_url, pg_url) if direction == "sqlite->postgres" else (pg_url, file_url)
    with Library(src_url, embedder="hashing") as a:
        a.ingest([_jsonl(tmp_path), *EXAMPLES])
        a.embed()
        a.readers.set_feedback("alice", ["p-rl"], "like")
        a.readers.note("alice", "p-rl", "good")
        a.store.readers.save_search(a.readers.get("alice").id, "rl", "reinforcement", {})
        ids_a, mat_a = a.store.load_vectors(a.embedder.id)
        token = a.readers.get("alice").token
    with Library(src_url) as a, Library(dst_url) as b:
        counts = copy_library(a.store, b.store)
        assert counts["papers"] == 3 + N_EXAMPLES and counts["vectors"] == 3 + N_EXAMPLES and counts["feedback"] == 1
    with Library(dst_url, embedder="hashing") as b:
        assert b.count() == 3 + N_EXAMPLES
        ids_b, mat_b = b.store.load_vectors(b.embedder.id)
        assert ids_b == ids_a and np.array_equal(mat_a, mat_b)
        assert [p.id for p in b.readers.liked("alice")] == ["p-rl"] and b.readers.get("alice").token == token
        assert b.store.fts_search('"designability"', 5)[0][0] == "p-diffusion"
        # new rows after a copy get fresh ids (the identity sequences moved past the copied ones)
        b.readers.set_feedback("carol", ["p-graph"], "like")
        b.store.readers.save_search(b.readers.get("carol").id, "g", "graphs", {})
        assert b.readers.get("carol").id > b.readers.get("alice").id
        b.ingest([_jsonl(tmp_path, [dict(PAPERS[1], id="p-after", title="Written after the copy")])])
        assert b.count() == 4 + N_EXAMPLES
        with pytest.raises(PaperatlasError, match="already holds papers"):
            copy_library(Library(src_url).store, b.store)


def test_concurrent_writers_lose_nothing(url: str, tmp_path: Path) -> None:
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path)])
    errors: list[BaseException] = []

    def writer(name: str) -> None:
        try:
            with Library(url, embedder="hashing") as lib:
                for i in range(15):
                    lib.readers.set_feedback(name, [PAPERS[i % 3]["id"]], "like")
                    lib.readers.tag(name, [PAPERS[i % 3]["id"]], f"t{i}")
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(f"r{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with Library(url) as lib:
        for i in range(4):
            r = lib.readers.get(f"r{i}", create=False)
            assert len(lib.readers.liked(r)) == 3
            assert sum(len(v) for v in lib.store.readers.tags(r.id).values()) == 15


def test_unreachable_postgres_says_where_and_how() -> None:
    with pytest.raises(PaperatlasError) as e:
        Library("postgresql://nobody:secret@127.0.0.1:1/none")
    assert "127.0.0.1:1" in str(e.value) and "secret" not in str(e.value)
    assert "PostgreSQL" in e.value.fix if hasattr(e.value, "fix") else True


def test_dialect() -> None:
    keys = {
        "feedback": [("reader_id", "paper_id", "kind")],
        "saved_searches": [("id",), ("reader_id", "name")],
        "meta": [("key",)],
    }
    assert translate("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", keys) == (
        "INSERT INTO meta (key, value) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"
    )
    assert translate("INSERT OR REPLACE INTO saved_searches(reader_id, name, query) VALUES (?, ?, ?)", keys).endswith(
        "ON CONFLICT (reader_id, name) DO UPDATE SET query = EXCLUDED.query"
    )
    assert translate("INSERT OR IGNORE INTO tags(a, b) VALUES (?, ?)", keys).endswith("ON CONFLICT DO NOTHING")
    assert translate("PRAGMA journal_mode=WAL", keys) is None
    assert "to_char(now() AT TIME ZONE 'UTC'" in translate(
        "UPDATE papers SET t=strftime('%Y-%m-%dT%H:%M:%SZ', 'now')", keys
    )
    assert translate_ddl("CREATE VIRTUAL TABLE papers_fts USING fts5(title)") is None
    ddl = translate_ddl("CREATE TABLE v (id INTEGER PRIMARY KEY, vec BLOB NOT NULL, x REAL) WITHOUT ROWID")
    assert (
        ddl
        == "CREATE TABLE v (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, vec BYTEA NOT NULL, x DOUBLE PRECISION)"
    )
    assert redact("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"


def test_cli_on_both(url: str, tmp_path: Path, runner) -> None:
    """The commands of the issue's contract, with --db a file or a postgresql:// URL."""
    from paperatlas.cli import cli

    def run(*args: str) -> str:
        res = runner.invoke(cli, ["--db", url, *args])
        assert res.exit_code == 0, res.output
        return res.output

    assert "new" in run("ingest", "--no-embed", str(_jsonl(tmp_path)))
    with Library(url, embedder="hashing") as lib:
        lib.embed()
    hits = json.loads(run("search", "protein backbone designability", "--json", "--limit", "3"))["hits"]
    assert hits[0]["id"] == "p-diffusion"
    run("like", "p-rl", "--reader", "alice")
    out = tmp_path / "v.jsonl"
    run("export", "--format", "jsonl", "--with-vectors", "-o", str(out))
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    with Library(url) as lib:
        dims = lib.vectors()["p-rl"].shape[0]
    assert len(rows) == 3 and all(len(r["vector"]) == dims for r in rows)
    assert f"{redact(url)}: 3 papers" in run("stats")


def test_follow_and_fetch_position_round_trip(url: str) -> None:
    """Subscriptions and fetch positions (issue 13) on both backends."""
    with Library(url, embedder="hashing") as lib:
        key, created = lib.sources.follow("paperlists", ["colm", "2025"], base_url="http://127.0.0.1:9")
        assert (key, created) == ("paperlists colm 2025", True)
        assert lib.sources.follow("paperlists", ["colm", "2025"], base_url="http://127.0.0.1:10") == (key, False)
        lib.sources.follow("paperlists", ["colt", "2024"])
        (f, g) = lib.sources.follows()
        assert f.key == key and f.args == ["colm", "2025"] and f.options == {"base_url": "http://127.0.0.1:10"}
        lib.store.sources.record_follow_run(key, "2 new", "")
        lib.store.sources.set_source_state(key, {"offset": 1000})
        lib.store.sources.set_source_state(key, {"offset": 2000})
    with Library(url) as lib:
        assert lib.sources.follows()[0].last_summary == "2 new" and lib.store.sources.source_state(key) == {
            "offset": 2000
        }
        assert lib.sources.unfollow("paperlists", ["colt", "2024"]) == "paperlists colt 2024"
        assert [x.key for x in lib.sources.follows()] == [key]


def test_preprint_and_venue_version_become_one_paper(url: str) -> None:
    """Issue 13: the venue version absorbs the stored arXiv preprint (likes move over) on both backends."""
    data = Path(__file__).parent / "data"
    with Library(url, embedder="hashing") as lib:
        lib.ingest([data / "arxiv_snapshot.jsonl"])
        lib.readers.set_feedback("me", ["1706.03762"], "like")
        report = lib.ingest([data / "sources" / "nips2017.json"])
        assert report.merged == 1 and lib.count() == 4
        assert lib.get("1706.03762").id == "9372" and [p.id for p in lib.readers.liked("me")] == ["9372"]
        assert lib.links("9372")["arxiv"] == "https://arxiv.org/abs/1706.03762"


def test_write_lock_makes_a_second_writer_wait_and_says_so(url: str) -> None:
    """Two libraries on one store (as two processes would be): the second ingest waits, told why (issue 16 #6)."""
    import time

    a, b = Library(url, embedder="hashing"), Library(url, embedder="hashing")
    heard: list[str] = []
    done = threading.Event()

    def second() -> None:
        with b.store.write_lock(heard.append):
            done.set()

    with a.store.write_lock():
        t = threading.Thread(target=second)
        t.start()
        deadline = time.monotonic() + 20
        while not heard and time.monotonic() < deadline:
            time.sleep(0.02)
        assert heard and "waiting for it to finish" in heard[0], heard
        assert not done.is_set()  # still waiting while the first holds it
    t.join(20)
    assert done.is_set()
    with a.store.write_lock(heard.append), a.store.write_lock(heard.append):  # reentrant, no wait
        pass
    assert len(heard) == 1
    a.close()
    b.close()


def test_programme_events_on_both(url: str) -> None:
    """A conference programme (events, the papers' presentation fields, changes) on both backends."""
    from sourceserver import SourceServer

    feed = json.loads((Path(__file__).parent / "data" / "programme" / "neurips-2025-orals-posters.json").read_text())
    path = "/static/virtual/data/neurips-2025-orals-posters.json"
    srv = SourceServer({path: json.dumps(feed).encode()}).start()
    try:
        with Library(url, embedder="hashing") as lib:
            report = lib.sources.fetch("virtual", ["neurips", "2025"], base_url=srv.url)
            assert report.new == 3 and any("3 events" in n for n in report.notes)
            lib.readers.set_feedback("me", ["7HVADbW8fh"], "like")
            feed["results"][0]["room_name"] = "Hall A"
            srv.routes[path] = json.dumps(feed).encode()
            report = lib.sources.fetch("virtual", ["neurips", "2025"], base_url=srv.url)
            assert any("1 moved" in n for n in report.notes)
        with Library(url) as lib:
            (e,) = lib.programme.events_for("7HVADbW8fh")
            assert (e.room, e.poster_position, e.start) == ("Hall A", "#2504", "2025-12-05T16:30:00-08:00")
            assert lib.get("7HVADbW8fh").extra["room"] == "Hall A"
            assert lib.programme.agenda("me", recommended=0).to_dict()["sessions"][0]["papers"] == ["7HVADbW8fh"]
            assert [c["kind"] for c in lib.programme.changes("me")] == ["moved"]
            hits = lib.search("", room="Hall A")  # the search filters read the events on both backends
            assert [h.paper.id for h in hits] == ["7HVADbW8fh"] and hits[0].events[0]["room"] == "Hall A"
            events, last_change = lib.programme.version()
            assert events == 3 and last_change >= 1
    finally:
        srv.stop()


def test_keywords_reach_the_keyword_index_on_both(url: str, tmp_path: Path) -> None:
    """The built-in BM25 index reads each paper's keywords from either store."""
    rows = [dict(PAPERS[0], id="p-kw", keywords=["biomolecular generation", "equivariance"])]
    with Library(url, embedder="hashing") as lib:
        lib.ingest([_jsonl(tmp_path, rows)])
        assert [h.paper.id for h in lib.search("equivariance", "keyword")] == ["p-kw"]
