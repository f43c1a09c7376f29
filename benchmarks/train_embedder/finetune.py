"""Run 2 of the fine-tuning recipe (README.md): ML venue papers and ACM-CR records, mixed half and half.

train.py trains on ACM-CR pairs only (make_pairs.py); this script builds its own pairs so that half
come from the ML venue papers, the domain of a conference list, then trains the same way and saves
a checkpoint for export.py. Needs PyTorch and transformers (never the product):

    /work/tune-venv/bin/python benchmarks/train_embedder/finetune.py --base FP32_DIR --out run2 --papers 8000

Held out (nothing from any evaluation's test split, nothing from SciFact):
* every venue paper a *test* query of benchmarks/data/paraphrase_8k.jsonl or tests/data/zh_queries.jsonl
  points at (by id, and by normalised title for the Chinese set);
* every reference of all 50 ACM-CR readers (tune and test) and the 50 citing papers.

Each paper gives one pair, its kind drawn at random (seed 13): title -> abstract; keywords ->
"title. abstract" (ACM records with keywords); inverse cloze: one random sentence of the abstract ->
"title. the rest". Loss: in-batch negatives, scale 20, both directions; AdamW, 5% warm-up, linear decay.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _norm_title(t: str) -> str:
    t = unicodedata.normalize("NFKC", t).lower()
    return re.sub(r"[^0-9a-z]+", " ", t).strip()


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", text) if len(s.strip()) > 30]


def excluded(data: Path) -> tuple[set[str], set[str], set[str]]:
    """(venue ids, normalised titles, ACM DOIs) that no pair may come from."""
    ids = {
        json.loads(line)["paper_id"]
        for line in open(REPO / "benchmarks" / "data" / "paraphrase_8k.jsonl", encoding="utf-8")
        if line.strip() and json.loads(line)["split"] == "test"
    }
    titles = set()
    for line in open(REPO / "tests" / "data" / "zh_queries.jsonl", encoding="utf-8"):
        if line.strip():
            row = json.loads(line)
            if row.get("split") == "test" and row.get("title"):
                titles.add(_norm_title(row["title"]))
    dois = set()
    for line in open(data / "acm_cr" / "citations.jsonl", encoding="utf-8"):
        if line.strip():
            row = json.loads(line)
            dois.update(d.lower() for d in row.get("cited_in_collection") or [])
            dois.add(str(row.get("paper_doi", "")).lower())
    return ids, titles, dois


def papers(data: Path) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    ids, titles, dois = excluded(data)
    out: list[dict[str, str]] = []
    dropped = 0
    with gzip.open(data / "ml_venue_papers" / "papers.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r["id"] in ids or _norm_title(r["title"]) in titles:
                dropped += 1
                continue
            if r.get("abstract") and r.get("title"):
                out.append({"title": r["title"], "abstract": r["abstract"], "keywords": ""})
    venue = len(out)
    with gzip.open(data / "acm_cr" / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if str(r["_id"]).lower() in dois:
                dropped += 1
                continue
            if len(r.get("text") or "") > 200 and r.get("title"):
                kw = r.get("keywords") or ""
                kw = ", ".join(kw) if isinstance(kw, list) else str(kw)
                out.append({"title": r["title"], "abstract": r["text"], "keywords": kw})
    print(f"training papers: {venue} venue + {len(out) - venue} ACM-CR; {dropped} held out as evaluation targets")
    return out[:venue], out[venue:]


def make_pair(p: dict[str, str], rng: random.Random) -> tuple[str, str]:
    kinds = ["title", "cloze"] + (["keywords"] if len(p["keywords"]) > 10 else [])
    kind = rng.choice(kinds)
    if kind == "title":
        return p["title"], p["abstract"]
    if kind == "keywords":
        return p["keywords"], f"{p['title']}. {p['abstract']}"
    sents = _sentences(p["abstract"])
    if len(sents) < 3:
        return p["title"], p["abstract"]
    i = rng.randrange(len(sents))
    rest = " ".join(s for j, s in enumerate(sents) if j != i)
    return sents[i], f"{p['title']}. {rest}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--papers", type=int, default=12000, help="pairs to train on (one per paper)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--query-len", type=int, default=48)
    ap.add_argument("--doc-len", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--minutes", type=float, default=0, help="stop after this long (0: no limit)")
    args = ap.parse_args()

    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    ckpt = args.out / "checkpoint"
    tok = AutoTokenizer.from_pretrained(args.base)
    model = AutoModel.from_pretrained(ckpt if (ckpt / "config.json").exists() else args.base)
    train(model, tok, args, ckpt)
    print(f"checkpoint in {ckpt}: export it with benchmarks/train_embedder/export.py {ckpt} OUT.onnx")


def _embed(model, batch):  # train.py's pooling: mean over the attention mask, L2-normalised
    from train import mean_pool  # this folder is on sys.path when the script runs

    return mean_pool(model(**batch).last_hidden_state, batch["attention_mask"])


def train(model, tok, args, ckpt: Path) -> None:
    import torch

    rng = random.Random(args.seed)
    venue, acm = papers(args.data)
    rng.shuffle(venue)
    rng.shuffle(acm)
    # half ML venue papers (the domain of a conference list), half ACM-CR (wider computing)
    n_venue = min(len(venue), args.papers // 2)
    pool = venue[:n_venue] + acm[: args.papers - n_venue]
    rng.shuffle(pool)
    pairs = [make_pair(p, rng) for p in pool]
    steps = len(pairs) // args.batch
    state = ckpt / "step.json"
    start = json.loads(state.read_text())["step"] if state.exists() else 0
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / max(1, steps - warm))
    )
    for _ in range(start):
        sched.step()
    model.train()
    t0 = time.time()
    for step in range(start, steps):
        chunk = pairs[step * args.batch : (step + 1) * args.batch]
        q = tok([a for a, _ in chunk], padding=True, truncation=True, max_length=args.query_len, return_tensors="pt")
        d = tok([b for _, b in chunk], padding=True, truncation=True, max_length=args.doc_len, return_tensors="pt")
        qv, dv = _embed(model, q), _embed(model, d)
        logits = 20.0 * qv @ dv.T
        labels = torch.arange(len(chunk))
        loss = (
            torch.nn.functional.cross_entropy(logits, labels) + torch.nn.functional.cross_entropy(logits.T, labels)
        ) / 2
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad()
        if step % 10 == 0 or step == steps - 1:
            rate = (step + 1 - start) * args.batch / (time.time() - t0)
            print(
                f"step {step + 1}/{steps} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e} {rate:.1f} pairs/s",
                flush=True,
            )
        if (step + 1) % 50 == 0 or step == steps - 1 or (args.minutes and time.time() - t0 > 60 * args.minutes):
            model.save_pretrained(ckpt)
            state.write_text(
                json.dumps({"step": step + 1, "steps": steps, "args": {k: str(v) for k, v in vars(args).items()}})
            )
            if args.minutes and time.time() - t0 > 60 * args.minutes:
                print(f"stopped after {args.minutes} minutes at step {step + 1}/{steps}")
                break
    model.eval()


if __name__ == "__main__":
    main()
