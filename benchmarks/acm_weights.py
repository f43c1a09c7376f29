"""The default recommender's weights swept on the ACM-CR tuning readers, for one embedder:

    .venv/bin/python benchmarks/acm_weights.py --embedder minilm-tuned-r9
    .venv/bin/python benchmarks/acm_weights.py --embedder minilm-tuned-r9 --set all_kw=0.25 --set all_emb=1.0 --report-test

Each variant is `DefaultRecommender(**{field: value})` (a field of `recommend.default.Weights`), run
through `eval recommend acm-cr`'s code (same pool, readers and hide-half seeds) beside the shipped
weights. Pick on the tuning readers (even positions); `--report-test` prints the test readers after,
for the record. The tuning readers' noise is about +-0.01 nDCG@10 (docs/recommend.md).
"""

from __future__ import annotations

import argparse
import sys

from paperatlas.bench.quality import default_data_root
from paperatlas.eval.recommend import run_acm
from paperatlas.recommend.default import DefaultRecommender, Weights

DEFAULT_SETS = [
    "all_emb=0.5",
    "all_emb=1.0",
    "all_emb=1.25",
    "learned=1.5",
    "learned=2.5",
    "all_kw=0.25",
    "all_kw=0.75",
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="minilm-tuned-r9")
    ap.add_argument("--set", action="append", help="FIELD=VALUE, one variant each (repeat); default: a small grid")
    ap.add_argument("--report-test", action="store_true")
    a = ap.parse_args()
    variants: dict[str, dict[str, float]] = {"shipped": {}}
    fields = set(Weights.__dataclass_fields__)
    for item in a.set or DEFAULT_SETS:
        field, _, value = item.partition("=")
        if field not in fields or not value:
            raise SystemExit(f"--set {item!r}: want FIELD=VALUE with FIELD one of {sorted(fields)}")
        variants[item] = {field: float(value)}
    data = default_data_root()
    if data is None:
        raise SystemExit("../shared/data is not here: the ACM-CR readers live in ../shared/data/acm_cr")
    res = run_acm(
        data / "acm_cr",
        embedder=a.embedder,
        recommenders={k: DefaultRecommender(**v) for k, v in variants.items()},
        progress=lambda m: print(m, file=sys.stderr, flush=True),
    )["results"]
    for split in ("tune", "test") if a.report_test else ("tune",):
        for name in variants:
            print(f"{split}\t{name}\tnDCG@10 {res[split][name]['ndcg@10']:.4f}")


if __name__ == "__main__":
    main()
