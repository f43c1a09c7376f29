"""`paperatlas eval` commands; each lives beside its evaluation code (paperatlas_lab/eval/) and is
added here; the `paperatlas` command finds this group through the lab's `paperatlas.commands` entry point."""

from __future__ import annotations

import click


@click.group("eval")
def eval_() -> None:
    """Evaluations on real data: search (BEIR), topics, recommendations.

    Example:

        paperatlas eval beir ../shared/data/scifact --split test
    """


from ..eval.beir import beir_cmd, paraphrase_cmd  # noqa: E402

eval_.add_command(beir_cmd)
eval_.add_command(paraphrase_cmd)

from ..eval.recommend import recommend_cmd  # noqa: E402

eval_.add_command(recommend_cmd)

from ..eval.topics import topics_cmd  # noqa: E402

eval_.add_command(topics_cmd)

from ..eval.crosslingual import crosslingual_cmd  # noqa: E402

eval_.add_command(crosslingual_cmd)

from ..eval.floor import floor_cmd  # noqa: E402

eval_.add_command(floor_cmd)

from ..eval.tldr import tldr_cmd  # noqa: E402

eval_.add_command(tldr_cmd)

from ..eval.pastes import pastes_cmd  # noqa: E402

eval_.add_command(pastes_cmd)

from ..eval.authors import authors_cmd  # noqa: E402

eval_.add_command(authors_cmd)

from ..eval.report import report_cmd  # noqa: E402

eval_.add_command(report_cmd)

from ..eval.zh_floor import zh_floor_cmd  # noqa: E402

eval_.add_command(zh_floor_cmd)
