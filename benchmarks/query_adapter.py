"""A linear map on the query vector, learnt from cached vectors: does it move search past the tuned model?

The documents keep the vectors every library already stores; only the query vector is turned,
`q -> normalise(W q)`, so a map could ship without re-embedding anything. `W` starts at the identity
and is pulled back towards it (`--reg`, times ||W - I||^2). It is fitted by full-softmax contrastive
loss over each training query's own corpus, with the product's int8 document vectors as stored, and
optionally (`--keep`) a distillation term that keeps the SciFact claims' softmax over their corpus
where the shipped model puts it.

    python benchmarks/query_adapter.py dump                                     # -> .tune/adapter-data.npz
    python benchmarks/query_adapter.py fit --reg 0.01,0.02 --keep 0,4 --scifact-share 0   # semantic dev
    python benchmarks/query_adapter.py fit --reg 0.02 --keep 4 --scifact-share 0 --steps 60 --shrink 0.5 \
        --save W.npy                                              # the shipped map, byte for byte
    python benchmarks/search_levers.py --scifact-ids benchmarks/train_embedder/scifact_dev_claims.txt \
        --embedder minilm-tuned-r11-plain --only default,adapter --adapter b=W.npy   # hybrid, via the engine
    python benchmarks/query_adapter.py judge W.npy --paraphrases benchmarks/data/paraphrase_written_dev600.jsonl \
        --beir ../shared/data/nfcorpus_orig:dev                    # paired, against no map, on unused dev sets
    python benchmarks/query_adapter.py with W.npy -- bench quality --embedder minilm-tuned-r11-map \
        --baseline minilm-tuned-r11-plain --only zh                # the Chinese queries, the map in the product

Training queries (no dev or test query, no dev or test paper as a target):
- the written paraphrases' `train` rows and run 5's 1,600 (`benchmarks/train_embedder/paraphrases_train.jsonl`)
  -> their venue paper;
- SciFact train claims outside the 150 dev claims -> their cited abstracts in the SciFact corpus
  (`--scifact-share` sets their share of the loss; by default their share of the queries).
Negatives: the rest of that corpus, less every dev and test paper (so the map is not pushed away from
the papers it is judged on).

Dev (what a setting is chosen on): SciFact's 150 dev claims (nDCG@10), the paraphrase set's train half
(44, MRR@10), the 402 written `dev` paraphrases (MRR@10), semantic only here. Test splits are never
read by this script. Figures and the decision: docs/search.md, "A linear map on the query vector"."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DATA = ROOT / ".tune" / "adapter-data.npz"
WRITTEN = ROOT / "benchmarks" / "data" / "paraphrase_written_2k.jsonl"
WRITTEN_TEST = ROOT / "benchmarks" / "data" / "paraphrase_written_test.jsonl"
RUN5 = ROOT / "benchmarks" / "train_embedder" / "paraphrases_train.jsonl"
SET8K = ROOT / "benchmarks" / "data" / "paraphrase_8k.jsonl"
DEV_CLAIMS = ROOT / "benchmarks" / "train_embedder" / "scifact_dev_claims.txt"


def rows(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


PLAIN = "minilm-tuned-r11-plain"  # run 11 without the shipped map: the vectors a map is fitted on and applied to
MAPPED = "minilm-tuned-r11-map"  # run 11 with the map `with` names


def dump(out_file: Path = DATA, train_extra: list[Path] = (), held_extra: list[Path] = ()) -> None:
    from paperatlas import Library
    from paperatlas_lab.bench.quality import default_data_root
    from paperatlas_lab.eval.beir import canonical_qrels, load_beir, query_vectors
    from paperatlas_lab.eval.floor import read_queries
    from paperatlas.search.engine import SearchSettings

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from search_levers import venue_db

    out: dict[str, np.ndarray] = {}
    venue = Library(
        venue_db("minilm-tuned-r11"), embedder=PLAIN, search_settings=SearchSettings(floor=False), create=False
    )
    ids, mat = venue.store.load_vectors(venue.embedder.id)
    row = {pid: i for i, pid in enumerate(ids)}

    def target(pid: str) -> int:
        return row[venue.store.resolve_id(pid)]

    written = rows(WRITTEN)
    held = {target(r["paper_id"]) for r in written if r["split"] == "dev"}
    held |= {target(r["paper_id"]) for r in rows(WRITTEN_TEST)}
    held |= {target(r["paper_id"]) for r in rows(SET8K)}
    for path in held_extra:
        held |= {target(r["paper_id"]) for r in rows(path)}
    train = [r for r in written if r["split"] == "train"] + rows(RUN5)
    for path in train_extra:
        train += rows(path)
    train = [r for r in train if target(r["paper_id"]) not in held]
    sets = {
        "v_train": train,
        "v_dev402": [r for r in written if r["split"] == "dev"],
        "v_dev44": [r for r in rows(SET8K) if r.get("split", "train") == "train"],
    }
    out["v_docs"] = mat
    out["v_held"] = np.array(sorted(held))
    for name, rs in sets.items():
        out[name + "_q"] = query_vectors(venue.embedder, [r["query"] for r in rs], venue.vector_cache)
        out[name + "_y"] = np.array([target(r["paper_id"]) for r in rs])
    venue.close()

    import tempfile

    data = default_data_root() / "scifact"
    dev_ids = set(read_queries(DEV_CLAIMS))
    tmp = Path(tempfile.mkdtemp(prefix="adapter-"))
    d = load_beir(data, "train")
    lib = Library(tmp / "scifact.db", embedder=PLAIN, search_settings=SearchSettings(floor=False))
    lib.ingest(d.corpus)
    lib.embed()
    sids, smat = lib.store.load_vectors(lib.embedder.id)
    srow = {pid: i for i, pid in enumerate(sids)}
    qrels = canonical_qrels(d.qrels, lib.store.resolve_id)
    test = load_beir(data, "test")
    held_s = {srow[p] for rel in canonical_qrels(test.qrels, lib.store.resolve_id).values() for p in rel if p in srow}
    held_s |= {srow[p] for q, rel in qrels.items() if q in dev_ids for p in rel if p in srow}
    out["s_docs"] = smat
    out["s_held"] = np.array(sorted(held_s))
    for name, keep in (("s_train", lambda q: q not in dev_ids), ("s_dev150", lambda q: q in dev_ids)):
        qs = [q for q in d.queries if q in qrels and keep(q)]
        if name == "s_train":  # a training claim citing a held-out abstract would teach towards it
            qs = [q for q in qs if not any(srow[p] in held_s for p in qrels[q] if p in srow)]
        out[name + "_q"] = query_vectors(lib.embedder, [d.queries[q] for q in qs], lib.vector_cache)
        # several cited abstracts per claim: a padded matrix of corpus rows, -1 = none
        width = max(len(qrels[q]) for q in qs)
        y = np.full((len(qs), width), -1)
        for i, q in enumerate(qs):
            for j, p in enumerate(p for p in qrels[q] if p in srow):
                y[i, j] = srow[p]
        out[name + "_y"] = y
    lib.close()
    out_file.parent.mkdir(exist_ok=True)
    np.savez(out_file, **out)
    print({k: v.shape for k, v in out.items()})


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def adapt(W: np.ndarray, q: np.ndarray) -> np.ndarray:
    return unit(q @ W.T)


def targets(y: np.ndarray) -> np.ndarray:
    return y.reshape(len(y), -1)


def grad(W: np.ndarray, q: np.ndarray, y: np.ndarray, docs: np.ndarray, held: np.ndarray, tau: float):
    """Mean contrastive loss (log of the positives' share of the softmax) and its gradient in W."""
    u = q @ W.T
    n = np.linalg.norm(u, axis=1, keepdims=True)
    z = u / n
    raw = (z @ docs.T) / tau
    s = raw.copy()
    s[:, held] = -np.inf
    y = targets(y)
    pos = np.zeros_like(s, dtype=bool)
    r = np.repeat(np.arange(len(y)), y.shape[1])
    keep = y.ravel() >= 0
    pos[r[keep], y.ravel()[keep]] = True
    s[pos] = raw[pos]  # a positive is never masked
    m = s.max(axis=1, keepdims=True)
    e = np.exp(s - m)
    p = e / e.sum(axis=1, keepdims=True)
    ppos = np.where(pos, p, 0.0)
    share = ppos.sum(axis=1, keepdims=True)
    loss = -np.log(share).mean()
    gs = (p - ppos / share) / len(q)  # d loss / d s
    gz = gs @ docs / tau
    gu = (gz - (gz * z).sum(axis=1, keepdims=True) * z) / n
    return loss, (gu.T @ q).astype(np.float32)


def distill(W: np.ndarray, q: np.ndarray, docs: np.ndarray, tau: float):
    """KL from the identity's softmax over the corpus to the map's, and its gradient in W: keeps queries
    of another kind (the SciFact claims) ranked as the shipped model ranks them."""
    u = q @ W.T
    n = np.linalg.norm(u, axis=1, keepdims=True)
    z = u / n
    s, s0 = (z @ docs.T) / tau, (unit(q) @ docs.T) / tau
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p0 = np.exp(s0 - s0.max(axis=1, keepdims=True))
    p0 /= p0.sum(axis=1, keepdims=True)
    loss = float((p0 * (np.log(p0 + 1e-30) - np.log(p + 1e-30))).sum(axis=1).mean())
    gz = ((p - p0) / len(q)) @ docs / tau
    gu = (gz - (gz * z).sum(axis=1, keepdims=True) * z) / n
    return loss, (gu.T @ q).astype(np.float32)


def fit(
    d: dict,
    reg: float,
    tau: float,
    steps: int,
    lr: float,
    scifact_share: float | None = None,
    keep: float = 0.0,
    log=None,
) -> np.ndarray:
    dim = d["v_docs"].shape[1]
    W = np.eye(dim, dtype=np.float32)
    parts = [("v_train", "v_docs", "v_held"), ("s_train", "s_docs", "s_held")]
    weight = {p[0]: len(d[p[0] + "_q"]) for p in parts}
    total = sum(weight.values())
    share_of = {qn: w / total for qn, w in weight.items()}
    if scifact_share is not None:  # the claims are a tenth of the queries: give them a set share instead
        share_of = {"v_train": 1 - scifact_share, "s_train": scifact_share}
    m, v = np.zeros_like(W), np.zeros_like(W)
    for t in range(1, steps + 1):
        g = 2 * reg * (W - np.eye(dim, dtype=np.float32))  # reg * ‖W - I‖²
        loss = 0.0
        for qn, dn, hn in parts:
            l_, g_ = grad(W, d[qn + "_q"], d[qn + "_y"], d[dn], d[hn], tau)
            share = share_of[qn]
            loss += share * l_
            g = g + share * g_
        if keep:
            l_, g_ = distill(W, d["s_train_q"], d["s_docs"], tau)
            loss += keep * l_
            g = g + keep * g_
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        W = W - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        if log and (t % 50 == 0 or t == steps):
            log(t, loss, W)
    return W


def ranks(qv: np.ndarray, y: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each query's top 10 corpus rows, and its relevant rows (-1 = padding)."""
    return np.argsort(-(qv @ docs.T), axis=1)[:, :10], targets(y)


def mrr10(qv: np.ndarray, y: np.ndarray, docs: np.ndarray) -> float:
    order, y = ranks(qv, y, docs)
    out = []
    for o, t in zip(order, y):
        hit = np.flatnonzero(np.isin(o, t[t >= 0]))
        out.append(1.0 / (hit[0] + 1) if len(hit) else 0.0)
    return float(np.mean(out))


def ndcg10(qv: np.ndarray, y: np.ndarray, docs: np.ndarray) -> float:
    order, y = ranks(qv, y, docs)
    out = []
    for o, t in zip(order, y):
        rel = set(t[t >= 0].tolist())
        dcg = sum(1 / np.log2(i + 2) for i, p in enumerate(o) if p in rel)
        ideal = sum(1 / np.log2(i + 2) for i in range(min(len(rel), 10)))
        out.append(dcg / ideal if ideal else 0.0)
    return float(np.mean(out))


def dev(d: dict, W: np.ndarray | None) -> tuple[float, float, float]:
    f = (lambda q: q) if W is None else (lambda q: adapt(W, q))
    return (
        ndcg10(f(d["s_dev150_q"]), d["s_dev150_y"], d["s_docs"]),
        mrr10(f(d["v_dev44_q"]), d["v_dev44_y"], d["v_docs"]),
        mrr10(f(d["v_dev402_q"]), d["v_dev402_y"], d["v_docs"]),
    )


def register(name: str, path: Path) -> None:
    """The default model with `path` as its query map, under `name`, in this process only (its documents
    keep the default's model id, so a library embedded by the default is read as it is)."""
    import hashlib
    from dataclasses import replace

    from paperatlas.embed import onnx

    sys.path.insert(0, str(ROOT / "benchmarks" / "train_embedder"))
    from candidate import register_spec

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    base = onnx.SPECS["minilm-tuned-r11"]
    register_spec(replace(base, name=name, query_map=str(path.resolve()), query_map_sha256=digest))


def paired(base: dict, new: dict, qrels: dict, metric, rng: np.random.Generator) -> dict:
    """Mean difference per query, its 90% bootstrap interval, and how many queries moved each way."""
    from paperatlas_lab.eval.bootstrap import paired_interval

    qids = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
    x = np.array([metric(new.get(q, []), qrels[q]) - metric(base.get(q, []), qrels[q]) for q in qids])
    lo, hi = paired_interval(x, rng=rng)
    b = float(np.mean([metric(base.get(q, []), qrels[q]) for q in qids]))
    return {
        "queries": len(qids),
        "shipped": round(b, 4),
        "with map": round(b + float(x.mean()), 4),
        "diff": round(float(x.mean()), 4),
        "interval": [round(float(lo), 4), round(float(hi), 4)],
        "better": int((x > 1e-9).sum()),
        "worse": int((x < -1e-9).sum()),
    }


def judge(adapter: Path, paraphrase_file: Path, beir: list[str], against: Path | None = None) -> None:
    """Hybrid, paired, on each set named (none of them a test split): run 11's plain query vectors through
    `against` (default: none, i.e. run 11 as it was before any map) vs through `adapter`."""
    import tempfile

    from paperatlas import Library
    from paperatlas_lab.eval.beir import canonical_qrels, load_beir, mrr_at_k, ndcg_at_k, query_vectors
    from paperatlas.search.engine import SearchSettings

    sys.path.insert(0, str(ROOT / "benchmarks"))
    import search_levers as sl

    W = np.load(adapter)
    base = np.load(against) if against else np.eye(W.shape[0], dtype=np.float32)
    rng = np.random.default_rng(0)
    mrr, ndcg = (lambda r, q: mrr_at_k(r, q, 10)), (lambda r, q: ndcg_at_k(r, q, 10))

    def both(lib, queries, qv):
        return [sl.run_variant(lib, queries, qv, {"adapter": m})["hybrid"] for m in (base, W)]

    if paraphrase_file:
        lib = Library(
            sl.venue_db("minilm-tuned-r11"), embedder=PLAIN, search_settings=SearchSettings(floor=False), create=False
        )
        rs = rows(paraphrase_file)
        if any(r.get("split") in ("test", "train") for r in rs):
            raise SystemExit(f"{paraphrase_file}: judge reads dev rows only")
        queries = {f"p{i}": r["query"] for i, r in enumerate(rs)}
        qrels = {f"p{i}": {lib.store.resolve_id(r["paper_id"]): 1} for i, r in enumerate(rs)}
        qv = query_vectors(lib.embedder, list(queries.values()), lib.vector_cache)
        out = paired(*both(lib, queries, qv), qrels, mrr, rng)
        print(json.dumps({"set": str(paraphrase_file), "metric": "mrr@10", **out}), flush=True)
        lib.close()
    for spec in beir:
        folder, _, split = spec.partition(":")
        if split == "test":
            raise SystemExit(f"{spec}: judge reads no test split")
        d = load_beir(Path(folder), split)
        tmp = Path(tempfile.mkdtemp(prefix="judge-"))
        lib = Library(tmp / "beir.db", embedder=PLAIN, search_settings=SearchSettings(floor=False))
        lib.ingest(d.corpus)
        lib.embed()
        qv = query_vectors(lib.embedder, list(d.queries.values()), lib.vector_cache)
        out = paired(*both(lib, d.queries, qv), canonical_qrels(d.qrels, lib.store.resolve_id), ndcg, rng)
        print(json.dumps({"set": spec, "metric": "ndcg@10", **out}), flush=True)
        lib.close()


def main() -> None:
    if sys.argv[1:2] == ["with"]:  # with MAP.npy -- ARGS: the CLI (or a script) with the map as an embedder
        if len(sys.argv) < 5 or sys.argv[3] != "--" or not Path(sys.argv[2]).is_file():
            raise SystemExit("usage: query_adapter.py with MAP.npy -- CLI-ARGS (or SCRIPT.py ARGS)")
        os.environ.setdefault("PAPERATLAS_VECTOR_CACHE", str(Path.home() / ".cache/paperatlas/eval/vectors.sqlite"))
        register(MAPPED, Path(sys.argv[2]))
        from candidate import run

        run(sys.argv[4:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("dump")
    p.add_argument("--out", type=Path, default=DATA)
    p.add_argument(
        "--train-extra", type=Path, action="append", default=[], help="more {paper_id, query} lines to fit on"
    )
    p.add_argument("--held-extra", type=Path, action="append", default=[], help="more papers kept out of the loss")
    p = sub.add_parser("judge", help="hybrid, shipped vs a map, paired, on dev sets no choice has used")
    p.add_argument("adapter", type=Path)
    p.add_argument("--paraphrases", type=Path, help="{paper_id, query, split: dev} lines over the venue papers")
    p.add_argument("--beir", action="append", default=[], metavar="FOLDER:SPLIT")
    p.add_argument("--against", type=Path, help="the map to beat (default: none)")
    p = sub.add_parser("fit")
    p.add_argument("--reg", default="1", help="comma-separated pulls towards the identity")
    p.add_argument("--tau", type=float, default=0.05)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--scifact-share", default="", help="comma-separated loss shares of the SciFact claims")
    p.add_argument("--keep", default="0", help="comma-separated weights of the claims' distillation term")
    p.add_argument("--data", type=Path, default=DATA, help="what `dump --out` wrote")
    p.add_argument("--shrink", type=float, default=1.0, help="keep this share of W - I in the saved map")
    p.add_argument("--save", type=Path)
    a = ap.parse_args()
    os.environ.setdefault("PAPERATLAS_VECTOR_CACHE", str(Path.home() / ".cache/paperatlas/eval/vectors.sqlite"))
    if a.cmd == "dump":
        dump(a.out, a.train_extra, a.held_extra)
        return
    if a.cmd == "judge":
        judge(a.adapter, a.paraphrases, a.beir, a.against)
        return
    d = {k: (v.astype(np.float32) if v.dtype.kind == "f" else v) for k, v in np.load(a.data).items()}
    print(json.dumps({"setting": "identity (the shipped model)", "dev": dev(d, None)}), flush=True)
    shares = [float(x) for x in a.scifact_share.split(",")] if a.scifact_share else [None]
    grid = [(float(x), sh, float(k)) for x in a.reg.split(",") for sh in shares for k in a.keep.split(",")]
    for reg, share, keep in grid:

        def log(t: int, loss: float, W: np.ndarray, reg=reg, share=share, keep=keep) -> None:
            row = {
                "reg": reg,
                "scifact_share": share,
                "keep": keep,
                "tau": a.tau,
                "step": t,
                "loss": round(float(loss), 4),
            }
            print(json.dumps({**row, "dev": [round(x, 4) for x in dev(d, W)]}), flush=True)

        W = fit(d, reg, a.tau, a.steps, a.lr, share, keep, log)
        if a.save:
            eye = np.eye(len(W), dtype=np.float32)
            np.save(a.save, (eye + a.shrink * (W - eye)).astype(np.float32))


if __name__ == "__main__":
    main()
