"""Embedding on a Ray cluster: `paperatlas embed --ray local|auto|ray://HOST:PORT`.

The driver (the process running `paperatlas embed`) reads what is left to embed, answers what it
can from the vector cache, and sends the rest in chunks to Ray actors. Each actor loads the packaged
model once and embeds chunk after chunk; the driver stores every finished chunk in the library at
once (one transaction each), so a killed run resumes where it stopped and no worker ever writes
to the library: only the driver needs to reach it. Workers need paperatlas installed (the same
version) and nothing else: the model ships inside the package.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .. import settings
from ..errors import PaperatlasError

Progress = Callable[[int, int], None]


class EmbedTarget(Protocol):
    """What the driver needs of the library (the Library is one): what is left to embed, where the
    vectors go, and the model that names them. Stated here so that embed/ stays below the core."""

    @property
    def embedder_name(self) -> str: ...

    @property
    def embedder(self) -> Any: ...

    vector_cache: Any
    store: Any

    def embed_todo(self, rebuild: bool = False) -> list[tuple[str, str, str]]: ...

    def remember_embedder(self) -> None: ...


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise PaperatlasError("embedding on Ray needs the ray package", "pip install 'paperatlas[scale]'") from e
    return ray


def connect(address: str, workers: int | None = None) -> Any:
    """Join (or, for "local", start) a Ray cluster; returns the ray module."""
    ray = _ray()
    if ray.is_initialized():
        return ray
    settings.put_external(
        "RAY_USAGE_STATS_ENABLED", settings.external("RAY_USAGE_STATS_ENABLED") or "0"
    )  # no telemetry
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    try:
        if address == "local":
            ray.init(num_cpus=workers or os.cpu_count() or 1, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except Exception as e:  # ConnectionError, RuntimeError, ...: Ray raises many kinds
        raise PaperatlasError(
            f"cannot reach the Ray cluster at {address}: {str(e).strip().splitlines()[0] if str(e).strip() else e}",
            "start one with `ray start --head` (then use --ray auto), pass its ray://HOST:10001 address, "
            "or use --ray local",
        ) from None
    return ray


class _Worker:
    """One Ray actor: the model, loaded once, with the threads Ray gave it."""

    def __init__(self, embedder: str, threads: int) -> None:
        from .base import EMBEDDERS

        settings.put("embed_threads", threads)
        self.embedder = EMBEDDERS.create(embedder)

    def embed(self, texts: list[str], batch_size: int) -> np.ndarray:
        return np.asarray(self.embedder.embed(texts, batch_size=batch_size), dtype=np.float32)


def embed_with_ray(
    lib: EmbedTarget,
    address: str = "local",
    workers: int | None = None,
    rebuild: bool = False,
    chunk: int = 256,
    batch_size: int = 32,
    progress: Progress | None = None,
) -> int:
    """Embed every paper missing a vector on Ray; returns how many papers got one."""
    name = lib.embedder_name
    from .base import EMBEDDERS

    if name not in EMBEDDERS:
        raise PaperatlasError(
            f"embedder {name!r} is not a registered model name, so Ray workers cannot load it",
            f"use one of: {', '.join(EMBEDDERS.names())}",
        )
    todo = lib.embed_todo(rebuild)
    if not todo:
        return 0
    model_id = lib.embedder.id
    total = len(todo)
    # what the cache already knows never leaves the driver
    cached = lib.vector_cache.get_many(model_id, list({h for _, h, _ in todo}))
    hit = [(pid, h, cached[h]) for pid, h, _ in todo if h in cached]
    for s in range(0, len(hit), 2_000):
        lib.store.put_vectors(model_id, hit[s : s + 2_000])
    done = len(hit)
    if progress:
        progress(done, total)
    rest = [(pid, h, t) for pid, h, t in todo if h not in cached]
    if rest:
        ray = connect(address, workers)
        n = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor = ray.remote(num_cpus=1)(_Worker)
        pool = [actor.remote(name, 1) for _ in range(n)]
        chunks = [rest[s : s + chunk] for s in range(0, len(rest), chunk)]
        # each worker holds at most two chunks: one embedding, one queued behind it
        pending: dict[Any, tuple[list[tuple[str, str, str]], Any]] = {}
        queue = list(reversed(chunks))
        free = [w for w in pool for _ in range(2)]
        try:
            while queue or pending:
                while queue and free:
                    part, worker = queue.pop(), free.pop()
                    pending[worker.embed.remote([t for _, _, t in part], batch_size)] = (part, worker)
                ready, _ = ray.wait(list(pending), num_returns=1)
                part, worker = pending.pop(ready[0])
                free.append(worker)
                vecs = ray.get(ready[0])
                rows = [(pid, h, v) for (pid, h, _), v in zip(part, vecs)]
                lib.store.put_vectors(model_id, rows)  # one transaction per chunk: a kill loses one chunk
                lib.vector_cache.put_many(model_id, [(h, v) for _, h, v in rows])
                done += len(rows)
                if progress:
                    progress(done, total)
        finally:
            for w in pool:
                ray.kill(w)
    lib.remember_embedder()
    return total


def throughput(texts: list[str], address: str, workers: int, chunk: int = 64, batch_size: int = 32) -> float:
    """Papers/s of embedding `texts` on `workers` Ray actors (model loading excluded), for `bench ray`."""
    from .base import DEFAULT_EMBEDDER

    ray = connect(address, workers)
    actor = ray.remote(num_cpus=1)(_Worker)
    pool = [actor.remote(DEFAULT_EMBEDDER, 1) for _ in range(workers)]
    ray.get([w.embed.remote(texts[:2], batch_size) for w in pool])  # load the model on every actor
    chunks = [texts[s : s + chunk] for s in range(0, len(texts), chunk)]
    t0 = time.perf_counter()
    refs = [pool[i % workers].embed.remote(c, batch_size) for i, c in enumerate(chunks)]
    ray.get(refs)
    dt = time.perf_counter() - t0
    for w in pool:
        ray.kill(w)
    return len(texts) / dt
