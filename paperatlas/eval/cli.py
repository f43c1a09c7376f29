"""`paperatlas eval` commands; each lives beside its evaluation code and is added here."""

from __future__ import annotations

import click


@click.group("eval")
def eval_() -> None:
    """Evaluations on real data: search (BEIR), topics, recommendations.

    Example:

        paperatlas eval beir ../shared/data/scifact --split test
    """


from .beir import beir_cmd, paraphrase_cmd  # noqa: E402

eval_.add_command(beir_cmd)
eval_.add_command(paraphrase_cmd)

from .recommend import recommend_cmd  # noqa: E402

eval_.add_command(recommend_cmd)

from .topics import topics_cmd  # noqa: E402

eval_.add_command(topics_cmd)

from .crosslingual import crosslingual_cmd  # noqa: E402

eval_.add_command(crosslingual_cmd)

from .floor import floor_cmd  # noqa: E402

eval_.add_command(floor_cmd)

from .tldr import tldr_cmd  # noqa: E402

eval_.add_command(tldr_cmd)

from .pastes import pastes_cmd  # noqa: E402

eval_.add_command(pastes_cmd)
