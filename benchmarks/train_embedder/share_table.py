"""Move the token table of packaged models into one file beside them that they share:

    python benchmarks/train_embedder/share_table.py paperatlas/embed/assets/minilm-l6-paperatlas-r*.int8.onnx

Fine-tuning froze the token table (30,522 x 384 int8, 11.7 MB, half of each model file), so runs
exported alike hold identical tables. Each table goes to `minilm-l6-tokens-<sha256[:12]>.int8.bin`
beside the models (written once, whichever model brings it first) and the model keeps an ONNX
external-data reference to it; the model's spec then sets `shared_table=True`. Before a model file
is replaced, `paperatlas.embed.onnx.read_model` must put the new pair back together byte for byte
as the old file, so the sha256 in its spec and the vectors it makes stay what they were. A model
already split is left as it is.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import onnx
from onnx import TensorProto

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from paperatlas.embed.onnx import read_model  # noqa: E402

TABLE = "inner.embeddings.word_embeddings.weight_q"


def split(path: Path) -> str:
    raw = path.read_bytes()
    model = onnx.load_model_from_string(raw)
    tensor = next((t for t in model.graph.initializer if t.name == TABLE), None)
    if tensor is None:
        return f"{path.name}: no initializer {TABLE!r}, left as it is"
    if tensor.data_location == TensorProto.EXTERNAL:
        return f"{path.name}: already split"
    table = tensor.raw_data
    name = f"minilm-l6-tokens-{hashlib.sha256(table).hexdigest()[:12]}.int8.bin"
    dest = path.parent / name
    if dest.exists() and dest.read_bytes() != table:  # pragma: no cover - a 48-bit hash prefix collision
        raise SystemExit(f"{dest} holds another table")
    if not dest.exists():
        dest.write_bytes(table)
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", name), ("offset", "0"), ("length", str(len(table)))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    tmp = path.with_suffix(".split.tmp")
    tmp.write_bytes(model.SerializeToString())
    try:
        back = read_model(tmp, shared_table=True)
    finally:
        small = tmp.read_bytes()
        tmp.unlink()
    if back != raw:
        raise SystemExit(f"{path.name}: the split model does not put itself back together; nothing replaced")
    path.write_bytes(small)
    return f"{path.name}: {len(raw):,} -> {len(small):,} bytes, table in {name}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", type=Path)
    for path in ap.parse_args().models:
        print(split(path))


if __name__ == "__main__":
    main()
