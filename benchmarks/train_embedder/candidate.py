"""Score an exported checkpoint as a user would get it, before it is registered or shipped:

    .venv/bin/python benchmarks/train_embedder/candidate.py NAME FILE.int8.onnx -- bench quality --embedder NAME
    .venv/bin/python benchmarks/train_embedder/candidate.py NAME FILE.int8.onnx -- \\
        benchmarks/search_levers.py --embedder NAME --scifact-ids benchmarks/train_embedder/scifact_dev_claims.txt

registers FILE (export.py's int8 layout: the shipped tokenizer, shape and pooling) under NAME in this
process only, run like the default (documents through the dynamic-int8 copy), then runs the paperatlas
CLI with the arguments after ``--``, or the script named there. Its vectors carry the model id
``NAME-onnx`` plus the file's hash, so the vector cache never mixes two candidates of one name.
"""

from __future__ import annotations

import hashlib
import runpy
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any


def register(name: str, path: Path) -> None:
    from paperatlas.embed import onnx

    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    register_spec(
        replace(
            onnx.MINILM_L6_TUNED_R5,
            name=name,
            model_id=f"{name}-onnx-{digest[:12]}",
            model_file=str(path.resolve()),  # absolute: joined to the package folder, it stays itself
            sha256=digest,
            shared_table=False,  # a candidate is one whole file (share_table.py splits a model once it ships)
        )
    )


def register_spec(spec: Any) -> None:
    """`spec` (an OnnxModelSpec) as an embedder under its name, in this process only, run like the default:
    documents through the dynamic-int8 copy."""
    from paperatlas.embed import onnx
    from paperatlas.embed.base import EMBEDDERS

    onnx.SPECS[spec.name] = spec

    @EMBEDDERS.register(spec.name)
    def _candidate(**options: Any):  # noqa: ANN202
        return onnx.OnnxEmbedder(spec.name, int8_documents=True, **options)


def run(rest: list[str]) -> None:
    """The paperatlas CLI with `rest` as its arguments, or the script `rest` names."""
    if rest and rest[0].endswith(".py"):
        sys.argv = rest
        runpy.run_path(rest[0], run_name="__main__")
    else:
        from paperatlas.cli import main as cli

        sys.argv = ["paperatlas", *rest]
        cli()


def main() -> None:
    if len(sys.argv) < 4 or "--" not in sys.argv:
        raise SystemExit(__doc__)
    cut = sys.argv.index("--")
    name, path = sys.argv[1], Path(sys.argv[2])
    if not path.is_file():
        raise SystemExit(f"{path}: no such model file (export.py writes one)")
    register(name, path)
    run(sys.argv[cut + 1 :])


if __name__ == "__main__":
    main()
