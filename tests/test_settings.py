"""Settings in one table (paperatlas/settings.py): every environment variable paperatlas reads is
in it, read only there, documented by the generated docs/settings.md, and a bad value is an error
that names the variable and the fix."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from paperatlas import settings
from paperatlas.errors import PaperatlasError

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "paperatlas"
LAB = ROOT / "lab" / "paperatlas_lab"  # the laboratory's settings live in the same table


def _sources() -> dict[Path, str]:
    return {p: p.read_text(encoding="utf-8") for pkg in (PACKAGE, LAB) for p in sorted(pkg.rglob("*.py"))}


def test_every_variable_named_in_the_code_is_in_the_table() -> None:
    named = {m for text in _sources().values() for m in re.findall(r"\bPAPERATLAS_[A-Z0-9_]*[A-Z0-9]\b", text)}
    # a prefix spelled in a comment ("PAPERATLAS_MAX_*") is not a variable
    missing = sorted(n for n in named if n not in settings.BY_ENV and not n.endswith("_MAX"))
    assert not missing, f"add these to SETTINGS in paperatlas/settings.py: {missing}"
    assert len(named) >= 30  # the scan finds what it must judge


def test_no_module_but_settings_reads_the_environment() -> None:
    """os.environ and os.getenv appear in settings.py only (the table is the one place)."""
    found = []
    for path, text in _sources().items():
        if path.name == "settings.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv"):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "os":
                if any(a.name in ("environ", "getenv") for a in node.names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not found, "read settings through paperatlas.settings: " + ", ".join(found)


def test_the_docs_table_is_generated_from_the_table() -> None:
    docs = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert docs == settings.markdown(), "docs/settings.md is stale: run `make settings-docs`"
    for s in settings.SETTINGS:
        assert f"`{s.env}`" in docs and s.help, s.name


def test_every_click_envvar_comes_from_the_table() -> None:
    from paperatlas.cli import cli

    envvars = []

    def walk(cmd: click.Command) -> None:
        envvars.extend(p.envvar for p in cmd.params if getattr(p, "envvar", None))
        if isinstance(cmd, click.Group):  # through get_command: the lab's groups load when asked for
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                assert sub is not None, name
                walk(sub)

    walk(cli)
    assert "PAPERATLAS_DB" in envvars and "PAPERATLAS_READER" in envvars
    assert not [e for e in envvars if e not in settings.BY_ENV]


def test_values_are_typed_and_a_bad_value_names_the_variable_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    assert settings.get("ingest_batch") == 1000 or "PAPERATLAS_INGEST_BATCH" in os.environ
    monkeypatch.setenv("PAPERATLAS_INGEST_BATCH", "2_000")
    assert settings.get("ingest_batch") == 2000
    monkeypatch.setenv("PAPERATLAS_QUERY_INT8", "0")
    assert settings.get("query_int8") is False
    monkeypatch.setenv("PAPERATLAS_QUERY_INT8", "")
    assert settings.get("query_int8") is True  # empty: the default
    monkeypatch.setenv("PAPERATLAS_INGEST_BATCH", "lots")
    with pytest.raises(PaperatlasError) as e:
        settings.get("ingest_batch")
    assert "$PAPERATLAS_INGEST_BATCH='lots'" in e.value.message and "PAPERATLAS_INGEST_BATCH" in e.value.fix
    monkeypatch.setenv("PAPERATLAS_FETCH_MAX_PAGES", "0")
    with pytest.raises(PaperatlasError, match="at least 1"):
        settings.get("fetch_max_pages")
    monkeypatch.setenv("PAPERATLAS_SERVE_OWNER", "maybe")
    with pytest.raises(PaperatlasError, match="1 or 0"):
        settings.get("serve_owner")
    with pytest.raises(KeyError, match="no setting"):
        settings.get("nonsense")


def test_a_bad_value_stops_a_command_with_its_fix_and_no_traceback(tmp_path: Path) -> None:
    lst = tmp_path / "list.jsonl"
    lst.write_text('{"id": "x1", "title": "A paper", "abstract": "Words."}\n', encoding="utf-8")
    env = {**os.environ, "PAPERATLAS_INGEST_BATCH": "ten"}
    r = subprocess.run(
        [sys.executable, "-m", "paperatlas", "--db", str(tmp_path / "lib.db"), "ingest", "--no-embed", str(lst)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 1, r.stderr
    assert "PAPERATLAS_INGEST_BATCH" in r.stderr and "Traceback" not in r.stderr


def test_put_hands_a_worker_its_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAPERATLAS_SERVE_READ_ONLY", raising=False)
    settings.put("serve_read_only", True)
    try:
        assert settings.raw("serve_read_only") == "1" and settings.get("serve_read_only") is True
        with settings.temporarily("serve_read_only", False):
            assert settings.get("serve_read_only") is False
        assert settings.get("serve_read_only") is True
        assert settings.environment(serve_read_only=None).get("PAPERATLAS_SERVE_READ_ONLY") is None
    finally:
        settings.put("serve_read_only", None)
    assert settings.raw("serve_read_only") == ""
