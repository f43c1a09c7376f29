"""Seconds a `paperatlas` process takes before and around its work: importing the command, `--version`,
and a keyword search (with --db: the start-up is most of it), under another version's code (a source
tree, e.g. `git archive main | tar -x -C DIR`) beside this checkout's, alternating, median of 7. Each
child runs outside both trees (`python -c` and `-m` put the working folder first on sys.path).

With bytecode caching on, as an installed package runs (PYTHONDONTWRITEBYTECODE is dropped for the
children; the first round writes the caches and is not counted).

    flock /work/heavy.lock nice -n 10 .venv/bin/python benchmarks/cli_startup.py --baseline-src DIR --db LIB.db
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cases(db: str | None) -> dict[str, list[str]]:
    out = {
        "import paperatlas.cli": ["-c", "import paperatlas.cli"],
        "paperatlas --version": ["-m", "paperatlas", "--version"],
        "paperatlas --help": ["-m", "paperatlas", "--help"],
    }
    if db:
        out["search --mode keyword"] = [
            "-m",
            "paperatlas",
            "--db",
            db,
            "search",
            "--mode",
            "keyword",
            "diffusion models",
        ]
        out["search (hybrid)"] = ["-m", "paperatlas", "--db", db, "search", "diffusion models"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-src", required=True, help="the other version's source tree")
    ap.add_argument("--db", help="a library for the search cases (read only)")
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    versions = {"baseline": str(Path(a.baseline_src).resolve()), "candidate": str(Path(__file__).resolve().parents[1])}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times: dict[tuple[str, str], list[float]] = {}
    for r in range(a.runs + 1):
        for name, argv in cases(a.db).items():
            for version, src in versions.items():
                e = {**env, "PYTHONPATH": src + os.pathsep + env.get("PYTHONPATH", "")}
                t = time.perf_counter()
                subprocess.run(
                    [sys.executable, *argv], env=e, cwd=tempfile.gettempdir(), capture_output=True, check=False
                )
                if r:  # the first round writes the bytecode caches
                    times.setdefault((name, version), []).append(time.perf_counter() - t)
    print(
        f"{'':24s} {'baseline':>16s} {'candidate':>16s}   (median s, min; {a.runs} runs; load {os.getloadavg()[0]:.1f})"
    )
    for name in cases(a.db):
        b, c = times[(name, "baseline")], times[(name, "candidate")]
        print(
            f"{name:24s} {statistics.median(b):>8.3f} ({min(b):.3f}) {statistics.median(c):>8.3f} ({min(c):.3f})"
            f"   x{statistics.median(b) / statistics.median(c):.2f}"
        )


if __name__ == "__main__":
    main()
