"""`paperatlas bench search`: query latency and memory at 8k / 100k / 1M papers, and
embedding throughput of Library.embed beside the raw model, measured in the same run.

* 8k is the real library given with --db (e.g. the venue papers plus the examples).
* Larger sizes are synthetic, and the output says so: every paper is a real paper
  of that library with ~15% of its abstract words swapped for words of another
  paper and its title words shuffled; its vector is a real vector mixed with
  another real one plus noise (0.8 a + 0.4 b + 0.3 g, renormalised). They are
  written straight into a library file (papers, FTS5 rows and vectors; the ingest
  benchmark measures ingest), cached in --workdir and reused by later runs.
* Each size is measured in a fresh child process, twice: the first builds (and
  saves) the indexes, the second starts as a restarted server would, from the saved
  indexes. Latency is per query, query embedding included, over distinct queries
  (no query-vector cache hits): short titles of real papers.
* RSS is the child's resident memory after the queries (VmRSS) and its peak (VmHWM).
  Saved indexes are memory-mapped: RSS counts the pages the queries touched.
* The child embeds queries with one ONNX thread, as `paperatlas serve` does.
"""

from __future__ import annotations

import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperatlas import settings as paperatlas_settings
from paperatlas.models import Paper

MODES = ("hybrid", "keyword", "semantic")


def parse_size(size: str) -> int:
    """ "real" or "8k": the --db library itself (0); "100k", "1m", "250000": a synthetic one."""
    s = size.strip().lower()
    if s in ("real", "8k"):
        return 0
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([km]?)", s)
    if not m:
        raise ValueError(f"bad size {size!r}: use real (or 8k), 100k, 1m or a number")
    return int(float(m.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2)])


def _rss() -> dict[str, float]:
    out: dict[str, float] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = round(int(line.split()[1]) / 1024, 1)  # MiB
    except OSError:  # not Linux: no numbers rather than wrong ones
        pass
    return {"rss_mib": out.get("VmRSS", 0.0), "peak_rss_mib": out.get("VmHWM", 0.0)}


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))], 2) if xs else 0.0


def load_queries(lib: Any, n: int, seed: int = 0) -> list[str]:
    """Distinct short queries: the first 3-7 words of random real titles, lowercased."""
    titles = [p.title for p in lib.papers() if p.title and not p.title_derived]
    rng = random.Random(seed)
    rng.shuffle(titles)
    out: dict[str, None] = {}
    for t in titles:
        words = re.findall(r"[\w-]+", t.lower())
        if len(words) >= 3:
            out.setdefault(" ".join(words[: rng.randint(3, 7)]), None)
        if len(out) >= n:
            break
    return list(out)


# -- synthetic libraries -------------------------------------------------------------------------
def build_synthetic(src_db: Path, dst: Path, n: int, seed: int = 0, batch: int = 20_000) -> dict[str, Any]:
    """A library file of `n` perturbed copies of `src_db`'s papers and vectors (see module doc)."""
    from paperatlas.library import Library

    t0 = time.perf_counter()
    src = Library(src_db)
    model = src.embedder.id
    ids, mat = src.store.load_vectors(model)
    if not ids:
        raise SystemExit(f"{src_db} has no vectors of {model}: run `paperatlas --db {src_db} embed` first")
    papers = src.store.get_papers(ids)
    base = [papers[i] for i in ids if i in papers]
    vecs = mat[[k for k, i in enumerate(ids) if i in papers]]
    words = [w for p in base[:2000] for w in p.abstract.split()]
    embedder_name = src.store.get_meta("embedder") or "minilm"
    src.close()
    tmp = dst.with_suffix(".tmp")
    for f in (tmp, Path(str(tmp) + "-wal"), Path(str(tmp) + "-shm")):
        f.unlink(missing_ok=True)
    lib = Library(tmp)
    rng = np.random.default_rng(seed)
    prng = random.Random(seed)
    for start in range(0, n, batch):
        m = min(batch, n - start)
        a = rng.integers(0, len(base), m)
        b = rng.integers(0, len(base), m)
        g = rng.standard_normal((m, vecs.shape[1])).astype(np.float32) / np.sqrt(vecs.shape[1])
        x = 0.8 * vecs[a] + 0.4 * vecs[b] + 0.3 * g
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        rows, vrows = [], []
        for j in range(m):
            p = base[a[j]]
            pid = f"syn{start + j:07d}"
            q = perturbed(p, pid, prng, words, title_derived=p.title_derived)
            rows.append((q, pid, pid, None))
            vrows.append((pid, "", x[j]))
        lib.store.write_batch(rows, [], [], [])
        lib.store.put_vectors(model, vrows)
    lib.store.set_meta("embedder", embedder_name)
    lib.close()
    os.replace(tmp, dst)
    return {"papers": n, "build_s": round(time.perf_counter() - t0, 1)}


# -- measurement (runs in a child process) ---------------------------------------------------------
def measure(
    db: str, queries: list[str], modes: tuple[str, ...] = MODES, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`settings`: SearchSettings fields that differ from the defaults."""
    from paperatlas.library import Library
    from paperatlas.search.engine import SearchSettings

    t = time.perf_counter()
    lib = Library(db, search_settings=SearchSettings(**(settings or {})))
    n = lib.count()
    res: dict[str, Any] = {"papers": n}
    t1 = time.perf_counter()
    lib.engine.keyword_index()
    t2 = time.perf_counter()
    vec = lib.engine.vector_index()
    t3 = time.perf_counter()
    emb = lib.embedder
    emb.embed_query("warm up the model")  # model load is start-up, not query time
    t4 = time.perf_counter()
    res.update(
        open_s=round(t1 - t, 2),
        keyword_index_s=round(t2 - t1, 1),
        vector_index_s=round(t3 - t2, 1),
        model_load_s=round(t4 - t3, 1),
        vector_backend=type(vec).__name__ if vec is not None else None,
        keyword_backend=type(lib.engine.keyword_index()).__name__,
    )
    # query embedding alone, on texts not used below
    qe = []
    for q in queries[:40]:
        s = time.perf_counter()
        emb.embed_query(q + " (warm)")
        qe.append(1000 * (time.perf_counter() - s))
    res["embed_query_ms_p50"] = _pct(qe, 50)
    res["index_source"] = dict(lib.engine.index_source)
    lat: dict[str, list[float]] = {m: [] for m in modes}
    for q in queries:  # modes interleaved, so all three see the same machine load
        for i, mode in enumerate(modes):
            text = q if i == 0 else f"{q} {mode}"  # distinct per mode: no cached query vectors
            s = time.perf_counter()
            lib.search(text, mode=mode, limit=10)
            lat[mode].append(1000 * (time.perf_counter() - s))
    for mode in modes:
        res[mode] = {"p50_ms": _pct(lat[mode], 50), "p95_ms": _pct(lat[mode], 95)}
    res.update(_rss())
    if vec is not None and type(vec).__name__ != "NumpyIndex":
        res["ann_recall@10"] = ann_recall(lib, vec, queries[:50])
    lib.close()
    return res


def ann_recall(lib: Any, vec: Any, queries: list[str], k: int = 10) -> float:
    """recall@k of the approximate index against exact cosine over the stored vectors
    (streamed in batches, so the check itself stays small)."""
    model = lib.embedder.id
    qv = np.stack([lib.embedder.embed_query(q) for q in queries])
    best_s = np.full((len(queries), k), -np.inf, np.float32)
    best_i = np.zeros((len(queries), k), np.int64)
    offset = 0
    for _, mat in lib.store.iter_vectors(model):
        s = qv @ mat.T
        s_all = np.concatenate([best_s, s], axis=1)
        i_all = np.concatenate([best_i, np.arange(offset, offset + len(mat))[None, :].repeat(len(qv), 0)], axis=1)
        top = np.argpartition(-s_all, k - 1, axis=1)[:, :k]
        best_s, best_i = np.take_along_axis(s_all, top, 1), np.take_along_axis(i_all, top, 1)
        offset += len(mat)
    ids = vec.ids
    hits = [len({ids[i] for i in best_i[j]} & {p for p, _ in vec.search(qv[j], k)}) for j in range(len(queries))]
    return round(sum(hits) / (k * len(queries)), 3)


def _child(
    db: str, queries: list[str], modes: tuple[str, ...], settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"db": db, "queries": queries, "modes": modes, "settings": settings or {}}, f)
    try:
        # one ONNX thread per query, as `paperatlas serve` runs it: a short query gains nothing
        # from a second thread and loses a lot when the cores are busy (9 vs 18 ms p50 here)
        env = paperatlas_settings.environment(embed_threads=paperatlas_settings.raw("embed_threads") or 1)
        out = subprocess.run(
            [sys.executable, "-m", "paperatlas_lab.bench.search", f.name],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
    finally:
        os.unlink(f.name)
    if out.returncode != 0:
        raise RuntimeError(f"measurement of {db} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- embedding throughput ----------------------------------------------------------------------------
def embed_throughput(src_db: Path, n: int = 256, repeats: int = 2) -> dict[str, Any]:
    """papers/s of raw `embedder.embed` vs `Library.ingest + Library.embed` on the same n papers,
    vector cache off, alternating the two so machine load hits both alike."""
    from paperatlas.library import Library
    from paperatlas.store.vector_cache import VectorCache

    src = Library(src_db)
    papers = src.papers(limit=n)
    src.close()
    emb_lib = Library(":memory:")
    embedder = emb_lib.embedder
    texts = [p.text for p in papers]
    embedder.embed(texts[:8])  # load the model outside the timings
    raw, full, only_embed = [], [], []
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "papers.jsonl"
        f.write_text("\n".join(json.dumps({k: v for k, v in p.to_dict().items() if k != "raw"}) for p in papers))
        for r in range(repeats):
            s = time.perf_counter()
            embedder.embed(texts)
            raw.append(time.perf_counter() - s)
            off = VectorCache(Path(d) / "unused.sqlite")
            off.path = None  # disabled: every text goes through the model
            lib = Library(Path(d) / f"lib{r}.db", embedder=embedder, vector_cache=off)
            s = time.perf_counter()
            lib.ingest(f)
            m = time.perf_counter()
            assert lib.embed() == len(papers)
            e = time.perf_counter()
            full.append(e - s)
            only_embed.append(e - m)
            lib.close()
    med = statistics.median
    return {
        "papers": len(papers),
        "repeats": repeats,
        "model": embedder.id,
        "raw_model_papers_per_s": round(len(papers) / med(raw), 1),
        "library_ingest_embed_papers_per_s": round(len(papers) / med(full), 1),
        "library_embed_only_papers_per_s": round(len(papers) / med(only_embed), 1),
        "ingest_embed_vs_raw_ratio": round(med(full) / med(raw), 2),
    }


# -- the whole benchmark ----------------------------------------------------------------------------
def bench_search(
    db: Path, sizes: list[str], workdir: Path, n_queries: int = 100, embed_n: int = 256, log: Any = None
) -> dict[str, Any]:
    from paperatlas.library import Library

    log = log or (lambda *_: None)
    workdir.mkdir(parents=True, exist_ok=True)
    with Library(db) as lib:
        queries = load_queries(lib, n_queries)
        if not lib.store.vector_count(lib.embedder.id):
            raise SystemExit(f"{db} has no embeddings: run `paperatlas --db {db} embed` first")
    out: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "load_avg_at_start": [round(x, 1) for x in os.getloadavg()],
        "queries": len(queries),
        "rows": [],
    }
    for size in sizes:
        n = parse_size(size)
        row: dict[str, Any] = {"size": size}
        if n == 0:
            path, row["data"] = db, "real"
        else:
            path = workdir / f"synthetic-{size.lower()}-{db.stem}.db"
            row["data"] = "synthetic: perturbed copies of the real papers and vectors"
            if not path.exists():
                log(f"building {path} ({n} papers)...")
                row["synthetic_build"] = build_synthetic(db, path, n)
        log(f"{size}: first start (builds and saves indexes)...")
        row["first_start"] = _child(str(path), queries, MODES)
        log(f"{size}: restart (loads saved indexes)...")
        row["restart"] = _child(str(path), queries, MODES)
        out["rows"].append(row)
        log(json.dumps(row))
    if embed_n:
        log("embedding throughput...")
        out["embedding"] = embed_throughput(db, embed_n)
    out["load_avg_at_end"] = [round(x, 1) for x in os.getloadavg()]
    out["targets"] = {"p50_ms_100k": 15, "p50_ms_1m": 30, "rss_mib_1m": 3072, "ingest_embed_vs_raw_ratio": 1.5}
    return out


def table(res: dict[str, Any]) -> str:
    lines = [
        f"{res['cpus']} CPUs, load average {res['load_avg_at_start']} -> {res['load_avg_at_end']}, "
        f"{res['queries']} distinct queries per mode, query embedding included"
    ]
    head = (
        f"{'size':>5} {'papers':>8} {'start':>12} {'hybrid p50/p95':>15} {'keyword p50/p95':>16} "
        f"{'semantic p50/p95':>17} {'q-embed':>8} {'RSS MiB':>8} {'peak':>6} {'index s':>8} {'vectors':>15}"
    )
    lines.append(head)
    for row in res["rows"]:
        for kind in ("first_start", "restart"):
            r = row[kind]
            built = "built" in r.get("index_source", {}).values()
            lines.append(
                f"{row['size']:>5} {r['papers']:>8} {('first/built' if built else 'first/loaded') if kind == 'first_start' else 'restart':>12} "
                + " ".join(f"{r[m]['p50_ms']:>7.1f}/{r[m]['p95_ms']:<7.1f}" for m in MODES)
                + f" {r['embed_query_ms_p50']:>8.1f} {r['rss_mib']:>8.0f} {r['peak_rss_mib']:>6.0f}"
                f" {r['keyword_index_s'] + r['vector_index_s']:>8.1f} {r['vector_backend']:>15}"
                + (f" recall@10 {r['ann_recall@10']}" if "ann_recall@10" in r else "")
            )
    for row in res["rows"]:
        if row["data"] != "real":
            lines.append(f"{row['size']}: {row['data']}")
    if "embedding" in res:
        e = res["embedding"]
        lines.append(
            f"embedding ({e['papers']} papers, {e['model']}, cache off): raw model "
            f"{e['raw_model_papers_per_s']}/s, Library ingest+embed {e['library_ingest_embed_papers_per_s']}/s "
            f"(embed only {e['library_embed_only_papers_per_s']}/s), ratio {e['ingest_embed_vs_raw_ratio']}x"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # the child process of `measure`
    args = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(measure(args["db"], args["queries"], tuple(args["modes"]), args.get("settings"))))


def perturbed(p: Paper, pid: str, prng: Any, words: Sequence[str], **keep: Any) -> Paper:
    """A copy of `p` under id `pid` that reads as another paper: its title's words shuffled, about 15%
    of its abstract's words swapped for `words` (seeded by `prng`); venue, year, status and `keep` kept."""
    aw = p.abstract.split()
    for k in prng.sample(range(len(aw)), len(aw) * 15 // 100) if aw else ():
        aw[k] = prng.choice(words)
    tw = p.title.split()
    prng.shuffle(tw)
    return Paper(id=pid, title=" ".join(tw), abstract=" ".join(aw), venue=p.venue, year=p.year, status=p.status, **keep)
