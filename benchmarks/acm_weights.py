"""The default recommender's weights swept on the ACM-CR tuning readers, for one embedder:

    .venv/bin/python benchmarks/acm_weights.py --embedder minilm-tuned-r11
    .venv/bin/python benchmarks/acm_weights.py --embedder minilm-tuned-r11 --set all_kw=0.25 --set all_emb=1.0 --report-test

Each variant is `DefaultRecommender(**{field: value})` (a field of `recommend.default.Weights`), run
through `eval recommend acm-cr`'s code (same pool, readers and hide-half seeds) beside the shipped
weights. Pick on the tuning readers (even positions); `--report-test` prints the test readers after,
for the record. The tuning readers' noise is about +-0.01 nDCG@10 (docs/recommend.md).

The decision rule, fixed before it was first run (printed as `rule`): picking the tuning readers' best
variant is itself cross-validated over the 25 tuning readers. They are dealt into 5 folds; for each
fold the variant best on the other four (ties go to the shipped weights) is scored on the held-out
fold. A variant is adopted only if that procedure beats the shipped weights on the held-out readers
with a paired bootstrap 90% interval (readers resampled) above zero; then the variant best on all
tuning readers is the one adopted. Otherwise the shipped weights stay.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict

import numpy as np

from paperatlas_lab.bench.quality import default_data_root
from paperatlas.errors import PaperatlasError
from paperatlas_lab.eval.bootstrap import paired_interval
from paperatlas_lab.eval.recommend import acm_setup, evaluate_acm
from paperatlas.overrides import parse_overrides
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
FOLDS = 5
DRAWS = 5000


def per_reader(embedder: str, variants: dict[str, dict[str, float]]) -> dict[str, dict[str, dict[int, float]]]:
    """{split: {variant: {reader: nDCG@10 averaged over the hide-half seeds}}}."""
    data = default_data_root()
    if data is None:
        raise SystemExit("../shared/data is not here: the ACM-CR readers live in ../shared/data/acm_cr")
    out: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    recs = {k: DefaultRecommender(**v) for k, v in variants.items()}
    with acm_setup(data / "acm_cr", embedder, lambda m: print(m, file=sys.stderr, flush=True)) as (corpus, tasks):
        by_reader: dict[int, list[dict]] = defaultdict(list)
        for t in tasks:
            by_reader[t["reader"]].append(t)
        for reader, ts in sorted(by_reader.items()):
            split = ts[0]["split"]
            res = evaluate_acm(corpus, ts, recs)[split]
            for name in recs:
                out[split][name][reader] = res[name]["ndcg@10"]
    return out


def cross_validated(tune: dict[str, dict[int, float]], folds: int = FOLDS, draws: int = DRAWS) -> dict:
    """The rule in the module's docstring, as numbers: the held-out score of "pick the best variant"
    against the shipped weights, reader by reader, and the bootstrap interval of their difference."""
    readers = sorted(tune["shipped"])
    fold = {r: i % folds for i, r in enumerate(readers)}
    names = ["shipped", *[n for n in tune if n != "shipped"]]  # max() keeps the first of equals
    picked: dict[int, float] = {}
    picks = []
    for f in range(folds):
        inside = [r for r in readers if fold[r] != f]
        best = max(names, key=lambda n: float(np.mean([tune[n][r] for r in inside])))
        picks.append(best)
        for r in readers:
            if fold[r] == f:
                picked[r] = tune[best][r]
    diff = np.array([picked[r] - tune["shipped"][r] for r in readers])
    lo, hi = paired_interval(diff, draws)
    overall = max(names, key=lambda n: float(np.mean(list(tune[n].values()))))
    return {
        "picks per fold": picks,
        "held-out mean, picked": float(np.mean(list(picked.values()))),
        "held-out mean, shipped": float(np.mean(list(tune["shipped"].values()))),
        "difference 90% interval": (float(lo), float(hi)),
        "adopt": overall if lo > 0 else "shipped",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default="minilm-tuned-r11")
    ap.add_argument(
        "--set", action="append", help="FIELD=VALUE[,FIELD=VALUE], one variant each (repeat); default: a small grid"
    )
    ap.add_argument("--report-test", action="store_true")
    a = ap.parse_args()
    variants: dict[str, dict[str, float]] = {"shipped": {}}
    for item in a.set or DEFAULT_SETS:  # one variant may change several fields: a=1,b=2
        try:
            variants[item] = parse_overrides(vars(Weights()), item, "recommender weight")
        except PaperatlasError as e:
            raise SystemExit(f"--set {item!r}: {e}") from None
    res = per_reader(a.embedder, variants)
    for name in variants:
        print(f"tune\t{name}\tnDCG@10 {np.mean(list(res['tune'][name].values())):.4f}")
    cv = cross_validated(res["tune"])
    lo, hi = cv["difference 90% interval"]
    print(
        f"rule\tpicks per fold {', '.join(cv['picks per fold'])}; held-out picked {cv['held-out mean, picked']:.4f}"
        f" vs shipped {cv['held-out mean, shipped']:.4f}, difference 90% [{lo:+.4f}, {hi:+.4f}]"
        f" -> adopt {cv['adopt']}"
    )
    if a.report_test:
        for name in variants:
            print(f"test\t{name}\tnDCG@10 {np.mean(list(res['test'][name].values())):.4f}")


if __name__ == "__main__":
    main()
