"""Seconds from a fresh process to the first query vector (what `paperatlas search` pays for its
query): the embedding model's imports, loading and one query, under another version's code (a
source tree, e.g. `git archive main | tar -x -C DIR`) beside this checkout's, alternating, median of
7; and the cosine of the two versions' vectors for the same queries (the quality must not change).

    flock /work/heavy.lock nice -n 10 .venv/bin/python benchmarks/query_load.py --baseline-src DIR
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any
from pathlib import Path

import numpy as np

QUERIES = ["diffusion models", "graph neural networks over-smoothing", "大语言模型 对齐", "RLHF reward hacking"]

CHILD = r"""
import json, sys, time
t = time.perf_counter()
from paperatlas.embed.base import DEFAULT_EMBEDDER, EMBEDDERS
emb = EMBEDDERS.create(DEFAULT_EMBEDDER)
first = emb.embed_query(sys.argv[1])
dt = time.perf_counter() - t
rest = [emb.embed_query(q).tolist() for q in json.loads(sys.argv[2])]
print(json.dumps({"s": dt, "first": first.tolist(), "rest": rest}))
"""


def run(src: str, queries: list[str]) -> dict[str, Any]:
    env = dict(os.environ)
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(  # run outside both trees: `python -c` puts the working folder first on sys.path
        [sys.executable, "-c", CHILD, queries[0], json.dumps(queries[1:])],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-src", required=True)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    versions = {"baseline": str(Path(a.baseline_src).resolve()), "candidate": str(Path(__file__).resolve().parents[1])}
    times: dict[str, list[float]] = {k: [] for k in versions}
    vecs: dict[str, np.ndarray] = {}
    for _ in range(a.runs):
        for name, src in versions.items():
            r = run(src, QUERIES)
            times[name].append(r["s"])
            vecs[name] = np.array([r["first"], *r["rest"]], dtype=np.float32)
    for name, ts in times.items():
        print(
            f"{name:10s} first query vector: median {statistics.median(ts):.3f} s  (min {min(ts):.3f}, {a.runs} runs)"
        )
    cos = (vecs["baseline"] * vecs["candidate"]).sum(axis=1)
    print("cosine baseline/candidate per query:", " ".join(f"{c:.6f}" for c in cos))


if __name__ == "__main__":
    main()
