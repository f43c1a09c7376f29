"""`paperatlas bench quality`: every search-quality figure and the readiness figures in one run.

Parts (`--only` picks some; each prints how long it took):

* scifact    SciFact test nDCG@10 (and recall@100, MRR@10) of hybrid, semantic and keyword search
             (`eval beir` code: a throw-away library of the 5,183 docs).
* paraphrase MRR@10 / hit@10 of researchers' paraphrases over the venue library, per split
             (benchmarks/data/paraphrase_8k.jsonl: the paper's idea in other words than its title;
             the split is fixed by a hash of the paper id; tune on train, report test).
* acm        ACM-CR held-out references nDCG@10 of the default recommender beside the per-reader SVM
             (`eval recommend acm-cr` code; test readers), and their ratio.
* zh         Chinese queries (tests/data/zh_queries.jsonl) over the same venue library, as search
             answers them (floor on): MRR@10 / hit@10 of the real queries per split. Builds the
             multilingual index over the whole library the first time (slow; cached after).
* speed      the embedder's papers/s on the venue texts (vector cache off), and the time from
             `ingest` of the venue papers to the first hybrid answer over all of them, in a fresh
             library with the vector cache off (`--ready-papers` caps how many; the output says so).
* latency    hybrid / keyword / semantic p50 and p95 and memory at 8k (the venue library) and
             100k papers (synthetic: perturbed copies of the real papers and vectors, as
             `bench search` builds them), each in a fresh process.

The venue library (venue papers + the examples) is kept in `--workdir`, one per embedder, and every
vector goes through the vector cache (`--vector-cache`, default ~/.cache/paperatlas/eval/vectors.sqlite),
so the second run costs minutes where the first, from a clean cache, embeds everything once.
`--embedder NAME` scores another registered model through every part.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import REPO
from paperatlas import settings
from paperatlas.errors import PaperatlasError

PARTS = ("scifact", "paraphrase", "acm", "zh", "speed", "latency")
PARAPHRASES = REPO / "benchmarks" / "data" / "paraphrase_8k.jsonl"
ZH_QUERIES = REPO / "tests" / "data" / "zh_queries.jsonl"
EXAMPLES = REPO / "examples"
Log = Callable[[str], None]


def default_data_root() -> Path | None:
    """Where the shared evaluation data lives: $PAPERATLAS_SHARED_DATA, ../shared/data or /work/shared/data."""
    for root in (settings.raw("shared_data"), "../shared/data", str(REPO.parent / "shared" / "data")):
        if root and (Path(root) / "ml_venue_papers").is_dir():
            return Path(root)
    return None


def default_vector_cache() -> Path:
    return Path.home() / ".cache" / "paperatlas" / "eval" / "vectors.sqlite"


def _venue_records(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                out.append(json.loads(line))
                if limit is not None and len(out) >= limit:
                    break
    return out


class Bench:
    """One run: the data paths, the embedder under test, the kept venue library."""

    def __init__(
        self,
        data: Path,
        embedder: str = "minilm",
        workdir: Path | None = None,
        quick: bool = False,
        ready_papers: int | None = None,
        queries: int = 100,
        sizes: Sequence[str] = ("8k", "100k"),
        log: Log | None = None,
        paraphrases: Path = PARAPHRASES,
        zh_queries: Path = ZH_QUERIES,
        examples: Path | None = EXAMPLES,
        acm_pool: int | None = None,
        llm_url: str | None = None,
        llm_model: str | None = None,
        search: dict[str, Any] | None = None,
    ) -> None:
        self.data = data
        # SearchSettings fields that differ from the defaults, for every library the run opens (so a
        # baseline can be scored with the fusion it shipped with)
        self.search = dict(search or {})
        # zh: with an endpoint, the Chinese queries run again with the model's English rendering
        self.llm_url, self.llm_model = llm_url, llm_model
        self.embedder = embedder
        self.workdir = workdir or Path(tempfile.gettempdir()) / "paperatlas-bench-quality"
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.quick = quick
        self.ready_papers = ready_papers if ready_papers is not None else (256 if quick else None)
        self.queries = 30 if quick else queries
        self.sizes = ("8k",) if quick else tuple(sizes)
        self.log = log or (lambda _m: None)
        self.paraphrases = paraphrases
        self.zh_queries = zh_queries
        self.examples = examples
        self.acm_pool = acm_pool
        self._venue_lib: Any = None

    @property
    def venue_file(self) -> Path:
        return self.data / "ml_venue_papers" / "papers.jsonl.gz"

    # -- the kept venue library ----------------------------------------------------------------
    def venue_library(self, multilingual: bool = False) -> Any:
        """The venue papers plus the examples, embedded with the embedder under test (kept in workdir)."""
        from paperatlas.library import Library

        if self._venue_lib is None:
            name = self.embedder.replace("/", "_") + ("" if self.examples else "-no-examples")
            path = self.workdir / f"venue-{name}.db"
            lib = Library(path, embedder=self.embedder, search_settings=self.settings())
            files = [self.venue_file, *(sorted(self.examples.glob("*.txt")) if self.examples else [])]
            t = time.perf_counter()
            rep = lib.ingest(files)
            self.log(f"venue library {path}: {rep.summary()} ({time.perf_counter() - t:.0f} s)")
            t = time.perf_counter()
            n = lib.embed()
            if n:
                self.log(
                    f"vectors for {n} papers ({lib.embedder.id}, vector cache hits included) in {time.perf_counter() - t:.0f} s"
                )
            self._venue_lib = lib
        if multilingual:
            t = time.perf_counter()
            last = [t]

            def progress(done: int, total: int) -> None:
                if time.perf_counter() - last[0] > 60 or done == total:
                    last[0] = time.perf_counter()
                    self.log(f"multilingual index: {done}/{total}")

            n = self._venue_lib.multilingual.build(progress=progress)
            if n:
                self.log(f"multilingual index: {n} papers embedded in {time.perf_counter() - t:.0f} s")
        return self._venue_lib

    def settings(self) -> Any:
        from paperatlas.search.engine import SearchSettings

        return SearchSettings(**self.search)

    @property
    def label(self) -> str:
        return _label(self.embedder, self.search)

    def close(self) -> None:
        if self._venue_lib is not None:
            self._venue_lib.close()
            self._venue_lib = None

    def needs(self, part: str) -> list[Path]:
        """The files a part reads."""
        venue = [self.venue_file]
        return {
            "scifact": [self.data / "scifact"],
            "paraphrase": [*venue, self.paraphrases],
            "acm": [self.data / "acm_cr"],
            "zh": [*venue, self.zh_queries],
            "speed": venue,
            "latency": venue,
        }[part]

    # -- parts ---------------------------------------------------------------------------------
    def scifact(self) -> dict[str, Any]:
        from ..eval.beir import eval_beir

        res = eval_beir(self.data / "scifact", "test", embedder=self.embedder, settings=self.settings())
        info = res.pop("_info")
        return {
            "split": "test",
            "queries": info["queries"],
            "papers": info["papers"],
            **{m: res[m] for m in ("hybrid", "semantic", "keyword")},
        }

    def paraphrase(self) -> dict[str, Any]:
        from ..eval.beir import eval_paraphrases, load_paraphrases

        lib = self.venue_library()
        pairs = load_paraphrases(self.paraphrases, lib)  # a bad line is refused here, with its number
        if not pairs:
            raise PaperatlasError(
                f"{self.paraphrases} holds no queries", 'give --paraphrases a file of {"query", "paper_id"} lines'
            )
        rows = [json.loads(x) for x in self.paraphrases.read_text(encoding="utf-8").splitlines() if x.strip()]
        # every split the file has (test and train first; a row without one counts as "all"), so another
        # file's "dev" rows are scored, and a split it lacks is not printed as a score of 0
        present = {r.get("split") or "all" for r in rows}
        splits = [x for x in ("test", "train") if x in present] + sorted(present - {"test", "train"})
        out: dict[str, Any] = {"papers": lib.count(), "file": self.paraphrases.name, "splits": splits}
        for split in splits:
            sel = [p for p, r in zip(pairs, rows) if (r.get("split") or "all") == split]
            res = eval_paraphrases(lib, sel)
            res.pop("_queries")
            out[split] = {"queries": len(sel), **res}
        return out

    def acm(self) -> dict[str, Any]:
        from ..eval.recommend import ACM_POOL_SIZE, run_acm
        from paperatlas.recommend import RECOMMENDERS

        recs = {name: RECOMMENDERS.create(name) for name in ("default", "svm")}
        pool = self.acm_pool or ACM_POOL_SIZE
        rep = run_acm(self.data / "acm_cr", self.embedder, recommenders=recs, progress=self.log, pool_size=pool)
        res = rep["results"]
        test = res["test"]
        return {
            "pool": rep["pool"],
            "readers": rep["readers"],
            "test": test,
            "tune": res.get("tune"),
            "ratio_ndcg@10": round(test["default"]["ndcg@10"] / max(1e-9, test["svm"]["ndcg@10"]), 3),
        }

    def zh(self) -> dict[str, Any]:
        """Chinese queries at full library size: by default (no language model, whatever the environment
        says), then, with an endpoint (--llm-url or $PAPERATLAS_LLM_URL), with each query also searched in
        the English the model renders it as; the train split at a few blend weights beside the shipped one."""
        from ..eval.zh_floor import load

        lib = self.venue_library(multilingual=True)
        queries, absent = load(self.zh_queries, lib)
        out: dict[str, Any] = {"papers": lib.count(), "absent": absent}
        settings = lib.engine.settings
        shipped = settings.translation_weight
        try:
            settings.translation_weight = 0.0  # the default figures: no model
            out.update(_zh_scores(lib, queries))
            lib.llm.configure(self.llm_url, self.llm_model)
            if lib.llm.configured:
                t = time.perf_counter()
                asked = [z.q for z in queries]
                for q in asked:  # rendered once each (stored in the library), timed apart from ranking
                    lib.llm.query_english(q)
                cfg = lib.llm.config
                assert cfg is not None
                with_llm: dict[str, Any] = {
                    "endpoint": cfg.url,
                    "model": lib.llm.client().model(),
                    "weight": shipped,
                    "translate_s_per_query": round((time.perf_counter() - t) / max(1, len(asked)), 2),
                }
                sweep = {}
                for w in sorted({0.3, 0.5, 0.7, 0.9, shipped}):
                    settings.translation_weight = w
                    sweep[str(w)] = _zh_scores(lib, queries, splits=("train",))["train"]["mrr@10"]
                settings.translation_weight = shipped
                with_llm.update(_zh_scores(lib, queries))
                with_llm["train_mrr@10_by_weight"] = sweep
                with_llm["examples"] = {z.q: lib.llm.query_english(z.q) for z in queries[:5] if z.paper_id}
                out["with_endpoint"] = with_llm
        finally:
            settings.translation_weight = shipped
            lib.llm.configure(None, None)
        return out

    def speed(self) -> dict[str, Any]:
        """papers/s of the raw model and the time from ingest to the first hybrid answer, cache off."""
        from paperatlas.library import Library
        from paperatlas.store.vector_cache import VectorCache

        records = _venue_records(self.venue_file, self.ready_papers)
        off = VectorCache(self.workdir / "unused.sqlite")
        off.path = None  # disabled: every text goes through the model
        with tempfile.TemporaryDirectory(prefix="paperatlas-ready-") as d:
            f = Path(d) / "papers.jsonl"
            f.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
            lib = Library(
                Path(d) / "ready.db", embedder=self.embedder, vector_cache=off, search_settings=self.settings()
            )
            try:
                emb = lib.embedder
                emb.embed(["load the model outside the timings"])
                query = records[0]["title"]
                t0 = time.perf_counter()
                lib.ingest(f)
                t1 = time.perf_counter()
                n = lib.embed()
                t2 = time.perf_counter()
                hits = lib.search(query, mode="hybrid", limit=10)
                t3 = time.perf_counter()
                model = emb.id
            finally:
                lib.close()
        return {
            "model": model,
            "papers": len(records),
            "all_venue_papers": self.ready_papers is None,
            "embedded": n,
            "ingest_s": round(t1 - t0, 1),
            "embed_s": round(t2 - t1, 1),
            "first_hybrid_s": round(t3 - t2, 2),
            "ingest_to_hybrid_s": round(t3 - t0, 1),
            "papers_per_s": round(n / max(1e-9, t2 - t1), 1),
            "first_answer_hits": len(hits),
        }

    def latency(self) -> dict[str, Any]:
        from .search import _child, build_synthetic, load_queries, parse_size

        lib = self.venue_library()
        db = Path(lib.path)
        queries = load_queries(lib, self.queries)
        self.close()  # the child processes open the file themselves
        rows = []
        for size in self.sizes:
            n = parse_size(size)
            if n == 0:
                path, data = db, "real"
            else:
                path = self.workdir / f"synthetic-{size.lower()}-{db.stem}.db"
                data = "synthetic: perturbed copies of the real papers and vectors"
                if not path.exists():
                    self.log(f"building {path} ({n} papers)...")
                    build_synthetic(db, path, n)
            r = _child(str(path), queries, ("hybrid", "keyword", "semantic"), self.search)
            rows.append({"size": size, "data": data, **r})
            self.log(f"latency {size}: hybrid p50 {r['hybrid']['p50_ms']} ms, RSS {r['rss_mib']} MiB")
        return {"queries": len(queries), "rows": rows}


def _zh_scores(lib: Any, queries: Sequence[Any], splits: Sequence[str] = ("train", "test")) -> dict[str, Any]:
    """Hybrid MRR@10, hit@10 and answers the floor emptied, per split, of the Chinese queries."""
    from ..eval.zh_floor import outcomes

    out: dict[str, Any] = {}
    for split in splits:
        real = outcomes(lib.engine, [z for z in queries if z.split == split and z.paper_id], "hybrid")
        n = max(1, len(real))
        out[split] = {
            "queries": len(real),
            "mrr@10": round(sum(1 / o.rank for o in real if o.rank) / n, 4),
            "hit@10": round(sum(1 for o in real if o.rank) / n, 3),
            "empty": sum(o.empty for o in real),
        }
        # queries with no answer in the library: the floor should empty them
        none = outcomes(lib.engine, [z for z in queries if z.split == split and not z.paper_id], "hybrid")
        if none:
            out[split]["no_answer_emptied"] = round(sum(o.empty for o in none) / len(none), 3)
    return out


def run(bench: Bench, parts: Sequence[str] = PARTS) -> dict[str, Any]:
    """Run the parts in order; each result carries the seconds it took. A part that cannot run
    (its data is missing) says why instead of stopping the others."""
    out: dict[str, Any] = {
        "embedder": bench.embedder,
        "search_settings": bench.search,
        "quick": bench.quick,
        "cpus": os.cpu_count(),
        "load_avg_at_start": [round(x, 1) for x in os.getloadavg()],
        "parts": {},
    }
    try:
        for part in parts:
            bench.log(f"-- {part}")
            t = time.perf_counter()
            missing = [str(f) for f in bench.needs(part) if not f.exists()]
            if missing:
                res: dict[str, Any] = {"skipped": f"missing data: {', '.join(missing)}"}
            else:
                try:
                    res = getattr(bench, part)()
                except PaperatlasError as e:
                    res = {"skipped": str(e)}
            res["seconds"] = round(time.perf_counter() - t, 1)
            out["parts"][part] = res
            bench.log(f"{part}: {res['seconds']} s")
    finally:
        bench.close()
    out["load_avg_at_end"] = [round(x, 1) for x in os.getloadavg()]
    return out


def run_pair(baseline: Bench, candidate: Bench, parts: Sequence[str] = PARTS) -> dict[str, Any]:
    """Both embedders through the same parts in one run, part by part (baseline first), so the
    two see the same machine and load; `compare` prints the candidate's figures against the baseline's."""
    runs = []
    for part in parts:
        for role, b in (("baseline", baseline), ("candidate", candidate)):
            b.log(f"== {b.label}")
            runs.append((role, run(b, [part])))
    merged: dict[str, dict[str, Any]] = {}
    for role, res in runs:  # by role: the two may share an embedder and differ in settings
        m = merged.setdefault(role, {**res, "parts": {}})
        m["parts"].update(res["parts"])
        m["load_avg_at_end"] = res["load_avg_at_end"]
    return merged


def _figures(res: dict[str, Any]) -> dict[str, tuple[float, bool]]:
    """name -> (value, higher is better) of the headline figures a run has."""
    p, out = res["parts"], {}
    if "scifact" in p and "skipped" not in p["scifact"]:
        for m in ("hybrid", "semantic", "keyword"):
            out[f"SciFact test nDCG@10 {m}"] = (p["scifact"][m]["ndcg@10"], True)
    if "paraphrase" in p and "skipped" not in p["paraphrase"]:
        for split in p["paraphrase"].get("splits", ("test", "train")):
            for m in ("hybrid", "semantic", "keyword"):
                out[f"paraphrases {split} MRR@10 {m}"] = (p["paraphrase"][split][m]["mrr@10"], True)
    if "acm" in p and "skipped" not in p["acm"]:
        out["ACM-CR test nDCG@10 default"] = (p["acm"]["test"]["default"]["ndcg@10"], True)
        out["ACM-CR default / svm"] = (p["acm"]["ratio_ndcg@10"], True)
    if "zh" in p and "skipped" not in p["zh"]:
        for split in ("test", "train"):
            out[f"Chinese {split} MRR@10"] = (p["zh"][split]["mrr@10"], True)
        if "with_endpoint" in p["zh"]:
            for split in ("test", "train"):
                out[f"Chinese {split} MRR@10 with endpoint"] = (p["zh"]["with_endpoint"][split]["mrr@10"], True)
    if "speed" in p and "skipped" not in p["speed"]:
        out["papers/s"] = (p["speed"]["papers_per_s"], True)
        out["ingest -> first hybrid answer s"] = (p["speed"]["ingest_to_hybrid_s"], False)
    if "latency" in p and "skipped" not in p["latency"]:
        for row in p["latency"]["rows"]:
            out[f"hybrid p50 ms {row['size']}"] = (row["hybrid"]["p50_ms"], False)
            out[f"RSS MiB {row['size']}"] = (row["rss_mib"], False)
    return out


def compare(pair: dict[str, Any]) -> str:
    """Each headline figure of the candidate beside the baseline's, with their ratio."""
    a, b = _figures(pair["baseline"]), _figures(pair["candidate"])
    lines = [f"candidate {_who(pair['candidate'])} vs baseline {_who(pair['baseline'])} (same run):"]
    for name, (va, _) in a.items():
        if name in b:
            vb = b[name][0]
            # a ratio over a zero baseline says nothing: name why there is none instead
            ratio = f"{vb / va:.2f}x" if va else "no ratio: baseline 0"
            lines.append(f"  {name}: {_f(va, 4)} -> {_f(vb, 4)} ({ratio})")
    return "\n".join(lines)


def _label(embedder: str, search: dict[str, Any]) -> str:
    """The embedder, and the search settings it runs with where they are not the defaults."""
    extra = ",".join(f"{k}={v}" for k, v in search.items())
    return f"{embedder} [{extra}]" if extra else embedder


def _who(res: dict[str, Any]) -> str:
    return _label(res["embedder"], res.get("search_settings", {}))


def _no_answer(split: dict[str, Any]) -> str:
    share = split.get("no_answer_emptied")
    return "" if share is None else f"; no-answer queries emptied {_f(share, 2)}"


def _f(x: Any, nd: int = 3) -> str:
    return f"{x:.{nd}f}" if isinstance(x, int | float) else str(x)


def table(res: dict[str, Any]) -> str:
    """The figures, one line each, beside their baseline where the part has one."""
    p = res["parts"]
    lines = [
        f"bench quality: embedder {_who(res)}{' (quick)' if res['quick'] else ''}, {res['cpus']} CPUs, "
        f"load {res['load_avg_at_start']} -> {res['load_avg_at_end']}"
    ]

    def head(name: str) -> str:
        return f"[{name}, {p[name]['seconds']} s]"

    for name, r in p.items():
        if "skipped" in r:
            lines.append(f"{head(name)} skipped: {r['skipped']}")
    if "scifact" in p and "skipped" not in p["scifact"]:
        r = p["scifact"]
        lines.append(
            f"{head('scifact')} SciFact test nDCG@10 ({r['queries']} claims, {r['papers']} docs): "
            + ", ".join(f"{m} {_f(r[m]['ndcg@10'], 4)}" for m in ("hybrid", "semantic", "keyword"))
        )
    if "paraphrase" in p and "skipped" not in p["paraphrase"]:
        r = p["paraphrase"]
        for split in r.get("splits", ("test", "train")):
            s = r[split]
            lines.append(
                f"{head('paraphrase')} paraphrases {split} ({s['queries']} queries, {r['papers']} papers) MRR@10: "
                + ", ".join(
                    f"{m} {_f(s[m]['mrr@10'], 4)} (hit@10 {_f(s[m]['hit@10'], 2)})"
                    for m in ("hybrid", "semantic", "keyword")
                )
            )
    if "acm" in p and "skipped" not in p["acm"]:
        r = p["acm"]
        t = r["test"]
        lines.append(
            f"{head('acm')} ACM-CR test readers nDCG@10: default {_f(t['default']['ndcg@10'], 4)} vs svm "
            f"{_f(t['svm']['ndcg@10'], 4)} = {r['ratio_ndcg@10']}x ({r['readers']} readers, pool {r['pool']})"
        )
    if "zh" in p and "skipped" not in p["zh"]:
        r = p["zh"]
        for split in ("test", "train"):
            s = r[split]
            lines.append(
                f"{head('zh')} Chinese {split} ({s['queries']} queries, {r['papers']} papers) hybrid MRR@10 "
                f"{_f(s['mrr@10'], 4)}, hit@10 {_f(s['hit@10'], 2)}, emptied {s['empty']}{_no_answer(s)}"
            )
        e = r.get("with_endpoint")
        if e:
            for split in ("test", "train"):
                s = e[split]
                lines.append(
                    f"{head('zh')} Chinese {split} with endpoint ({e['model']}, weight {e['weight']}) hybrid MRR@10 "
                    f"{_f(s['mrr@10'], 4)}, hit@10 {_f(s['hit@10'], 2)}, emptied {s['empty']}{_no_answer(s)}"
                )
            sweep = ", ".join(f"{w}: {_f(v)}" for w, v in e["train_mrr@10_by_weight"].items())
            lines.append(
                f"{head('zh')} with endpoint: train MRR@10 by weight {sweep}; "
                f"{e['translate_s_per_query']} s per query rendered (about 0 when an earlier run stored them)"
            )
    if "speed" in p and "skipped" not in p["speed"]:
        r = p["speed"]
        scope = "all venue papers" if r["all_venue_papers"] else f"the first {r['papers']} venue papers only"
        lines.append(
            f"{head('speed')} {r['model']}: {r['papers_per_s']} papers/s; ingest -> first hybrid answer "
            f"{r['ingest_to_hybrid_s']} s for {r['papers']} papers ({scope}; ingest {r['ingest_s']} s, "
            f"embed {r['embed_s']} s, first query {r['first_hybrid_s']} s), vector cache off"
        )
    if "latency" in p and "skipped" not in p["latency"]:
        for row in p["latency"]["rows"]:
            lines.append(
                f"{head('latency')} {row['size']} ({row['papers']} papers, {row['data']}): "
                + ", ".join(
                    f"{m} p50 {row[m]['p50_ms']} / p95 {row[m]['p95_ms']} ms" for m in ("hybrid", "keyword", "semantic")
                )
                + f"; RSS {row['rss_mib']:.0f} MiB (peak {row['peak_rss_mib']:.0f}), {row['vector_backend']}"
            )
    return "\n".join(lines)


def clean(workdir: Path) -> None:
    """Forget the kept libraries (the vector cache is separate)."""
    shutil.rmtree(workdir, ignore_errors=True)
