"""How long an ingest waits for an embed running in another process:

    nice -n 19 .venv/bin/python benchmarks/ingest_during_embed.py --papers 4000 --new 30

A library of `--papers` synthetic papers (titles no vector cache holds; the shared cache is off, so
the packaged model really runs) is embedded by `paperatlas embed` in one process; once its first
vectors are stored (the model loaded and working) `paperatlas ingest --no-embed` of `--new` more
papers runs in another. Printed beside it, in the same run: the same ingest with no embed running (the baseline),
and the embed's own time. Before embeds stopped holding the write lock for their whole run, the
ingest waited for the embed to finish. Measured one after the other on 2 busy cores (the old code
run with PYTHONPATH pointing at an export of it, from outside the repository):

    before: ingest alone 0.53 s, during the embed 31.22 s, embed 36.8 s
    after:  ingest alone 0.41 s, during the embed  0.96 s, embed 35.2 s
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _papers(tag: str, n: int) -> str:
    return "".join(
        json.dumps(
            {
                "id": f"{tag}-{i}",
                "title": f"Measure {tag} {i}: {i * 7919 % 104729} sparse probes of problem {i % 13}",
                "abstract": f"We measure quantity {i * 31} of system {tag} under condition {i % 11}.",
            }
        )
        + "\n"
        for i in range(n)
    )


def _cli(db: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PAPERATLAS_VECTOR_CACHE": "off"}  # the child reads no cached vectors
    return subprocess.Popen(
        [sys.executable, "-m", "paperatlas", "--db", str(db), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _ingest(db: Path, path: Path) -> float:
    t = time.monotonic()
    p = _cli(db, "ingest", "--no-embed", str(path))
    _, err = p.communicate()
    if p.returncode:
        raise SystemExit(err)
    return time.monotonic() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=4000)
    ap.add_argument("--new", type=int, default=30)
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="paperatlas-bench-"))
    (d / "a.jsonl").write_text(_papers("a", a.papers), encoding="utf-8")
    (d / "b.jsonl").write_text(_papers("b", a.new), encoding="utf-8")
    (d / "c.jsonl").write_text(_papers("c", a.new), encoding="utf-8")
    db = d / "lib.db"
    _ingest(db, d / "a.jsonl")
    baseline = _ingest(db, d / "c.jsonl")  # nothing else running
    t0 = time.monotonic()
    embed = _cli(db, "embed")
    from paperatlas import Library

    with Library(db, create=False) as lib:
        while lib.embedding_status()["embedded"] == 0 and embed.poll() is None:
            time.sleep(0.1)
    during = _ingest(db, d / "b.jsonl")
    ingest_end = time.monotonic()
    embed.communicate()
    embed_s = time.monotonic() - t0
    print(
        json.dumps(
            {
                "papers_embedded": a.papers + 2 * a.new,
                "ingest_s_alone": round(baseline, 2),
                "ingest_s_during_embed": round(during, 2),
                "embed_s": round(embed_s, 1),
                "ingest_finished_before_embed": ingest_end < t0 + embed_s,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
