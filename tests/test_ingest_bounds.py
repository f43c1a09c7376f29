"""Hostile input files: nesting, size, gzip bombs, encodings, control and bidi characters (issue 16 #5).

Every case runs the real CLI in a subprocess against a real library file, because what matters is the
exit code and the message a user sees (a traceback is a failure), and how much memory the process took.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.models import Hit, Paper
from paperatlas.recommend.digest import atom

GOOD = {"title": "A good paper about graphs", "abstract": "We study message passing on graphs and find it works."}


def _ingest(
    db: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "paperatlas", "--db", str(db), "ingest", "--no-embed", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def _count(db: Path) -> int:
    c = sqlite3.connect(db)
    try:
        return c.execute("SELECT count(*) FROM papers").fetchone()[0]
    finally:
        c.close()


def _deep(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def test_depth_1000_record_is_a_bad_record_that_skip_bad_skips(tmp_path: Path) -> None:
    f = tmp_path / "deep.jsonl"
    f.write_text(
        json.dumps({"title": "deep", "abstract": "x"})[:-1]
        + ', "extra": '
        + _deep(1000)
        + "}\n"
        + json.dumps(GOOD)
        + "\n",
        encoding="utf-8",
    )
    db = tmp_path / "lib.db"
    r = _ingest(db, str(f))
    assert r.returncode == 3, r.stderr
    assert "Traceback" not in r.stderr
    assert "deep.jsonl" in r.stderr and "line 1" in r.stderr and "nested" in r.stderr
    r = _ingest(db, "--skip-bad", str(f))
    assert r.returncode == 0, r.stderr
    assert "1 new" in r.stdout and "line 1" in r.stderr
    assert _count(db) == 1


def test_depth_1000_inside_a_json_array_skips_only_that_record(tmp_path: Path) -> None:
    f = tmp_path / "deep.json"
    f.write_text("[" + json.dumps(GOOD) + ', {"title": "deep", "x": ' + _deep(1000) + "}]", encoding="utf-8")
    db = tmp_path / "lib.db"
    r = _ingest(db, str(f))
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
    assert "record 2" in r.stderr, r.stderr
    r = _ingest(db, "--skip-bad", str(f))
    assert r.returncode == 0, r.stderr
    assert _count(db) == 1


def test_20_mb_abstract_is_refused_with_the_record_and_the_fix(tmp_path: Path) -> None:
    f = tmp_path / "big.jsonl"
    f.write_text(
        json.dumps(GOOD) + "\n" + json.dumps({"title": "huge", "abstract": "word " * 4_000_000}) + "\n",
        encoding="utf-8",
    )
    db = tmp_path / "lib.db"
    r = _ingest(db, str(f), timeout=30)  # the contract: refused within 30 s
    assert r.returncode == 3, r.stderr
    assert "big.jsonl" in r.stderr and "line 2" in r.stderr and "abstract" in r.stderr
    assert "PAPERATLAS_MAX_FIELD_CHARS" in r.stderr  # the fix names the knob
    assert not db.exists()  # a refused ingest into a new library leaves no file behind
    r = _ingest(db, "--skip-bad", str(f), timeout=30)
    assert r.returncode == 0 and _count(db) == 1, r.stderr


def test_huge_text_list_paragraph_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "list.txt"
    f.write_text("ICML 2026\n\n" + "word " * 4_000_000 + "\n", encoding="utf-8")
    r = _ingest(tmp_path / "lib.db", str(f), timeout=30)
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
    assert "list.txt" in r.stderr


def _peak_rss_mb(cmd: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run `cmd` under a fresh wrapper process, so RUSAGE_CHILDREN holds that one command's peak."""
    probe = (
        "import resource, subprocess, sys, json;"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True);"
        "print(json.dumps([r.returncode, r.stdout, r.stderr,"
        " resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
    )
    p = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, timeout=300)
    rc, out, err, kb = json.loads(p.stdout)
    return subprocess.CompletedProcess(cmd, rc, out, err), kb / 1024


@pytest.mark.slow
def test_gzip_bomb_is_refused_early_in_bounded_memory(tmp_path: Path) -> None:
    bomb = tmp_path / "papers.txt.gz"
    line = b"A paper title that repeats forever and ever\n"
    chunk = line * (1_048_576 // len(line))
    with gzip.open(bomb, "wb", compresslevel=9) as g:
        for _ in range(300):  # ~300 MB of text in well under 1 MB
            g.write(chunk)
    assert bomb.stat().st_size < 5_000_000
    r, peak = _peak_rss_mb(
        [sys.executable, "-m", "paperatlas", "--db", str(tmp_path / "lib.db"), "ingest", "--no-embed", str(bomb)]
    )
    assert r.returncode == 3 and "Traceback" not in r.stderr, r.stderr
    assert "papers.txt.gz" in r.stderr and "gzip" in r.stderr
    assert "100x" in r.stderr
    # refused after ~32 MB of output: the ratio counts the compressed bytes read so far, not the whole file
    assert peak < 250, f"peak RSS {peak:.0f} MB while refusing a gzip bomb"


def test_utf16_without_bom_reads_with_encoding(tmp_path: Path) -> None:
    f = tmp_path / "papers.jsonl"
    f.write_bytes((json.dumps(GOOD, ensure_ascii=False) + "\n").encode("utf-16-le"))
    db = tmp_path / "lib.db"
    r = _ingest(db, "--encoding", "utf-16-le", str(f))
    assert r.returncode == 0, r.stderr
    assert _count(db) == 1
    # without the encoding it is still refused as binary, with a clear message
    r = _ingest(tmp_path / "other.db", str(f))
    assert r.returncode == 3 and "NUL" in r.stderr and "--encoding" in r.stderr, r.stderr


HOSTILE_TEXT = {
    "title": "Nul\u0000 bell\u0007 escape\u001b title \u202eevil\u202c",
    "abstract": "An abstract with a NUL\u0000 a form feed\u000c and a C1\u0085 control.",
    "authors": ["Ann\u0000 Lee", "Bob\u0008 Ray"],
    "url": "https://example.org/p\u0000",
}


def test_control_characters_are_stripped_at_ingest_and_atom_parses(tmp_path: Path) -> None:
    f = tmp_path / "nul.jsonl"
    f.write_text(json.dumps(HOSTILE_TEXT) + "\n", encoding="utf-8")  # \u0000 escapes: the file itself is text
    db = tmp_path / "lib.db"
    r = _ingest(db, str(f))
    assert r.returncode == 0, r.stderr
    with Library(db) as lib:
        (p,) = lib.papers()
        stored = " ".join([p.title, p.abstract, *p.authors, p.url, p.raw])
        assert not any(ord(c) < 32 and c not in "\t\n\r" or 0x7F <= ord(c) <= 0x9F for c in stored), repr(stored)
        assert p.title.startswith("Nul bell escape title")
        assert "\u202e" in p.title  # bidi marks are text; the UI isolates them (see the template test)
        feed = atom([Hit(p, 1.0)], "feed", "urn:x")
    ET.fromstring(feed.encode("utf-8"))


def test_lone_surrogates_become_replacement_characters(tmp_path: Path) -> None:
    """`\\ud83d` without its pair is valid JSON but no text: it used to crash the record hash (found by fuzzing)."""
    f = tmp_path / "sur.jsonl"
    f.write_text(
        '{"title": "Half an emoji \\ud83d here", "abstract": "Text.", "x\\udc00": {"\\ud800": "\\udfff"}}\n',
        encoding="utf-8",
    )
    db = tmp_path / "lib.db"
    r = _ingest(db, str(f))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    with Library(db) as lib:
        (p,) = lib.papers()
        assert p.title == "Half an emoji \ufffd here"


def test_atom_of_a_paper_stored_before_the_fix_still_parses() -> None:
    p = Paper("x1", "Old\u0000 title\u0007", "Old abstract\u0000.", authors=["A\u0001 B"])
    root = ET.fromstring(atom([Hit(p, 1.0, reason="because\u0000")], "t\u0000", "urn:x").encode("utf-8"))
    assert root.find("{http://www.w3.org/2005/Atom}title").text == "t"
