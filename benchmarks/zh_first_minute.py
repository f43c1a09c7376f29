"""Chinese queries before the multilingual index exists: what a Chinese user gets in the first minute
of a fresh library (the English index only, the glossary's English reading, no language model).

Copies bench quality's venue library (8,117 papers; run `paperatlas bench quality --only zh` once to
make it), drops the copy's multilingual vectors and scores tests/data/zh_queries.jsonl there, beside the
same queries with the index (the finished state), in one run. With `--glossary OLD.tsv` it scores
both glossaries (that table, then the packaged one) in each state, and shows where the papers on
over-smoothing rank for 图神经网络 过平滑 (the English query puts four on top).

    python benchmarks/zh_first_minute.py [--cache ~/.cache/paperatlas/eval/bench-quality]
    git show <rev>:paperatlas/search/glossary.tsv > /tmp/old.tsv
    python benchmarks/zh_first_minute.py --glossary /tmp/old.tsv

For a baseline from other code, run it with PYTHONPATH pointing at an export of that revision.
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import shutil
import tempfile
import time
from pathlib import Path

from paperatlas import Library
from paperatlas_lab.bench.quality import _zh_scores
from paperatlas_lab.eval.zh_floor import load
from paperatlas.search import glossary

PACKAGED = glossary.TABLE
READ_TABLE = glossary.glossary.__wrapped__  # the uncached reader
OVER_SMOOTHING = "图神经网络 过平滑"


def use_glossary(path: Path) -> None:
    """Search reads the glossary through this module's `glossary()`: point it at `path`."""
    glossary.glossary = functools.cache(lambda path=path: READ_TABLE(path))  # type: ignore[misc]


def over_smoothing(lib: Library) -> list[int]:
    """The ranks (1-8) of papers on over-smoothing among the top 8 of 图神经网络 过平滑."""
    hits = lib.search(OVER_SMOOTHING, limit=8)
    return [i for i, h in enumerate(hits, 1) if "smooth" in f"{h.paper.title} {h.paper.abstract}".lower()]


ZH_QUERIES = Path(__file__).resolve().parent.parent / "tests" / "data" / "zh_queries.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", default=str(Path.home() / ".cache/paperatlas/eval/bench-quality"))
    ap.add_argument("--glossary", type=Path, help="another glossary table to score beside the packaged one")
    ap.add_argument(
        "--partial",
        default="",
        help="also score with only this share of the multilingual index, the papers a build does first "
        "(comma-separated, e.g. 0.25,0.5: a build part-way through)",
    )
    a = ap.parse_args()
    shares = [float(x) for x in a.partial.split(",") if x.strip()]
    tables = ([("glossary " + str(a.glossary), a.glossary)] if a.glossary else []) + [("packaged glossary", PACKAGED)]
    src = Path(a.cache) / "venue-minilm-tuned-r11.db"
    if not src.exists():
        raise SystemExit(f"no venue library at {src}: run `paperatlas bench quality --only zh` first")
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "venue.db"
        shutil.copy(src, copy)
        t = time.perf_counter()
        with Library(copy) as lib:
            ml = lib.multilingual.embedder.id
            ids, mat = lib.store.load_vectors(ml)
            hashes = lib.store.text_hashes_for_model(ml)
        states = ["with the multilingual index", *(f"with {x:.0%} of the multilingual index" for x in shares)]
        for state in [*states, "before the multilingual index (minute 1)"]:
            if state in states[1:]:
                # a seeded random share: a build goes in the order papers were stored, which in this
                # library puts many of the queries' papers last; a user's list has no such order
                keep = sorted(
                    random.Random(0).sample(range(len(ids)), round(len(ids) * shares[states.index(state) - 1]))
                )
                with Library(copy) as lib:
                    lib.store.delete_vectors(ml)
                    lib.store.put_vectors(ml, [(ids[n], hashes[ids[n]], mat[n]) for n in keep])
            for name, table in tables:
                use_glossary(table)
                with Library(copy) as lib:  # opened afresh: nothing read through the other table is kept
                    queries, _ = load(ZH_QUERIES, lib)
                    lib.engine.settings.translation_weight = 0.0  # no language model
                    key = f"{state}, {name}" if len(tables) > 1 else state
                    out[key] = _zh_scores(lib, queries)
                    out[key]["over-smoothing papers in the top 8 of " + OVER_SMOOTHING] = over_smoothing(lib)
            if state == states[-1]:
                with Library(copy) as lib:  # reopened next: no multilingual index is left to route to
                    lib.store.delete_vectors(lib.multilingual.embedder.id)
        out["seconds"] = round(time.perf_counter() - t, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
