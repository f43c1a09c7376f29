"""Three views of an English query: BM25, the default MiniLM and the multilingual e5 index, fused
convexly with weights picked on the paraphrase set's train half and reported on its test half.

    python benchmarks/three_views.py            # needs bench quality's venue library with its e5 index
                                                # (paperatlas bench quality --only zh builds both)

Each view scores the union of the three top-100 lists (every candidate gets its real score in
every view, as the engine's complete_scores does), scaled min-max within that union, then
w_kw * bm25 + w_minilm * minilm + w_e5 * e5 on a 0.1 grid. The two-view row (e5 weight 0) is what
search ships (0.5 / 0.5); a third view ships only if train picks one and test does not drop.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from paperatlas import Library  # noqa: E402
from paperatlas_lab.bench.quality import PARAPHRASES  # noqa: E402
from paperatlas.embed.base import DEFAULT_EMBEDDER  # noqa: E402
from paperatlas_lab.eval.beir import load_paraphrases  # noqa: E402
from paperatlas.search.query import parse  # noqa: E402

DEPTH = 100


def views(lib: Library, text: str) -> tuple[list[str], np.ndarray]:
    """(candidate ids, their scores: one row per view, BM25 / MiniLM / e5, min-max scaled)."""
    eng = lib.engine
    q = parse(text)
    kw = eng.keyword_index()
    vec = eng.vector_index()
    ml = eng.multilingual_index()
    assert vec is not None and ml is not None, "the venue library needs its vectors and its e5 index"
    mlvec, ml_pos = ml
    qv = eng.query_vector(text)
    qe = eng.query_vector(text, eng.multilingual_embedder)
    cand = list(
        dict.fromkeys(
            [p for p, _ in kw.search(q, DEPTH)]
            + [p for p, _ in vec.search(qv, DEPTH)]
            + [p for p, _ in mlvec.search(qe, DEPTH)]
        )
    )
    kpos = eng._kw_pos
    bm = np.zeros(len(cand), dtype=np.float32)
    have = [i for i, p in enumerate(cand) if p in kpos]
    bm[have] = kw.score_positions(q, [kpos[cand[i]] for i in have])
    mini = np.array([float(vec.vector(p) @ qv) if vec.vector(p) is not None else -1.0 for p in cand], dtype=np.float32)
    e5 = np.array(
        [float(mlvec.vector(p) @ qe) if p in ml_pos and mlvec.vector(p) is not None else -1.0 for p in cand],
        dtype=np.float32,
    )
    rows = []
    for s in (bm, mini, e5):
        lo, hi = float(s.min()), float(s.max())
        rows.append((s - lo) / (hi - lo) if hi > lo else np.ones_like(s))
    return cand, np.vstack(rows)


def mrr(scored: list[tuple[list[str], np.ndarray, str]], w: tuple[float, float, float]) -> float:
    total = 0.0
    for cand, m, target in scored:
        fused = np.asarray(w, dtype=np.float32) @ m
        order = np.argsort(-fused, kind="stable")[:10]
        top = [cand[i] for i in order]
        if target in top:
            total += 1 / (top.index(target) + 1)
    return total / max(1, len(scored))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default=str(Path.home() / ".cache/paperatlas/eval/bench-quality"))
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    db = Path(a.workdir) / f"venue-{a.embedder}.db"
    lib = Library(db, create=False)
    rows = [json.loads(x) for x in PARAPHRASES.read_text(encoding="utf-8").splitlines() if x.strip()]
    pairs = load_paraphrases(PARAPHRASES, lib)
    by_split: dict[str, list[tuple[list[str], np.ndarray, str]]] = {"train": [], "test": []}
    for (text, pid), r in zip(pairs, rows):
        cand, m = views(lib, text)
        by_split[r["split"]].append((cand, m, pid))
    tenths = [i / 10 for i in range(11)]
    grid = [(k, s, round(1 - k - s, 1) + 0.0) for k, s in itertools.product(tenths, repeat=2) if k + s <= 1.0001]
    table = {w: (mrr(by_split["train"], w), mrr(by_split["test"], w)) for w in grid}
    best = max(grid, key=lambda w: (round(table[w][0], 4), -w[2]))  # ties: fewer e5
    two = max((w for w in grid if w[2] == 0), key=lambda w: round(table[w][0], 4))
    with_e5 = max((w for w in grid if w[2] >= 0.1), key=lambda w: round(table[w][0], 4))
    shipped = (0.5, 0.5, 0.0)
    out = {
        "papers": lib.count(),
        "queries": {k: len(v) for k, v in by_split.items()},
        "rows": {
            "shipped two views (0.5, 0.5, 0)": table[shipped],
            f"best two views on train {two}": table[two],
            f"best three views on train {best}": table[best],
            f"best with e5 >= 0.1 on train {with_e5}": table[with_e5],
            "e5 alone (0, 0, 1)": table[(0.0, 0.0, 1.0)],
            "MiniLM alone (0, 1, 0)": table[(0.0, 1.0, 0.0)],
            "BM25 + e5 (0.5, 0, 0.5)": table[(0.5, 0.0, 0.5)],
        },
    }
    if a.json:
        print(json.dumps({**out, "rows": {k: {"train": v[0], "test": v[1]} for k, v in out["rows"].items()}}, indent=2))
        return
    print(
        f"paraphrase MRR@10 over {out['papers']} papers ({out['queries']['train']} train / {out['queries']['test']} test)"
    )
    print("weights (bm25, minilm, e5)                 train   test")
    for name, (tr, te) in out["rows"].items():
        print(f"  {name:<44} {tr:.3f}  {te:.3f}")


if __name__ == "__main__":
    main()
