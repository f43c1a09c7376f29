"""Query latency while the server builds the multilingual index, through the real HTTP server.

A sample of a real paper list (default 2,000 papers) is stored and embedded; the multilingual index
covers its first half (what a server that has been building for a while holds). For each source tree
(the candidate: this checkout; the baseline: `--baseline DIR`, an export of another revision), a
`paperatlas serve` on loopback answers Chinese and English queries, one at a time, each query asked
once (no query-vector cache hits):

  - without a build: the server is read-only, so nothing builds;
  - during a build: a writable server, whose first Chinese query starts the build of the other half.

It prints p50/p95 per language and phase, and the build's papers/s during the phase, for both trees
in one run (run it under the heavy-job lock: `flock /work/heavy.lock nice -n 10 python ...`).

    git archive <rev> paperatlas | tar -x -C /tmp/base
    python benchmarks/zh_build_queries.py PAPERS.jsonl.gz --baseline /tmp/base [--papers 2000] [--seconds 90]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from paperatlas import Library

ROOT = Path(__file__).resolve().parent.parent
QUERY_FILES = [ROOT / "tests" / "data" / "zh_queries.jsonl", ROOT / "tests" / "data" / "crosslingual_queries.jsonl"]


def queries() -> tuple[list[str], list[str]]:
    """The Chinese queries of the repo's sets and, as English queries, the titles they look for."""
    zh: list[str] = []
    en: list[str] = []
    for f in QUERY_FILES:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                if r["q"] not in zh:
                    zh.append(r["q"])
                if r.get("title") and r["title"] not in en:  # no-answer queries have none
                    en.append(r["title"])
    return zh, en


def sample(papers: Path, n: int, out: Path) -> tuple[Path, Path]:
    """Two jsonl files: a seeded sample of `n` records, in halves."""
    with gzip.open(papers, "rt", encoding="utf-8") if papers.suffix == ".gz" else papers.open() as f:
        rows = [line for line in f if line.strip()]
    random.Random(0).shuffle(rows)
    rows = rows[:n]
    a, b = out / "first.jsonl", out / "second.jsonl"
    a.write_text("".join(rows[: n // 2]), encoding="utf-8")
    b.write_text("".join(rows[n // 2 :]), encoding="utf-8")
    return a, b


def base_library(papers: Path, n: int, tmp: Path) -> Path:
    """All papers embedded by the library's model; the first half also in the multilingual index."""
    first, second = sample(papers, n, tmp)
    db = tmp / "base.db"
    with Library(db) as lib:
        lib.ingest(first)
        lib.embed()
        lib.multilingual.build()  # vectors come from the shared cache after the first run
        lib.ingest(second)
        lib.embed()
        st = lib.multilingual.status()
        print(f"library: {st['papers']} papers, {st['embedded']} in the multilingual index", file=sys.stderr)
    return db


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """`paperatlas serve` from one source tree, on loopback, its vector cache off (the build computes)."""

    def __init__(self, tree: Path, db: Path, read_only: bool, log: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        env = dict(os.environ, PYTHONPATH=str(tree), PAPERATLAS_VECTOR_CACHE="off", **env)
        cmd = [sys.executable, "-m", "paperatlas", "--db", str(db), "serve", "--port", str(self.port)]
        if read_only:
            cmd.append("--read-only")
        self.log = log.open("w")
        # cwd outside any checkout: the tree on PYTHONPATH is the one imported
        self.proc = subprocess.Popen(cmd, env=env, cwd=db.parent, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                self.get("/stats.json")
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise SystemExit(f"the server stopped: see {log}") from None
                time.sleep(0.5)
        raise SystemExit(f"the server did not answer in 300 s: see {log}")

    def get(self, path: str) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=600) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]

    def search(self, q: str) -> tuple[float, dict[str, Any]]:
        t = time.perf_counter()
        j = self.get("/search.json?" + urllib.parse.urlencode({"q": q, "per_page": 10}))
        return time.perf_counter() - t, j

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def run_queries(srv: Server, zh: list[str], en: list[str], seconds: float, most: int) -> dict[str, list[float]]:
    """Chinese and English queries in turn for `seconds`: the first `most` of each are timed, then the
    phase goes on asking (the same queries with a number after them, so no query vector is reused)
    until `seconds` have passed, so that the build's rate is measured over the whole phase."""
    out: dict[str, list[float]] = {"zh": [], "en": []}
    end = time.monotonic() + seconds
    pairs = list(zip(zh, en))
    n = 0
    while n < most or time.monotonic() < end:
        z, e = pairs[n % len(pairs)]
        suffix = f" {n // len(pairs)}" if n >= len(pairs) else ""
        tz, te = srv.search(z + suffix)[0], srv.search(e + suffix)[0]
        if n < most:
            out["zh"].append(tz)
            out["en"].append(te)
        elif time.monotonic() >= end:
            break
        n += 1
    return out


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def measure(
    tree: Path, env: dict[str, str], base: Path, tmp: Path, label: str, seconds: float, most: int
) -> list[dict[str, Any]]:
    zh, en = queries()
    rows = []
    db = tmp / f"{label}.db"
    shutil.copy(base, db)
    srv = Server(tree, db, read_only=True, log=tmp / f"{label}-idle.log", env=env)
    try:
        t = run_queries(srv, zh, en, seconds, most)
    finally:
        srv.stop()
    rows.append({"tree": label, "phase": "no build", **t})
    srv = Server(tree, db, read_only=False, log=tmp / f"{label}-build.log", env=env)
    try:
        _, j = srv.search("图神经网络 节点分类")  # the first Chinese query starts the build
        if not (j.get("crosslingual") or {}).get("building"):
            raise SystemExit(f"{label}: the first Chinese query started no build: {j.get('crosslingual')}")
        while (srv.search("扩散模型")[1].get("crosslingual") or {}).get("done", 0) == 0:
            time.sleep(1)  # until the model is loaded and the first papers are done
        st0, t0 = srv.search("大语言模型")[1]["crosslingual"], time.monotonic()
        t = run_queries(srv, zh[::-1], en[::-1], seconds, most)  # other queries than the warm-up's
        st1, t1 = srv.search("强化学习")[1].get("crosslingual") or {}, time.monotonic()
        if not st1.get("building"):
            print(f"{label}: the build finished during the phase; use more --papers", file=sys.stderr)
        rate = (st1.get("done", st0["total"]) - st0["done"]) / (t1 - t0)
    finally:
        srv.stop()
    rows.append({"tree": label, "phase": "during a build", **t, "build papers/s": round(rate, 2)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("papers", type=Path, help="a paper list (jsonl, may be gzipped)")
    ap.add_argument("--baseline", type=Path, help="a source tree holding the baseline's paperatlas/")
    ap.add_argument("--papers-n", "--papers", dest="n", type=int, default=2000)
    ap.add_argument("--seconds", type=float, default=90.0, help="how long each phase asks queries")
    ap.add_argument("--most", type=int, default=60, help="at most this many queries per language and phase")
    ap.add_argument(
        "--also",
        action="append",
        default=[],
        metavar="LABEL:NAME=VALUE[,NAME=VALUE]",
        help="one more candidate run with settings' variables set (repeatable)",
    )
    a = ap.parse_args()
    trees: list[tuple[str, Path, dict[str, str]]] = [("baseline", a.baseline.resolve(), {})] if a.baseline else []
    trees.append(("candidate", ROOT, {}))
    for also in a.also:
        label, _, kvs = also.partition(":")
        trees.append((label, ROOT, dict(kv.split("=", 1) for kv in kvs.split(",") if kv)))
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        base = base_library(a.papers, a.n, tmp)
        rows = [r for label, tree, env in trees for r in measure(tree, env, base, tmp, label, a.seconds, a.most)]
    print(
        f"{'run':<10} {'phase':<15} {'zh n':>5} {'zh p50':>8} {'zh p95':>8} {'en n':>5} {'en p50':>8} {'en p95':>8}  build"
    )
    for r in rows:
        zh, en = r["zh"], r["en"]
        print(
            f"{r['tree']:<10} {r['phase']:<15} {len(zh):>5} {pct(zh, 0.5):>8.3f} {pct(zh, 0.95):>8.3f}"
            f" {len(en):>5} {pct(en, 0.5):>8.3f} {pct(en, 0.95):>8.3f}  {r.get('build papers/s', '')}"
        )
    print("(seconds per query through the HTTP server; build: multilingual papers/s during the phase)")


if __name__ == "__main__":
    main()
