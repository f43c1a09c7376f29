"""Command groups that other installed packages add to `paperatlas`, found through the
`paperatlas.commands` entry points (importlib.metadata): the product names a command it does not ship,
never imports it. The laboratory (`paperatlas bench`, `paperatlas eval`; lab/ in the repository) is
one such package; a user's install holds the product only, so those commands are absent there and
say how to get them.

    [project.entry-points."paperatlas.commands"]
    bench = "paperatlas_lab.cli.bench:bench"
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .common import Fail

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: click's own exit code for a usage error (an unknown command): the command is not there
EXIT_USAGE = 2

GROUP = "paperatlas.commands"

#: commands a separate package of this repository provides: name -> (what it is, how to install it).
#: A user's install lacks them; asked for, each says what it is and the install command.
KNOWN: dict[str, tuple[str, str]] = {
    "bench": ("the benchmarks", "pip install -e lab"),
    "eval": ("the evaluations", "pip install -e lab"),
}
LAB_NOTE = "they live in paperatlas-lab (lab/ in a paperatlas checkout), which is not part of the paperatlas package"


def found() -> list[EntryPoint]:
    """The installed `paperatlas.commands` entry points, one per name (the first installed wins)."""
    from importlib.metadata import entry_points  # read only when a command is not the product's own

    seen: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        seen.setdefault(ep.name, ep)
    return [seen[n] for n in sorted(seen)]


def missing(name: str) -> click.Command:
    """A hidden stand-in for a known command whose package is not installed: exit 2 and the fix."""
    what, fix = KNOWN[name]

    @click.command(
        name,
        hidden=True,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
        add_help_option=False,
    )
    def stand_in() -> None:
        raise Fail(
            f"`paperatlas {name}` ({what}) is not installed: {LAB_NOTE}.\n"
            f"Fix: from the checkout's root, run `{fix}` (or `make install-test`)",
            EXIT_USAGE,
        )

    stand_in.help = f"{what.capitalize()} (not installed: {fix})."
    return stand_in


def broken(name: str, ep: EntryPoint, error: Exception) -> click.Command:
    """A stand-in for an installed command that fails to load: the CLI's other commands go on working."""
    fix = KNOWN.get(name, ("", f"reinstall the package that provides {ep.value.split(':')[0]!r}"))[1]

    @click.command(
        name,
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True, "help_option_names": []},
        add_help_option=False,
    )
    def stand_in() -> None:
        raise Fail(
            f"`paperatlas {name}` could not be loaded from {ep.value}: {type(error).__name__}: {error}\nFix: {fix}"
        )

    stand_in.help = f"Could not be loaded ({type(error).__name__}); run it to see why."
    return stand_in


class PluginGroup(click.Group):
    """A click group that also holds the installed `paperatlas.commands` groups, each loaded when it is
    first asked for (`paperatlas bench ...`, or the command list of `--help`): the product's own
    commands never pay for importing them, and a plug-in that imports `paperatlas.cli` finds it whole."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._entry_points: dict[str, EntryPoint] | None = None

    def entry_points(self) -> dict[str, EntryPoint]:
        if self._entry_points is None:
            # a plug-in never replaces a command of the product
            own = self.own()
            self._entry_points = {ep.name: ep for ep in found() if ep.name not in own}
        return self._entry_points

    def own(self) -> set[str]:
        """The names of the product's own commands (loaded or not)."""
        return set(self.commands)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(self.entry_points()))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        ep = self.entry_points().get(cmd_name)
        if ep is not None:
            cmd = load(ep)
            self.add_command(cmd, cmd_name)  # loaded once
            return cmd
        if cmd_name in KNOWN:
            return missing(cmd_name)
        return None


def load(ep: EntryPoint) -> click.Command:
    """The command an entry point names; a stand-in that says why when it cannot be loaded."""
    try:
        cmd = ep.load()
    except Exception as e:  # noqa: BLE001 - a broken plug-in must not take the whole CLI down
        return broken(ep.name, ep, e)
    if not isinstance(cmd, click.Command):
        return broken(ep.name, ep, TypeError(f"{ep.value} is not a click command"))
    return cmd
