"""Build (or finish) `paperatlas bench quality`'s venue library for an embedder without scoring anything:

    .venv/bin/python benchmarks/train_embedder/candidate.py NAME FILE.int8.onnx -- \\
        benchmarks/train_embedder/venue_library.py NAME

search_levers.py tunes on the paraphrase set's train half over that library; building it through
`bench quality --only paraphrase` would print the test half too, before a candidate is chosen.
"""

from __future__ import annotations

import sys
from pathlib import Path

from paperatlas_lab.bench.quality import Bench, default_data_root


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    bench = Bench(
        default_data_root(),
        embedder=sys.argv[1],
        workdir=Path.home() / ".cache" / "paperatlas" / "eval" / "bench-quality",
        log=print,
    )
    bench.venue_library()
    bench.close()


if __name__ == "__main__":
    main()
