"""The CLI is a thin layer over Library: commands, JSON output, exit codes, help text."""

from __future__ import annotations

import json
from pathlib import Path

import click
from click.testing import CliRunner

from conftest import DATA, EXAMPLES
from paperatlas.cli import EXIT_BAD_INPUT, EXIT_EMPTY, cli


def run(runner: CliRunner, db: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(cli, ["--db", str(db), *args], catch_exceptions=False)


def test_ingest_list_show_export(runner: CliRunner, db_path: Path) -> None:
    r = run(runner, db_path, "ingest", "--no-embed", *map(str, EXAMPLES))
    assert r.exit_code == 0, r.output
    assert "29 new, 0 updated, 0 unchanged" in r.output
    r = run(runner, db_path, "ingest", "--no-embed", *map(str, EXAMPLES))
    assert "0 new, 0 updated, 29 unchanged" in r.output
    r = run(runner, db_path, "list", "--venue", "NeurIPS", "--json", "--limit", "0")
    rows = json.loads(r.output)
    assert len(rows) == 10 and all(x["venue"] == "NeurIPS" and x["year"] == 2026 for x in rows)
    r = run(runner, db_path, "show", rows[0]["id"], "--json")
    assert json.loads(r.output)["abstract"] == rows[0]["abstract"]
    r = run(runner, db_path, "stats", "--json")
    assert json.loads(r.output)["papers"] == 29
    for fmt in ("jsonl", "csv", "bibtex", "markdown"):
        r = run(runner, db_path, "export", "--format", fmt, "--venue", "ICLR")
        assert r.exit_code == 0 and len(r.output) > 1000, fmt
    assert run(runner, db_path, "export", "--format", "bibtex").output.count("@inproceedings{") == 29


def test_env_db(runner: CliRunner, db_path: Path) -> None:
    r = runner.invoke(cli, ["ingest", "--no-embed", str(DATA / "papers.csv")], env={"PAPERATLAS_DB": str(db_path)})
    assert r.exit_code == 0, r.output
    assert db_path.exists()


def test_exit_codes(runner: CliRunner, db_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"title": "a", "abstract": "b"}\n{broken\n')
    r = run(runner, db_path, "ingest", "--no-embed", str(bad))
    assert r.exit_code == EXIT_BAD_INPUT, r.output
    assert "bad.jsonl, line 2" in r.output and "Fix:" in r.output
    r = run(runner, db_path, "ingest", "--no-embed", "--skip-bad", str(bad))
    assert r.exit_code == 0 and "1 new" in r.output
    r = run(runner, db_path, "show", "nope")
    assert r.exit_code == 1 and "no paper with id 'nope'" in r.output
    r = run(runner, db_path, "list", "--venue", "Nowhere")
    assert r.exit_code == EXIT_EMPTY


def test_every_command_has_help_and_example() -> None:
    def walk(group: click.Group, prefix: str = ""):  # type: ignore[no-untyped-def]
        ctx = click.Context(group)
        for name in group.list_commands(ctx):  # the lab's `bench` and `eval` load when asked for
            cmd = group.get_command(ctx, name)
            assert cmd is not None, name
            yield prefix + name, cmd
            if isinstance(cmd, click.Group):
                yield from walk(cmd, prefix + name + " ")

    names = []
    for name, cmd in walk(cli):
        names.append(name)
        assert cmd.help and cmd.help.strip(), f"{name} has no help"
        if not isinstance(cmd, click.Group):
            assert "Example:" in cmd.help, f"{name} has no Example: block"
    assert {"search", "bench quality", "eval beir"} <= set(names)  # the lab's commands are walked too
