"""A dynamically quantised (int8 activations and weights) copy of an ONNX encoder, for queries.

The packaged MiniLM stores int8 weights, but ONNX Runtime dequantises them at load and
runs fp32 matrix products: ~4 ms for one short query on one core. Re-quantised
per output channel with `onnxruntime.quantization.quantize_dynamic`, the same model
runs the products in int8: ~1.3 ms, and its query vectors keep a cosine of 0.993 (mean)
to the fp32 ones, so they search the same fp32 document vectors (SciFact nDCG@10 in
docs/embedding-models.md). Documents stay fp32: dynamic quantisation scales
activations per batch, so a document's vector would depend on its batch-mates; a
query is always embedded alone, so its vector is deterministic.

The quantised file is derived once from the installed model (~2 s) and kept in the
user cache folder, keyed by the source file's hash. No network is involved.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from .. import settings


def cache_dir() -> Path:
    """$PAPERATLAS_CACHE_DIR, else $XDG_CACHE_HOME/paperatlas, else ~/.cache/paperatlas."""
    env = settings.get("cache_dir")
    if env:
        return Path(env)
    base = settings.external("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "paperatlas"


def available() -> bool:
    """Whether this install can quantise (the quantiser needs the `onnx` package)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))


def _int8_file(folder: Path, name: str, sha256: str) -> Path:
    return folder / f"{name}-{sha256[:16]}-dynamic-int8.onnx"


def folders() -> tuple[Path, Path]:
    """Where the copy is kept: the user cache, else (not writable) the temporary folder."""
    return cache_dir(), Path(tempfile.gettempdir()) / "paperatlas"


def cached_int8(sha256: str, name: str) -> Path | None:
    """The copy of the model whose bytes have this sha256, if it was made already (else None):
    found without reading, hashing or loading the model itself."""
    return next((f for folder in folders() if (f := _int8_file(folder, name, sha256)).is_file()), None)


def dynamic_int8(model: bytes, name: str, folder: Path | None = None) -> Path:
    """Path of the per-channel dynamic-int8 copy of `model` (an ONNX file's bytes), made on
    first use. `name` prefixes the file name; the content hash makes it exact."""
    folder = folder or cache_dir()
    out = _int8_file(folder, name, hashlib.sha256(model).hexdigest())
    if out.is_file():
        return out
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder, prefix=".quantize-") as tmp:
        # ONNX Runtime folds the stored int8 weights into fp32 constants: the quantiser's input
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = os.path.join(tmp, "fp32.onnx")
        so.log_severity_level = 3
        ort.InferenceSession(model, sess_options=so, providers=["CPUExecutionProvider"])
        q = os.path.join(tmp, "int8.onnx")
        _quiet_quantize(
            lambda: quantize_dynamic(so.optimized_model_filepath, q, per_channel=True, weight_type=QuantType.QInt8)
        )
        os.replace(q, out)  # atomic: concurrent server workers may race to make the same file
    return out


def _quiet_quantize(run: Callable[[], object]) -> None:
    """The quantiser logs a pre-processing suggestion through the root logger; not for users."""
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        run()
    finally:
        root.setLevel(level)
