"""The standing hostile source server: one mode per attack on the fetchers (tests/sourceserver.py).

Each attack is played by a real loopback HTTP server against the real client. The caps are small
here (a few hundred KB, a deadline of a second or two) so that each attack ends in well under a
second or two; `benchmarks/fetch_attacks.py` plays the same attacks at the default caps and prints
their time and peak memory.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from sourceserver import SourceServer

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.errors import PaperatlasError
from paperatlas.sources import FetchError, HttpClient
from paperatlas.http_client import redirect_refusal

DATA = Path(__file__).parent / "data" / "sources"
COLT = (DATA / "colt2024.json").read_bytes()
PATH = "/colt/colt2024.json"


@pytest.fixture
def server() -> Iterator[SourceServer]:
    s = SourceServer(routes={PATH: COLT}).start()
    yield s
    s.stop()


def _client(**kw: object) -> HttpClient:
    waits: list[float] = []
    opts: dict[str, object] = {
        "sleep": waits.append,
        "read_timeout": 0.6,
        "total_timeout": 0.8,
        "max_bytes": 200_000,
        "retries": 2,
    }
    c = HttpClient(**{**opts, **kw})  # type: ignore[arg-type]
    c.waits = waits  # type: ignore[attr-defined]
    return c


def _attack(server: SourceServer, fault: str, **kw: object) -> tuple[FetchError, float, HttpClient]:
    server.faults[PATH] = [fault] * 5
    c = _client(**kw)
    start = time.monotonic()
    with pytest.raises(FetchError) as e:
        c.get(server.url + PATH)
    return e.value, time.monotonic() - start, c


# -- body cap -----------------------------------------------------------------------------------
def test_a_body_over_the_cap_is_refused_from_its_length_without_reading_it(server: SourceServer) -> None:
    err, took, c = _attack(server, "huge:2147483648")  # 2 GiB announced
    assert "2,147,483,648 bytes" in str(err) and "200,000-byte cap" in str(err)
    assert "PAPERATLAS_FETCH_MAX_BYTES" in err.fix and PATH in str(err)
    assert c.stats["bytes"] == 0 and len(server.hits(PATH)) == 1  # not retried: it would be as large again
    assert took < 5


def test_an_endless_chunked_stream_stops_at_the_cap(server: SourceServer) -> None:
    err, took, _ = _attack(server, "endless", total_timeout=30.0)
    assert "more than the 200,000-byte cap" in str(err) and len(server.hits(PATH)) == 1
    assert took < 10  # the cap ends it, not the deadline


def test_the_cap_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAPERATLAS_FETCH_MAX_BYTES", "12345")
    assert HttpClient().max_bytes == 12345
    monkeypatch.setenv("PAPERATLAS_FETCH_MAX_BYTES", "")
    assert HttpClient().max_bytes == 256 << 20
    # a typo is not silently the default: the error names the variable and the fix
    monkeypatch.setenv("PAPERATLAS_FETCH_MAX_BYTES", "lots")
    with pytest.raises(PaperatlasError, match="PAPERATLAS_FETCH_MAX_BYTES='lots'") as e:
        HttpClient()
    assert "PAPERATLAS_FETCH_MAX_BYTES" in e.value.fix


# -- the whole-request deadline ---------------------------------------------------------------------
@pytest.mark.parametrize("fault", ["trickle-headers:0.1", "trickle-body:0.1", "trickle-chunks:0.1"])
def test_a_slow_sender_meets_the_whole_request_deadline(server: SourceServer, fault: str) -> None:
    """One byte every 0.1 s never lets a 0.6 s read timeout fire; the 0.8 s deadline ends it, once."""
    err, took, c = _attack(server, fault)
    assert "within 0.8 s (headers and body together)" in str(err) and "--deadline" in err.fix
    assert 0.75 < took < 3, took
    assert len(server.hits(PATH)) == 1 and c.waits == []  # a trickle is not retried


def test_a_fast_answer_is_untouched_by_the_deadline(server: SourceServer) -> None:
    c = _client(total_timeout=0.3)
    for _ in range(3):
        assert c.get(server.url + PATH).body == COLT
    time.sleep(0.4)  # past the deadline of every earlier request: their timers must not touch a later one
    assert c.get(server.url + PATH).body == COLT


# -- redirects -------------------------------------------------------------------------------------
def test_redirect_to_another_port_is_not_followed(server: SourceServer) -> None:
    inner = SourceServer(routes={"/secret": b'[{"title": "internal admin page"}]'}).start()
    try:
        err, _, _ = _attack(server, f"redirect:{inner.url}/secret")
        assert "not followed: it leads to another port" in str(err) and inner.seen == []
        assert "PAPERATLAS_FETCH_REDIRECT_HOSTS" in err.fix
    finally:
        inner.stop()


def test_redirect_to_ftp_is_not_attempted(server: SourceServer) -> None:
    err, _, _ = _attack(server, "redirect:ftp://127.0.0.1/papers.json")
    assert "only http(s) is fetched" in str(err)


def test_redirect_within_the_host_is_followed(server: SourceServer) -> None:
    server.faults[PATH] = [f"redirect:{server.url}/colt/colt2024.json?moved=1"]
    resp = _client().get(server.url + PATH)
    assert resp.body == COLT and "moved=1" in resp.url


def test_redirect_rules() -> None:
    assert redirect_refusal("http://a.example/x", "https://a.example/y") == ""  # the https upgrade
    assert redirect_refusal("https://a.example/x", "https://A.example:443/y") == ""
    assert "https to plain http" in redirect_refusal("https://a.example/x", "http://a.example/y")
    assert "another host" in redirect_refusal("https://a.example/x", "https://b.example/y")
    assert redirect_refusal("https://a.example/x", "https://b.example/y", ("b.example",)) == ""
    assert "another port" in redirect_refusal("http://127.0.0.1:80/x", "http://127.0.0.1:8080/y")
    assert "file" in redirect_refusal("http://a.example/x", "file:///etc/passwd")


def test_a_refused_redirect_stores_nothing(server: SourceServer, tmp_path: Path) -> None:
    inner = SourceServer(routes={"/colt/colt2024.json": COLT}).start()
    try:
        server.faults[PATH] = [f"redirect:{inner.url}{PATH}"] * 5
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            with pytest.raises(FetchError, match="not followed"):
                lib.sources.fetch("paperlists", ["colt", "2024"], base_url=server.url, client=_client())
            assert lib.count() == 0 and inner.seen == []
    finally:
        inner.stop()


# -- paging that never ends -------------------------------------------------------------------------
ARXIV_PAGE = (DATA / "arxiv_query.xml").read_bytes()  # ten entries: a full page at page_size=10
OR_NOTES = json.loads((DATA / "openreview_colm2025_notes.json").read_text(encoding="utf-8"))["notes"]
VENUE = "colmweb.org/COLM/2025/Conference"


def test_arxiv_answering_the_same_full_page_forever_stops_at_the_repeat(tmp_path: Path) -> None:
    s = SourceServer(routes={"/api/query": lambda qs: ARXIV_PAGE}).start()
    try:
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            r = lib.sources.fetch(
                "arxiv", ["hep-ph"], base_url=s.url, client=_client(), since="2000-01-01", page_size=10
            )
            assert (r.new, r.pages) == (10, 1) and len(s.seen) == 2
            assert r.stopped == "page 2 repeats page 1" and "the source repeats itself" in r.notes[-1]
            assert "stopped early: page 2 repeats page 1" in r.summary() and r.to_dict()["stopped"]
            assert not lib.store.sources.source_state("arxiv hep-ph")["complete"]  # the next run tries again from there
    finally:
        s.stop()


def _inventing_notes(qs: dict[str, list[str]]) -> bytes:
    """Every page a full page of notes never seen before (the recorded notes under new ids)."""
    off, lim = int(qs["offset"][0]), int(qs["limit"][0])
    notes = [{**OR_NOTES[i % len(OR_NOTES)], "id": f"made-up-{off + i}"} for i in range(lim)]
    for i, n in enumerate(notes):
        n["content"] = {**n["content"], "title": {"value": f"Invented paper number {off + i}"}}
    return json.dumps({"notes": notes, "count": 10**9}).encode()


def test_a_server_inventing_papers_on_every_page_meets_the_page_cap(tmp_path: Path) -> None:
    s = SourceServer(routes={"/notes": _inventing_notes}).start()
    try:
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            r = lib.sources.fetch("openreview", [VENUE], base_url=s.url, client=_client(), page_size=2, max_pages=4)
            assert (r.pages, r.new, len(s.seen)) == (4, 8, 4) and lib.count() == 8
            assert r.stopped == "the cap of 4 pages per run" and "--max-pages" in r.notes[-1]
            assert lib.store.sources.source_state(f"openreview {VENUE}")["offset"] == 8  # the next run resumes there
    finally:
        s.stop()


def test_the_cli_says_why_a_fetch_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = SourceServer(routes={"/notes": _inventing_notes}).start()
    monkeypatch.setenv("PAPERATLAS_FETCH_MAX_PAGES", "2")
    try:
        args = [
            "--db",
            str(tmp_path / "lib.db"),
            "fetch",
            "openreview",
            VENUE,
            "--base-url",
            s.url,
            "--delay",
            "0",
            "--no-embed",
            "--json",
        ]
        r = CliRunner().invoke(cli, [*args, "--max-pages", "1"])  # the flag wins over the environment
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert out["stopped"] == "the cap of 1 page per run" and out["pages"] == 1
        assert "stopped early: the cap of 1 page per run" in out["summary"] and "resumes from here" in r.stderr
    finally:
        s.stop()


# -- the Zotero API client -----------------------------------------------------------------------------
ZPATH = "/users/1/items/top"


def _zotero(**kw: object) -> list[dict[str, object]]:
    from paperatlas.refs import zotero_api

    return zotero_api.fetch_items("zotero:users/1", key="", **kw)  # type: ignore[arg-type]


def _zserver(answer: object) -> SourceServer:
    return SourceServer(routes={ZPATH: answer}).start()  # type: ignore[dict-item]


def test_zotero_backoff_is_capped() -> None:
    items = [{"key": "A", "data": {"itemType": "book", "title": "One"}}]
    s = _zserver(lambda qs: (200, {"Backoff": "100000", "Total-Results": "1"}, json.dumps(items).encode()))
    try:
        waits: list[float] = []
        assert _zotero(base=s.url, sleep=waits.append) == items
        assert waits == [60.0]
    finally:
        s.stop()


@pytest.mark.parametrize(
    "headers,body,message",
    [
        ({"Total-Results": "lots"}, b'[{"data": {"title": "x"}}]', "Total-Results: 'lots', not a number"),
        ({"Total-Results": "2"}, b'[1, "two"]', "item 1 of the answer is int, not an object"),
        ({"Total-Results": "1"}, b'[{"data": [1]}]', "item 1 of the answer is an object whose data is not an object"),
        ({}, b"[" * 100_000 + b"]" * 100_000, "nested too deep"),
    ],
)
def test_zotero_answers_that_are_not_items_are_clear_errors(headers: dict[str, str], body: bytes, message: str) -> None:
    from paperatlas.errors import PaperatlasError

    s = _zserver(lambda qs: (200, headers, body))
    try:
        with pytest.raises(PaperatlasError, match=message.replace("(", r"\(").replace(")", r"\)")) as e:
            _zotero(base=s.url, sleep=lambda _: None)
        assert "ZOTERO_API_URL" in e.value.fix
    finally:
        s.stop()


def test_zotero_paging_that_never_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    from paperatlas.errors import PaperatlasError

    same = json.dumps([{"data": {"title": "the same paper"}}]).encode()
    s = _zserver(lambda qs: (200, {"Total-Results": "1000000"}, same))
    try:
        with pytest.raises(PaperatlasError, match="sent the same items again at start=1"):
            _zotero(base=s.url, sleep=lambda _: None)
        assert len(s.seen) == 2
    finally:
        s.stop()
    monkeypatch.setenv("PAPERATLAS_FETCH_MAX_PAGES", "3")
    s = _zserver(
        lambda qs: (
            200,
            {"Total-Results": "1000000"},
            json.dumps([{"data": {"title": f"paper {qs['start'][0]}"}}]).encode(),
        )
    )
    try:
        with pytest.raises(PaperatlasError, match="more than 3 pages") as e:
            _zotero(base=s.url, sleep=lambda _: None)
        assert "PAPERATLAS_FETCH_MAX_PAGES" in e.value.fix and len(s.seen) == 3
    finally:
        s.stop()


def test_zotero_shares_the_body_cap_and_the_redirect_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    from paperatlas.errors import PaperatlasError

    s = _zserver(lambda qs: (200, {}, b"[]"))
    monkeypatch.setenv("PAPERATLAS_FETCH_MAX_BYTES", "100000")
    try:
        s.faults[ZPATH] = ["endless"]
        with pytest.raises(PaperatlasError, match="100,000-byte cap"):
            _zotero(base=s.url, sleep=lambda _: None)
        s.faults[ZPATH] = ["redirect:http://127.0.0.1:1/elsewhere"]
        with pytest.raises(PaperatlasError, match="not followed: it leads to another port"):
            _zotero(base=s.url, sleep=lambda _: None)
    finally:
        s.stop()


# -- nesting and size bombs ----------------------------------------------------------------------------
def test_acl_xml_nested_deep_is_refused_in_linear_time(tmp_path: Path) -> None:
    """200,000 nested volumes (3.4 MB): the depth check stops it at once; walking each volume's
    subtree would have taken time growing with the square of the depth (past 60 s)."""
    deep = b'<collection id="2024.acl">' + b"<volume>" * 200_000 + b"</volume>" * 200_000 + b"</collection>"
    s = SourceServer(routes={"/data/xml/2024.acl.xml": deep}).start()
    try:
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            start = time.monotonic()
            with pytest.raises(FetchError, match="nests elements more than 64 deep"):
                lib.sources.fetch("acl", ["2024.acl"], base_url=s.url, client=_client(max_bytes=1 << 23))
            assert time.monotonic() - start < 15 and lib.count() == 0
            assert len(s.seen) == 1  # refused once: the same bytes would nest as deep again
    finally:
        s.stop()


def test_openreview_json_nested_deep_is_a_clear_error(tmp_path: Path) -> None:
    deep = b'{"notes": ' + b"[" * 100_000 + b"]" * 100_000 + b', "count": 1}'
    s = SourceServer(routes={"/notes": deep}).start()
    try:
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            with pytest.raises(FetchError, match="JSON nested too deep to read") as e:
                lib.sources.fetch("openreview", [VENUE], base_url=s.url, client=_client(max_bytes=1 << 23))
            assert "/notes" in str(e.value) and lib.count() == 0 and len(s.seen) == 1
    finally:
        s.stop()


@pytest.mark.parametrize(
    "name,content,message",
    [
        ("deep.json", "[" * 100_000 + "]" * 100_000, "JSON nested too deep to read"),
        ("deep.jsonl", '{"title": "a"}\n' + "[" * 100_000 + "]" * 100_000 + "\n", "line 2: JSON nested too deep"),
        (
            "deep.rdf",
            '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            + "<a>" * 10_000
            + "</a>" * 10_000
            + "</rdf:RDF>",
            "nests elements more than 64 deep",
        ),
    ],
)
def test_import_reader_refuses_nesting_bombs(tmp_path: Path, name: str, content: str, message: str) -> None:
    Library(tmp_path / "lib.db", embedder="hashing").close()
    f = tmp_path / name
    f.write_text(content, encoding="utf-8")
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "lib.db"), "import-reader", str(f), "-r", "z"])
    assert r.exit_code == 1 and message in r.output and "Traceback" not in r.output, r.output


def test_import_reader_refuses_a_file_over_the_input_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same bound as ingest's (1 GiB by default), read from the file's size before its bytes."""
    f = tmp_path / "huge.json"
    f.write_text(json.dumps([{"title": f"paper {i}"} for i in range(5000)]), encoding="utf-8")
    Library(tmp_path / "lib.db", embedder="hashing").close()
    monkeypatch.setenv("PAPERATLAS_MAX_INPUT_BYTES", "10000")
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "lib.db"), "import-reader", str(f), "-r", "z"])
    assert r.exit_code == 1 and "the limit is 10,000" in r.output and "PAPERATLAS_MAX_INPUT_BYTES" in r.output
