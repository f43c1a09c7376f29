"""Build the library `paperatlas eval crosslingual` is run on: the papers the Chinese queries
(tests/data/crosslingual_queries.jsonl) and the English paraphrases (tests/data/paraphrase_queries.jsonl)
were written for, plus N distractors drawn with a fixed seed from the venue papers, plus the examples.

The venue papers are internal evaluation data (../shared/data): they are read here, never bundled.
Embedding goes through the shared vector cache (model id + text hash), so a rerun is fast;
the multilingual model costs ~7 papers/s on a quiet core, hence a subset, not all 8,088.

    python benchmarks/crosslingual_library.py /tmp/crosslingual.db --distractors 1000
    paperatlas eval crosslingual tests/data/crosslingual_queries.jsonl --db /tmp/crosslingual.db
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from paperatlas import Library  # noqa: E402
from paperatlas_lab.eval.crosslingual import norm_title  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--venue", default=str(ROOT.parent / "shared/data/ml_venue_papers/papers.jsonl.gz"))
    ap.add_argument("--queries", default=str(ROOT / "tests/data/crosslingual_queries.jsonl"))
    ap.add_argument("--paraphrases", default=str(ROOT / "tests/data/paraphrase_queries.jsonl"))
    ap.add_argument("--distractors", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-multilingual", action="store_true", help="Only the default model's index.")
    a = ap.parse_args()

    venue = Path(a.venue)
    if not venue.exists():
        venue = Path("/work/shared/data/ml_venue_papers/papers.jsonl.gz")
    rows = [json.loads(line) for line in gzip.open(venue, "rt", encoding="utf-8")]
    want_titles = {norm_title(json.loads(x)["title"]) for x in open(a.queries, encoding="utf-8") if x.strip()}
    want_ids = {json.loads(x)["paper_id"] for x in open(a.paraphrases, encoding="utf-8") if x.strip()}
    targets = [r for r in rows if norm_title(r["title"]) in want_titles or r["id"] in want_ids]
    rest = [r for r in rows if r not in targets]
    random.Random(a.seed).shuffle(rest)
    chosen = targets + rest[: a.distractors]
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "subset.jsonl"
        f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in chosen), encoding="utf-8")
        with Library(a.db) as lib:
            lib.ingest([f, *sorted((ROOT / "examples").glob("*.txt"))])
            t = time.perf_counter()
            n = lib.embed()
            print(
                f"{lib.count()} papers ({len(targets)} targets); default model: {n} embedded in "
                f"{time.perf_counter() - t:.0f} s",
                file=sys.stderr,
            )
            if not a.no_multilingual:
                t = time.perf_counter()
                last = [t]

                def progress(done: int, total: int) -> None:
                    if time.perf_counter() - last[0] > 30 or done == total:
                        last[0] = time.perf_counter()
                        print(f"multilingual: {done}/{total}", file=sys.stderr)

                n = lib.multilingual.build(progress=progress)
                print(f"multilingual model: {n} embedded in {time.perf_counter() - t:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
