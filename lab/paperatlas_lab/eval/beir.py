"""`paperatlas eval beir DIR`: nDCG@10, recall@100 and MRR@10 of keyword, semantic and
hybrid search on a BEIR folder, all three in one run. `paperatlas eval paraphrase FILE`:
hit@10 per mode for queries written in other words than their paper.

The folder holds `corpus.jsonl.gz` (or `corpus.jsonl`), `queries.jsonl` (with a
`split` field, or the split's query ids are taken from the qrels) and
`qrels/{split}.tsv`. The corpus goes into a temporary library, is embedded through
the shared vector cache (so a second run costs seconds), and every query is ranked
by the same `SearchEngine.rank` that `Library.search` uses.

Metrics follow trec_eval (what BEIR calls through pytrec_eval): graded gain = the
qrels grade, log2 discount, ideal DCG from the qrels; a query that retrieves
nothing scores 0 (it is not dropped). Duplicate documents that ingest merged into
one paper are scored as that paper (their qrels grades merged by max).
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import click
import numpy as np

from paperatlas import settings
from paperatlas.embed.base import Embedder
from paperatlas.errors import PaperatlasError
from paperatlas.search.engine import MODES, SearchSettings
from paperatlas.search.query import parse
from paperatlas.store.vector_cache import VectorCache, text_hash

Qrels = Mapping[str, Mapping[str, int]]  # query id -> doc id -> grade (> 0 relevant)
Run = Mapping[str, Sequence[str]]  # query id -> ranked doc ids, best first

METRICS = ("ndcg@10", "recall@100", "mrr@10")


# -- metrics (pure) ------------------------------------------------------------------------
def ndcg_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 10) -> float:
    """trec_eval ndcg_cut_k: gain = grade, discount 1/log2(rank + 1)."""
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if rels.get(d, 0) > 0)
    ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 100) -> float:
    relevant = {d for d, g in rels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], rels: Mapping[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def evaluate(run: Run, qrels: Qrels) -> dict[str, float]:
    """Mean nDCG@10, recall@100 and MRR@10 over every query in `qrels` that has a relevant doc."""
    qids = [q for q, rels in qrels.items() if any(g > 0 for g in rels.values())]
    if not qids:
        return {m: 0.0 for m in METRICS}
    sums = dict.fromkeys(METRICS, 0.0)
    for q in qids:
        ranked, rels = run.get(q, ()), qrels[q]
        sums["ndcg@10"] += ndcg_at_k(ranked, rels, 10)
        sums["recall@100"] += recall_at_k(ranked, rels, 100)
        sums["mrr@10"] += mrr_at_k(ranked, rels, 10)
    return {m: round(v / len(qids), 5) for m, v in sums.items()}


# -- the BEIR folder -----------------------------------------------------------------------
@dataclass
class BeirData:
    corpus: Path
    queries: dict[str, str]  # id -> text, only queries of the split that have qrels
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)


def keep_queries(data: BeirData, ids: Iterable[str], split: str, option: str) -> BeirData:
    """Only the queries (and their qrels) listed in `ids`, which the command took as `option`.
    A model fine-tuned on part of a split is tuned on the part it never saw."""
    keep = set(ids)
    missing = sorted(keep - set(data.queries))
    if not keep:
        raise PaperatlasError(
            f"the {option} list holds no query ids", f"list query ids of qrels/{split}.tsv, one per line"
        )
    if missing:
        raise PaperatlasError(
            f"{len(missing)} of the {option} are not queries of the {split!r} split (first: {missing[0]})",
            f"list query ids of qrels/{split}.tsv, one per line",
        )
    return replace(
        data,
        queries={q: t for q, t in data.queries.items() if q in keep},
        qrels={q: r for q, r in data.qrels.items() if q in keep},
    )


def load_beir(folder: str | Path, split: str = "test") -> BeirData:
    folder = Path(folder)
    corpus = next((folder / n for n in ("corpus.jsonl.gz", "corpus.jsonl") if (folder / n).exists()), None)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if corpus is None or not (folder / "queries.jsonl").exists() or not qrels_path.exists():
        have = sorted(p.name for p in (folder / "qrels").glob("*.tsv")) if (folder / "qrels").is_dir() else []
        raise PaperatlasError(
            f"{folder} is not a BEIR folder with a {split!r} split",
            "it needs corpus.jsonl(.gz), queries.jsonl and qrels/SPLIT.tsv"
            + (f"; splits here: {', '.join(h[:-4] for h in have)}" if have else ""),
        )
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or (n == 0 and not parts[2].lstrip("-").isdigit()):
                continue  # header or blank
            qid, did, grade = parts[0], parts[1], int(parts[2])
            qrels.setdefault(qid, {})[did] = max(grade, qrels.get(qid, {}).get(did, grade))
    queries: dict[str, str] = {}
    with open(folder / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            q = json.loads(line)
            qid = str(q["_id"])
            if ("split" not in q or q["split"] == split) and qid in qrels:
                queries[qid] = str(q.get("text") or "")
    qrels = {q: r for q, r in qrels.items() if q in queries}
    return BeirData(corpus, queries, qrels)


def canonical_qrels(qrels: Qrels, resolve: Callable[[str], str | None]) -> dict[str, dict[str, int]]:
    """Qrels over the library's paper ids (an alias of a merged duplicate maps to its paper)."""
    out: dict[str, dict[str, int]] = {}
    for q, rels in qrels.items():
        d: dict[str, int] = {}
        for did, g in rels.items():
            pid = resolve(did) or did
            d[pid] = max(g, d.get(pid, g))
        out[q] = d
    return out


def query_vectors(embedder: Embedder, texts: Sequence[str], cache: VectorCache | None = None) -> np.ndarray:
    """`embed_query` of each text, through the vector cache (key: query model id + "|query")."""
    cache = cache or VectorCache()
    key = getattr(embedder, "query_id", embedder.id) + "|query"
    hashes = [text_hash(t) for t in texts]
    found = cache.get_many(key, list(dict.fromkeys(hashes)))
    new = []
    for h, t in zip(hashes, texts):
        if h not in found:
            found[h] = embedder.embed_query(t)
            new.append((h, found[h]))
    cache.put_many(key, new)
    if not texts:
        return np.zeros((0, embedder.dimensions), np.float32)
    return np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)


def run_modes(
    lib: Any,
    queries: Mapping[str, str],
    qvecs: np.ndarray | None,
    modes: Iterable[str],
    depth: int = 100,
    floor: bool = False,
) -> dict[str, dict[str, list[str]]]:
    """mode -> query id -> top-`depth` paper ids, ranked by the library's search engine
    (with `floor`, as search answers: nothing for a query below the relevance floor)."""
    runs: dict[str, dict[str, list[str]]] = {m: {} for m in modes}
    for i, (qid, text) in enumerate(queries.items()):
        q = parse(text)
        if q.empty and not text.strip():
            continue
        for mode in runs:
            qv = qvecs[i] if qvecs is not None and mode != "keyword" else None
            fused, _ = lib.engine.rank(q, mode, depth, qvec=qv, floor=floor)
            runs[mode][qid] = [pid for pid, _ in fused[:depth]]
    return runs


def eval_beir(
    folder: str | Path,
    split: str = "test",
    modes: Sequence[str] = MODES,
    embedder: str | Embedder | None = None,
    settings: SearchSettings | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Ingest, embed and evaluate; returns {mode: {metric: value}} plus "_info"."""
    from paperatlas.library import Library

    data = load_beir(folder, split)
    info: dict[str, Any] = {"dataset": Path(folder).name, "split": split, "queries": len(data.queries)}
    with tempfile.TemporaryDirectory(prefix="paperatlas-beir-") as tmp:
        lib = Library(Path(tmp) / "beir.db", embedder=embedder, search_settings=settings)
        try:
            t = time.perf_counter()
            rep = lib.ingest(data.corpus, progress=(lambda d, n: progress("ingest", d, n)) if progress else None)
            info.update(
                docs=rep.total,
                papers=lib.count(),
                merged_duplicates=rep.merged,
                ingest_s=round(time.perf_counter() - t, 1),
            )
            qvecs = None
            if any(m != "keyword" for m in modes):
                t = time.perf_counter()
                lib.embed(progress=(lambda d, n: progress("embed", d, n)) if progress else None)
                qvecs = query_vectors(lib.embedder, list(data.queries.values()), lib.vector_cache)
                info.update(embedder=lib.embedder.id, embed_s=round(time.perf_counter() - t, 1))
            qrels = canonical_qrels(data.qrels, lib.store.resolve_id)
            t = time.perf_counter()
            runs = run_modes(lib, data.queries, qvecs, modes)
            info["search_ms_per_query"] = round(1000 * (time.perf_counter() - t) / max(1, len(data.queries)), 2)
            s = lib.engine.settings
            info["settings"] = {k: getattr(s, k) for k in s.__dataclass_fields__}
            out: dict[str, Any] = {m: evaluate(runs[m], qrels) for m in modes}
        finally:
            lib.close()
    out["_info"] = info
    return out


# -- CLI -----------------------------------------------------------------------------------
@click.command("beir")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--split", default="test", show_default=True, help="Queries and qrels of this split.")
@click.option(
    "--mode",
    "modes",
    multiple=True,
    type=click.Choice(MODES),
    help="Only these modes (repeatable; default: all three).",
)
@click.option("--embedder", help="Embedding model (default: minilm).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: {mode: {metric: value}}.")
def beir_cmd(folder: str, split: str, modes: tuple[str, ...], embedder: str | None, as_json: bool) -> None:
    """nDCG@10, recall@100 and MRR@10 of keyword, semantic and hybrid search on a BEIR folder.

    Uses the shared vector cache ($PAPERATLAS_VECTOR_CACHE), so only the first run embeds.

    Example:

        paperatlas eval beir ../shared/data/scifact --split test --json
    """
    from rich.console import Console
    from rich.table import Table

    err = Console(stderr=True)

    def progress(stage: str, done: int, total: int) -> None:
        if err.is_terminal and (done == total or done % 512 == 0):
            err.print(f"{stage}: {done}/{total}", end="\r")

    try:
        res = eval_beir(folder, split, modes or MODES, embedder, progress=progress)
    except PaperatlasError as e:
        raise click.ClickException(str(e)) from None
    info = res.pop("_info")
    if as_json:
        click.echo(json.dumps(res))
        return
    t = Table(
        title=f"{info['dataset']} {split}: {info['queries']} queries, {info['papers']} papers"
        + (f", {info.get('embedder')}" if info.get("embedder") else "")
    )
    t.add_column("mode")
    for m in METRICS:
        t.add_column(m, justify="right")
    for mode, vals in res.items():
        t.add_row(mode, *(f"{vals[m]:.4f}" for m in METRICS))
    Console().print(t)
    click.echo(f"search {info['search_ms_per_query']} ms/query (all modes), settings {info['settings']}", err=True)


# -- paraphrased queries ---------------------------------------------------------------------
def load_paraphrases(path: str | Path, lib: Any) -> list[tuple[str, str]]:
    """(query, paper id) pairs from a JSONL file of {"query", "paper_id"[, "abstract_prefix"]}.

    `abstract_prefix` finds the paper when its id is a content hash that changed."""
    pairs: list[tuple[str, str]] = []
    prefixes: dict[str, str] | None = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise PaperatlasError(
                    f"{path}, line {n}: not a JSON object ({e.msg})", 'write one {"query", "paper_id"} object a line'
                ) from e
            if not isinstance(row, dict) or not str(row.get("query") or "").strip():
                raise PaperatlasError(f"{path}, line {n}: no query", 'give every line a non-empty "query"')
            pid = lib.store.resolve_id(str(row.get("paper_id") or ""))
            if pid is None and row.get("abstract_prefix"):
                if prefixes is None:
                    prefixes = {}
                    for batch in lib.store.iter_texts():
                        prefixes.update((a[:80], i) for i, _, _, a in batch)
                want = row["abstract_prefix"]
                pid = next((i for a, i in prefixes.items() if a.startswith(want[:80])), None)
            if pid is None:
                raise PaperatlasError(
                    f"{path}, line {n}: paper {row.get('paper_id')!r} is not in this library",
                    "ingest the papers the queries were written for (see the file's ids)",
                )
            pairs.append((str(row["query"]), pid))
    return pairs


def eval_paraphrases(
    lib: Any, pairs: Sequence[tuple[str, str]], modes: Sequence[str] = MODES, k: int = 10, floor: bool = False
) -> dict[str, Any]:
    """hit@k and MRR@k per mode, and each query's rank (None: not in the top 100); with `floor`,
    ranked as search answers (the relevance floor applied) and `empty` counts emptied answers."""
    out: dict[str, Any] = {}
    per_query: list[dict[str, Any]] = [{"query": q, "paper_id": pid} for q, pid in pairs]
    for mode in modes:
        ranks: list[int | None] = []
        empty = 0
        for (text, pid), row in zip(pairs, per_query):
            fused, _ = lib.engine.rank(parse(text), mode, 100, floor=floor)
            empty += not fused
            ids = [d for d, _ in fused[:100]]
            r = ids.index(pid) + 1 if pid in ids else None
            ranks.append(r)
            row[mode] = r
        n = max(1, len(pairs))
        out[mode] = {
            f"hit@{k}": round(sum(1 for r in ranks if r and r <= k) / n, 3),
            # four places: a goal can sit at the third (0.8497 is not 0.850)
            f"mrr@{k}": round(sum(1 / r for r in ranks if r and r <= k) / n, 4),
            "hit@1": round(sum(1 for r in ranks if r == 1) / n, 3),
            **({"empty": empty} if floor else {}),
        }
    out["_queries"] = per_query
    return out


@click.command("paraphrase")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--db",
    "db_path",
    envvar=settings.env("db"),
    required=True,
    help="Library holding the papers (e.g. the venue papers and the examples, embedded).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON with each query's rank per mode.")
@click.option("--floor", is_flag=True, help="Apply the relevance floor, as search does; count emptied answers.")
def paraphrase_cmd(file: str, db_path: str, as_json: bool, floor: bool) -> None:
    """hit@10 of keyword, semantic and hybrid search for queries phrased in other words.

    FILE is JSONL: {"query": ..., "paper_id": ...} per line (tests/data/paraphrase_queries.jsonl).

    Example:

        paperatlas eval paraphrase tests/data/paraphrase_queries.jsonl --db venue.db
    """
    from paperatlas.library import Library

    try:
        with Library(db_path) as lib:
            res = eval_paraphrases(lib, load_paraphrases(file, lib), floor=floor)
    except PaperatlasError as e:
        raise click.ClickException(str(e)) from None
    if as_json:
        click.echo(json.dumps(res, ensure_ascii=False, indent=2))
        return
    queries = res.pop("_queries")
    for mode, vals in res.items():
        click.echo(f"{mode:8s} " + "  ".join(f"{m} {v:.3f}" for m, v in vals.items()))
    click.echo(f"({len(queries)} queries; ranks per query with --json)")
