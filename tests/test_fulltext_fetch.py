"""`fulltext fetch` across hosts, each served by its own loopback server replaying a real PDF (the
SPECTER paper, tests/data/pdfs/README.md) with faults: hosts asked at once, each host one request at
a time, Retry-After honoured and bounded, a failing host set aside while the others finish, a killed
run resumed with only what is missing, and papers chosen by the filters of `search`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sourceserver import SourceServer

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.http_client import HttpClient, host_port

SPECTER = Path(__file__).parent / "data" / "pdfs" / "2020.acl-main.207.pdf"
TITLE = "SPECTER: Document-level Representation Learning using Citation-informed Transformers"
HTML = b"<!DOCTYPE html><html><body>Please sign in to download</body></html>"


@pytest.fixture
def servers() -> Iterator[list[SourceServer]]:
    """Two hosts (two loopback ports: the client tells hosts apart by name and port)."""
    started = [SourceServer().start(), SourceServer().start()]
    yield started
    for s in started:
        s.stop()


def library(tmp_path: Path, plan: dict[str, tuple[SourceServer, int]], extra: dict[str, dict] | None = None) -> Path:
    """A library whose papers `{prefix}{i}` have their PDF at server/pdf/{prefix}{i}.pdf, served the PDF."""
    pdf = SPECTER.read_bytes()
    rows = []
    for prefix, (server, n) in plan.items():
        for i in range(n):
            pid = f"{prefix}{i}"
            server.routes[f"/pdf/{pid}.pdf"] = pdf
            server.content_type[f"/pdf/{pid}.pdf"] = "application/pdf"
            # one title each (one title would merge them), still the title on page 1
            row = {"id": pid, "title": f"{TITLE} {pid} copy", "abstract": "x", "pdf_url": f"{server.url}/pdf/{pid}.pdf"}
            rows.append({**row, **(extra or {}).get(pid, {})})
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "lib.db"
    with Library(db, embedder="hashing") as lib:
        lib.ingest([f])
    return db


def overlap(a: SourceServer, b: SourceServer) -> bool:
    """Whether any request to `a` was being answered while one to `b` was."""
    return any(x.started < y.ended and y.started < x.ended for x in a.seen for y in b.seen)


def test_hosts_are_asked_at_once_each_one_request_at_a_time(tmp_path: Path, servers: list[SourceServer]) -> None:
    a, b = servers
    for s in servers:
        s.latency = 0.3  # a distant server: most of a download is waiting for it
    db = library(tmp_path, {"a": (a, 3), "b": (b, 3)})
    ids = ["a0", "a1", "a2", "b0", "b1", "b2"]
    with Library(db) as lib:
        rep = lib.fulltext.fetch(ids, client=HttpClient(delay=0.5, total_timeout=10.0), workers=2)
        assert rep.read == 6 and rep.hosts == 2 and rep.workers == 2, rep.to_dict()
        assert [r["id"] for r in rep.results] == ids  # reported in the order asked, whatever finished first
    assert overlap(a, b), "the two hosts were not asked at once"
    for s in servers:
        assert s.max_in_flight == 1, "a host was asked twice at once"
        starts = [x.started for x in s.seen]
        assert all(t2 - t1 >= 0.45 for t1, t2 in zip(starts, starts[1:])), "the pause between two requests"
    # one host at a time (today's way, and the setting's 1): no overlap
    for s in servers:
        s.seen.clear()
    with Library(db) as lib:
        rep = lib.fulltext.fetch(ids, client=HttpClient(delay=0.0, total_timeout=10.0), redo=True, workers=1)
        assert rep.read == 6
    assert not overlap(a, b)


def test_retry_after_is_honoured_and_a_long_one_sets_the_host_aside(
    tmp_path: Path, servers: list[SourceServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = servers
    monkeypatch.setenv("PAPERATLAS_FULLTEXT_FETCH_MAX_WAIT", "30")
    db = library(tmp_path, {"a": (a, 3), "b": (b, 2)})
    a.faults["/pdf/a0.pdf"] = ["503:3600"]  # come back in an hour
    b.faults["/pdf/b0.pdf"] = ["429:1"]  # come back in a second: then the PDF
    waits: list[float] = []
    client = HttpClient(delay=0.0, total_timeout=10.0, sleep=lambda s: waits.append(s) or None)
    ids = ["a0", "a1", "a2", "b0", "b1"]
    with Library(db) as lib:
        rep = lib.fulltext.fetch(ids, client=client, workers=2)
        got = {r["id"]: r["state"] for r in rep.results}
        assert got == {"a0": "fetch_failed", "a1": "set_aside", "a2": "set_aside", "b0": "read", "b1": "read"}
        assert 1.0 in waits and max(waits) <= 30  # the second waited for; the hour never slept on
        assert len(a.seen) == 1  # nothing more asked of the host that asked for an hour
        (aside,) = rep.set_aside
        assert aside.host == host_port(a.url) and aside.reason == "retry_after" and aside.papers == 2
        assert "Retry-After: 3600" in aside.message and "again after" in aside.fix
        st = {s.paper_id: s for s in lib.fulltext.store.statuses("failed")}
        assert "wait 60 min" in st["a0"].message and "a1" not in st  # what was not asked records nothing
        # the next run (the host answers again) fetches exactly what is missing
        again = lib.fulltext.fetch(ids, client=client, workers=2)
        assert again.read == 3 and again.skipped == 2 and not again.set_aside
        assert sorted(x.path for x in a.seen[1:]) == ["/pdf/a0.pdf", "/pdf/a1.pdf", "/pdf/a2.pdf"]


def test_a_failing_host_is_set_aside_while_the_others_finish(
    tmp_path: Path, servers: list[SourceServer], runner
) -> None:
    a, b = servers
    db = library(tmp_path, {"a": (a, 5), "b": (b, 3)})
    a.routes["/pdf/a0.pdf"] = HTML  # a login page
    a.content_type["/pdf/a0.pdf"] = "text/html"
    del a.routes["/pdf/a1.pdf"]  # 404
    a.faults["/pdf/a2.pdf"] = ["huge:10000000000"]  # 10 GB claimed
    env = {"PAPERATLAS_FULLTEXT_FETCH_HOST_FAILURES": "3"}
    r = runner.invoke(
        cli,
        ["--db", str(db), "fulltext", "fetch", "--all", "--delay", "0", "--hosts", "2", "--json"],
        env=env,
        catch_exceptions=False,
    )
    assert r.exit_code == 5, r.output  # stored, with failures recorded
    rep = json.loads(r.stdout)
    got = {x["id"]: x["state"] for x in rep["results"]}
    assert got == {
        "a0": "not_pdf",
        "a1": "fetch_failed",
        "a2": "fetch_failed",
        "a3": "set_aside",
        "a4": "set_aside",
        "b0": "read",
        "b1": "read",
        "b2": "read",
    }
    assert {x.path for x in a.seen} == {"/pdf/a0.pdf", "/pdf/a1.pdf", "/pdf/a2.pdf"}  # a3, a4 never asked
    (aside,) = rep["set_aside"]
    assert aside["reason"] == "failures" and aside["papers"] == 2 and "3 downloads failed in a row" in aside["message"]
    # the words, for a person (two failures in a row are enough this time)
    env = {"PAPERATLAS_FULLTEXT_FETCH_HOST_FAILURES": "2"}
    r = runner.invoke(cli, ["--db", str(db), "fulltext", "fetch", "--all", "--delay", "0"], env=env)
    assert r.exit_code == 1, r.output  # nothing read this time (b's were read before): an error
    assert f"set aside {host_port(a.url)} (3 papers left)" in r.stdout and "Fix: " in r.stdout, r.output


def test_a_killed_run_resumes_with_only_what_is_missing(tmp_path: Path, servers: list[SourceServer]) -> None:
    a, b = servers
    for s in servers:
        s.latency = 0.4
    db = library(tmp_path, {"a": (a, 5), "b": (b, 5)})
    cmd = [sys.executable, "-m", "paperatlas", "--db", str(db), "fulltext", "fetch", "--all", "--delay", "0"]
    env = {**os.environ, "PAPERATLAS_FULLTEXT_FETCH_HOSTS": "2"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end:  # kill it once some are stored and the rest on their way
            with Library(db) as lib:
                if len(lib.fulltext.store.read_ids()) >= 2:
                    break
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with Library(db) as lib:
        kept = set(lib.fulltext.store.read_ids())
        ids = [f"{p}{i}" for p in "ab" for i in range(5)]
        assert 0 < len(kept) < 10, kept  # killed mid-run
        for pid in kept:  # every paper finished was stored whole
            assert lib.fulltext.show(pid).sections
        before = {id(x) for s in servers for x in s.seen}
        rep = lib.fulltext.fetch(ids, client=HttpClient(delay=0.0, total_timeout=10.0), workers=2)
        asked = sorted(x.path for s in servers for x in s.seen if id(x) not in before)
        assert asked == sorted(f"/pdf/{pid}.pdf" for pid in ids if pid not in kept)  # only what was missing
        assert rep.read == 10 - len(kept) and rep.skipped == len(kept)
        assert set(lib.fulltext.store.read_ids()) == set(ids)


def test_fetch_chooses_papers_with_the_filters_of_search(tmp_path: Path, servers: list[SourceServer], runner) -> None:
    a, _b = servers
    extra = {
        "a0": {"authors": ["Arman Cohan"], "venue": "ACL", "year": 2020},
        "a1": {"authors": ["Iz Beltagy"], "venue": "ACL", "year": 2020},
        "a2": {"authors": ["Arman Cohan"], "venue": "EMNLP", "year": 2021},
    }
    db = library(tmp_path, {"a": (a, 3)}, extra)
    args = ["--db", str(db), "fulltext", "fetch", "--delay", "0", "--json"]
    r = runner.invoke(cli, [*args, "--author", "Arman Cohan"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert [x["id"] for x in json.loads(r.stdout)["results"]] == ["a0", "a2"]
    # the old spelling still works
    r = runner.invoke(cli, [*args, "--venue", "ACL", "--year", "2020", "--redo"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert [x["id"] for x in json.loads(r.stdout)["results"]] == ["a0", "a1"]
    # filters together
    r = runner.invoke(cli, [*args, "--venue", "ACL", "--author", "Cohan", "--redo"], catch_exceptions=False)
    assert [x["id"] for x in json.loads(r.stdout)["results"]] == ["a0"], r.output
    # papers named (or saved) and a filter: those of them it keeps
    r = runner.invoke(cli, [*args, "a0", "a1", "a2", "--author", "Cohan", "--redo"], catch_exceptions=False)
    assert [x["id"] for x in json.loads(r.stdout)["results"]] == ["a0", "a2"], r.output
    r = runner.invoke(cli, ["--db", str(db), "fulltext", "fetch"])
    assert r.exit_code == 1 and "--author" in r.output
    # the reader's agenda (what they starred or tagged), and their saved papers of one venue
    r = runner.invoke(cli, [*args, "--agenda", "--reader", "ann"])
    assert r.exit_code == 4 and "agenda is empty" in r.output, r.output
    with Library(db) as lib:
        lib.readers.tag("ann", ["a1"], "to-read")
        lib.readers.set_feedback("ann", ["a0", "a2"], "like")
    r = runner.invoke(cli, [*args, "--agenda", "--reader", "ann", "--redo"], catch_exceptions=False)
    assert sorted(x["id"] for x in json.loads(r.stdout)["results"]) == ["a0", "a1", "a2"], r.output
    r = runner.invoke(cli, [*args, "--saved", "--reader", "ann", "--venue", "EMNLP", "--redo"], catch_exceptions=False)
    assert [x["id"] for x in json.loads(r.stdout)["results"]] == ["a2"], r.output


def test_a_host_that_asks_for_a_longer_pause_gets_it() -> None:
    from paperatlas.hosts import polite_pause

    assert polite_pause("export.arxiv.org:443", 1.0) == 3.0 and polite_pause("arxiv.org", 0.0) == 3.0
    assert polite_pause("openreview.net:443", 1.0) == 1.0 and polite_pause("notarxiv.org", 0.5) == 0.5
    assert polite_pause("arxiv.org", 5.0) == 5.0  # a longer --delay stays
