"""Seconds to import the `paperatlas` command: the product alone (today: the lab's `bench` and `eval`
load only when asked for) beside the product plus the lab's two groups (what every command imported
while they lived inside the package). Alternating subprocesses, median of 7.

    flock /work/heavy.lock nice -n 10 .venv/bin/python benchmarks/cli_startup.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

CASES = {
    "product only (now)": "import paperatlas.cli",
    "product + lab groups (before)": "import paperatlas.cli, paperatlas_lab.cli.bench, paperatlas_lab.cli.eval",
}


def main(runs: int = 7) -> None:
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(runs):
        for name, code in CASES.items():
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times[name].append(time.perf_counter() - t)
    for name, ts in times.items():
        print(f"{name:32s} median {statistics.median(ts):.3f} s  (min {min(ts):.3f})")


if __name__ == "__main__":
    main()
