"""What a user installs: the `paperatlas` wheel holds the product, the laboratory (`bench`, `eval`) is a
wheel of its own (lab/), and the product's command without the lab says how to get it.

The wheels are built from a copy of the sources (as a clean clone builds them: a stale build/ folder in
the checkout cannot leak old modules in), without build isolation, so offline and in seconds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAB_ROOMS = ("paperatlas/bench/", "paperatlas/eval/", "paperatlas/cli/bench.py", "paperatlas/cli/eval.py")


def build_wheel(src: Path, out: Path) -> Path:
    """The wheel of the project in `src` (pyproject.toml), built into `out`."""
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(out),
            ".",
        ],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    (wheel,) = out.glob("*.whl")
    return wheel


def copy_project(src: Path, dst: Path, package: str, extra: tuple[str, ...] = ()) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(src / package, dst / package, ignore=ignore)
    for name in ("pyproject.toml", *extra):
        shutil.copy2(src / name, dst / name)
    return dst


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("wheels")
    product = copy_project(ROOT, tmp / "src", "paperatlas", ("README.md",))
    lab = copy_project(ROOT / "lab", tmp / "lab-src", "paperatlas_lab")
    return {
        "product": build_wheel(product, tmp / "product"),
        "lab": build_wheel(lab, tmp / "lab"),
    }


def names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as z:
        return z.namelist()


def entry_points(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as z:
        (ep,) = [n for n in z.namelist() if n.endswith(".dist-info/entry_points.txt")]
        return z.read(ep).decode()


def test_the_product_wheel_holds_no_laboratory(wheels: dict[str, Path]) -> None:
    files = names(wheels["product"])
    modules = [n for n in files if n.endswith(".py")]
    assert "paperatlas/library.py" in modules and "paperatlas/cli/plugins.py" in modules
    assert len(modules) > 100  # the whole product is there
    assert not [n for n in files if n.startswith(LAB_ROOMS) or n.startswith("paperatlas_lab")]
    assert "[console_scripts]\npaperatlas = paperatlas.cli:main" in entry_points(wheels["product"])


def test_the_lab_wheel_holds_bench_and_eval(wheels: dict[str, Path]) -> None:
    modules = {n for n in names(wheels["lab"]) if n.endswith(".py")}
    here = {p.relative_to(ROOT / "lab").as_posix() for p in (ROOT / "lab" / "paperatlas_lab").rglob("*.py")}
    assert modules == here  # every module of the lab, nothing else (no copy of the product)
    assert {"paperatlas_lab/bench/quality.py", "paperatlas_lab/eval/beir.py", "paperatlas_lab/cli/bench.py"} <= modules
    ep = entry_points(wheels["lab"])
    assert "[paperatlas.commands]" in ep
    assert "bench = paperatlas_lab.cli.bench:bench" in ep and "eval = paperatlas_lab.cli.eval:eval_" in ep


def _site_without_lab(tmp: Path) -> Path:
    """This environment's site-packages less the lab and the editable paperatlas: a user's install once
    the product wheel is added (links, so in milliseconds)."""
    import sysconfig

    site = Path(sysconfig.get_paths()["purelib"])
    out = tmp / "site"
    out.mkdir()
    for entry in site.iterdir():
        low = entry.name.lower()
        if "paperatlas" in low:  # the editable installs of the product and the lab, their metadata
            continue
        (out / entry.name).symlink_to(entry)
    return out


@pytest.fixture(scope="module")
def user_install(wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("user")
    target = tmp / "product"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "-q",
            "--target",
            str(target),
            str(wheels["product"]),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    site = _site_without_lab(tmp)
    return {"target": str(target), "site": str(site), "cwd": str(tmp)}


def run_user(install: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`paperatlas ARGS` as a user without the lab runs it: the product from its wheel, no checkout on
    the path (-S: this environment's .pth files, the editable installs among them, are not read)."""
    code = (
        "import site, sys; sys.path[:0] = [sys.argv.pop(1)]; site.addsitedir(sys.argv.pop(1)); "
        "import paperatlas, paperatlas.cli; assert paperatlas.__file__.startswith(sys.path[0]), paperatlas.__file__; "
        "sys.argv[0] = 'paperatlas'; paperatlas.cli.main()"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    return subprocess.run(
        [sys.executable, "-S", "-c", code, install["target"], install["site"], *args],
        cwd=install["cwd"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_without_the_lab_bench_and_eval_say_how_to_get_them(user_install: dict[str, str]) -> None:
    r = run_user(user_install, "--help")
    assert r.returncode == 0, r.stderr
    commands = {line.split()[0] for line in r.stdout.split("Commands:")[1].splitlines() if line.strip()}
    assert "search" in commands and not commands & {"bench", "eval"}  # a user's list holds the product
    for args in (["bench", "quality", "--only", "scifact"], ["eval", "beir", "x"], ["bench"], ["bench", "--help"]):
        r = run_user(user_install, *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert f"`paperatlas {args[0]}`" in r.stderr and "is not installed" in r.stderr, r.stderr
        assert "Fix: from the checkout's root, run `pip install -e lab`" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
    r = run_user(user_install, "no-such-command")
    assert r.returncode == 2 and "No such command" in r.stderr, r.stderr
