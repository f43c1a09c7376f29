"""Several hosts, one library (issue 15): two `serve` processes on one PostgreSQL library.

A like written through one server is seen by the other at once, and concurrent writers through
both servers lose nothing."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import httpx
import pytest

from paperatlas import Library
from paperatlas_lab.bench.http import start_server, stop_server

from conftest import EXAMPLES
from pgserver import fresh_db_name

pytestmark = pytest.mark.slow


@pytest.fixture
def two_servers(pg_server, tmp_path: Path):
    url = pg_server.url(fresh_db_name("hosts"))
    with Library(url, embedder="hashing") as lib:
        lib.ingest(EXAMPLES)
        lib.embed()
        ids = [p.id for p in lib.papers()]
        tokens = {name: lib.readers.get(name).token for name in ("alice", "bob")}
    env = dict(os.environ, PAPERATLAS_CACHE_DIR=str(tmp_path / "cache"))
    # each "host" keeps its local indexes in its own cache folder, as two machines would
    a, port_a = start_server(url, env=dict(env, PAPERATLAS_CACHE_DIR=str(tmp_path / "host-a")))
    b, port_b = start_server(url, env=dict(env, PAPERATLAS_CACHE_DIR=str(tmp_path / "host-b")))
    try:
        yield url, f"http://127.0.0.1:{port_a}", f"http://127.0.0.1:{port_b}", ids, tokens
    finally:
        stop_server(a)
        stop_server(b)


def _like(client: httpx.Client, base: str, token: str, ids: list[str], on: bool = True) -> None:
    r = client.post(
        f"{base}/api/feedback",
        data={"ids": json.dumps(ids), "kind": "like", "on": str(on).lower()},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    )
    assert r.status_code in (200, 303), r.text


def _saved(client: httpx.Client, base: str, token: str) -> set[str]:
    r = client.get(f"{base}/saved.json", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text
    return {p["id"] for p in r.json()["papers"]}


def test_a_like_through_one_host_is_seen_by_the_other(two_servers) -> None:
    _, a, b, ids, tokens = two_servers
    with httpx.Client(timeout=30) as c:
        _like(c, a, tokens["alice"], [ids[0]])
        assert _saved(c, b, tokens["alice"]) == {ids[0]}
        _like(c, b, tokens["alice"], [ids[0]], on=False)
        assert _saved(c, a, tokens["alice"]) == set()
        # both hosts answer searches from their own local indexes over the same papers
        for base in (a, b):
            r = c.get(f"{base}/search.json", params={"q": "controllable user simulators"})
            assert r.status_code == 200 and r.json()["hits"]


def test_concurrent_writers_through_both_hosts_lose_nothing(two_servers) -> None:
    _, a, b, ids, tokens = two_servers
    errors: list[BaseException] = []

    def writer(name: str, mine: list[str]) -> None:
        try:
            with httpx.Client(timeout=60) as c:
                for i, pid in enumerate(mine):
                    _like(c, a if i % 2 else b, tokens[name], [pid])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    half = len(ids) // 2
    jobs = [("alice", ids[:half]), ("alice", ids[half:]), ("bob", ids), ("bob", ids[::-1])]
    threads = [threading.Thread(target=writer, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:1]
    with httpx.Client(timeout=30) as c:
        assert _saved(c, a, tokens["alice"]) == set(ids)
        assert _saved(c, b, tokens["bob"]) == set(ids)


def test_a_follow_written_on_one_host_is_seen_by_the_other(two_servers, tmp_path: Path) -> None:
    """`follow` on host A (its own cache folder), then the follow list and `unfollow` on host B."""
    import subprocess
    import sys

    url = two_servers[0]

    def host(name: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, PAPERATLAS_CACHE_DIR=str(tmp_path / name))
        return subprocess.run(
            [sys.executable, "-m", "paperatlas", "--db", url, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    r = host("host-a", "follow", "paperlists", "colm", "2025", "--base-url", "http://127.0.0.1:9")
    assert r.returncode == 0, r.stderr
    listed = host("host-b", "follow", "--json")
    assert listed.returncode == 0, listed.stderr
    follows = json.loads(listed.stdout)
    assert [(f["source"], f["args"]) for f in follows] == [("paperlists", ["colm", "2025"])], follows
    assert host("host-b", "unfollow", "paperlists", "colm", "2025").returncode == 0
    again = host("host-a", "follow", "--json")
    assert again.stdout.strip() in ("", "[]"), again.stdout
