"""A PostgreSQL library under attack from its own infrastructure: a database server killed and
restarted under a running `serve`, and passwords in the library URL.

They use the session's PostgreSQL server (tests/pgserver.py); the restart test kills it and starts it
again on the same port and folder, as a crash and a supervisor would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from paperatlas import Library
from paperatlas.cli import cli
from paperatlas.store import redact

pytestmark = pytest.mark.slow
SECRET = "Sup3rS3cret"  # the test server trusts loopback, so any password connects


@pytest.fixture
def own_pg(pg_server) -> Iterator[object]:
    """The session's PostgreSQL server, started again after the test if the test left it killed."""
    yield pg_server
    if not getattr(pg_server, "running", True):
        pg_server.start()


def _with_password(url: str, form: str) -> str:
    if form == "userinfo":
        return url.replace("paperatlas@", f"paperatlas:{SECRET}@")
    return url + f"?password={SECRET}&sslmode=disable"


def test_redact_hides_both_password_forms() -> None:
    assert redact(f"postgresql://u:{SECRET}@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert (
        redact(f"postgresql://u@h/db?sslmode=disable&password={SECRET}")
        == "postgresql://u@h/db?sslmode=disable&password=***"
    )
    assert redact(f"postgres://h/db?sslpassword={SECRET}") == "postgres://h/db?sslpassword=***"
    assert redact("library.db") == "library.db"


@pytest.mark.parametrize("form", ["userinfo", "query"])
def test_no_command_prints_the_password(own_pg, form: str) -> None:
    from pgserver import fresh_db_name

    url = _with_password(own_pg.url(fresh_db_name("pw")), form)
    runner = CliRunner()
    outputs = []
    for args in (["search", "anything"], ["list"], ["export", "--format", "bibtex"], ["stats"], ["stats", "--json"]):
        r = runner.invoke(cli, ["--db", url, *args])
        outputs.append((args, r.exit_code, r.output))
    for args, _, out in outputs:
        assert SECRET not in out, (args, out)
    assert any("***" in out for _, _, out in outputs)  # the URL is still named, without its secret


def _banner(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if re.search(r"at http://127\.0\.0\.1:\d+/", line):
            return "".join(lines)
    raise AssertionError("serve did not start: " + "".join(lines))


def test_serve_survives_a_postgres_restart(own_pg, tmp_path: Path) -> None:
    """kill -9 the database under a running server: pages answer 503 saying why, /healthz says 503,
    no psycopg traceback; once the database is back, every request is answered again without
    restarting serve."""
    from pgserver import fresh_db_name

    url = _with_password(own_pg.url(fresh_db_name("restart")), "query")
    with Library(url, embedder="hashing") as lib:
        lib.ingest(EXAMPLES)
        lib.embed()
        count = lib.count()
    proc = subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", url, "serve", "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, PAPERATLAS_CACHE_DIR=str(tmp_path / "cache")),
    )
    try:
        banner = _banner(proc)
        assert "serving postgresql://" in banner and SECRET not in banner and "password=***" in banner, banner
        port = re.search(r"at http://127\.0\.0\.1:(\d+)/", banner).group(1)  # type: ignore[union-attr]
        base = f"http://127.0.0.1:{port}"
        pages = ["/stats.json", "/search.json?q=user+simulators", "/healthz", "/search?q=user+simulators"]
        with httpx.Client(timeout=30) as c:
            for p in pages:
                assert c.get(base + p).status_code == 200, p
            own_pg.kill()
            down = [c.get(base + p) for p in pages for _ in range(3)]
            assert {r.status_code for r in down} == {503}, [
                (r.request.url.path, r.status_code, r.text[-300:]) for r in down if r.status_code != 503
            ]
            err = down[0].json()  # the HTML page (last) says the same in HTML
            assert "is not answering" in err["error"] and "reconnects by itself" in err["fix"]
            assert SECRET not in " ".join(r.text for r in down)
            assert c.get(base + "/healthz").json()["ok"] is False
            own_pg.start()
            back = time.monotonic()
            while c.get(base + "/stats.json").status_code != 200:
                assert time.monotonic() - back < 30, "serve did not reconnect within 30 s"
                time.sleep(0.05)
            reconnect = time.monotonic() - back
            answers = [c.get(base + p) for p in pages for _ in range(5)]
            assert [r.status_code for r in answers] == [200] * len(answers)
            assert c.get(base + "/stats.json").json()["papers"] == count
        print(f"reconnected {reconnect:.2f} s after the database accepted connections again")
    finally:
        proc.terminate()
        out = proc.communicate(timeout=20)[0]
    assert "Traceback" not in out and "psycopg" not in out, out[-3000:]
