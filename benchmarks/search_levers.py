"""Cheap search levers, measured side by side on the tuning splits (and the test splits printed
only for the record): fusion weight, title weight, pseudo-relevance feedback on the vectors
(Rocchio) and on BM25 (RM3-style expansion terms), each through the library's own
`SearchEngine.rank` (query vectors passed in, so only the lever differs).

    python benchmarks/search_levers.py                      # SciFact train + paraphrase train
    python benchmarks/search_levers.py --report-test        # ...and both test splits
    python benchmarks/search_levers.py --scifact-ids benchmarks/train_embedder/scifact_dev_claims.txt

A model fine-tuned on SciFact train claims (minilm-tuned) is tuned on the claims it never saw:
`--scifact-ids FILE` keeps only those train claims (one id per line, `#` comments).

Vectors come from the vector cache (`paperatlas bench quality` fills it), the venue library from
bench quality's workdir. Pick on train; a default changes only when train says so and test does
not drop.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PAPERATLAS_VECTOR_CACHE", str(Path.home() / ".cache/paperatlas/eval/vectors.sqlite"))

from paperatlas import Library  # noqa: E402
from paperatlas_lab.bench.quality import PARAPHRASES, default_data_root  # noqa: E402
from paperatlas.embed.base import DEFAULT_EMBEDDER  # noqa: E402
from paperatlas_lab.eval.beir import canonical_qrels, evaluate, keep_queries, load_beir, query_vectors  # noqa: E402
from paperatlas_lab.eval.floor import read_queries  # noqa: E402
from paperatlas.search.bm25 import Analyzer, tokens  # noqa: E402
from paperatlas.search.engine import SearchSettings  # noqa: E402
from paperatlas.search.query import MAX_TERMS, Query, parse  # noqa: E402

ANALYZER = Analyzer()


def terms_of(text: str) -> list[str]:
    return [ANALYZER._term(w) for w in tokens(text.lower()) if w not in ANALYZER.stopwords]


def rocchio(lib: Library, qv: np.ndarray, q: Query, beta: float, k: int = 5) -> np.ndarray:
    """The query vector moved towards the mean of its k nearest papers (then renormalised)."""
    vec = lib.engine.vector_index()
    top = vec.search(qv, k)
    if not top:
        return qv
    m = np.mean([vec.vector(pid) for pid, _ in top], axis=0)
    out = qv + beta * m
    return (out / np.linalg.norm(out)).astype(np.float32)


def rm3(lib: Library, q: Query, n_terms: int, k: int = 10) -> Query:
    """The query plus the n terms most weighted in its top-k BM25 papers (term share within each
    paper x the paper's normalised score, summed), stems the query lacks."""
    hits = lib.engine.keyword_index().search(q, k)
    if not hits:
        return q
    papers = lib.store.get_papers([pid for pid, _ in hits])
    best = hits[0][1] or 1.0
    w: Counter[str] = Counter()
    have = set(q.terms)
    for pid, s in hits:
        p = papers.get(pid)
        if p is None:
            continue
        ts = terms_of(p.title + " " + p.abstract)
        for t, c in Counter(ts).items():
            w[t] += (c / max(1, len(ts))) * (s / best)
    extra = [t for t, _ in w.most_common(n_terms * 3) if t not in have][:n_terms]
    return Query(text=q.text, terms=list(dict.fromkeys(q.terms + extra))[:MAX_TERMS], phrases=q.phrases)


VARIANTS: list[tuple[str, dict]] = [
    ("default (the shipped SearchSettings: max 0.55, title x3)", {}),
    ("semantic weight 0.4", {"settings": {"semantic_weight": 0.4}}),
    ("semantic weight 0.6", {"settings": {"semantic_weight": 0.6}}),
    ("semantic weight 0.7", {"settings": {"semantic_weight": 0.7}}),
    (
        "min-max 0.5 (the fusion before 2026-12-04's fourth stop)",
        {"settings": {"norm": "minmax", "semantic_weight": 0.5}},
    ),
    ("title x1", {"settings": {"title_weight": 1}}),
    ("title x2", {"settings": {"title_weight": 2}}),
    ("title x5", {"settings": {"title_weight": 5}}),
    ("Rocchio beta 0.3 (5 papers)", {"rocchio": 0.3}),
    ("Rocchio beta 0.6 (5 papers)", {"rocchio": 0.6}),
    ("RM3-style +5 terms (10 papers)", {"rm3": 5}),
    ("RM3-style +10 terms (10 papers)", {"rm3": 10}),
]


def run_variant(lib: Library, queries: dict[str, str], qvecs: np.ndarray, v: dict) -> dict[str, list[str]]:
    s = lib.engine.settings
    saved = {k: getattr(s, k) for k in v.get("settings", {})}
    rebuild = "title_weight" in v.get("settings", {})
    for k, val in v.get("settings", {}).items():
        setattr(s, k, val)
    if rebuild:  # the keyword index is built with the title weight: build it again, save nothing
        s.persist, lib.engine.indexes._kw = False, None
    try:
        runs: dict[str, dict[str, list[str]]] = {"hybrid": {}, "semantic": {}, "keyword": {}}
        for i, (qid, text) in enumerate(queries.items()):
            q = parse(text)
            qv = qvecs[i]
            if "adapter" in v:  # a linear map on the query vector (benchmarks/query_adapter.py)
                qv = v["adapter"] @ qv
                qv = (qv / np.linalg.norm(qv)).astype(np.float32)
            if "rocchio" in v:
                qv = rocchio(lib, qv, q, v["rocchio"])
            if "rm3" in v:
                q = rm3(lib, q, v["rm3"])
            for mode in runs:
                fused, _ = lib.engine.rank(q, mode, 100, qvec=None if mode == "keyword" else qv)
                runs[mode][qid] = [pid for pid, _ in fused[:100]]
        return runs
    finally:
        for k, val in saved.items():
            setattr(s, k, val)
        if rebuild:
            s.persist, lib.engine.indexes._kw = True, None


def scifact(
    data: Path, split: str, only: list[str] | None = None, embedder: str = DEFAULT_EMBEDDER
) -> tuple[Library, dict[str, str], np.ndarray, dict, Path]:
    d = load_beir(data / "scifact", split)
    if only is not None and split == "train":
        d = keep_queries(d, only, split, "--scifact-ids")
    tmp = Path(tempfile.mkdtemp(prefix="levers-"))
    lib = Library(tmp / "scifact.db", embedder=embedder, search_settings=SearchSettings(floor=False))
    lib.ingest(d.corpus)
    lib.embed()
    qv = query_vectors(lib.embedder, list(d.queries.values()), lib.vector_cache)
    return lib, d.queries, qv, canonical_qrels(d.qrels, lib.store.resolve_id), tmp


def venue_db(embedder: str) -> Path:
    """bench quality's venue library for `embedder`; missing, an empty one would score every paraphrase 0."""
    db = Path.home() / f".cache/paperatlas/eval/bench-quality/venue-{embedder}.db"
    if not db.exists():
        raise SystemExit(
            f"{db} is missing: run `paperatlas bench quality --embedder {embedder} --only paraphrase` first"
        )
    return db


def paraphrases(
    split: str, embedder: str = DEFAULT_EMBEDDER, path: Path = PARAPHRASES
) -> tuple[Library, dict[str, str], np.ndarray, dict]:
    lib = Library(venue_db(embedder), search_settings=SearchSettings(floor=False), create=False)
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = [r for r in rows if r.get("split", "train") == split]
    queries = {f"p{i}": r["query"] for i, r in enumerate(rows)}
    qrels = {f"p{i}": {r["paper_id"]: 1} for i, r in enumerate(rows)}
    qv = query_vectors(lib.embedder, list(queries.values()), lib.vector_cache)
    return lib, queries, qv, qrels


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report-test", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated variant name prefixes")
    ap.add_argument("--scifact-ids", type=Path, help="tune on these SciFact train claims only (one id per line)")
    ap.add_argument("--embedder", default=DEFAULT_EMBEDDER, help="registered embedder (default: the shipped one)")
    ap.add_argument(
        "--paraphrases",
        type=Path,
        default=PARAPHRASES,
        help="{query, paper_id, split} lines over the venue papers (a line without split counts as train)",
    )
    ap.add_argument(
        "--adapter",
        action="append",
        default=[],
        metavar="NAME=W.npy[:SETTING=VALUE,...]",
        help="one more variant: the query vector through this map (benchmarks/query_adapter.py --save), "
        "with optional SearchSettings overrides",
    )
    a = ap.parse_args()
    for spec in a.adapter:
        name, _, rest = spec.partition("=")
        path, _, overrides = rest.partition(":")
        v: dict = {"adapter": np.load(path)}
        if overrides:
            v["settings"] = SearchSettings.parse_overrides(overrides)
        VARIANTS.append((f"adapter {name}", v))
    only = read_queries(a.scifact_ids) if a.scifact_ids else None
    venue_db(a.embedder)  # before SciFact is embedded, not after
    data = default_data_root()
    splits = ["train", "test"] if a.report_test else ["train"]
    variants = [(n, v) for n, v in VARIANTS if not a.only or any(n.startswith(p) for p in a.only.split(","))]
    for split in splits:
        sets = {
            "scifact": scifact(data, split, only, a.embedder)[:4],
            "paraphrase": paraphrases(split, a.embedder, a.paraphrases),
        }
        for name, v in variants:
            t = time.perf_counter()
            row: dict = {"split": split, "variant": name}
            for set_name, (lib, queries, qv, qrels) in sets.items():
                runs = run_variant(lib, queries, qv, v)
                metric = "ndcg@10" if set_name == "scifact" else "mrr@10"
                row[set_name] = {m: evaluate(runs[m], qrels)[metric] for m in ("hybrid", "semantic", "keyword")}
            row["seconds"] = round(time.perf_counter() - t, 1)
            print(json.dumps(row), flush=True)
        for lib, *_ in sets.values():
            lib.close()


if __name__ == "__main__":
    main()
