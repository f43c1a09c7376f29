"""A command pays only for what it uses: the capabilities, the command modules and the heavy libraries
load on first use, and the registries that let them (library.CAPABILITIES' hooks, cli.COMMAND_MODULES)
say what the code they name really has."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import click
import pytest

import paperatlas.cli as cli_pkg
from paperatlas import library as library_mod
from paperatlas.library import HOOKS, Capability, Library

from conftest import EXAMPLES, ROOT


def test_each_capability_declares_the_hooks_its_class_has() -> None:
    """The library asks only the capabilities that declare a hook (so the others stay unimported): a
    declaration that lags behind its class would silently drop a filter, a decoration or a stats line."""
    for cap in library_mod.capabilities():
        assert isinstance(cap.cls, str) and cap.hooks is not None, cap.name
        has = {h for h in HOOKS if callable(getattr(cap.load(), h, None))}
        assert cap.hooks == has, (
            f"library.CAPABILITIES: {cap.name} declares {sorted(cap.hooks)}, its class has {sorted(has)}"
        )
    with pytest.raises(ValueError, match="no hook 'colour'"):
        Capability("x", "json:JSONDecoder", (), frozenset()).has("colour")


def test_every_command_is_in_the_lazy_map_and_found() -> None:
    """cli.COMMAND_MODULES names the module of each command: a new command missing there would be
    unreachable, one named for the wrong module would load the wrong file."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "paperatlas" / "cli").glob("*.py")):
        module = __import__(f"paperatlas.cli.{path.stem}", fromlist=["COMMANDS"])
        for command in getattr(module, "COMMANDS", []):
            found[command.name] = path.stem
    assert found == cli_pkg.COMMAND_MODULES
    ctx = click.Context(cli_pkg.cli)
    assert set(found) <= set(cli_pkg.cli.list_commands(ctx))
    assert all(cli_pkg.cli.get_command(ctx, name) is not None for name in found)


def test_capabilities_are_made_on_first_use_once(tmp_path: Path) -> None:
    lib = Library(tmp_path / "lib.db")
    try:
        lib.ingest(EXAMPLES[:1])
        assert lib.search("user simulators", mode="keyword")
        assert "sources" not in lib._made and "topics" not in lib._made  # a search needs neither
        got: list[object] = []
        threads = [threading.Thread(target=lambda: got.append(lib.topics)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len({id(g) for g in got}) == 1 and lib.topics is got[0]  # one object, however many threads ask
        assert any(v is lib.readers for v in vars(lib.topics).values())  # handed the library's own readers
        assert [type(c).__name__ for c in lib.capabilities] == [c.load().__name__ for c in library_mod.capabilities()]
    finally:
        lib.close()


CHILD = r"""
import json, sys
from paperatlas.cli import cli
try:
    cli.main(args=sys.argv[1:], prog_name="paperatlas", standalone_mode=False)
finally:
    sys.stdout.flush()
    print("\nMODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr)
"""

# what a keyword search must not load: other commands' rooms, the web and MCP surfaces, the fetchers,
# PostgreSQL's driver, and bm25s (with scipy) for a list of stop words
NOT_FOR_SEARCH = (
    "paperatlas.sources",
    "paperatlas.web",
    "paperatlas.mcp",
    "paperatlas.topics",
    "paperatlas.translate",
    "paperatlas.cli.sources",
    "paperatlas.cli.web",
    "bm25s",
    "scipy",
    "psycopg",
    "rich.progress",
)


def test_a_keyword_search_loads_only_what_it_uses(tmp_path: Path) -> None:
    db = tmp_path / "lib.db"
    with Library(db) as lib:
        lib.ingest(EXAMPLES)
        lib.search("warm the index", mode="keyword")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "--db", str(db), "search", "--mode", "keyword", "user simulators", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["hits"]
    loaded = set(json.loads(out.stderr.rsplit("MODULES ", 1)[1]))
    assert "paperatlas.search.bm25" in loaded  # it did search
    assert not [m for m in loaded if m.startswith(NOT_FOR_SEARCH)], sorted(
        m for m in loaded if m.startswith(NOT_FOR_SEARCH)
    )


def test_the_stop_words_are_bm25s_own() -> None:
    from bm25s.stopwords import STOPWORDS_EN

    from paperatlas.search.bm25 import STOPWORDS_EN as ours

    assert list(ours) == list(STOPWORDS_EN)
