"""`paperatlas bench` commands."""

from __future__ import annotations

import json
from pathlib import Path

import click

DEFAULT_VENUE = "../shared/data/ml_venue_papers/papers.jsonl.gz"


@click.group()
def bench() -> None:
    """Benchmarks: print numbers beside a baseline measured in the same run.

    Example:

        paperatlas bench ingest ../shared/data/ml_venue_papers/papers.jsonl.gz
    """


@bench.command("ingest")
@click.argument("file", default=DEFAULT_VENUE, type=click.Path(exists=True, dir_okay=False))
@click.option("--repeats", default=3, show_default=True, help="Runs; the median is reported.")
def bench_ingest_cmd(file: str, repeats: int) -> None:
    """Papers/s for a first ingest (metadata + FTS, no embeddings) and a no-op re-ingest.

    Example:

        paperatlas bench ingest papers.jsonl.gz --repeats 5
    """
    from .ingest import bench_ingest

    click.echo(json.dumps(bench_ingest(Path(file), repeats), indent=2))
