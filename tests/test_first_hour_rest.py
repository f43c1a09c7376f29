"""What a newcomer hit in the first hour, each small: the help that lists every source, the plurals
and readable words of the CLI, the pages at phone size."""

from __future__ import annotations

from click.testing import CliRunner

from paperatlas.cli import cli
from paperatlas.sources.base import SOURCES


def test_fetch_help_lists_every_registered_source() -> None:
    res = CliRunner().invoke(cli, ["fetch", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.output.split())
    for name in SOURCES.names():
        assert f"{name} " in text.split("Example:")[0], name
    assert "virtual CONF YEAR" in text and "miniconf CONF YEAR" in text
