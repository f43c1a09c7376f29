"""Cold start from a reader's own papers, against the same reader's stars, on ACM-CR.

Each of ACM-CR's 50 citing papers is a reader (lab/paperatlas_lab/eval/recommend.py): their in-corpus
references are their library; the same seeded half is hidden and the same 10,000-paper pool ranked
as in `paperatlas eval recommend acm-cr`. Here the citing paper's own title and abstract stand for
the papers its authors wrote (what `import-reader --author` / `--bibtex` brings in), and three
profiles score the hidden half, in one run, with the evaluation's metrics (nDCG@10, recall@100, MRR):

* nothing: no star and no paper of one's own (what a new reader gets without this: the cold-start order);
* stars: the visible half of the references as likes (the evaluation's own setting: the baseline);
* own paper only: nothing starred, only the reader's own paper (day one);
* own paper + stars: both.

The visible half is left out of every ranking, so all three rank the same candidates.

    flock /work/heavy.lock nice -n 10 python benchmarks/own_papers_cold_start.py [DATA] [--seeds 0,1,2,3,4]

DATA defaults to ../shared/data/acm_cr (read its README). The pool is embedded through the shared
vector cache (~/.cache/paperatlas), so a second run takes a minute.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from paperatlas_lab.eval.recommend import (
    ACM_POOL_SIZE,
    ACM_SEEDS,
    _mean,
    acm_pool,
    acm_splits,
    library_from_records,
    load_acm_readers,
    ndcg_at,
    recall_at,
    reciprocal_rank,
)
from paperatlas.recommend import RECOMMENDERS, Signals
from paperatlas.recommend.base import rank
from paperatlas.recommend.own import ReaderPapers, Trimmed, with_own_papers

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "acm_cr"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    ap.add_argument("--seeds", default=",".join(map(str, ACM_SEEDS)))
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--pool", type=int, default=ACM_POOL_SIZE, help="papers ranked (a smaller pool: a smoke test)")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    citing = {
        r["paper_doi"]: r
        for r in (json.loads(line) for line in open(Path(a.data) / "citations.jsonl", encoding="utf-8"))
    }
    readers = load_acm_readers(a.data)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="paperatlas-own-") as tmp:
        lib = library_from_records(acm_pool(a.data, a.pool), a.embedder, tmp, print)
        try:
            corpus = lib.recommend.corpus()
            tasks = acm_splits(readers, corpus, seeds, lambda d: lib.store.resolve_id(d))
            texts = [f"{citing[r.doi]['title']}. {citing[r.doi]['abstract']}" for r in readers]
            vecs = lib.embedder.embed(texts)  # what import-reader stores for each own paper
        finally:
            lib.close()
        print(f"pool of {len(corpus)} papers, {len(tasks)} reader-seeds, set up in {time.time() - t0:.0f}s")
        grown = {}
        for ri, r in enumerate(readers):
            c = citing[r.doi]
            own = ReaderPapers(["p"], [c["title"]], [c["abstract"]], vectors=[vecs[ri]])
            grown[ri] = (with_own_papers(corpus, own), own.ids)
        rec = RECOMMENDERS.create("default")
        n = len(corpus)
        per: dict[str, dict[str, list[dict[str, float]]]] = {}
        for arm in ("nothing (day one today)", "stars", "own paper only", "own paper + stars"):
            t = time.time()
            for task in tasks:
                likes = task["likes"]
                if arm.startswith("nothing"):
                    # no star, no paper of one's own: the cold-start order, all ties on ACM-CR (no
                    # oral/spotlight marks), broken at random so its MRR is a rank, not a tie at 1
                    scored = rec.fit(corpus, Signals())
                    rng = np.random.default_rng(task["seed"] * 1000 + task["reader"])
                    scored.scores = scored.scores + 1e-6 * rng.random(n).astype(np.float32)
                elif arm == "stars":
                    scored = rec.fit(corpus, Signals(likes=likes))
                else:
                    big, own_ids = grown[task["reader"]]
                    signals = Signals(likes=own_ids + (likes if arm == "own paper + stars" else []))
                    scored = Trimmed(rec.fit(big, signals), n)
                excl = np.zeros(n, dtype=bool)
                excl[corpus.rows(likes)] = True
                hidden = set(corpus.rows(task["hidden"]).tolist())
                top = rank(scored, 100, exclude=excl)
                m = {
                    "ndcg@10": ndcg_at(top, hidden, 10),
                    "recall@100": recall_at(top, hidden, 100),
                    "mrr": reciprocal_rank(scored.scores, hidden, excl),
                }
                for split in (task["split"], "all"):
                    per.setdefault(split, {}).setdefault(arm, []).append(m)
            print(f"{arm}: {len(tasks)} reader-seeds in {time.time() - t:.1f}s")
    print()
    print("split  profile                   nDCG@10  recall@100     MRR")
    for split in ("tune", "test", "all"):
        for arm, ms in per.get(split, {}).items():
            vals = [_mean([m[k] for m in ms]) for k in ("ndcg@10", "recall@100", "mrr")]
            print(f"{split:<6} {arm:<25} {vals[0]:7.4f}  {vals[1]:10.4f}  {vals[2]:6.4f}")


if __name__ == "__main__":
    main()
