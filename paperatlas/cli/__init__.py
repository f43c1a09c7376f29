"""The `paperatlas` command: each command parses input, calls Library (or one of its capability
objects), prints the result. One module per capability; each lists its commands in `COMMANDS`,
which this group adds, the one way a command is registered. Commands the product does not ship
(the laboratory's `bench` and `eval`) come from other packages' `paperatlas.commands` entry points
(cli/plugins.py).

Exit codes: 0 success, 1 error (e.g. no such paper), 2 usage error, 3 bad input data
(nothing was stored), 4 nothing found (an empty search or list, so scripts can test it),
5 stored with warnings (`ingest`: some papers may be read wrong; each `warning:` line names one).
"""

from __future__ import annotations

import click

from .. import settings
from .. import __version__
from . import (
    citations,
    fulltext,
    library,
    llm,
    mcp,
    plugins,
    programme,
    readers,
    recommend,
    report,
    sources,
    topics,
    web,
)
from .common import EXIT_BAD_INPUT, EXIT_EMPTY, EXIT_ERROR, EXIT_WARNINGS, Fail

__all__ = ["EXIT_BAD_INPUT", "EXIT_EMPTY", "EXIT_ERROR", "EXIT_WARNINGS", "Fail", "cli", "main"]


# `bench` and `eval`, the laboratory's, come from its entry points (plugins.PluginGroup)
@click.group(cls=plugins.PluginGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="paperatlas")
@click.option(
    "--db",
    envvar=settings.env("db"),
    default=None,
    metavar="PATH|URL",
    help="Library file (default ./paperatlas.db, or $PAPERATLAS_DB), or a postgresql://USER@HOST:PORT/DB URL "
    "for a library shared by several hosts.",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """paperatlas: turn conference paper lists into a searchable, personal research atlas.

    Example:

        paperatlas ingest examples/*.txt && paperatlas search "user simulators"
    """
    ctx.ensure_object(dict)["db"] = db


MODULES = (
    library,
    readers,
    recommend,
    sources,
    citations,
    topics,
    programme,
    report,
    llm,
    fulltext,
    web,
    mcp,
)
for _module in MODULES:
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="paperatlas")
