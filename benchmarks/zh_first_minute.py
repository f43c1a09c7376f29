"""Chinese queries before the multilingual index exists: what a Chinese user gets in the first minute
of a fresh library (the English index only, the glossary's English reading, no language model).

Copies bench quality's venue library (8,117 papers; run `paperatlas bench quality --only zh` once to
make it), drops the copy's multilingual vectors and scores tests/data/zh_queries.jsonl there, beside the
same queries with the index (the finished state), in one run.

    python benchmarks/zh_first_minute.py [--cache ~/.cache/paperatlas/eval/bench-quality]

For a baseline from other code, run it with PYTHONPATH pointing at an export of that revision.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from pathlib import Path

from paperatlas import Library
from paperatlas_lab.bench.quality import _zh_scores
from paperatlas_lab.eval.zh_floor import load

ZH_QUERIES = Path(__file__).resolve().parent.parent / "tests" / "data" / "zh_queries.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=str(Path.home() / ".cache/paperatlas/eval/bench-quality"))
    a = ap.parse_args()
    src = Path(a.cache) / "venue-minilm-tuned-r11.db"
    if not src.exists():
        raise SystemExit(f"no venue library at {src}: run `paperatlas bench quality --only zh` first")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "venue.db"
        shutil.copy(src, copy)
        with Library(copy) as lib:
            queries, _ = load(ZH_QUERIES, lib)
            lib.engine.settings.translation_weight = 0.0  # no language model
            t = time.perf_counter()
            out["with the multilingual index"] = _zh_scores(lib, queries)
            ml = lib.multilingual.embedder.id
            lib.store.delete_vectors(ml)
        with Library(copy) as lib:  # reopened: no multilingual index is left to route to
            lib.engine.settings.translation_weight = 0.0
            out["before the multilingual index (minute 1)"] = _zh_scores(lib, queries)
            out["seconds"] = round(time.perf_counter() - t, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
