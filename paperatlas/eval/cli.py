"""`paperatlas eval` commands; each lives beside its evaluation code and is added here."""

from __future__ import annotations

import click


@click.group("eval")
def eval_() -> None:
    """Evaluations on real data: search (BEIR), topics, recommendations.

    Example:

        paperatlas eval beir ../shared/data/scifact --split test
    """
