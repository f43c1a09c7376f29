"""Sources (issue 13): fetch from a loopback server that plays recorded responses and injects faults.

Nothing here reaches the internet. The recordings and where they come from: tests/data/sources/PROVENANCE.md.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.sources import FetchError, HttpClient, create_source
from paperatlas.http_client import USER_AGENT, retry_after

from sourceserver import SourceServer
from ports import free_port

DATA = Path(__file__).parent / "data" / "sources"
COLT = (DATA / "colt2024.json").read_bytes()
COLM = (Path(__file__).parent / "data" / "pasted" / "colm2025.json").read_bytes()


@pytest.fixture
def server() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/colt/colt2024.json": COLT, "/colm/colm2025.json": COLM}).start()
    yield s
    s.stop()


def _client(**kw: object) -> HttpClient:
    waits: list[float] = []
    c = HttpClient(**{"sleep": waits.append, "read_timeout": 2.0, **kw})  # type: ignore[arg-type]
    c.waits = waits  # type: ignore[attr-defined]
    return c


# -- the HTTP client --------------------------------------------------------------------------
def test_client_sends_user_agent_and_honours_retry_after(server: SourceServer) -> None:
    server.faults["/colt/colt2024.json"] = ["429:7", "503:2", "503"]
    c = _client(backoff=0.5)
    resp = c.get(server.url + "/colt/colt2024.json")
    assert resp.status == 200 and resp.body == COLT
    assert c.waits == [7.0, 2.0, 2.0]  # Retry-After twice, then backoff 0.5 * 2**2 for the bare 503
    assert [h.status for h in server.hits("/colt/colt2024.json")] == [429, 503, 503, 200]
    assert all(h.headers["User-Agent"] == USER_AGENT for h in server.seen) and "paperatlas/" in USER_AGENT


def test_retry_after_is_capped_and_dates_are_understood() -> None:
    assert retry_after("120") == 120.0
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(10.0)
    assert retry_after("soon") is None and retry_after(None) is None


def test_body_cut_midway_and_slow_answers_are_retried(server: SourceServer) -> None:
    server.faults["/colt/colt2024.json"] = ["cut", "slow:1.5", "reset"]
    c = _client(read_timeout=0.5)
    assert c.get(server.url + "/colt/colt2024.json").body == COLT
    assert c.stats["retries"] == 3


def test_give_up_names_the_url_and_the_fix(server: SourceServer) -> None:
    server.faults["/colt/colt2024.json"] = ["503"] * 10
    with pytest.raises(FetchError) as e:
        _client(retries=2).get(server.url + "/colt/colt2024.json")
    assert "HTTP 503" in str(e.value) and "/colt/colt2024.json" in str(e.value) and "re-run resumes" in e.value.fix
    with pytest.raises(FetchError, match="HTTP 404"):
        _client().get(server.url + "/nothing/here.json")


def test_unreachable_host_fails_within_seconds_naming_host_and_port() -> None:
    port = free_port()
    start = time.monotonic()
    with pytest.raises(FetchError) as e:
        HttpClient().get(f"http://127.0.0.1:{port}/colm/colm2025.json")
    assert time.monotonic() - start < 5
    assert f"127.0.0.1:{port}" in str(e.value) and "--base-url" in e.value.fix


def test_proxy_from_the_environment_is_used(server: SourceServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY is honoured: the loopback server acts as the proxy for a host that does not exist."""
    monkeypatch.setenv("HTTP_PROXY", server.url)
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("http_proxy", raising=False)
    # papers.example does not exist: the answer can only come through the proxy
    assert HttpClient(retries=0).get("http://papers.example/colt/colt2024.json").body == COLT
    assert server.seen[-1].headers.get("Host") == "papers.example"


# -- paperlists ---------------------------------------------------------------------------------
def test_paperlists_fetch_stores_like_ingest_and_repeats_store_nothing(server: SourceServer, tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch("paperlists", ["colt", "2024"], base_url=server.url, client=_client())
        assert (r.new, r.updated, r.pages) == (6, 0, 1)
        p = lib.get("1fe608bc4a")
        assert p.venue == "COLT" and p.year == 2024 and p.authors[:2] == ["Gianmarco Genalti", "Lupo Marsigli"]
        assert p.url == "https://proceedings.mlr.press/v247/genalti24a.html" and p.source == "paperlists"
        # the same as `ingest colt2024.json`
        with Library(tmp_path / "ingested.db", embedder="hashing") as other:
            other.ingest([DATA / "colt2024.json"])
            assert other.get("1fe608bc4a").title == p.title and other.get("1fe608bc4a").abstract == p.abstract
        again = lib.sources.fetch("paperlists", ["colt", "2024"], base_url=server.url, client=_client())
        assert again.new == 0 and again.not_modified and "0 new" in again.summary()
        assert server.hits("/colt/colt2024.json")[-1].status == 304
        assert lib.count() == 6


def test_paperlists_faults_lose_nothing_and_store_nothing_twice(server: SourceServer, tmp_path: Path) -> None:
    server.faults["/colt/colt2024.json"] = ["429:1", "cut", "malformed", "503"]
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch("paperlists", ["colt", "2024"], base_url=server.url, client=_client())
        assert r.new == 6 and lib.count() == 6 and r.retries == 4
        rows = lib.store.execute_script_for_tests("SELECT count(*), count(DISTINCT dedup_key) FROM papers")
        assert rows == [(6, 6)]


def test_paperlists_malformed_every_time_names_the_url(server: SourceServer, tmp_path: Path) -> None:
    server.faults["/colt/colt2024.json"] = ["malformed"] * 5
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        with pytest.raises(FetchError) as e:
            lib.sources.fetch("paperlists", ["colt", "2024"], base_url=server.url, client=_client())
        assert "/colt/colt2024.json" in str(e.value) and "not valid JSON" in str(e.value)
        assert lib.count() == 0


def test_paperlists_upper_case_venue_falls_back_to_the_lower_case_file(server: SourceServer, tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        assert lib.sources.fetch("paperlists", ["COLM", "2025"], base_url=server.url, client=_client()).new == 2


def test_bad_arguments_say_what_to_type(tmp_path: Path) -> None:
    from paperatlas.sources import SourceArgsError
    from paperatlas.registry import UnknownBackend

    with pytest.raises(SourceArgsError, match="VENUE YEAR"):
        create_source("paperlists", ["colt"])
    with pytest.raises(UnknownBackend, match="paperlists"):
        create_source("nosuch", ["x"])


# -- the CLI contract ---------------------------------------------------------------------------
def test_cli_fetch_paperlists_contract(server: SourceServer, tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    server.faults["/colm/colm2025.json"] = ["429:1", "503:1"]
    runner = CliRunner()
    args = ["--db", db, "fetch", "paperlists", "colm", "2025", "--base-url", server.url, "--no-embed"]
    r = runner.invoke(cli, args)
    assert r.exit_code == 0, r.output
    assert "2 new" in r.output
    r = runner.invoke(cli, args)
    assert r.exit_code == 0 and "0 new" in r.output, r.output
    r = runner.invoke(cli, [*args, "--json"])
    assert json.loads(r.output)["new"] == 0


def test_cli_fetch_unreachable_exits_nonzero_fast_with_host_port(tmp_path: Path) -> None:
    port = free_port()
    start = time.monotonic()
    r = CliRunner().invoke(
        cli,
        [
            "--db",
            str(tmp_path / "lib.db"),
            "fetch",
            "paperlists",
            "colm",
            "2025",
            "--base-url",
            f"http://127.0.0.1:{port}",
            "--no-embed",
        ],
    )
    assert r.exit_code == 1 and time.monotonic() - start < 10
    assert f"127.0.0.1:{port}" in r.output and "Fix:" in r.output


def test_follow_update_unfollow(server: SourceServer, tmp_path: Path) -> None:
    db = str(tmp_path / "lib.db")
    runner = CliRunner()
    r = runner.invoke(cli, ["--db", db, "follow", "paperlists", "colm", "2025", "--base-url", server.url])
    assert r.exit_code == 0 and "following paperlists colm 2025" in r.output, r.output
    r = runner.invoke(cli, ["--db", db, "follow", "paperlists", "colt", "2024", "--base-url", server.url])
    r = runner.invoke(cli, ["--db", db, "update", "--no-embed"])
    assert r.exit_code == 0, r.output
    assert r.output.strip().splitlines()[-1] == "update: 2 sources, 8 new, 0 updated"
    r = runner.invoke(cli, ["--db", db, "update", "--no-embed", "--quiet"])
    assert r.exit_code == 0 and r.output.strip() == "update: 2 sources, 0 new, 0 updated", r.output
    r = runner.invoke(cli, ["--db", db, "follow"])
    assert "paperlists colm 2025" in r.output and "0 new" in r.output
    # a failing source: the others are still fetched, and the exit code says so
    server.faults["/colt/colt2024.json"] = ["503"] * 10
    r = runner.invoke(cli, ["--db", db, "update", "--no-embed", "--quiet", "--retries", "1"])
    assert r.exit_code == 1 and "paperlists colt 2024: failed" in r.output and "1 failed" in r.output
    r = runner.invoke(cli, ["--db", db, "unfollow", "paperlists", "colt", "2024"])
    assert r.exit_code == 0
    r = runner.invoke(cli, ["--db", db, "unfollow", "paperlists", "colt", "2024"])
    assert r.exit_code == 1 and "not following" in r.output
    with Library(db) as lib:
        assert [f.key for f in lib.sources.follows()] == ["paperlists colm 2025"] and lib.count() == 8


# -- OpenReview ------------------------------------------------------------------------------------
OR_NOTES = json.loads((DATA / "openreview_colm2025_notes.json").read_text(encoding="utf-8"))["notes"]
VENUE = "colmweb.org/COLM/2025/Conference"


def _notes_api(qs: dict[str, list[str]]) -> bytes:
    """The /notes endpoint over the recorded notes: content.venueid or invitation, offset, limit."""
    if qs.get("content.venueid", [""])[0] != VENUE and qs.get("invitation", [""])[0] != VENUE + "/-/Submission":
        return json.dumps({"notes": [], "count": 0}).encode()
    off, lim = int(qs.get("offset", ["0"])[0]), int(qs.get("limit", ["1000"])[0])
    return json.dumps({"notes": OR_NOTES[off : off + lim], "count": len(OR_NOTES)}).encode()


@pytest.fixture
def or_server() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/notes": _notes_api}).start()
    yield s
    s.stop()


def test_openreview_pages_and_fields(or_server: SourceServer, tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(), page_size=2)
        assert (r.new, r.pages) == (5, 3)
        offsets = [h.query["offset"][0] for h in or_server.hits("/notes")]
        assert offsets == ["0", "2", "4"] and or_server.seen[0].query["content.venueid"] == [VENUE]
        p = lib.get("0JzWiigkUy")
        assert p.title == "BEARCUBS: A benchmark for computer-using web agents" and p.venue == "COLM" and p.year == 2025
        assert p.authors[0] == "Yixiao Song" and "benchmark" in p.keywords
        assert p.url == "https://openreview.net/forum?id=0JzWiigkUy"
        assert p.extra["pdf"] == "https://openreview.net/pdf?id=0JzWiigkUy" and p.extra["venueid"] == VENUE
        again = lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(), page_size=2)
        assert again.new == 0 and again.unchanged == 5 and lib.count() == 5


def test_openreview_all_asks_the_submission_invitation(or_server: SourceServer, tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        assert lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(), all=True).new == 5
        assert or_server.seen[-1].query["invitation"] == [VENUE + "/-/Submission"]
        r = lib.sources.fetch("openreview", ["Nowhere.cc/2025/Conference"], base_url=or_server.url, client=_client())
        assert r.new == 0 and "no accepted papers" in r.notes[0]


def test_openreview_decisions_from_venueid() -> None:
    from paperatlas.ingest.formats import Format
    from paperatlas.ingest.normalize import to_paper

    note = dict(
        OR_NOTES[0],
        content={
            **OR_NOTES[0]["content"],
            "venue": {"value": "Submitted to COLM 2025"},
            "venueid": {"value": VENUE.replace("Conference", "Conference/Rejected_Submission")},
        },
    )
    p, _ = to_paper(note, Format.OPENREVIEW)
    assert (p.venue, p.year, p.status) == ("COLM", 2025, "Rejected")


def test_openreview_faults_on_every_page_lose_nothing(or_server: SourceServer, tmp_path: Path) -> None:
    or_server.faults["/notes"] = ["429:1", "", "cut", "", "malformed", "503"]
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(), page_size=2)
        assert r.new == 5 and r.retries == 4
        assert lib.store.execute_script_for_tests("SELECT count(*), count(DISTINCT id) FROM papers") == [(5, 5)]


def test_openreview_failed_fetch_resumes_at_the_stored_position(or_server: SourceServer, tmp_path: Path) -> None:
    or_server.faults["/notes"] = ["", "503", "503"]  # page 2 fails for good (retries=1)
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        with pytest.raises(FetchError):
            lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(retries=1), page_size=2)
        assert lib.count() == 2 and lib.store.sources.source_state(f"openreview {VENUE}") == {
            "offset": 2,
            "complete": False,
        }
        before = len(or_server.seen)
        r = lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(), page_size=2)
        assert r.resumed and r.new == 3 and lib.count() == 5
        assert or_server.seen[before].query["offset"] == ["2"]  # resumed, not started over


def test_a_killed_fetch_resumes(or_server: SourceServer, tmp_path: Path) -> None:
    """SIGKILL while page 2 is on its way: page 1 is stored with its position, a re-run finishes."""
    import os
    import signal
    import subprocess
    import sys

    db = tmp_path / "lib.db"
    or_server.faults["/notes"] = ["", "slow:30"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    code = (
        "import sys; from paperatlas import Library; from paperatlas.sources import HttpClient;"
        f"Library(sys.argv[1]).sources.fetch('openreview', [{VENUE!r}], base_url=sys.argv[2], page_size=2,"
        " client=HttpClient(read_timeout=60))"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(db), or_server.url], env=env)
    deadline = time.monotonic() + 60
    while len(or_server.seen) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(or_server.seen) == 2
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Library(db, embedder="hashing") as lib:
        assert lib.count() == 2 and lib.store.sources.source_state(f"openreview {VENUE}")["offset"] == 2
        or_server.faults["/notes"] = []
        before = len(or_server.seen)
        r = lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(), page_size=2)
        assert r.resumed and r.new == 3 and or_server.seen[before].query["offset"] == ["2"]
        assert lib.store.execute_script_for_tests("SELECT count(*), count(DISTINCT id) FROM papers") == [(5, 5)]


# -- arXiv -----------------------------------------------------------------------------------------
ARXIV_PAGE = (DATA / "arxiv_query.xml").read_bytes()
ARXIV_EMPTY = (DATA / "arxiv_query_empty.xml").read_bytes()


def _arxiv_api(qs: dict[str, list[str]]) -> bytes:
    """Page 1 is the recorded 10-entry answer, page 2 the recorded empty one."""
    return ARXIV_PAGE if qs.get("start", ["0"])[0] == "0" else ARXIV_EMPTY


@pytest.fixture
def ax_server() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/api/query": _arxiv_api}, content_type={"/api/query": "application/atom+xml"}).start()
    yield s
    s.stop()


def test_arxiv_query_paging_politeness_and_fields(ax_server: SourceServer, tmp_path: Path) -> None:
    c = _client(delay=3.0)
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch(
            "arxiv", ["physics.chem-ph", "hep-ph"], base_url=ax_server.url, client=c, since="2004-01-01", page_size=10
        )
        assert (r.new, r.pages) == (10, 2)
        q = ax_server.seen[0].query
        assert q["search_query"] == [
            "(cat:hep-ph OR cat:physics.chem-ph) AND submittedDate:[200401010000 TO 999912312359]"
        ]
        assert (
            q["sortBy"] == ["submittedDate"]
            and q["max_results"] == ["10"]
            and ax_server.seen[1].query["start"] == ["10"]
        )
        assert len(c.waits) == 1 and 2.5 < c.waits[0] <= 3.0  # one polite pause between the two pages
        p = lib.get("nucl-ex/0408020")
        assert p.venue == "arXiv" and p.year == 2004 and p.authors[0] == "J. Arrington"
        assert (
            p.url == "https://arxiv.org/abs/nucl-ex/0408020v1"
            and p.extra["pdf"] == "https://arxiv.org/pdf/nucl-ex/0408020v1"
        )
        state = lib.store.sources.source_state("arxiv hep-ph physics.chem-ph")
        assert state["complete"] and state["since"] >= "2004-08-18"  # the next run starts at the newest day seen
        again = lib.sources.fetch(
            "arxiv", ["hep-ph", "physics.chem-ph"], base_url=ax_server.url, client=_client(), page_size=10
        )
        assert again.new == 0 and again.unchanged == 10
        assert f"submittedDate:[{state['since'].replace('-', '')}0000" in ax_server.seen[-2].query["search_query"][0]


def test_arxiv_faults_and_the_old_feed_shape(ax_server: SourceServer, tmp_path: Path) -> None:
    ax_server.faults["/api/query"] = ["503:1", "malformed", "cut"]
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch(
            "arxiv", ["hep-ph"], base_url=ax_server.url, client=_client(), since="2000-01-01", page_size=10
        )
        assert r.new == 10 and r.retries == 3 and lib.count() == 10
        # the feed as arXiv wrote it until mid-2025 (rel="alternate" links, arxiv: namespace per element)
        lib.ingest([DATA / "arxiv_query_2025-08.xml"])
        p = lib.get("1706.01836")
        assert p.url == "http://arxiv.org/abs/1706.01836v2" and p.extra["pdf"] == "http://arxiv.org/pdf/1706.01836v2"


def test_arxiv_bad_arguments() -> None:
    from paperatlas.sources import SourceArgsError

    with pytest.raises(SourceArgsError, match="categories like cs.LG"):
        create_source("arxiv", ["cs LG"])
    with pytest.raises(SourceArgsError, match="YYYY-MM-DD"):
        create_source("arxiv", ["cs.LG"], since="last week")
    with pytest.raises(SourceArgsError, match="does not take --all"):
        create_source("arxiv", ["cs.LG"], all=True)


def test_a_host_that_never_answers_fails_within_the_connect_timeouts() -> None:
    """A black-holed address (SYN dropped): two connect attempts, not the full retry budget."""
    import socket as _s

    listener = _s.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)  # backlog full after one pending connection: later SYNs go unanswered
    port = listener.getsockname()[1]
    filler = []
    for _ in range(3):
        try:
            filler.append(_s.create_connection(("127.0.0.1", port), timeout=0.3))
        except OSError:  # the queue is already full: what the test needs
            break
    try:
        start = time.monotonic()
        with pytest.raises(FetchError) as e:
            HttpClient(connect_timeout=0.5, retries=4).get(f"http://127.0.0.1:{port}/x")
        took = time.monotonic() - start
    finally:
        for s in filler:
            s.close()
        listener.close()
    assert f"127.0.0.1:{port}" in str(e.value)
    assert took < 4  # 2 x 0.5 s connect + 1 s pause (read timeouts would have allowed 5 tries and backoff)


# -- ACL Anthology and PMLR --------------------------------------------------------------------------
@pytest.fixture
def proc_server() -> Iterator[SourceServer]:
    s = SourceServer(
        routes={
            "/data/xml/2024.acl.xml": (DATA / "2024.acl.xml").read_bytes(),
            "/v247/bibliography.bib": (DATA / "v247_bibliography.bib").read_bytes(),
        },
        content_type={"/data/xml/2024.acl.xml": "application/xml", "/v247/bibliography.bib": "text/plain"},
    ).start()
    yield s
    s.stop()


def test_acl_anthology_event(proc_server: SourceServer, tmp_path: Path) -> None:
    proc_server.faults["/data/xml/2024.acl.xml"] = ["429:1", "malformed"]
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch("acl", ["acl-2024"], base_url=proc_server.url, client=_client())
        assert r.new == 3 and r.retries == 2
        p = lib.get("2024.acl-long.3")
        assert p.title == "MAGE: Machine-generated Text Detection in the Wild" and p.venue == "ACL" and p.year == 2024
        assert p.authors[:2] == ["Yafu Li", "Qintong Li"] and p.track == "long"
        assert p.url == "https://aclanthology.org/2024.acl-long.3/" and p.extra["doi"] == "10.18653/v1/2024.acl-long.3"
        assert "up to 7×." in lib.get("2024.acl-long.1").abstract  # <tex-math>\\times</tex-math>, cleaned like ingest
        assert lib.get("2024.acl-long.1").status == "Outstanding Paper Award"
        assert lib.sources.fetch("acl", ["2024.acl"], base_url=proc_server.url, client=_client()).unchanged == 3
    with pytest.raises(Exception, match="acl-2024 or 2024.acl"):
        create_source("acl", ["2024"])


def test_pmlr_volume(proc_server: SourceServer, tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        r = lib.sources.fetch(
            "pmlr", ["247"], base_url=proc_server.url, client=_client()
        )  # assets/bib/ 404s: the old path
        assert r.new == 6
        assert [h.path for h in proc_server.seen] == ["/v247/assets/bib/bibliography.bib", "/v247/bibliography.bib"]
        p = lib.get("pmlr-v247-genalti24a")
        assert p.venue == "COLT" and p.year == 2024 and p.authors[0] == "Gianmarco Genalti"
        assert p.url == "https://proceedings.mlr.press/v247/genalti24a.html" and p.abstract.startswith("Heavy-tailed")
        # the same papers from paperlists (same title and authors, other ids) are recognised as duplicates
        with Library(tmp_path / "other.db", embedder="hashing") as other:
            other.ingest([DATA / "colt2024.json"])
            assert other.get("1fe608bc4a").title == p.title


# -- one paper, many sources -----------------------------------------------------------------------
SNAPSHOT = Path(__file__).parent / "data" / "arxiv_snapshot.jsonl"  # 1706.03762 is "Attention Is All You Need"


@pytest.fixture
def nips_server() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/nips/nips2017.json": (DATA / "nips2017.json").read_bytes()}).start()
    yield s
    s.stop()


def test_preprint_first_then_venue_version_becomes_one_paper(nips_server: SourceServer, tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        lib.ingest([SNAPSHOT])
        lib.embed()
        lib.readers.set_feedback("me", ["1706.03762"], "like")
        lib.readers.tag("me", ["1706.03762"], "classics")
        r = lib.sources.fetch("paperlists", ["nips", "2017"], base_url=nips_server.url, client=_client())
        assert r.new == 3 and r.merged == 1
        p = lib.get("1706.03762")  # the arXiv id still finds it, and shows the venue version
        assert p.id == "9372" and p.venue == "NeurIPS" and p.year == 2017 and p.status == "Spotlight"
        assert lib.links("9372") == {
            "page": "https://nips.cc/virtual/2017/poster/9372",
            "arxiv": "https://arxiv.org/abs/1706.03762",
        }
        assert [x.id for x in lib.readers.liked("me")] == ["9372"] and lib.store.readers.tags(
            lib.readers.get("me").id
        ) == {"9372": ["classics"]}
        assert lib.count() == 4  # LoRA, and the three NeurIPS papers
        ids = [h.paper.id for h in lib.search("attention is all you need", mode="keyword", limit=5)]
        assert ids.count("9372") == 1 and "1706.03762" not in ids
        # the preprint again (a re-ingest or a later arXiv fetch) changes nothing
        again = lib.ingest([SNAPSHOT])
        assert again.new == 0 and lib.count() == 4 and lib.get("1706.03762").id == "9372"


def test_venue_version_first_then_preprint_merges_into_it(nips_server: SourceServer, tmp_path: Path) -> None:
    with Library(tmp_path / "lib.db", embedder="hashing") as lib:
        lib.sources.fetch("paperlists", ["nips", "2017"], base_url=nips_server.url, client=_client())
        r = lib.ingest([SNAPSHOT])
        assert (r.new, r.merged) == (1, 1)  # LoRA is new; the Transformer preprint joins its NeurIPS paper
        assert lib.get("1706.03762").id == "9372" and lib.count() == 4
        assert lib.links("9372")["arxiv"] == "https://arxiv.org/abs/1706.03762"
        r = CliRunner().invoke(cli, ["--db", str(tmp_path / "lib.db"), "show", "1706.03762", "--json"])
        shown = json.loads(r.output)
        assert shown["id"] == "9372" and shown["aliases"] == ["1706.03762"]
        # the HTTP API: the arXiv id redirects to the paper, whose JSON carries both links
        from starlette.testclient import TestClient

        from paperatlas.web.app import create_app

        with TestClient(create_app(lib), base_url="http://127.0.0.1") as c:
            page = c.get("/paper/1706.03762.json")
            assert page.url.path == "/paper/9372.json"
            d = page.json()
            assert d["aliases"] == ["1706.03762"] and d["links"]["arxiv"] == "https://arxiv.org/abs/1706.03762"


def test_same_title_different_authors_stay_apart(tmp_path: Path) -> None:
    from paperatlas.ingest.normalize import preprint_link
    from paperatlas.models import Paper

    pre = Paper("2401.00001", "Attention Is All You Need", authors=["Someone Else"], venue="arXiv")
    assert preprint_link(pre, [("9372", "NeurIPS", ["Ashish Vaswani"])]) is None
    assert preprint_link(pre, [("x", "arXiv", ["Someone Else"])]) is None  # two preprints stay two
    assert preprint_link(pre, [("9372", "NeurIPS", ["A. Else"])]) == ("into", "9372")


def test_an_overlapping_writer_does_not_break_the_fetch(or_server: SourceServer, tmp_path: Path) -> None:
    """Two `update`s from cron at once: the other one starts while we write our first page. It waits
    for the library's write lock (told why), so it never stores a paper between our plan and our
    write, and then finds every paper there."""
    import threading

    db = tmp_path / "lib.db"
    heard: list[str] = []
    with Library(db, embedder="hashing") as lib, Library(db, embedder="hashing", on_wait=heard.append) as other:
        real = lib.store.write_batch
        calls = {"n": 0}
        theirs: dict[str, Any] = {}

        def fetch_other() -> None:
            theirs["r"] = other.sources.fetch(
                "openreview", [VENUE], base_url=or_server.url, client=_client(), page_size=2
            )

        racer = threading.Thread(target=fetch_other)

        def racing(*args: object, **kw: object) -> None:
            calls["n"] += 1
            if calls["n"] == 1:  # the other process starts while we hold the lock for page 1
                racer.start()
                deadline = time.monotonic() + 30
                while not heard and time.monotonic() < deadline:
                    time.sleep(0.02)
                assert heard and "waiting for it to finish" in heard[0], heard
            real(*args, **kw)  # type: ignore[arg-type]

        lib.store.write_batch = racing  # type: ignore[method-assign]
        r = lib.sources.fetch("openreview", [VENUE], base_url=or_server.url, client=_client(), page_size=2)
        racer.join(60)
        # the lock is held per page: the two interleave page by page, each page planned once
        assert calls["n"] == 3
        assert r.new + theirs["r"].new == 5 and r.unchanged + theirs["r"].unchanged == 5
        assert lib.store.execute_script_for_tests("SELECT count(*), count(DISTINCT id) FROM papers") == [(5, 5)]
