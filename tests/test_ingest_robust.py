"""Crash safety, concurrent readers and parser fuzzing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import VENUE_PAPERS, need
from paperatlas import Library
from paperatlas.ingest.formats import FileError, Format, read_file
from paperatlas.ingest.normalize import RecordError, to_paper

BATCH = 200


def _count(db: Path) -> int:
    c = sqlite3.connect(db, timeout=30)
    try:
        return c.execute("SELECT count(*) FROM papers").fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        c.close()


def _start_ingest(db: Path, path: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PAPERATLAS_INGEST_BATCH": str(BATCH)}
    return subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "ingest", "--no-embed", str(path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_sigkill_midway_leaves_whole_batches(tmp_path: Path) -> None:
    path = need(VENUE_PAPERS)
    db = tmp_path / "lib.db"
    proc = _start_ingest(db, path)
    deadline = time.time() + 60
    while _count(db) < BATCH and time.time() < deadline and proc.poll() is None:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    n = _count(db)
    assert 0 < n, "the ingest was killed before its first batch"
    assert n % BATCH == 0 or n == 8088, n  # whole batches only
    lib = Library(db)
    assert lib.store.execute_script_for_tests("PRAGMA integrity_check")[0][0] == "ok"
    fts = lib.store.execute_script_for_tests("SELECT count(*) FROM papers_fts")[0][0]
    assert fts == n
    report = lib.ingest(path)
    assert report.new == 8088 - n and report.unchanged == n
    assert lib.count() == 8088
    lib.close()


def test_reader_works_while_ingest_writes(tmp_path: Path) -> None:
    path = need(VENUE_PAPERS)
    db = tmp_path / "lib.db"
    Library(db).close()  # create the schema first
    proc = _start_ingest(db, path)
    reader = Library(db)
    seen = []
    while proc.poll() is None:
        seen.append(reader.count())
        reader.papers(limit=5)
        time.sleep(0.01)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert reader.count() == 8088
    assert any(0 < s < 8088 for s in seen), "the reader never saw the ingest half-way"
    reader.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=2000), fmt=st.sampled_from([None, *list(Format)]))
def test_fuzz_read_file_never_crashes(tmp_path: Path, data: bytes, fmt: Format | None) -> None:
    f = tmp_path / "fuzz.bin"
    f.write_bytes(data)
    try:
        res = read_file(f, fmt)
    except FileError as e:
        assert "fuzz.bin" in str(e)
        return
    for loc, row in res.rows:
        assert isinstance(row, dict) and loc
    for b in res.bad:
        assert "fuzz.bin" in str(b)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
keys = st.sampled_from(
    [
        "title",
        "abstract",
        "authors",
        "year",
        "venue",
        "id",
        "_id",
        "text",
        "content",
        "keywords",
        "versions",
        "status",
        "url",
        "date",
    ]
) | st.text(max_size=8)


@settings(max_examples=300, deadline=None)
@given(row=st.dictionaries(keys, json_values, max_size=8), fmt=st.sampled_from(list(Format)))
def test_fuzz_to_paper(row: dict, fmt: Format) -> None:
    try:
        paper, key = to_paper(row, fmt, "fuzz.jsonl")
    except RecordError:
        return
    assert paper.id and paper.title and len(key) == 40
