"""Rebuild a transformers checkpoint from a shipped int8 ONNX file of ours (export.py's layout), so a
model whose fp32 training checkpoint is gone can be scored on the dev sets or mixed (soup.py):

    /work/tune-venv/bin/python benchmarks/train_embedder/from_onnx.py BASE_DIR MODEL.int8.onnx OUT_DIR

Named initializers (biases, LayerNorms, the token-type table) are copied by name. The torch exporter
names each projection matrix val_N and stores it transposed, so each int8 matrix (dequantised:
q * scale) is matched to the base model's parameter of that shape it correlates with most: a
fine-tune moves weights a little, so the right partner correlates ~0.99 and every other ~0. The
token table was frozen in training and is taken from the base exactly.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from transformers import AutoModel, AutoTokenizer


def main() -> None:
    base_dir, onnx_path, out = sys.argv[1:4]
    model = AutoModel.from_pretrained(base_dir)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    inits = {t.name: numpy_helper.to_array(t) for t in onnx.load(onnx_path).graph.initializer}
    named = 0
    for name, a in inits.items():
        key = name.removeprefix("inner.")
        if key in state and not name.endswith(("_q", "_scale")):
            state[key] = torch.from_numpy(a.copy())
            named += 1
    used: set[str] = {"embeddings.word_embeddings.weight"}  # frozen in training: the base's own
    matched = []
    for name in [n for n in inits if n.endswith("_q")]:
        w = inits[name].astype(np.float32) * inits[name[:-2] + "_scale"]
        stem = name[:-2].removeprefix("inner.")
        if stem in state:  # a table kept under its own name (position embeddings)
            if stem not in used:
                state[stem] = torch.from_numpy(w)
                used.add(stem)
            continue
        best, best_r = None, -1.0
        for key, v in state.items():
            if key in used or v.ndim != 2 or tuple(v.T.shape) != w.shape:
                continue
            r = float(np.corrcoef(v.T.numpy().ravel(), w.ravel())[0, 1])
            if r > best_r:
                best, best_r = key, r
        if best is None or best_r < 0.9:
            raise SystemExit(f"{onnx_path}: {name} matches no base parameter (best r {best_r:.3f})")
        state[best] = torch.from_numpy(np.ascontiguousarray(w.T))
        used.add(best)
        matched.append(best_r)
    model.load_state_dict(state)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(base_dir).save_pretrained(out)
    print(f"{named} named tensors, {len(matched)} matrices matched (min r {min(matched):.4f}) -> {out}")


if __name__ == "__main__":
    main()
