"""Shared fixtures: a fresh library file per test, the CLI runner, the real data paths."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from paperatlas import Library

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
EXAMPLES = sorted((ROOT / "examples").glob("*.txt"))


def _shared_data() -> Path:
    """The read-only evaluation data: $PAPERATLAS_SHARED_DATA, ../shared/data beside the clone,
    or the workplace's /work/shared/data (CI clones may live elsewhere)."""
    for cand in (os.environ.get("PAPERATLAS_SHARED_DATA"), ROOT.parent / "shared" / "data", "/work/shared/data"):
        if cand and Path(cand).is_dir():
            return Path(cand)
    return ROOT.parent / "shared" / "data"


SHARED = _shared_data()
VENUE_PAPERS = SHARED / "ml_venue_papers" / "papers.jsonl.gz"
SCIFACT = SHARED / "scifact"

# Tests never write to the user's own embedding cache (~/.cache/paperatlas): one throw-away
# cache per test session, unless the caller points PAPERATLAS_VECTOR_CACHE somewhere on purpose.
os.environ.setdefault("PAPERATLAS_VECTOR_CACHE", os.path.join(tempfile.mkdtemp(prefix="paperatlas-test-"), "v.sqlite"))
# the derived int8 query model too (embed/quantize.py): made once per test session, not in ~/.cache
os.environ.setdefault("PAPERATLAS_CACHE_DIR", tempfile.mkdtemp(prefix="paperatlas-test-cache-"))


def cli_library(folder: Path, papers: list[dict], *ingest_args: str) -> str:
    """A library file in `folder` holding `papers`, made as a user makes one: `paperatlas ingest`
    of a JSONL file (with `ingest_args`, e.g. --no-embed)."""
    from paperatlas.cli import cli

    path = folder / "lib.db"
    src = folder / "papers.jsonl"
    src.write_text("\n".join(json.dumps(p) for p in papers), encoding="utf-8")
    r = CliRunner().invoke(cli, ["--db", str(path), "ingest", str(src), *ingest_args])
    assert r.exit_code == 0, r.output
    return str(path)


def need(path: Path) -> Path:
    """Skip when the shared evaluation data is absent (CI has it; a user's clone may not)."""
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


@pytest.fixture
def web_lib(tmp_path: Path, request: pytest.FixtureRequest):
    """A hashing-embedder library of the examples plus the test module's PAPERS (JSONL records)."""
    f = tmp_path / "papers.jsonl"
    f.write_text("".join(json.dumps(p) + "\n" for p in request.module.PAPERS), encoding="utf-8")
    lib = Library(tmp_path / "web.db", embedder="hashing")
    lib.ingest(EXAMPLES)
    lib.ingest([f])
    lib.embed()
    yield lib
    lib.close()


@pytest.fixture
def client(web_lib: Library):
    """The web app over `web_lib` in a test client (no server)."""
    from starlette.testclient import TestClient

    from paperatlas.web import create_app

    # a loopback server seen from this machine: the owner ("me") is signed in, as for `make demo`
    with TestClient(
        create_app(web_lib, owner_signin=True), base_url="http://127.0.0.1", client=("127.0.0.1", 50000)
    ) as c:
        yield c


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "lib.db"


@pytest.fixture
def library(db_path: Path):
    lib = Library(db_path)
    yield lib
    lib.close()


@pytest.fixture
def examples_library(library: Library) -> Library:
    library.ingest(EXAMPLES)
    return library


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# -- PostgreSQL (issue 15): one real server per test session, started only when a test asks -------------
@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server on a free loopback port. Skipped when PostgreSQL or psycopg is missing,
    unless PAPERATLAS_REQUIRE_POSTGRES=1 (CI), where a missing server fails the run."""
    from pgserver import PgServer, pg_bin

    problem = None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        problem = "psycopg is not installed (pip install -e '.[scale]')"
    if problem is None and pg_bin() is None:
        problem = "PostgreSQL is not installed (apt-get install postgresql-15)"
    if problem:
        if os.environ.get("PAPERATLAS_REQUIRE_POSTGRES") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    server = PgServer()
    yield server
    server.stop()


# -- a real language-model server (the LLM layer): one per test session, started only when a test asks ----
@pytest.fixture(scope="session")
def llm_server():
    """llama.cpp's OpenAI-compatible server running the Gemma 3 270M fixture on loopback. Skipped
    when .ci/install-llm has not run, unless PAPERATLAS_REQUIRE_LLM=1 (CI), where that fails the run."""
    from llmserver import LlamaServer, missing

    problem = missing()
    if problem:
        if os.environ.get("PAPERATLAS_REQUIRE_LLM") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    server = LlamaServer()
    yield server
    server.stop()


@pytest.fixture
def llm_proxy(llm_server):
    """A counting, fault-injecting proxy in front of the session's model server (fresh per test)."""
    from llmserver import Proxy

    proxy = Proxy(llm_server.port).start()
    yield proxy
    proxy.stop()
