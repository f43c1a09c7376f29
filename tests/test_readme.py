"""The README path works as written: after what `make demo` does, its CLI examples run in the project
folder with the plain default library, every paper id it names exists, and the Makefile matches."""

from __future__ import annotations

import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import ROOT
from paperatlas.cli import cli

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(title)
    nxt = README.find("\n## ", start + len(title))
    return README[start : nxt if nxt != -1 else len(README)]


def _commands() -> list[str]:
    """`paperatlas ...` lines of the sh blocks in "The CLI" (comments dropped, `&&` split)."""
    cmds: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", _section("## The CLI"), flags=re.S):
        for line in block.splitlines():
            line = re.split(r"\s{2,}#", line)[0].strip()
            cmds += [c.strip() for c in line.split("&&") if c.strip()]
    return cmds


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder after the demo's steps (Makefile `demo`, minus the server)."""
    folder = tmp_path_factory.mktemp("clone")
    shutil.copytree(ROOT / "examples", folder / "examples")
    steps = [
        line.strip() for line in (ROOT / "Makefile").read_text().split("\ndemo:")[1].split("\n\n")[0].splitlines()[1:]
    ]
    assert any(" ingest examples/*.txt" in s for s in steps) and any(" topics build" in s for s in steps)
    return folder


def test_readme_cli_examples_work_as_written(demo_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(demo_folder)
    monkeypatch.delenv("PAPERATLAS_DB", raising=False)
    monkeypatch.setenv("PAPERATLAS_EMBEDDER", "hashing")  # the model is tested elsewhere; ids and paths here
    runner = CliRunner()
    # what `make demo` runs, with the Makefile's default DB: the CLI's own default library
    make = (ROOT / "Makefile").read_text()
    assert re.search(r"^DB \?= paperatlas\.db$", make, flags=re.M)
    for args in (
        ["ingest", *sorted(str(p.relative_to(demo_folder)) for p in (demo_folder / "examples").glob("*.txt"))],
        ["topics", "build"],
    ):
        r = runner.invoke(cli, ["--db", "paperatlas.db", *args])
        assert r.exit_code == 0, r.output
    cmds = _commands()
    assert len(cmds) >= 20
    ran = 0
    for cmd in cmds:
        argv = shlex.split(cmd)
        assert argv[0] == "paperatlas", cmd
        if "examples/*.txt" in argv:
            i = argv.index("examples/*.txt")
            argv[i : i + 1] = sorted(str(p.relative_to(demo_folder)) for p in (demo_folder / "examples").glob("*.txt"))
        r = runner.invoke(cli, argv[1:])
        assert r.exit_code == 0, f"{cmd}\n{r.output}"
        ran += 1
    assert ran == len(cmds)
    # the first search finds the demo paper the README's ids point at
    r = runner.invoke(cli, ["search", "controllable user simulators", "--json"])
    assert '"id": "h4185992fcd6e189"' in r.stdout


def test_every_paper_id_in_the_readme_is_in_the_demo(demo_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from paperatlas import Library

    ids = set(re.findall(r"\b(?:h[0-9a-f]{15}|[a-z]+20\d\d/[\w-]+)\b", README))
    assert ids
    with Library(":memory:", embedder="hashing") as lib:
        lib.ingest(sorted((ROOT / "examples").glob("*.txt")))
        missing = [i for i in ids if lib.store.get_paper(i) is None]
    assert not missing, f"README names ids the demo lacks: {missing}"


def test_readme_documents_port_db_and_the_one_step() -> None:
    quick = _section("## Quick start")
    assert "make demo PORT=" in quick and "DB=" in quick and ". .venv/bin/activate" in quick
    assert "## What next" in README
    nxt = _section("## What next")
    assert all(w in nxt for w in ("Your own list", "Your own likes", "The map"))


def _two_busy_ports() -> tuple[socket.socket, socket.socket]:
    """Two listening sockets on consecutive ports p and p + 1."""
    for _ in range(50):
        a = socket.socket()
        a.bind(("127.0.0.1", 0))
        a.listen(1)
        b = socket.socket()
        try:
            b.bind(("127.0.0.1", a.getsockname()[1] + 1))
        except OSError:
            a.close()
            b.close()
            continue
        b.listen(1)
        return a, b
    raise RuntimeError("no two consecutive free ports")


def test_a_busy_port_under_make_names_port(tmp_path: Path) -> None:
    """`make demo` passes its hint: a busy port's message names PORT=, not --port; and the port it
    suggests is free (port + 1 is busy here too)."""
    db = tmp_path / "lib.db"
    from paperatlas import Library

    Library(db).close()
    busy, next_busy = _two_busy_ports()
    with busy, next_busy:
        port = busy.getsockname()[1]
        env = {"PAPERATLAS_PORT_HINT": "make demo PORT={port}", "PATH": "/usr/bin:/bin"}
        r = subprocess.run(
            [sys.executable, "-m", "paperatlas", "--db", str(db), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert r.returncode == 1
        m = re.search(r"make demo PORT=(\d+)", r.stderr)
        assert m and "--port" not in r.stderr, r.stderr
        suggested = int(m.group(1))
        assert suggested not in (port, port + 1)
        with socket.socket() as s:
            s.bind(("127.0.0.1", suggested))  # free, as the hint says
        r = subprocess.run(
            [sys.executable, "-m", "paperatlas", "--db", str(db), "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin"},
            timeout=120,
        )
        m = re.search(r"--port (\d+)", r.stderr)
        assert r.returncode == 1 and m and int(m.group(1)) not in (port, port + 1), r.stderr
    make = (ROOT / "Makefile").read_text()
    assert "PAPERATLAS_PORT_HINT='make demo PORT={port}'" in make
