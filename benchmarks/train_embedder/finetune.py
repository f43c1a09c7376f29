"""Fine-tune all-MiniLM-L6-v2 contrastively: the one training loop of this folder (README.md).

Needs PyTorch, transformers and bm25s in a training venv (never the product):

    /work/tune-venv/bin/python benchmarks/train_embedder/finetune.py --base FP32_DIR --out run3 \\
        --recipe run3 --minutes 60

Recipes (the pairs each trains on; every one holds out every evaluation's test split):
* ``run1``: a pairs file from make_pairs.py (ACM-CR only), ``--pairs FILE``;
* ``run2``: one pair per paper, half ML venue papers and half ACM-CR: title -> abstract,
  keywords -> paper, inverse cloze (one abstract sentence -> title + the rest);
* ``run3``: run 2's pairs plus SciFact *train* claims -> their cited abstracts, each with one
  BM25-mined hard negative (in-batch negatives alone are easy for a model trained on S2ORC
  title/abstract pairs, which is what kept runs 1 and 2 from moving);
* ``run5``: run 3 plus written paraphrases of venue papers (``--paraphrases FILE``, the shape of a
  researcher's query for a paper they do not know: its idea in other words, no title word), each
  with a BM25-mined hard negative from the venue papers, ``--paraphrase-epochs`` passes;
* ``run4``: run 3 with two more kinds of venue/ACM query: the authors' TL;DR -> paper (a one-line
  summary in other words, the shape of a researcher's paraphrase) and one to three of the authors'
  keywords -> paper (the shape of a short query, and of a model's English rendering of a Chinese one).

Held out from every recipe: each venue paper a query of benchmarks/data/paraphrase_8k.jsonl (either
half) or a *test* query of tests/data/zh_queries.jsonl points at (by id, and by normalised title); every reference of all
50 ACM-CR readers and the citing papers; every SciFact test claim, and every abstract a test claim
cites is never used as a negative. A dev split is carved from SciFact train (--dev-claims, seeded)
and scored with the paraphrase set's train half at each checkpoint (``dev.jsonl``): checkpoints
are chosen on those, never on a test split.

Loss: cosine x 20 over the batch's positives and hard negatives (query -> doc) plus the
positives-only reverse term; AdamW, linear warm-up, linear decay to 0 at --steps or --minutes,
whichever comes first (on a shared CPU the step rate is not known in advance).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import re
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

Triple = tuple[str, str, str]  # query, positive, hard negative ("" for none)


def _norm_title(t: str) -> str:
    t = unicodedata.normalize("NFKC", t).lower()
    return re.sub(r"[^0-9a-z]+", " ", t).strip()


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text) if len(s.strip()) > 30]


def _jsonl(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise SystemExit(f"{path}, line {n}: not a JSON object ({e.msg}): one object per line") from e
    return rows


def _rows(spec: Path) -> list[dict]:
    """`FILE` or `FILE#SPLIT` (only the rows whose "split" is SPLIT), so one committed file holding a
    train and a dev half feeds both --paraphrases and --paraphrase-dev."""
    path, _, split = str(spec).partition("#")
    rows = _jsonl(Path(path))
    if not split:
        return rows
    chosen = [r for r in rows if r.get("split") == split]
    if not chosen:
        raise SystemExit(
            f"{path}: no row has split {split!r}: use one of {sorted({str(r.get('split')) for r in rows})}"
        )
    return chosen


def excluded(data: Path, also: set[str] = frozenset()) -> tuple[set[str], set[str], set[str]]:
    """(venue ids, normalised titles, ACM DOIs) that no pair may come from (`also`: more venue ids)."""
    # both halves of the paraphrase set: the test half is held out, the train half is the dev set
    ids = {r["paper_id"] for r in _jsonl(REPO / "benchmarks" / "data" / "paraphrase_8k.jsonl")} | set(also)
    titles = {
        _norm_title(r["title"])
        for r in _jsonl(REPO / "tests" / "data" / "zh_queries.jsonl")
        if r.get("split") == "test" and r.get("title")
    }
    dois: set[str] = set()
    for row in _jsonl(data / "acm_cr" / "citations.jsonl"):
        dois.update(d.lower() for d in row.get("cited_in_collection") or [])
        dois.add(str(row.get("paper_doi", "")).lower())
    return ids, titles, dois


def _keywords(r: dict) -> str:
    kw = r.get("keywords") or ""
    return ", ".join(kw) if isinstance(kw, list) else str(kw)


def papers(data: Path, also: set[str] = frozenset()) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    ids, titles, dois = excluded(data, also)
    venue: list[dict[str, str]] = []
    acm: list[dict[str, str]] = []
    dropped = 0
    with gzip.open(data / "ml_venue_papers" / "papers.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] in ids or _norm_title(r["title"]) in titles:
                dropped += 1
            elif r.get("abstract") and r.get("title"):
                venue.append(
                    {
                        "id": r["id"],
                        "title": r["title"],
                        "abstract": r["abstract"],
                        "keywords": _keywords(r),
                        "tldr": r.get("tldr") or "",
                    }
                )
    with gzip.open(data / "acm_cr" / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if str(r["_id"]).lower() in dois:
                dropped += 1
            elif len(r.get("text") or "") > 200 and r.get("title"):
                text = re.sub(r"<[^>]+>", " ", r["text"])
                acm.append(
                    {"id": r["_id"], "title": r["title"], "abstract": text, "keywords": _keywords(r), "tldr": ""}
                )
    print(f"training papers: {len(venue)} venue + {len(acm)} ACM-CR; {dropped} held out as evaluation targets")
    return venue, acm


def make_pair(p: dict[str, str], rng: random.Random, short_queries: bool = False) -> tuple[str, str]:
    paper = f"{p['title']}. {p['abstract']}"
    kinds = ["title", "cloze"] + (["keywords"] if len(p["keywords"]) > 10 else [])
    if short_queries:
        # a TL;DR is the one text beside the abstract its authors wrote in other words; it goes
        # first whenever a paper has one (1,439 of the venue papers do), so no draw dilutes it
        if len(p["tldr"]) > 20:
            return p["tldr"], paper
        if "," in p["keywords"]:
            kinds.append("short")
    kind = rng.choice(kinds)
    if kind == "title":
        return p["title"], p["abstract"]
    if kind == "keywords":
        return p["keywords"], paper
    if kind == "short":
        words = [w.strip() for w in p["keywords"].split(",") if w.strip()]
        return " ".join(rng.sample(words, min(len(words), rng.randint(1, 3)))), paper
    sents = _sentences(p["abstract"])
    if len(sents) < 3:
        return p["title"], p["abstract"]
    i = rng.randrange(len(sents))
    rest = " ".join(s for j, s in enumerate(sents) if j != i)
    return sents[i], f"{p['title']}. {rest}"


def hard_negatives(queries: list[str], docs: list[str], banned: list[set[int]], rng: random.Random) -> list[str]:
    """One BM25-mined negative per query: drawn from ranks 3-30, skipping the query's own
    positives (ranks 1-2 are skipped too: unlabeled near-duplicates of the positive live there)."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(docs, stopwords="en", show_progress=False), show_progress=False)
    found, _ = retriever.retrieve(
        bm25s.tokenize(queries, stopwords="en", show_progress=False), k=30, show_progress=False
    )
    out = []
    for row, ban in zip(found, banned):
        pool = [int(i) for i in row[2:] if int(i) not in ban]
        out.append(docs[rng.choice(pool)] if pool else "")
    return out


def dev_claim_ids(train_ids: list[str], n: int, seed: int) -> list[str]:
    """The SciFact train claims held out of training (seeded). A floor or weight for the tuned model
    is calibrated on these (scifact_dev_claims.txt beside this file), not on claims it trained on."""
    ids = list(train_ids)
    random.Random(seed).shuffle(ids)
    return ids[:n]


def scifact(data: Path, dev_claims: int, seed: int) -> tuple[list[Triple], dict]:
    """SciFact train claims -> cited abstracts with hard negatives, and the dev split held out."""
    corpus = []
    with gzip.open(data / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            corpus.append((str(r["_id"]), f"{r.get('title', '')}. {r.get('text', '')}".strip(". ")))
    index = {cid: i for i, (cid, _) in enumerate(corpus)}
    claims = {str(r["_id"]): r["text"] for r in _jsonl(data / "scifact" / "queries.jsonl")}

    def qrels(split: str) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for line in open(data / "scifact" / "qrels" / f"{split}.tsv", encoding="utf-8"):
            q, c, *_ = line.rstrip("\n").split("\t")
            if q != "query-id" and c in index:
                out.setdefault(q, set()).add(index[c])
        return out

    train, test = qrels("train"), qrels("test")
    test_docs = set().union(*test.values())  # never pushed away from anything
    dev_ids = dev_claim_ids(sorted(train), dev_claims, seed)
    train_ids = [q for q in sorted(train) if q not in set(dev_ids)]
    docs = [t for _, t in corpus]
    rng = random.Random(seed + 1)
    queries, positives, banned = [], [], []
    for q in train_ids:
        for d in sorted(train[q]):
            queries.append(claims[q])
            positives.append(docs[d])
            banned.append(train[q] | test_docs)
    negatives = hard_negatives(queries, docs, banned, rng)
    dev = {"queries": {q: claims[q] for q in dev_ids}, "qrels": {q: train[q] for q in dev_ids}, "docs": docs}
    print(f"SciFact: {len(queries)} train pairs from {len(train_ids)} claims; {len(dev_ids)} claims held out as dev")
    return list(zip(queries, positives, negatives)), dev


def venue_and_acm(
    venue: list[dict[str, str]],
    acm: list[dict[str, str]],
    n: int,
    seed: int,
    mine: bool,
    venue_share: float = 0.5,
    short_queries: bool = False,
) -> list[Triple]:
    rng = random.Random(seed)
    venue, acm = list(venue), list(acm)  # shuffled here, not in the caller's hands
    rng.shuffle(venue)
    rng.shuffle(acm)
    # ML venue papers (the domain of a conference list) and ACM-CR (wider computing), half and half by default
    n_venue = min(len(venue), int(n * venue_share))
    chosen = venue[:n_venue] + acm[: n - n_venue]
    pairs = [make_pair(p, rng, short_queries) for p in chosen]
    if not mine:
        return [(q, d, "") for q, d in pairs]
    # negatives are mined from a larger pool than the pairs (more papers, harder neighbours)
    pool = chosen + acm[n - n_venue : n - n_venue + 20_000]
    docs = [f"{p['title']}. {p['abstract']}" for p in pool]
    negatives = hard_negatives([q for q, _ in pairs], docs, [{i} for i in range(len(pairs))], rng)
    return [(q, d, neg) for (q, d), neg in zip(pairs, negatives)]


def paraphrases(venue: list[dict[str, str]], paths: list[Path], seed: int) -> list[Triple]:
    """Written paraphrases of venue papers -> title + abstract, one BM25-mined negative each from
    every venue paper training may use (`venue`, from papers()). The file holds ids and queries only
    (the venue text is evaluation data, never bundled); a paper held out of training is refused, not skipped."""
    by_id = {p["id"]: i for i, p in enumerate(venue)}
    rows = []
    for path in paths:
        part = _rows(path)
        held = [r["paper_id"] for r in part if r["paper_id"] not in by_id]
        if held:
            raise SystemExit(f"{path}: {len(held)} papers are held out or unknown (first: {held[0]}): remove them")
        rows += part
    docs = [f"{p['title']}. {p['abstract']}" for p in venue]
    queries = [r["query"] for r in rows]
    negatives = hard_negatives(queries, docs, [{by_id[r["paper_id"]]} for r in rows], random.Random(seed + 3))
    print(f"paraphrases: {len(rows)} written queries of venue papers ({', '.join(Path(p).name for p in paths)})")
    return [(q, docs[by_id[r["paper_id"]]], n) for q, r, n in zip(queries, rows, negatives)]


def mean_pool(out, mask):  # noqa: ANN001, ANN201
    import torch.nn.functional as F

    m = mask.unsqueeze(-1).to(out.dtype)
    return F.normalize((out * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=-1)


def encode(model, tok, texts: list[str], max_length: int, batch: int = 64):  # noqa: ANN001, ANN201
    import torch

    out = []
    device = next(model.parameters()).device
    with torch.no_grad():
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for s in range(0, len(texts), batch):
            idx = order[s : s + batch]
            t = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=max_length, return_tensors="pt")
            t = t.to(device)
            out.append((idx, mean_pool(model(**t).last_hidden_state, t["attention_mask"]).cpu()))
    vecs = torch.empty((len(texts), out[0][1].shape[1]))
    for idx, v in out:
        vecs[idx] = v
    return vecs


def _ndcg10(ranked: list[int], rel: set[int]) -> float:
    dcg = sum(1 / math.log2(r + 2) for r, d in enumerate(ranked[:10]) if d in rel)
    ideal = sum(1 / math.log2(r + 2) for r in range(min(10, len(rel))))
    return dcg / ideal


def dev_scores(model, tok, dev: dict, venue_dev: dict, doc_len: int) -> dict[str, float]:  # noqa: ANN001
    """Semantic-only dev figures: SciFact dev claims over a fixed corpus sample (their cited
    abstracts + 1,500 others) and the paraphrase set's train half over its targets + 1,500 venue papers."""
    model.eval()
    docs = [dev["docs"][i] for i in dev["sample"]]
    dv = encode(model, tok, docs, doc_len)
    qs = list(dev["queries"])
    qv = encode(model, tok, [dev["queries"][q] for q in qs], 64)
    pos = {d: i for i, d in enumerate(dev["sample"])}
    ranks = (qv @ dv.T).argsort(dim=1, descending=True)[:, :10].tolist()
    ndcg = sum(_ndcg10(r, {pos[d] for d in dev["qrels"][q]}) for q, r in zip(qs, ranks)) / len(qs)
    out = {"scifact_dev_ndcg10": round(ndcg, 4), "paraphrase_train_mrr10": _mrr10(model, tok, venue_dev, doc_len)}
    if venue_dev.get("extra"):
        out["paraphrase_dev_mrr10"] = _mrr10(model, tok, venue_dev["extra"], doc_len)
    model.train()
    return out


def _mrr10(model, tok, vset: dict, doc_len: int) -> float:  # noqa: ANN001
    pv = encode(model, tok, vset["docs"], doc_len)
    qv = encode(model, tok, vset["queries"], 64)
    ranks = (qv @ pv.T).argsort(dim=1, descending=True)[:, :10].tolist()
    mrr = sum(next((1 / (k + 1) for k, d in enumerate(r) if d == t), 0.0) for r, t in zip(ranks, vset["targets"]))
    return round(mrr / len(ranks), 4)


def dev_sets(dev: dict, data: Path, seed: int, extra: list[dict] | None = None) -> tuple[dict, dict]:
    """The SciFact dev sample and the paraphrase set's train half over its targets + 1,500 venue papers;
    `extra` ({paper_id, query} rows held out of training) is scored the same way over its own pool."""
    rng = random.Random(seed + 2)
    cited = set().union(*dev["qrels"].values())
    others = [i for i in range(len(dev["docs"])) if i not in cited]
    dev["sample"] = sorted(cited) + rng.sample(others, 1500)
    rows = [r for r in _jsonl(REPO / "benchmarks" / "data" / "paraphrase_8k.jsonl") if r["split"] == "train"]
    by_id = {}
    with gzip.open(data / "ml_venue_papers" / "papers.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            by_id[r["id"]] = f"{r['title']}. {r.get('abstract') or ''}"
    venue_dev = _venue_set(rows, by_id, rng)
    if extra:
        venue_dev["extra"] = _venue_set(extra, by_id, random.Random(seed + 4))
    return dev, venue_dev


def _venue_set(rows: list[dict], by_id: dict[str, str], rng: random.Random) -> dict:
    rows = [r for r in rows if r["paper_id"] in by_id]
    targets = sorted({r["paper_id"] for r in rows})
    fill = rng.sample(sorted(set(by_id) - set(targets)), 1500)
    order = targets + fill
    at = {p: i for i, p in enumerate(order)}
    return {
        "docs": [by_id[i] for i in order],
        "queries": [r["query"] for r in rows],
        "targets": [at[r["paper_id"]] for r in rows],
    }


def dump_data(path: Path, parts: dict[str, list[Triple]], dev: dict, venue_dev: dict, seed: int) -> None:
    """Everything a run reads, prepared (pairs, mined negatives, dev sets), in one gzipped JSON file, so a
    machine without the evaluation data (a lent GPU) trains on exactly the triples this one mined.
    Only the SciFact documents the dev sample scores are kept; the rest are blanked (their positions stay)."""
    keep = set(dev["sample"])
    small = {
        "queries": dev["queries"],
        "qrels": {q: sorted(v) for q, v in dev["qrels"].items()},
        "sample": dev["sample"],
        "docs": [d if i in keep else "" for i, d in enumerate(dev["docs"])],
    }
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({"seed": seed, "parts": parts, "dev": small, "venue_dev": venue_dev}, f)


def load_data(path: Path) -> tuple[dict[str, list[Triple]], dict, dict, int]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        d = json.load(f)
    dev = d["dev"]
    dev["qrels"] = {q: set(v) for q, v in dev["qrels"].items()}
    parts = {k: [tuple(t) for t in v] for k, v in d["parts"].items()}
    return parts, dev, d["venue_dev"], int(d["seed"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, type=Path, help="fp32 sentence-transformers checkpoint folder")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--recipe", choices=["run1", "run2", "run3", "run4", "run5"], default="run3")
    ap.add_argument("--pairs", type=Path, help="run1: the pairs file make_pairs.py wrote")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--papers", type=int, default=6000, help="run2/run3: venue + ACM-CR pairs (one per paper)")
    ap.add_argument("--venue-share", type=float, default=0.5, help="run2/run3: share of --papers from the venue papers")
    ap.add_argument("--scifact-epochs", type=int, default=2, help="run3: passes over the SciFact train pairs")
    ap.add_argument(
        "--paraphrases",
        type=Path,
        nargs="+",
        default=[Path(__file__).resolve().parent / "paraphrases_train.jsonl"],
        help="run5: written paraphrases of venue papers ({paper_id, query} lines), one file or more; "
        "FILE#SPLIT takes the rows of one split",
    )
    ap.add_argument(
        "--paraphrase-dev",
        type=Path,
        nargs="+",
        help="written paraphrases held out of training (their papers too) and scored as a third dev figure "
        "(FILE#SPLIT as --paraphrases; several files are one set)",
    )
    ap.add_argument(
        "--paraphrase-limit",
        type=int,
        help="run5: train on only the first N prepared paraphrase pairs (files in --paraphrases order), so "
        "a sweep arm can leave the later files of one --dump-data out and keep everything else identical",
    )
    ap.add_argument("--paraphrase-epochs", type=int, default=2, help="run5: passes over the paraphrase pairs")
    ap.add_argument("--dev-claims", type=int, default=150)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--scale", type=float, default=20.0)
    ap.add_argument("--query-len", type=int, default=64)
    ap.add_argument("--doc-len", type=int, default=128)
    # dev figures stay at 128 document tokens whatever --doc-len trains with, so every run's log compares
    ap.add_argument("--dev-doc-len", type=int, default=128)
    ap.add_argument(
        "--bf16",
        action="store_true",
        help="bfloat16 autocast for the training passes (weights, loss and dev scores stay fp32): "
        "a 256-token step ~1.5x faster on CPUs with avx512_bf16 (the allocator fix in the README is the other 2x)",
    )
    ap.add_argument(
        "--tf32",
        action="store_true",
        help="TF32 matrix products on an NVIDIA GPU (10-bit mantissa inputs, fp32 sums): 256-token steps ~1.5x "
        "the examples/s of fp32 on an H200 (373 -> ~555), slightly coarser",
    )
    ap.add_argument(
        "--no-base-checkpoint", action="store_true", help="skip step-0 (the base model's copy and dev scores)"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save-every", type=int, default=60)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument(
        "--dump-data",
        type=Path,
        help="write the recipe's prepared triples and dev sets to this .json.gz and stop (for --load-data elsewhere)",
    )
    ap.add_argument(
        "--load-data",
        type=Path,
        help="train on a --dump-data file instead of --data; --seed then only orders the triples and seeds torch "
        "(the dev split and negatives are the dump's)",
    )
    ap.add_argument("--device", default="cpu", help="torch device for training and dev scores (cuda on a GPU)")
    a = ap.parse_args()

    import torch
    import torch.nn.functional as F
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    torch.manual_seed(a.seed)
    rng = random.Random(a.seed)
    t_data = time.time()
    if a.load_data:
        parts, dev, venue_dev, data_seed = load_data(a.load_data)
        print(f"prepared data from {a.load_data} (mined with seed {data_seed})")
    else:
        sci, dev = scifact(a.data, a.dev_claims, a.seed)
        extra = [r for spec in a.paraphrase_dev or [] for r in _rows(spec)]
        parts = {"sci": sci}
        if a.recipe == "run1":
            parts["pairs"] = [(r["query"], r["positive"], "") for r in _jsonl(a.pairs)]
        else:
            venue, acm = papers(a.data, {r["paper_id"] for r in extra})
            parts["pairs"] = venue_and_acm(
                venue,
                acm,
                a.papers,
                a.seed,
                mine=a.recipe in ("run3", "run4", "run5"),
                venue_share=a.venue_share,
                short_queries=a.recipe == "run4",
            )
        if a.recipe == "run5":
            parts["paraphrases"] = paraphrases(venue, a.paraphrases, a.seed)
        dev, venue_dev = dev_sets(dev, a.data, a.seed, extra)
        if a.dump_data:
            dump_data(a.dump_data, parts, dev, venue_dev, a.seed)
            print(f"prepared data written to {a.dump_data}: {', '.join(f'{k} {len(v)}' for k, v in parts.items())}")
            return
    triples = list(parts["pairs"])
    if a.recipe in ("run3", "run4", "run5"):
        triples += parts["sci"] * a.scifact_epochs
    if a.recipe == "run5":
        para = parts["paraphrases"][: a.paraphrase_limit] if a.paraphrase_limit is not None else parts["paraphrases"]
        if len(para) < len(parts["paraphrases"]):
            print(f"--paraphrase-limit: {len(para)} of the {len(parts['paraphrases'])} prepared paraphrase pairs")
        triples += para * a.paraphrase_epochs
    rng.shuffle(triples)
    a.out.mkdir(parents=True, exist_ok=True)
    # the claims `eval floor --tune-ids` calibrates this model's floor on (scifact_dev_claims.txt)
    (a.out / "scifact_dev_claims.txt").write_text(
        f"# SciFact train claims held out of fine-tuning (finetune.py dev_claim_ids, seed {a.seed}, {a.dev_claims})\n"
        + "".join(f"{q}\n" for q in dev["queries"])
    )
    print(f"{len(triples)} training examples ready in {time.time() - t_data:.0f} s", flush=True)

    tok = AutoTokenizer.from_pretrained(a.base)
    model = AutoModel.from_pretrained(a.base).float().to(a.device)
    # the 11.7M-parameter token table is half the model: freezing it halves the optimiser's work on
    # CPU, and keeps the vectors of words the training pairs never show as the base model learned them
    model.embeddings.word_embeddings.weight.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=a.lr, weight_decay=0.01)
    total = min(a.steps, len(triples) // a.batch)
    a.out.mkdir(parents=True, exist_ok=True)
    log = open(a.out / "train_log.jsonl", "a", encoding="utf-8")

    def record(rec: dict) -> None:
        log.write(json.dumps(rec) + "\n")
        log.flush()
        print(json.dumps(rec), flush=True)

    def save(name: str, step: int) -> None:
        model.save_pretrained(a.out / name)
        tok.save_pretrained(a.out / name)
        record({"checkpoint": name, "step": step, **dev_scores(model, tok, dev, venue_dev, a.dev_doc_len)})

    if not a.no_base_checkpoint:
        save("step-0", 0)
    t0 = time.time()

    def lr_at(step: int) -> float:
        done = max(step / total, (time.time() - t0) / (a.minutes * 60))
        return a.lr * min(1.0, (step + 1) / a.warmup) * max(0.0, 1.0 - done)

    model.train()
    step, ema = 0, None
    while step < total and time.time() - t0 < a.minutes * 60:
        chunk = triples[step * a.batch : (step + 1) * a.batch]
        negs = [n for _, _, n in chunk if n]
        q = tok([x for x, _, _ in chunk], padding=True, truncation=True, max_length=a.query_len, return_tensors="pt")
        d = tok(
            [x for _, x, _ in chunk] + negs, padding=True, truncation=True, max_length=a.doc_len, return_tensors="pt"
        )
        q, d = q.to(a.device), d.to(a.device)
        with torch.autocast(torch.device(a.device).type, dtype=torch.bfloat16, enabled=a.bf16):
            qh, dh = model(**q).last_hidden_state, model(**d).last_hidden_state
        qv = mean_pool(qh.float(), q["attention_mask"])
        dv = mean_pool(dh.float(), d["attention_mask"])
        sim = a.scale * qv @ dv.T
        labels = torch.arange(len(chunk), device=a.device)
        loss = (F.cross_entropy(sim, labels) + F.cross_entropy(sim[:, : len(chunk)].T, labels)) / 2
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        ema = loss.item() if ema is None else 0.95 * ema + 0.05 * loss.item()
        if step % 10 == 0 or step == 1:
            el = time.time() - t0
            record(
                {
                    "step": step,
                    "of": total,
                    "loss": round(loss.item(), 4),
                    "ema": round(ema, 4),
                    "lr": f"{lr_at(step):.2e}",
                    "elapsed_s": round(el),
                    "examples_per_s": round(step * a.batch / el, 2),
                }
            )
        if step % a.save_every == 0:
            save(f"step-{step}", step)
    save("last", step)
    meta = {
        "steps": step,
        "examples_seen": step * a.batch,
        "examples": len(triples),
        "minutes": round((time.time() - t0) / 60, 1),
        "args": {k: str(v) for k, v in vars(a).items()},
    }
    (a.out / "last" / "train_meta.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
