"""Contrastive training pairs from ACM-CR, minus every paper any evaluation scores.

Run with the product venv (it imports the evaluation's own candidate pool, so the
exclusion is exactly the papers `paperatlas eval recommend acm` ranks):

    .venv/bin/python benchmarks/train_embedder/make_pairs.py OUT.jsonl [--limit N]

Excluded: the 10,000-paper ACM-CR candidate pool (all 50 readers' in-corpus
references, tune and test readers alike, plus the seeded random fill), the 50
citing papers, and any record whose normalised title is also a SciFact or
venue-paper title. Three pair kinds per paper (one drawn per paper, seeded):

- ``title``:    query = title,               positive = abstract
- ``keywords``: query = the keywords,         positive = title + ". " + abstract
- ``sentence``: query = the abstract's first sentence, positive = title + ". " + the rest

The positive of the last two is shaped like an indexed paper (title + ". " + abstract).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

import numpy as np

from paperatlas_lab.eval.recommend import acm_pool, load_acm_readers

DATA = Path("/work/shared/data")
TAG = re.compile(r"</?[a-zA-Z][^>]*>")  # ACM DL abstracts keep some HTML (<i>, <p>)
SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def norm(t: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", (t or "").lower()).strip()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()

    acm = DATA / "acm_cr"
    pool = {r["id"] for r in acm_pool(acm)}
    citing = {r.doi for r in load_acm_readers(acm)}
    held_titles = set()
    with gzip.open(DATA / "scifact" / "corpus.jsonl.gz", "rt") as f:
        held_titles |= {norm(json.loads(x).get("title", "")) for x in f}
    with gzip.open(DATA / "ml_venue_papers" / "papers.jsonl.gz", "rt") as f:
        held_titles |= {norm(json.loads(x).get("title", "")) for x in f}
    held_titles.discard("")

    rng = np.random.default_rng(a.seed)
    counts = {"pool": 0, "citing": 0, "title_clash": 0, "no_abstract": 0}
    kinds = {"title": 0, "keywords": 0, "sentence": 0}
    rows = []
    with gzip.open(acm / "corpus.jsonl.gz", "rt") as f:
        for line in f:
            d = json.loads(line)
            if d["_id"] in pool:
                counts["pool"] += 1
                continue
            if d["_id"] in citing:
                counts["citing"] += 1
                continue
            title = TAG.sub("", d.get("title") or "").strip()
            abstract = TAG.sub("", d.get("text") or "").strip()
            kw = d.get("keywords") or ""
            if isinstance(kw, list):
                kw = ", ".join(kw)
            if norm(title) in held_titles:
                counts["title_clash"] += 1
                continue
            if len(abstract) < 200 or not title:
                counts["no_abstract"] += 1
                continue
            options = ["title"]
            if len(kw.strip()) >= 10:
                options.append("keywords")
            sents = SENT.split(abstract)
            if len(sents) >= 3 and 40 <= len(sents[0]) <= 300:
                options.append("sentence")
            kind = options[int(rng.integers(len(options)))]
            if kind == "title":
                q, p = title, abstract
            elif kind == "keywords":
                q, p = kw.strip(), f"{title}. {abstract}"
            else:
                q, p = sents[0], f"{title}. {' '.join(sents[1:])}"
            kinds[kind] += 1
            rows.append({"id": d["_id"], "kind": kind, "query": q, "positive": p})
    order = rng.permutation(len(rows))
    if a.limit:
        order = order[: a.limit]
    with open(a.out, "w", encoding="utf-8") as out:
        for i in order:
            out.write(json.dumps(rows[i], ensure_ascii=False) + "\n")
    print(json.dumps({"written": len(order), "excluded": counts, "kinds": kinds}), file=sys.stderr)


if __name__ == "__main__":
    main()
