"""Chinese queries with and without the zh -> en glossary (search/glossary.py), side by side in one run.

For each setting: hybrid MRR@10 and hit@10 of the real queries of tests/data/zh_queries.jsonl, the
false-empty rate (real queries the floor answers with nothing) and the share of no-answer queries
(off-domain, nonsense) answered with nothing, per split. The weight is chosen on the train split;
the test split is reported, never tuned on.

    python benchmarks/crosslingual_library.py /tmp/xl.db --distractors 1000
    python benchmarks/zh_glossary.py /tmp/xl.db
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from paperatlas import Library  # noqa: E402
from paperatlas_lab.eval.zh_floor import load  # noqa: E402
from paperatlas.search.query import parse  # noqa: E402

SETTINGS = [("off", False, 0.0)] + [("keyword only", True, 0.0)] + [(f"w={w}", True, w) for w in (0.3, 0.5, 0.7)]


def measure(lib: Library, queries: list, k: int = 10) -> dict[str, float]:
    real = [z for z in queries if z.paper_id]
    none = [z for z in queries if not z.paper_id]
    rr, hits, empty = 0.0, 0, 0
    for z in real:
        fused, _ = lib.engine.rank(parse(z.q), "hybrid", 100, floor=True)
        ids = [d for d, _ in fused]
        empty += not ids
        if z.paper_id in ids[:k]:
            rr += 1 / (ids.index(z.paper_id) + 1)
            hits += 1
    emptied = sum(1 for z in none if not lib.engine.rank(parse(z.q), "hybrid", 100, floor=True)[0])
    n = max(1, len(real))
    return {
        "queries": len(real),
        "mrr@10": round(rr / n, 3),
        "hit@10": round(hits / n, 3),
        "false_empty": round(empty / n, 3),
        "no_answer_emptied": round(emptied / max(1, len(none)), 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--queries", default=str(ROOT / "tests/data/zh_queries.jsonl"))
    a = ap.parse_args()
    with Library(a.db, create=False) as lib:
        queries, missing = load(a.queries, lib)
        s = lib.engine.settings
        rows = []
        for name, on, w in SETTINGS:
            s.glossary, s.glossary_weight = on, w
            row = {"setting": name}
            for split in ("train", "test"):
                row[split] = measure(lib, [z for z in queries if z.split == split])
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), flush=True)
        print(f"({lib.count()} papers; {missing} queries' papers not in this library, left out)")


if __name__ == "__main__":
    main()
