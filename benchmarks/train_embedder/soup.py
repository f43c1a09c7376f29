"""Interpolate two checkpoints' weights (WiSE-FT: base + alpha * (tuned - base)) and score each mix on
finetune.py's dev sets (SciFact dev claims, the paraphrase set's train half), never a test split:

    /work/tune-venv/bin/python benchmarks/train_embedder/soup.py BASE_DIR TUNED_DIR --alphas 0.5,0.7,1 \\
        --out run5/soup --dev-doc-len 256

A fine-tune that gains one dev set and loses some of another often keeps most of the gain and
recovers the loss part-way between the two weight sets; each mix is saved as ``OUT/alpha-A``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import finetune


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("base", type=Path)
    ap.add_argument("tuned", type=Path)
    ap.add_argument("--alphas", default="0.5,0.7,1")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=finetune.REPO.parent / "shared" / "data")
    ap.add_argument("--dev-claims", type=int, default=150)
    ap.add_argument("--dev-doc-len", type=int, default=256)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()

    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.set_num_threads(a.threads)
    _, dev = finetune.scifact(a.data, a.dev_claims, a.seed)
    dev, venue_dev = finetune.dev_sets(dev, a.data, a.seed)
    tok = AutoTokenizer.from_pretrained(a.tuned)
    base = AutoModel.from_pretrained(a.base).state_dict()
    model = AutoModel.from_pretrained(a.tuned)
    tuned = {k: v.clone() for k, v in model.state_dict().items()}  # the model's own tensors change below
    for alpha in (float(x) for x in a.alphas.split(",")):
        model.load_state_dict(
            {k: base[k] + alpha * (tuned[k] - base[k]) if v.is_floating_point() else v for k, v in tuned.items()}
        )
        out = a.out / f"alpha-{alpha:g}"
        model.save_pretrained(out)
        tok.save_pretrained(out)
        rec = {"alpha": alpha, **finetune.dev_scores(model, tok, dev, venue_dev, a.dev_doc_len)}
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
