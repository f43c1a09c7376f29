"""How the two hybrid lists are normalised before the weighted sum, and a title-only vector as a
third view, measured on the three dev sets of the tuned model (and the test sets, printed apart):

    python benchmarks/fusion_norms.py                      # dev: SciFact dev claims, paraphrase train, 402 written dev
    python benchmarks/fusion_norms.py --report-test        # ...then SciFact test, the 36 test paraphrases, the 1,200 written test
    python benchmarks/fusion_norms.py --compare max:0.55   # paired bootstrap against the shipped minmax 0.5, per set

Each query's candidates are the engine's own: the top 100 of the keyword index and of the vector
index, every candidate scored in both (as `complete_scores` does); a variant only changes how those
two score lists become one. "minmax 0.5" reproduces `SearchEngine.rank` before the change exactly.
The title view embeds each paper's title alone with the same model (a second vector per paper) and
adds its top 100 to the candidates.

Needs bench quality's venue library for the embedder (`paperatlas bench quality --only paraphrase`)
and the vector cache it fills. Pick on dev; test is printed for the record only.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import search_levers as levers  # noqa: E402

from paperatlas import Library  # noqa: E402
from paperatlas_lab.bench.quality import default_data_root  # noqa: E402
from paperatlas.embed.base import DEFAULT_EMBEDDER  # noqa: E402
from paperatlas_lab.eval.bootstrap import paired_interval  # noqa: E402
from paperatlas_lab.eval.beir import evaluate  # noqa: E402
from paperatlas_lab.eval.floor import read_queries  # noqa: E402
from paperatlas.search.fusion import NORMALIZERS  # noqa: E402
from paperatlas.search.query import parse  # noqa: E402

DEPTH = 100
WRITTEN = ROOT / "benchmarks/data/paraphrase_written_2k.jsonl"
WRITTEN_TEST = ROOT / "benchmarks/data/paraphrase_written_test.jsonl"
DEV_CLAIMS = ROOT / "benchmarks/train_embedder/scifact_dev_claims.txt"
NORMS = ("minmax", "max", "zscore")
WEIGHTS = (0.45, 0.5, 0.55, 0.6, 0.65)


@dataclass
class Scored:
    """One query: its candidates and their scores in each view (all in the same order)."""

    ids: list[str]
    base: np.ndarray  # in the engine's two top-100 lists (the title view adds candidates of its own)
    bm25: np.ndarray
    cosine: np.ndarray
    title: np.ndarray
    doc_title: np.ndarray  # cosine between each candidate's document and title vectors


def score_queries(lib: Library, queries: dict[str, str], qvecs: np.ndarray) -> dict[str, Scored]:
    eng = lib.engine
    kw, vec, pos = eng.keyword_index(), eng.vector_index(), eng._vec_pos
    order = sorted(pos, key=pos.get)
    docs = np.vstack([vec.vector(p) for p in order]).astype(np.float32)
    papers = lib.store.get_papers(order)
    t = time.perf_counter()
    titles = lib.embedder.embed([papers[p].title or "" for p in order], batch_size=64)
    print(f"# {len(order)} titles embedded in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    out = {}
    for (qid, text), qv in zip(queries.items(), qvecs):
        q = eng.keyword_query(parse(text), None)
        by_doc, by_title = docs @ qv, titles @ qv
        kl = [p for p, _ in kw.search(q, DEPTH)]
        vl = [order[j] for j in np.argsort(-by_doc)[:DEPTH]]
        tl = [order[j] for j in np.argsort(-by_title)[:DEPTH]]
        ids = list(dict.fromkeys(kl + vl + tl))
        base = set(kl + vl)
        bm = np.zeros(len(ids), np.float32)
        have = [i for i, p in enumerate(ids) if p in eng._kw_pos]
        bm[have] = kw.score_positions(q, [eng._kw_pos[ids[i]] for i in have])
        rows = np.array([pos[p] for p in ids])
        dt = np.einsum("ij,ij->i", docs[rows], titles[rows])
        out[qid] = Scored(ids, np.array([p in base for p in ids]), bm, by_doc[rows], by_title[rows], dt)
    return out


def norm(name: str, x: np.ndarray) -> np.ndarray:
    """The product's normaliser, applied to one score array."""
    got = NORMALIZERS[name]([(str(i), float(v)) for i, v in enumerate(x)])
    return np.array([got[str(i)] for i in range(len(x))], dtype=np.float32)


def drop(x: np.ndarray) -> float:
    """(1st - 10th score) / 1st: how far a list's top stands out."""
    top = np.sort(x)[::-1]
    return float((top[0] - top[min(9, len(top) - 1)]) / top[0]) if top[0] > 0 else 0.0


def rank(scored: dict[str, Scored], variant: str) -> dict[str, list[str]]:
    """`NORM:WEIGHT` (two views), `title:W_KW,W_DOC,W_TITLE` (three views, min-max), `mix:ALPHA` (the
    document vector plus ALPHA x the title vector, renormalised) or `maxcos:` (the better of the two
    cosines), the last two fused min-max 0.5 with BM25; `adapt:BETA`: max, with a weight per query of
    0.55 + BETA x (the semantic list's relative drop from its 1st to 10th score - the keyword list's),
    clipped to [0.2, 0.9] (trust the list that separates its top from the rest)."""
    kind, _, arg = variant.partition(":")
    runs = {}
    for qid, s in scored.items():
        if kind == "title":
            w = [float(x) for x in arg.split(",")]
            fused = w[0] * norm("minmax", s.bm25) + w[1] * norm("minmax", s.cosine) + w[2] * norm("minmax", s.title)
            ids = s.ids
        elif kind == "adapt":
            m = s.base
            b, c = s.bm25[m], s.cosine[m]
            w = float(np.clip(0.55 + float(arg) * (drop(c) - drop(b)), 0.2, 0.9))
            fused = (1 - w) * norm("max", b) + w * norm("max", c)
            ids = [p for p, keep in zip(s.ids, m) if keep]
        elif kind in ("mix", "maxcos"):
            if kind == "mix":
                al = float(arg)
                cos = (s.cosine + al * s.title) / np.sqrt(1 + al * al + 2 * al * s.doc_title)
            else:
                cos = np.maximum(s.cosine, s.title)
            fused = 0.5 * norm("minmax", s.bm25) + 0.5 * norm("minmax", cos)
            ids = s.ids
        else:
            m, w = s.base, float(arg)
            fused = (1 - w) * norm(kind, s.bm25[m]) + w * norm(kind, s.cosine[m])
            ids = [p for p, b in zip(s.ids, m) if b]
        # ties as convex breaks them: by id
        order = sorted(range(len(ids)), key=lambda i: (-fused[i], ids[i]))[:DEPTH]
        runs[qid] = [ids[i] for i in order]
    return runs


def sets(embedder: str, test: bool) -> dict[str, tuple[dict[str, Scored], dict, str]]:
    data = default_data_root()
    if data is None:
        raise SystemExit("../shared/data is not here")
    split = "test" if test else "train"
    lib, queries, qv, qrels, _ = levers.scifact(data, split, None if test else read_queries(DEV_CLAIMS), embedder)
    out = {"SciFact " + ("test" if test else "dev"): (score_queries(lib, queries, qv), qrels, "ndcg@10")}
    lib.close()
    para = [("paraphrase test (36)", "test", levers.PARAPHRASES), ("written test (1,200)", "test", WRITTEN_TEST)]
    if not test:
        para = [("paraphrase train (44)", "train", levers.PARAPHRASES), ("written dev (402)", "dev", WRITTEN)]
    for name, sp, path in para:
        lib, queries, qv, qrels = levers.paraphrases(sp, embedder, path)
        out[name] = (score_queries(lib, queries, qv), qrels, "mrr@10")
        lib.close()
    return out


def per_query(scored: dict[str, Scored], qrels: dict, metric: str, variant: str) -> np.ndarray:
    runs = rank(scored, variant)
    return np.array([evaluate({q: runs[q]}, {q: qrels[q]})[metric] for q in runs])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER)
    ap.add_argument("--report-test", action="store_true")
    ap.add_argument("--compare", metavar="NORM:WEIGHT", help="paired bootstrap of this variant against minmax:0.5")
    a = ap.parse_args()
    variants = [f"{n}:{w}" for n in NORMS for w in WEIGHTS]
    variants += ["title:0.4,0.5,0.1", "title:0.5,0.4,0.1", "title:0.5,0.3,0.2", "mix:0.25", "mix:0.5", "mix:1.0"]
    variants += ["maxcos:", "adapt:-0.5", "adapt:0.25", "adapt:0.5", "adapt:1.0"]
    for test in (False, True) if a.report_test else (False,):
        views = sets(a.embedder, test)
        for v in variants:
            row = {"split": "test" if test else "dev", "variant": v}
            for name, (scored, qrels, metric) in views.items():
                row[name] = round(evaluate(rank(scored, v), qrels)[metric], 4)
            print(json.dumps(row), flush=True)
        if a.compare:
            rng = np.random.default_rng(0)
            for name, (scored, qrels, metric) in views.items():
                d = per_query(scored, qrels, metric, a.compare) - per_query(scored, qrels, metric, "minmax:0.5")
                lo, hi = paired_interval(d, rng=rng)
                print(
                    f"{name}: {a.compare} - minmax:0.5 = {d.mean():+.4f}, 90% [{lo:+.4f}, {hi:+.4f}], "
                    f"{int((d > 0).sum())} queries better, {int((d < 0).sum())} worse"
                )


if __name__ == "__main__":
    main()
