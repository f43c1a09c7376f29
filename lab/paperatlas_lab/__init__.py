"""paperatlas-lab: the laboratory beside the product, `paperatlas bench ...` and `paperatlas eval ...`.

A second package in the paperatlas repository, installed by `make install-test` (`pip install -e lab`)
and never part of the `paperatlas` wheel: a user's install holds the product only. The product finds the
lab's command groups through the `paperatlas.commands` entry points (lab/pyproject.toml) and never
imports it; the lab imports the product as any program would.

Where things go: a benchmark is a module in `paperatlas_lab/bench/` whose command is added to the `bench`
group in `paperatlas_lab/cli/bench.py`; an evaluation is a module in `paperatlas_lab/eval/` that defines its
click command, added to the `eval` group in `paperatlas_lab/cli/eval.py`.
"""

from __future__ import annotations

from pathlib import Path

#: the checkout the lab runs from: its benchmarks/, tests/data/ and examples/ are the lab's data
REPO = Path(__file__).resolve().parents[2]
