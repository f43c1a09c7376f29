"""Command groups from other packages (`paperatlas.commands` entry points): real entry points, loaded by
importlib, on a group of their own (the installed lab's are exercised by test_cli and test_packaging)."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import click
from click.testing import CliRunner

from paperatlas.cli import cli
from paperatlas.cli.plugins import GROUP, PluginGroup


def group_with(*eps: EntryPoint) -> PluginGroup:
    @click.group(cls=PluginGroup)
    def top() -> None:
        """A command line with one command of its own."""

    @top.command("search")
    def search() -> None:
        """The product's own command."""
        click.echo("the product's search")

    assert isinstance(top, PluginGroup)
    top._entry_points = {ep.name: ep for ep in eps}  # as if these were the installed ones
    return top


def test_the_installed_lab_is_found_and_loaded_when_asked_for() -> None:
    ctx = click.Context(cli)
    assert {"bench", "eval"} <= set(cli.list_commands(ctx))
    bench = cli.get_command(ctx, "bench")
    assert isinstance(bench, click.Group) and "quality" in bench.commands
    assert bench.callback is not None and bench.callback.__module__ == "paperatlas_lab.cli.bench"
    assert cli.get_command(ctx, "bench") is bench  # loaded once


def test_a_broken_plugin_says_why_and_the_rest_works() -> None:
    top = group_with(
        EntryPoint("bench", "no_such_module_for_paperatlas:bench", GROUP),
        EntryPoint("odd", "json:dumps", GROUP),
        EntryPoint("search", "json:dumps", GROUP),  # never replaces a command of the product
    )
    runner = CliRunner()
    r = runner.invoke(top, ["bench", "quality"])
    assert r.exit_code == 1, r.output
    assert "`paperatlas bench` could not be loaded from no_such_module_for_paperatlas:bench" in r.output
    assert "ModuleNotFoundError" in r.output and "Fix: pip install -e lab" in r.output and "Traceback" not in r.output
    r = runner.invoke(top, ["odd"])
    assert r.exit_code == 1 and "json:dumps is not a click command" in r.output, r.output
    r = runner.invoke(top, ["search"])
    assert r.exit_code == 0 and "the product's search" in r.output, r.output
    r = runner.invoke(top, ["eval", "beir"])  # known, not installed here
    assert r.exit_code == 2 and "`paperatlas eval` (the evaluations) is not installed" in r.output, r.output
