"""The import-layer contract: imports run one way, surfaces -> Library -> capabilities -> core/store/models.

Read from the code's own `import` statements (those under `if TYPE_CHECKING:` count too: a type is a
dependency). docs/architecture.md draws the same picture; a new capability goes in CAPABILITIES.
"""

from __future__ import annotations

import ast
import re
import functools
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "paperatlas"

# the rooms that hold one capability object each (`lib.<room>`), in the order they may use each other:
# a capability may import the ones before it (recommend reads the readers' likes and shows the llm's TL;DRs;
# the virtual-site source reads programme feeds)
CAPABILITIES = [
    "readers",
    "authors",
    "multilingual",
    "llm",
    "recommend",
    "topics",
    "programme",
    "sources",
    "citations",
    "report",
    "fulltext",
    "translate",
    "own_papers",
]
# the surfaces: what people and programs talk to; they call the Library and its capability objects
SURFACE_ROOMS = {"web", "mcp", "cli", "__main__"}
# the laboratory (bench, eval) is a package of its own beside the product (lab/), which it imports;
# the product never imports it (its commands come in through entry points)
LAB = "paperatlas_lab"


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py")) if "static" not in p.parts}


def _type_only(tree: ast.Module) -> set[ast.AST]:
    """The import statements under `if TYPE_CHECKING:` (types only, nothing runs)."""
    out: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(n for stmt in node.body for n in ast.walk(stmt))
    return out


def imports_of(name: str, path: Path, types: bool = True) -> set[str]:
    """The paperatlas modules `name` imports (absolute names), wherever in the file; with
    `types=False`, not those imported for type hints only."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    skip = set() if types else _type_only(tree)
    known = modules()
    out: set[str] = set()
    for node in ast.walk(tree):
        if node in skip:
            continue
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("paperatlas"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if not mod.startswith("paperatlas") or [a.name for a in node.names] == ["__version__"]:
                continue  # the version string is no dependency on what the package face imports
            subs = {f"{mod}.{a.name}" for a in node.names}  # `from . import api` names a module
            out.update(subs & known.keys())
            if not subs <= known.keys():
                out.add(mod)
    return {m for m in out if m in known and m != name}


def room(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "paperatlas"


def layer(name: str) -> str:
    """surface, library, capability or base (everything the capabilities stand on)."""
    r = room(name)
    if r in SURFACE_ROOMS:
        return "surface"
    if r == "library" or name == "paperatlas":
        return "library"
    if r in CAPABILITIES:
        return "capability"
    return "base"


ORDER = {"base": 0, "capability": 1, "library": 2, "surface": 3}
# Known arrows against the grain, each with its way out; the list may only shrink.
# (none today: the HTTP client that the fetchers and the Zotero reader share is a base module, http_client.py)
EXCEPTIONS: set[tuple[str, str]] = set()


@functools.cache
def edges(types: bool = True) -> list[tuple[str, str]]:
    return [(name, dep) for name, path in modules().items() for dep in sorted(imports_of(name, path, types))]


def test_the_contract_reads_real_imports() -> None:
    """The reader of imports finds the arrows it must judge (a contract over no arrows passes anything)."""
    found = set(edges())
    assert ("paperatlas.library", "paperatlas.recommend") in found
    assert ("paperatlas.recommend.capability", "paperatlas.core") in found
    assert any(a.startswith("paperatlas.web") and b == "paperatlas.library" for a, b in found)
    assert layer("paperatlas.web.views") == "surface" and layer("paperatlas.recommend.capability") == "capability"
    assert layer("paperatlas.store.sqlite") == "base" and layer("paperatlas.library") == "library"


def test_nothing_imports_upward() -> None:
    """A module imports only its own layer or the layers below it."""
    up = [
        f"{a} ({layer(a)}) imports {b} ({layer(b)})"
        for a, b in edges()
        if ORDER[layer(b)] > ORDER[layer(a)] and a != "paperatlas" and (a, b) not in EXCEPTIONS
    ]
    assert not up, "\n".join(up)


def test_capabilities_use_only_earlier_capabilities() -> None:
    """Capabilities stand side by side; one may use another only in CAPABILITIES order (no circles)."""
    bad = []
    for a, b in edges():
        ra, rb = room(a), room(b)
        if layer(a) == layer(b) == "capability" and ra != rb and CAPABILITIES.index(rb) > CAPABILITIES.index(ra):
            bad.append(f"{a} imports {b}")
    assert not bad, "\n".join(bad)


def test_no_circles_between_rooms() -> None:
    """Below the surfaces, no two rooms import each other (at run time: a type named for a hint is no
    circle). Surfaces may use each other: the command line starts the web server."""
    graph: dict[str, set[str]] = {}
    for a, b in edges(types=False):
        if room(a) != room(b) and layer(a) != "surface":
            graph.setdefault(room(a), set()).add(room(b))
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(r: str) -> None:
        seen[r] = 1
        stack.append(r)
        for nxt in sorted(graph.get(r, ())):
            if seen.get(nxt) == 1:
                pytest.fail("rooms import each other in a circle: " + " -> ".join([*stack[stack.index(nxt) :], nxt]))
            if nxt not in seen:
                visit(nxt)
        stack.pop()
        seen[r] = 2

    for r in sorted(graph):
        if r not in seen:
            visit(r)


def test_the_exceptions_are_still_needed() -> None:
    """An exception whose arrow is gone is removed from the list (so the list only shrinks)."""
    assert EXCEPTIONS <= set(edges()), EXCEPTIONS - set(edges())


def test_library_has_no_base_class_and_no_mixins() -> None:
    tree = ast.parse((PKG / "library.py").read_text(encoding="utf-8"))
    lib = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Library")
    assert not lib.bases
    assert not list(PKG.rglob("mixin.py"))


def test_surfaces_never_reach_the_store() -> None:
    """The surfaces people use call the Library and its capability objects: a rule kept in the store's
    callers would live once per surface. (The lab, outside this package, may time or read the store itself.)"""
    found = [
        f"{path.relative_to(PKG.parent)}:{i}: {line.strip()}"
        for name, path in modules().items()
        if room(name) in {"web", "mcp", "cli", "__main__"}
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\.store\b", line) and not line.lstrip().startswith(("from ", "import "))
    ]
    assert not found, "\n".join(found)


def test_comments_say_why_not_which_issue() -> None:
    """Code says why; the tracker says which issue asked (its numbers mean nothing to the next reader)."""
    found = [
        f"{path.relative_to(PKG.parent)}:{i}"
        for path in modules().values()
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bissues? #?\d+", line, re.IGNORECASE)
    ]
    assert not found, found


def lab_imports(path: Path, root: Path = PKG.parent) -> list[str]:
    """Where `path` imports the lab: an import statement (types included) or a module named to
    importlib.import_module / __import__."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] in ("import_module", "__import__"):
            names = [a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        found += [f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names if n.split(".")[0] == LAB]
    return found


def test_the_product_never_imports_the_lab() -> None:
    """A user's install holds the product only: nothing under paperatlas/ imports paperatlas_lab (the
    `bench` and `eval` commands arrive through the `paperatlas.commands` entry points), and the lab's
    rooms are not in the product's package."""
    found = [hit for path in modules().values() for hit in lab_imports(path)]
    assert not found, "the product imports the lab:\n" + "\n".join(found)
    # (a checkout from before the move may keep their __pycache__ folders: only sources count)
    assert not [r for r in ("bench", "eval") if list((PKG / r).glob("*.py")) or (PKG / "cli" / f"{r}.py").exists()]
    assert (PKG.parent / "lab" / LAB / "bench" / "quality.py").is_file()  # the lab is where it moved to


def test_the_lab_check_sees_an_import(tmp_path: Path) -> None:
    """The check above reads real import statements, however they are spelled."""
    src = tmp_path / "paperatlas" / "x.py"
    src.parent.mkdir()
    src.write_text(
        "import paperatlas_lab.bench\nfrom paperatlas_lab.eval import beir\nimport importlib\n"
        "importlib.import_module('paperatlas_lab.cli.bench')\nimport paperatlas.library\n",
        encoding="utf-8",
    )
    hits = lab_imports(src, tmp_path)
    assert [h.rsplit(": ", 1)[1] for h in hits] == [
        "paperatlas_lab.bench",
        "paperatlas_lab.eval",
        "paperatlas_lab.cli.bench",
    ]
