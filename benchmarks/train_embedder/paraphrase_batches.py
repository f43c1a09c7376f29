"""Papers for written paraphrases, and the check each written batch must pass:

    .venv/bin/python benchmarks/train_embedder/paraphrase_batches.py draw OUT_DIR --n 2000 --batches 8 --seed 2612
    .venv/bin/python benchmarks/train_embedder/paraphrase_batches.py check BATCH.jsonl WRITTEN.jsonl
    .venv/bin/python benchmarks/train_embedder/paraphrase_batches.py merge OUT_DIR OUT.jsonl [--split test]

`draw` picks venue papers with an abstract of 300+ characters that no evaluation holds out (either half of
benchmarks/data/paraphrase_8k.jsonl, the Chinese set's targets by normalised title, the 15 papers of
tests/data/paraphrase_queries.jsonl) and that paraphrases_train.jsonl (and each --exclude file) does not already use, shuffled with
--seed, and writes OUT_DIR/batch-K.jsonl ({paper_id, title, abstract: its first 600 characters}) for the
writers. The batches hold venue text (evaluation data, never bundled): keep OUT_DIR outside the repo.

`check` holds a writer's file to the rules of the evaluation set (benchmarks/data/README.md): one
{paper_id, query} line per paper of the batch, 12-40 words, and no content word of the paper's title
(stemmed as the product's BM25 stems; only "use", "base", "from", "through" may be shared).

`merge` checks every OUT_DIR/out-K.jsonl against its batch-K.jsonl and writes one {paper_id, query, split}
file: split "dev" when the first byte of sha1(paper_id) is a multiple of 5 (about a fifth: held out of any
training, for choosing), else "train" (a later run may train on these); `--split test` marks every row
test instead (never trained or chosen on).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import sys
from pathlib import Path

import finetune

ALLOWED = {"use", "base", "from", "through"}  # words that name no idea


def _terms(text: str) -> set[str]:
    from paperatlas.search.bm25 import Analyzer

    an = _terms.an = getattr(_terms, "an", None) or Analyzer()  # type: ignore[attr-defined]
    return an.terms(text)


def draw(out: Path, n: int, batches: int, seed: int, data: Path, exclude: list[Path] | None = None) -> None:
    ids, titles, _ = finetune.excluded(data)
    titles |= {
        finetune._norm_title(r["title"])
        for r in finetune._jsonl(finetune.REPO / "tests" / "data" / "zh_queries.jsonl")
        if r.get("title")
    }
    ids |= {r["paper_id"] for r in finetune._jsonl(finetune.REPO / "tests" / "data" / "paraphrase_queries.jsonl")}
    used = {r["paper_id"] for r in finetune._jsonl(Path(__file__).resolve().parent / "paraphrases_train.jsonl")}
    for path in exclude or []:
        used |= {r["paper_id"] for r in finetune._jsonl(path)}
    pool = []
    with gzip.open(data / "ml_venue_papers" / "papers.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] in ids or r["id"] in used or finetune._norm_title(r["title"]) in titles:
                continue
            if len(r.get("abstract") or "") >= 300:
                pool.append({"paper_id": r["id"], "title": r["title"], "abstract": r["abstract"][:600]})
    random.Random(seed).shuffle(pool)
    chosen = pool[:n]
    out.mkdir(parents=True, exist_ok=True)
    size = -(-len(chosen) // batches)
    for k in range(batches):
        with open(out / f"batch-{k}.jsonl", "w", encoding="utf-8") as f:
            for r in chosen[k * size : (k + 1) * size]:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(chosen)} of {len(pool)} eligible papers in {batches} batches under {out}")


def check(batch: Path, written: Path) -> int:
    want = {r["paper_id"]: r["title"] for r in finetune._jsonl(batch)}
    rows = finetune._jsonl(written)
    problems = []
    seen: set[str] = set()
    for n, r in enumerate(rows, 1):
        pid, q = r.get("paper_id"), str(r.get("query") or "")
        if pid not in want:
            problems.append(f"line {n}: paper_id {pid!r} is not in {batch.name}")
            continue
        if pid in seen:
            problems.append(f"line {n}: {pid} written twice: keep one")
        seen.add(pid)
        words = len(q.split())
        if not 12 <= words <= 40:
            problems.append(f"line {n} ({pid}): {words} words; write 12-40")
        shared = _terms(q) & _terms(want[pid]) - ALLOWED
        if shared:
            problems.append(f"line {n} ({pid}): shares title words {sorted(shared)}: say them in other words")
    missing = [p for p in want if p not in seen]
    if missing:
        problems.append(f"{len(missing)} papers of the batch have no query (first: {missing[0]})")
    for p in problems:
        print(p)
    print(f"{written}: {len(rows)} lines, {len(problems)} problems")
    return 1 if problems else 0


def merge(folder: Path, out: Path, split: str | None = None) -> int:
    rows = []
    for batch in sorted(folder.glob("batch-*.jsonl")):
        written = folder / batch.name.replace("batch-", "out-")
        if not written.exists() or check(batch, written):
            print(f"{written}: missing or not clean; nothing written")
            return 1
        rows += finetune._jsonl(written)
    with open(out, "w", encoding="utf-8") as f:
        for r in rows:
            part = split or ("dev" if hashlib.sha1(r["paper_id"].encode()).digest()[0] % 5 == 0 else "train")
            f.write(json.dumps({"paper_id": r["paper_id"], "query": r["query"], "split": part}) + "\n")
    print(f"{out}: {len(rows)} queries")
    return 0


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("draw")
    d.add_argument("out", type=Path)
    d.add_argument("--n", type=int, default=2000)
    d.add_argument("--batches", type=int, default=8)
    d.add_argument("--seed", type=int, default=2612)
    d.add_argument("--data", type=Path, default=finetune.REPO.parent / "shared" / "data")
    d.add_argument("--exclude", type=Path, action="append", help="{paper_id, ...} lines whose papers are used up")
    c = sub.add_parser("check")
    c.add_argument("batch", type=Path)
    c.add_argument("written", type=Path)
    m = sub.add_parser("merge")
    m.add_argument("folder", type=Path)
    m.add_argument("out", type=Path)
    m.add_argument("--split", help="one split for every row (e.g. test) instead of the dev/train hash")
    a = ap.parse_args()
    if a.cmd == "draw":
        draw(a.out, a.n, a.batches, a.seed, a.data, a.exclude)
    elif a.cmd == "merge":
        sys.exit(merge(a.folder, a.out, a.split))
    else:
        sys.exit(check(a.batch, a.written))


if __name__ == "__main__":
    main()
