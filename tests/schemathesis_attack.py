"""The standing attack (tests/test_schemathesis*.py run it, one file per server mode, so the two
runs can go to two workers): schemathesis `--checks all` (no 5xx, every answer as the API document
declares it, valid requests accepted, invalid ones refused) against a live `paperatlas serve`, every
operation, as a signed-in reader (bearer token), on a normal and a read-only server.

One rule JSON Schema cannot state: a request body over the server's 64 KiB limit is refused with 413
whatever its fields hold (every operation that writes declares the 413), so SCHEMATHESIS_CONFIG
counts 413 as a refusal for both data checks (an oversized body of wrong fields was otherwise a
finding, depending on the seed and on schemathesis's cache).

The default suite runs a bounded number of examples per operation; `PAPERATLAS_ST_EXAMPLES=200`
runs the long attack (the figures in docs/security.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from paperatlas_lab.bench.http import start_server, stop_server

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PAPERATLAS_EMBEDDER": "hashing"}
EXAMPLES = int(os.environ.get("PAPERATLAS_ST_EXAMPLES", "6"))
ST = Path(sys.executable).parent / "schemathesis"

SCHEMATHESIS_CONFIG = """
[checks.negative_data_rejection]
expected-statuses = [400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429, "5xx"]
[checks.positive_data_acceptance]
expected-statuses = ["2xx", "3xx", 401, 403, 404, 409, 413, 429, "5xx"]
"""


def cli(db: Path, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "paperatlas", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=True,
    ).stdout


def build_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("st") / "lib.db"
    cli(db, "ingest", *sorted(str(p) for p in (ROOT / "examples").glob("*.txt")))
    ids = [p["id"] for p in json.loads(cli(db, "list", "--json", "--limit", "3"))]
    cli(db, "like", *ids, "--reader", "me")
    return db


def attack(library: Path, mode: str, tmp_path: Path) -> None:
    """Run schemathesis against a live server in `mode` ("normal" or "read-only"); fail on any finding."""
    if not ST.exists():
        pytest.fail(f"schemathesis is not installed in {ST.parent}: pip install -e '.[test]'")
    token = cli(library, "readers", "token", "me").strip()
    args = ("--read-only",) if mode == "read-only" else ()
    config = tmp_path / "schemathesis.toml"
    config.write_text(SCHEMATHESIS_CONFIG)
    proc, port = start_server(
        str(library), *args, env={**ENV, "XDG_CACHE_HOME": str(tmp_path)}, cwd=str(ROOT), timeout=90
    )
    try:
        r = subprocess.run(
            [
                str(ST),
                "--config-file",
                str(config),
                "run",
                f"http://127.0.0.1:{port}/openapi.json",
                "--checks",
                "all",
                "-n",
                str(EXAMPLES),
                "--seed",
                "16",
                "-H",
                f"Authorization: Bearer {token}",
                "--request-timeout",
                "30",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "NO_COLOR": "1"},
            cwd=tmp_path,
        )  # its cache folder (.schemathesis/) goes there, not into the checkout
    finally:
        stop_server(proc)
    out = r.stdout + r.stderr
    tested = re.search(r"Tested:\s+(\d+)", out)
    cases = re.search(r"(\d+) generated", out)
    print(
        f"schemathesis {mode}: {tested.group(1) if tested else '?'} operations, "
        f"{cases.group(1) if cases else '?'} generated test cases"
    )
    assert "Server error" not in out, out[-6000:]
    assert r.returncode == 0, out[-6000:]
    assert tested and int(tested.group(1)) >= 20, out[-3000:]  # every operation was reached
