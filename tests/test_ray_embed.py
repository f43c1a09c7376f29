"""`embed --ray`: the same vectors as a local embed, and a killed run resumes (issue 15).

Ray starts a local cluster in this process (~5-10 s), so the module is marked slow; it is skipped
when Ray is not installed (the `scale` extra), unless PAPERATLAS_REQUIRE_RAY=1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from paperatlas import Library
from paperatlas.store.vector_cache import VectorCache

from conftest import EXAMPLES

pytestmark = pytest.mark.slow

if os.environ.get("PAPERATLAS_REQUIRE_RAY") != "1":
    pytest.importorskip("ray")


@pytest.fixture(scope="module")
def ray_local():
    from paperatlas.embed.ray_runner import connect

    ray = connect("local", 2)
    yield ray
    ray.shutdown()


def _lib(tmp_path: Path, name: str) -> Library:
    """A library of the first example list with its own, empty vector cache (no answer from a cache)."""
    lib = Library(
        tmp_path / f"{name}.db", embedder="minilm", vector_cache=VectorCache(tmp_path / f"{name}-cache.sqlite")
    )
    lib.ingest([EXAMPLES[1]])  # neurips-2026.txt: 10 papers
    return lib


def test_ray_gives_the_local_vectors(tmp_path: Path, ray_local) -> None:
    from paperatlas.embed.ray_runner import embed_with_ray

    with _lib(tmp_path, "local") as a, _lib(tmp_path, "ray") as b:
        assert a.embed() == 10
        assert embed_with_ray(b, "local", workers=2, chunk=3) == 10
        ids_a, va = a.store.load_vectors(a.embedder.id)
        ids_b, vb = b.store.load_vectors(b.embedder.id)
        assert ids_a == ids_b
        cos = np.sum(va * vb, axis=1) / (np.linalg.norm(va, axis=1) * np.linalg.norm(vb, axis=1))
        assert cos.min() > 0.999
        assert b.store.get_meta("embedder") == "minilm"
        assert embed_with_ray(b, "local", workers=2) == 0  # nothing left


def test_a_killed_ray_embed_resumes(tmp_path: Path, ray_local) -> None:
    from paperatlas.embed.ray_runner import embed_with_ray

    with _lib(tmp_path, "resume") as lib:
        seen: list[int] = []

        def die_after_first_chunk(done: int, total: int) -> None:
            seen.append(done)
            if done >= 4:
                raise KeyboardInterrupt  # as Ctrl-C (or a kill) would stop the driver

        with pytest.raises(KeyboardInterrupt):
            embed_with_ray(lib, "local", workers=1, chunk=4, progress=die_after_first_chunk)
        stored = lib.store.vector_count(lib.embedder.id)
        assert 4 <= stored < 10  # whole chunks were kept
        assert len(lib.embed_todo()) == 10 - stored
        assert embed_with_ray(lib, "local", workers=1, chunk=4) == 10 - stored
        assert lib.store.vector_count(lib.embedder.id) == 10


def test_embed_cli_on_ray(tmp_path: Path, ray_local, runner) -> None:
    from paperatlas.cli import cli

    db = str(tmp_path / "cli.db")
    assert runner.invoke(cli, ["--db", db, "ingest", "--no-embed", str(EXAMPLES[1])]).exit_code == 0
    res = runner.invoke(cli, ["--db", db, "embed", "--ray", "local", "--workers", "2"])
    assert res.exit_code == 0, res.output
    assert "embedded 10 papers" in res.output and "on Ray (local)" in res.output
    out = tmp_path / "v.json"
    res = runner.invoke(cli, ["--db", db, "export", "--format", "json", "--with-vectors", "-o", str(out)])
    assert res.exit_code == 0, res.output
    rows = json.loads(out.read_text(encoding="utf-8"))
    assert len(rows) == 10 and all(len(r["vector"]) == 384 for r in rows)
    with Library(db) as lib:
        ids, mat = lib.store.load_vectors(lib.embedder.id)
        exported = np.array([r["vector"] for r in rows], dtype=np.float32)
        assert np.array_equal(exported, mat)  # 9 significant digits keep float32 exactly


def test_workers_without_ray_is_refused(tmp_path: Path, runner) -> None:
    from paperatlas.cli import cli

    res = runner.invoke(cli, ["--db", str(tmp_path / "x.db"), "embed", "--workers", "2"])
    assert res.exit_code != 0 and "--ray local" in res.output
