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

import importlib
from typing import Any

import click

from .. import settings
from .. import __version__
from . import plugins
from .common import EXIT_BAD_INPUT, EXIT_EMPTY, EXIT_ERROR, EXIT_WARNINGS, Fail

__all__ = ["EXIT_BAD_INPUT", "EXIT_EMPTY", "EXIT_ERROR", "EXIT_WARNINGS", "Fail", "cli", "main"]


#: the module of this package that holds each command (it lists it in `COMMANDS`, the one way a command
#: is registered): a module is imported when one of its commands runs (or `--help` lists them all), so
#: `search` does not pay for `fetch`'s sources or `serve`'s web app (tests/test_startup.py checks the map)
COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("ingest", "stats", "list", "show", "export", "embed", "copy", "search", "similar"), "library"),
    **dict.fromkeys(("readers", "like", "dislike", "tag", "note", "import-reader"), "readers"),
    **dict.fromkeys(("recommend", "profile", "triage", "group", "digest"), "recommend"),
    **dict.fromkeys(("fetch", "follow", "unfollow", "update"), "sources"),
    "enrich": "citations",
    **dict.fromkeys(("topics", "map"), "topics"),
    **dict.fromkeys(("programme", "session", "agenda", "walk", "split", "people"), "programme"),
    "report": "report",
    **dict.fromkeys(("tldr", "faq", "translate", "ask", "cheatsheet"), "llm"),
    "fulltext": "fulltext",
    "serve": "web",
    "mcp": "mcp",
}


class Commands(plugins.PluginGroup):
    """The product's commands, each module imported on first use (COMMAND_MODULES), and the installed
    plug-in groups (plugins.PluginGroup)."""

    def own(self) -> set[str]:
        return set(self.commands) | set(COMMAND_MODULES)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            load_module(self, COMMAND_MODULES[cmd_name])
        return super().get_command(ctx, cmd_name)


def load_module(group: click.Group, name: str) -> Any:
    """Import cli/<name>.py and add its commands to `group` (once)."""
    module = importlib.import_module(f".{name}", __name__)
    for command in module.COMMANDS:
        if command.name not in group.commands:
            group.add_command(command)
    return module


# `bench` and `eval`, the laboratory's, come from its entry points (plugins.PluginGroup)
@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
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


def main() -> None:
    cli(prog_name="paperatlas")
