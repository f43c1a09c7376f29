"""The README's MCP config snippet is valid JSON and its command line is one `paperatlas` accepts."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from conftest import ROOT
from paperatlas.cli import cli


def test_readme_mcp_snippet_is_a_working_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Use it from an AI assistant (MCP)") :]
    config = json.loads(re.search(r"```json\n(.*?)```", section, flags=re.S).group(1))  # type: ignore[union-attr]
    server = config["mcpServers"]["paperatlas"]
    assert server["command"].endswith("/paperatlas")
    args = server["args"]
    assert args[0] == "--db" and "mcp" in args
    # the same flags, on a library that does not exist: refused by the library check, not by the parser
    args[1] = str(tmp_path / "missing.db")
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 1 and "no library at" in r.stderr
    for flag in ("--http", "--read-only", "--host"):
        assert flag in section and flag in CliRunner().invoke(cli, ["mcp", "--help"]).output


def test_other_commands_do_not_import_the_sdk() -> None:
    """The MCP SDK (pydantic, starlette, cryptography...) loads only for `paperatlas mcp`."""
    import os
    import subprocess
    import sys

    code = "import sys, paperatlas.cli; print(sorted(m for m in ('mcp', 'pydantic') if m in sys.modules))"
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stdout + r.stderr
