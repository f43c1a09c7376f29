"""Issue 16, the web side, against a real `paperatlas serve` on loopback: reader isolation,
Host and Origin checks, size limits, read-only serving that writes nothing, parameters that
once made 500s, and redirects that never leave the site."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from paperatlas_lab.bench.http import start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(str(p) for p in (ROOT / "examples").glob("*.txt"))
ENV = {**os.environ, "PAPERATLAS_EMBEDDER": "hashing"}
T = 120  # seconds per request: a loaded 2-core CI machine is slow, and a timeout is no finding


def cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paperatlas", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=True,
    )


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A library of the examples with readers alice and bob, made as the issue made them: by `like`."""
    db = tmp_path_factory.mktemp("trust") / "lib.db"
    cli(db, "ingest", *EXAMPLES)
    ids = [p["id"] for p in json.loads(cli(db, "list", "--json", "--limit", "6").stdout)]
    cli(db, "like", ids[0], ids[1], "--reader", "alice")
    cli(db, "like", ids[2], ids[3], "--reader", "bob")
    return db, ids


@pytest.fixture(scope="module")
def server(library: tuple[Path, list[str]]) -> Iterator[str]:
    proc, port = start_server(str(library[0]), env=ENV, cwd=str(ROOT), timeout=90)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_server(proc)


def token(db: Path, name: str) -> str:
    return cli(db, "readers", "token", name).stdout.strip()


def csrf(c: httpx.Client) -> str:
    c.get("/")
    return c.cookies.get("pa_csrf") or ""


def test_a_reader_cookie_alone_gets_nothing_of_theirs(server: str, library: tuple[Path, list[str]]) -> None:
    db, ids = library
    bob = token(db, "bob")
    with httpx.Client(base_url=server, cookies={"pa_reader": "bob"}, timeout=T) as c:
        saved = c.get("/saved.json").json()
        assert not {p["id"] for p in saved["papers"]} & {ids[2], ids[3]}  # none of bob's likes
        assert bob not in c.get("/saved").text  # nor bob's token
        r = c.post(
            "/api/feedback",
            data={"ids": ids[4], "kind": "like", "csrf": csrf(c)},
            headers={"accept": "application/json"},
        )
        assert r.status_code in (200, 401)  # the owner (this machine) may like, but never as bob
    likes = json.loads(cli(db, "export", "--reader", "bob", "--format", "json").stdout)
    assert sorted(p["id"] for p in likes) == sorted([ids[2], ids[3]])
    # bob's feed is private: the bare URL answers 404, the keyed one (from bob's own digest) works
    assert httpx.get(f"{server}/feeds/reader/bob.atom", timeout=T).status_code == 404
    feed = httpx.get(f"{server}/digest.json", headers={"authorization": f"Bearer {bob}"}, timeout=T).json()["feed"]
    assert "key=" in feed and httpx.get(server + feed, timeout=T).status_code == 200


def test_sign_in_with_the_token_and_only_then(server: str, library: tuple[Path, list[str]]) -> None:
    db, ids = library
    with httpx.Client(base_url=server, timeout=T) as c:
        t = csrf(c)
        wrong = c.post(
            "/reader", data={"name": "alice", "token": "guess", "csrf": t}, headers={"accept": "application/json"}
        )
        assert wrong.status_code == 403 and "readers token alice" in wrong.json()["fix"]
        ok = c.post(
            "/reader",
            data={"name": "alice", "token": token(db, "alice"), "csrf": t},
            headers={"accept": "application/json"},
        )
        assert ok.status_code == 200 and "pa_session" in c.cookies
        assert {p["id"] for p in c.get("/saved.json").json()["papers"]} == {ids[0], ids[1]}
        # a reader named in Chinese is fine; control characters are refused before anything is created
        zh = c.post("/reader", data={"name": "日本", "csrf": t}, headers={"accept": "application/json"})
        assert zh.status_code == 200 and zh.json()["reader"]["name"] == "日本"
        assert c.get("/saved.json").json()["reader"] == "日本"
        bad = c.post("/reader", data={"name": "evil\x07name", "csrf": t}, headers={"accept": "application/json"})
        assert bad.status_code == 400 and "control" in bad.json()["error"]
    names = [r["name"] for r in json.loads(cli(db, "readers", "--json").stdout)]
    assert "日本" in names and not any("\x07" in n for n in names)


@pytest.mark.parametrize("host", ["attacker.example", "attacker.example:80", "localhost.attacker.example"])
def test_a_foreign_host_name_is_refused(server: str, host: str) -> None:
    r = httpx.get(f"{server}/saved.json", headers={"host": host}, timeout=T)
    assert r.status_code == 400 and "--allowed-host" in r.json()["fix"]
    assert httpx.get(f"{server}/healthz", headers={"host": "localhost"}, timeout=T).status_code == 200


def sign_in(c: httpx.Client, db: Path, name: str) -> str:
    t = csrf(c)
    r = c.post(
        "/reader", data={"name": name, "token": token(db, name), "csrf": t}, headers={"accept": "application/json"}
    )
    assert r.status_code == 200, r.text
    return t


def test_cross_site_writes_are_refused(server: str, library: tuple[Path, list[str]]) -> None:
    db, ids = library
    with httpx.Client(base_url=server, timeout=T) as c:
        t = sign_in(c, db, "alice")
        for h in ({"origin": "https://attacker.example"}, {"origin": "null"}, {"sec-fetch-site": "cross-site"}):
            r = c.post("/api/feedback", data={"ids": ids[5], "csrf": t}, headers={**h, "accept": "application/json"})
            assert r.status_code == 403 and "another site" in r.json()["error"], h
        same = c.post(
            "/api/feedback",
            data={"ids": ids[5], "csrf": t, "on": "0"},
            headers={"origin": server, "sec-fetch-site": "same-origin", "accept": "application/json"},
        )
        assert same.status_code == 200


def test_huge_headers_and_numbers(server: str) -> None:
    r = httpx.get(f"{server}/search.json", params={"q": "x"}, headers={"x-pad": "a" * 200_000}, timeout=T)
    assert 400 <= r.status_code < 500
    for url in (
        "/search.json?q=x&year=9223372036854775808",
        "/foryou.json?year=99999999999999999999",
        "/browse.json?year=-9223372036854775809",
        "/search.json?q=x&page=18446744073709551616",
    ):
        r = httpx.get(server + url, timeout=T)
        assert r.status_code == 400, (url, r.status_code)
        assert "year" in r.json()["error"] or "page" in r.json()["error"]


def test_redirects_never_echo_a_foreign_or_odd_referer(server: str, library: tuple[Path, list[str]]) -> None:
    db, ids = library
    with httpx.Client(base_url=server, timeout=T) as c:
        t = sign_in(c, db, "alice")
        for ref, want in [
            ("javascript:alert(1)//127.0.0.1", "/paper/"),
            ("https://attacker.example/x", "/paper/"),
            (f"{server}/search?q=ok", "/search?q=ok"),
            (f"{server}//evil.example/", "/"),
        ]:
            r = c.post(f"/paper/{ids[5]}/star", data={"on": "0", "csrf": t}, headers={"referer": ref})
            assert r.status_code == 303 and r.headers["location"].startswith(want), (ref, r.headers["location"])
            assert "javascript" not in r.headers["location"] and "attacker" not in r.headers["location"]


def _dump(db: Path) -> str:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return hashlib.sha256("\n".join(con.iterdump()).encode()).hexdigest()
    finally:
        con.close()


def _listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((p.name, p.stat().st_size) for p in folder.iterdir())


def test_read_only_serving_changes_nothing(library: tuple[Path, list[str]], tmp_path: Path) -> None:
    src, _ = library
    db = tmp_path / "ro" / "lib.db"
    db.parent.mkdir()
    shutil.copy(src, db)
    alice = token(db, "alice")
    cli(db, "like", library[1][4], "--reader", "alice")  # a like the stored profile has not seen yet
    before, files = _dump(db), _listing(db.parent)
    env = {**ENV, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc, port = start_server(str(db), "--read-only", env=env, cwd=str(ROOT), timeout=90)
    try:
        auth = {"authorization": f"Bearer {alice}"}
        for path in ("/foryou", "/foryou.json", "/profile.json", "/digest.json", "/search.json?q=learning", "/stats"):
            assert httpx.get(f"http://127.0.0.1:{port}{path}", headers=auth, timeout=T).status_code == 200, path
        r = httpx.post(f"http://127.0.0.1:{port}/reader", data={"name": "x"}, timeout=T)
        assert r.status_code == 403
        # while it serves, SQLite keeps the -wal and -shm files that readers of a WAL library share
        # with its writers (a CLI ingest may run meanwhile); nothing else appears
        extra = {n for n, _ in _listing(db.parent)} - {n for n, _ in files}
        assert extra <= {"lib.db-wal", "lib.db-shm"}, extra
    finally:
        stop_server(proc)
    assert _dump(db) == before
    assert _listing(db.parent) == files, "a read-only server left files beside the library"


def test_a_saved_search_with_a_huge_year_never_500s(tmp_path: Path, library: tuple[Path, list[str]]) -> None:
    from starlette.testclient import TestClient

    from paperatlas import Library
    from paperatlas.web import create_app

    db = tmp_path / "lib.db"
    shutil.copy(library[0], db)
    lib = Library(db, embedder="hashing")
    me = lib.readers.get("me")
    sid = lib.store.readers.save_search(me.id, "huge", "learning", {"year": 2**70})  # stored by an older version
    with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 1)) as c:
        feed = next(s["feed"] for s in c.get("/digest.json").json()["saved_searches"] if s["id"] == sid)
        r = c.get(feed)
        assert r.status_code < 500, r.text
        h = {"x-csrf-token": c.cookies.get("pa_csrf") or "", "accept": "application/json"}
        assert c.post("/searches", data={"q": "x", "year": str(2**70)}, headers=h).status_code == 400
    lib.close()


def test_export_of_a_tag_in_chinese(server: str, library: tuple[Path, list[str]]) -> None:
    """Found by the standing schemathesis run: a non-ASCII tag made the download's file name a 500."""
    db, ids = library
    with httpx.Client(base_url=server, timeout=T) as c:
        t = sign_in(c, db, "alice")
        assert (
            c.post(
                f"/paper/{ids[0]}/tags", data={"tag": "待读", "csrf": t}, headers={"accept": "application/json"}
            ).status_code
            == 200
        )
        r = c.get("/saved/export", params={"format": "json", "tag": "待读"})
        assert r.status_code == 200 and [p["id"] for p in r.json()] == [ids[0]]
        assert 'filename="paperatlas-saved.json"' in r.headers["content-disposition"]


# -- issue 22's web findings and issue 21's stars, against the same kind of live server ----------------
# A proxy on this machine (nginx, a tunnel) connects from 127.0.0.1 too: a visitor through it is not
# the owner. These headers make a request from this test such a visitor.
VIA_PROXY = {"x-forwarded-for": "203.0.113.7"}
JSON = {"accept": "application/json"}


def test_the_owners_stars_work_after_the_readmes_like_steps(server: str, library: tuple[Path, list[str]]) -> None:
    """`paperatlas like ... --reader alice` and `--reader bob` made two readers and no `me`: every star
    on the local page answered 401. On this machine the page is the owner, `me`, made on first write."""
    db, ids = library
    with httpx.Client(base_url=server, timeout=T) as c:
        t = csrf(c)
        r = c.post(f"/paper/{ids[5]}/star", data={"on": "1", "csrf": t}, headers=JSON)
        assert r.status_code == 200 and r.json()["reader"] == "me", r.text
        assert ids[5] in {p["id"] for p in c.get("/saved.json").json()["papers"]}
    mine = json.loads(cli(db, "export", "--reader", "me", "--format", "json").stdout)
    assert ids[5] in {p["id"] for p in mine}  # the CLI's default reader sees the page's star
    assert sorted(
        p["id"] for p in json.loads(cli(db, "export", "--reader", "alice", "--format", "json").stdout)
    ) == sorted(ids[:2])  # and alice's likes are untouched


def test_nobody_but_the_owner_can_create_me(server: str, library: tuple[Path, list[str]]) -> None:
    """A visitor signing up as `me` (or a look-alike) would read whatever the owner's CLI writes."""
    db, _ = library
    with httpx.Client(base_url=server, timeout=T, headers=VIA_PROXY) as c:
        t = csrf(c)
        for name in ("me", "ME", " Me ", "ｍｅ"):
            r = c.post("/reader", data={"name": name, "csrf": t}, headers=JSON)
            assert r.status_code == 403 and "token" not in r.json(), (name, r.text)
        for name in ("m\u0435", "\u043c\u0435"):  # a Cyrillic е; Cyrillic м and е: they read as "me"
            r = c.post("/reader", data={"name": name, "csrf": t}, headers=JSON)
            assert r.status_code == 400 and "looks like the reader 'me'" in r.json()["error"], (name, r.text)
        assert "pa_session" not in c.cookies
    names = [r["name"] for r in json.loads(cli(db, "readers", "--json").stdout)]
    assert not [n for n in names if n != "me" and n.casefold() in ("me", "ｍｅ")], names


def test_a_group_list_is_for_its_members_and_never_shows_likes(server: str, library: tuple[Path, list[str]]) -> None:
    db, ids = library
    alice_likes, bob_likes = set(ids[:2]), set(ids[2:4])
    with httpx.Client(base_url=server, timeout=T, headers=VIA_PROXY) as anon:
        r = anon.get("/group.json", params={"readers": "alice,bob", "n": 50})
        assert r.status_code == 401, r.text[:300]
        page = anon.get("/group").text
        assert "alice" not in page and "bob" not in page  # no list of who reads this server
        assert "shown to its members only" in page and "two readers" not in page  # the hint says the rule
    with httpx.Client(base_url=server, timeout=T, headers=VIA_PROXY) as c:
        sign_in(c, db, "bob")
        assert c.get("/group.json", params={"readers": "alice,carol"}).status_code == 403  # not a member
        g = c.get("/group.json", params={"readers": "alice,bob", "n": 50})
        assert g.status_code == 200, g.text[:300]
        shown = {p["id"] for p in g.json()["papers"]}
        assert shown and not shown & alice_likes and not shown & bob_likes
        page = c.get("/group", params={"readers": "alice,bob"}).text
        assert page.count('value="alice"') == 1  # the asked-for member, not a list of all readers
        # the hint says how to add members here (type their names), not "sign in with a new name";
        # bob is offered alone, and ticked: he is a member
        page = c.get("/group").text
        assert "lists no other readers" in page and "with a new name" not in page
        assert re.search(r'value="bob"\s+checked', page), page[:2000]


@pytest.mark.parametrize(
    "header",
    [
        {"via": "1.1 proxy"},
        {"x-forwarded-host": "example.org"},
        {"cf-connecting-ip": "203.0.113.9"},
        {"forwarded": "for=203.0.113.9"},
    ],
)
def test_a_relayed_request_is_never_the_owner(server: str, header: dict[str, str]) -> None:
    with httpx.Client(base_url=server, timeout=T, headers=header) as c:
        assert c.get("/saved.json").json()["reader"] is None
        r = c.post("/api/feedback", data={"ids": "x", "csrf": csrf(c)}, headers=JSON)
        assert r.status_code == 401, r.text


def test_signing_out_ends_the_session_on_the_server(server: str, library: tuple[Path, list[str]]) -> None:
    db, ids = library
    with httpx.Client(base_url=server, timeout=T, headers=VIA_PROXY) as c:
        t = csrf(c)
        r = c.post("/reader", data={"name": "alice", "token": token(db, "alice"), "csrf": t}, headers=JSON)
        cookie = r.cookies["pa_session"]
        max_age = int(
            next(p.split("=")[1] for p in r.headers["set-cookie"].lower().split(";") if p.strip().startswith("max-age"))
        )
        assert max_age <= 30 * 86400
        assert c.get("/saved.json").json()["reader"] == "alice"
        assert c.post("/signout", data={"csrf": t}, headers=JSON).status_code == 200
    # the cookie a thief copied before the sign-out no longer signs in
    with httpx.Client(base_url=server, timeout=T, headers=VIA_PROXY, cookies={"pa_session": cookie}) as thief:
        saved = thief.get("/saved.json").json()
        assert saved["reader"] is None and not {p["id"] for p in saved["papers"]} & set(ids[:2])


def test_sign_ups_are_limited_per_client(server: str) -> None:
    with httpx.Client(base_url=server, timeout=T, headers=VIA_PROXY) as c:
        t = csrf(c)
        answers = [c.post("/reader", data={"name": f"signup-{i}", "csrf": t}, headers=JSON) for i in range(8)]
    codes = [r.status_code for r in answers]
    assert codes.count(429) >= 3 and 200 in codes, codes  # 5 at once, then one per 10 minutes
    refused = next(r for r in answers if r.status_code == 429)
    assert int(refused.headers["retry-after"]) > 0 and "minutes" in refused.json()["fix"]


def test_sign_ups_are_off_on_a_server_reachable_from_the_network(
    library: tuple[Path, list[str]], tmp_path: Path
) -> None:
    from starlette.testclient import TestClient

    from paperatlas import Library
    from paperatlas.web import create_app

    db = tmp_path / "lib.db"
    shutil.copy(library[0], db)
    remote = {"base_url": "http://192.0.2.1", "client": ("198.51.100.4", 1)}
    with Library(db, embedder="hashing") as lib:
        with TestClient(create_app(lib), **remote) as c:  # type: ignore[arg-type]
            r = c.post("/reader", data={"name": "newcomer", "csrf": csrf(c)}, headers=JSON)  # type: ignore[arg-type]
            assert r.status_code == 403 and "readers add" in r.json()["fix"], r.text
            assert "readers add" in c.get("/signin").text
        assert lib.store.readers.get_reader("newcomer") is None
        with TestClient(create_app(lib, signups=True), **remote) as c:  # type: ignore[arg-type]
            r = c.post("/reader", data={"name": "newcomer", "csrf": csrf(c)}, headers=JSON)  # type: ignore[arg-type]
            assert r.status_code == 200 and r.json()["token"], r.text


def _serve_on(db: Path, host: str, *args: str) -> tuple[subprocess.Popen[str], int, list[str]]:
    """`serve --host HOST`: the process, its port and its output so far (read on in a thread)."""
    import re
    import threading

    proc = subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "serve", "--host", host, "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=ENV,
        cwd=str(ROOT),
    )
    assert proc.stdout is not None
    lines: list[str] = []
    for line in proc.stdout:
        lines.append(line)
        m = re.search(rf"at http://{re.escape(host)}:(\d+)/", line)
        if m:
            threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
            return proc, int(m.group(1)), lines
    raise AssertionError("serve did not start: " + "".join(lines))


def test_any_host_name_on_loopback_never_makes_the_owner(library: tuple[Path, list[str]], tmp_path: Path) -> None:
    """`serve --host 127.0.0.2 --allowed-host '*'`: a rebinding page (Host: evil.example) read the owner's
    likes, saw the token on /saved and wrote. It still reaches the papers, never the owner."""
    db = tmp_path / "lib.db"
    shutil.copy(library[0], db)
    ids = library[1]
    cli(db, "like", ids[4], "--reader", "me")
    me = token(db, "me")
    proc, port, out = _serve_on(db, "127.0.0.2", "--allowed-host", "*")
    try:
        base = f"http://127.0.0.2:{port}"
        evil = {"host": "evil.example"}
        with httpx.Client(base_url=base, timeout=T, headers=evil) as c:
            assert c.get("/search.json", params={"q": "learning"}).status_code == 200  # '*' serves it
            assert c.get("/saved.json").json()["reader"] is None
            assert me not in c.get("/saved").text
            r = c.post(f"/paper/{ids[5]}/star", data={"on": "1", "csrf": csrf(c)}, headers=JSON)
            assert r.status_code == 401, r.text
        with httpx.Client(base_url=base, timeout=T) as owner:  # the owner by the address itself
            assert owner.get("/saved.json").json()["reader"] == "me"
    finally:
        stop_server(proc)
    assert "--allowed-host '*'" in "".join(out) and "rebinding" in "".join(out)
    assert [p["id"] for p in json.loads(cli(db, "export", "--reader", "me", "--format", "json").stdout)] == [ids[4]]


def _mcp_post(url: str, body: dict[str, object], headers: dict[str, str]) -> httpx.Response:
    h = {"accept": "application/json, text/event-stream", "content-type": "application/json", **headers}
    return httpx.post(url, json=body, headers=h, timeout=T)


def test_mcp_over_http_on_another_loopback_address_checks_host_and_origin(
    library: tuple[Path, list[str]], tmp_path: Path
) -> None:
    """The SDK guards only 127.0.0.1, localhost and ::1; on 127.0.0.2 a forged Host or Origin ran tools."""
    from ports import free_port

    db = tmp_path / "lib.db"
    shutil.copy(library[0], db)
    ids = library[1]
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "mcp", "--http", str(port), "--host", "127.0.0.2"],
        env=ENV,
        cwd=str(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.2:{port}/mcp"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "attack", "version": "1"},
        },
    }
    try:
        import time

        deadline = time.monotonic() + 90
        while True:
            try:
                ok = _mcp_post(url, init, {})
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "the MCP server did not start"
                time.sleep(0.3)
        assert ok.status_code == 200, ok.text
        sid = ok.headers["mcp-session-id"]
        for forged in (
            {"host": "evil.example"},
            {"host": f"evil.example:{port}"},
            {"origin": "http://evil.example"},
            {"origin": "null"},
        ):
            r = _mcp_post(url, init, forged)
            assert r.status_code in (403, 421), (forged, r.status_code, r.text)
        like = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "like", "arguments": {"ids": [ids[5]], "reader": "victim"}},
        }
        r = _mcp_post(url, like, {"host": "evil.example", "mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"})
        assert r.status_code == 421
    finally:
        proc.terminate()
        proc.wait(timeout=20)
    names = [r["name"] for r in json.loads(cli(db, "readers", "--json").stdout)]
    assert "victim" not in names
