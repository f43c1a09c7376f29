"""One write path for papers: files, fetched pages and a programme's papers all go through
`Library.add_papers`, which holds the library's write lock while it plans and writes, and embeds
afterwards as its policy says. Real SQLite files, a real loopback server with recorded responses."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.ingest.formats import Format
from paperatlas.ingest.pipeline import Records
from paperatlas.sources import HttpClient
from paperatlas.store.vector_cache import VectorCache

from conftest import ROOT
from sourceserver import SourceServer

COLT = (Path(__file__).parent / "data" / "sources" / "colt2024.json").read_bytes()


@pytest.fixture
def server() -> Iterator[SourceServer]:
    s = SourceServer(routes={"/colt/colt2024.json": COLT}).start()
    yield s
    s.stop()


def _rows(n: int) -> list[tuple[str, dict]]:
    return [
        (f"row {i}", {"id": f"w-{i}", "title": f"Write path paper {i}", "abstract": f"Abstract {i}."}) for i in range(n)
    ]


def test_a_fetch_waits_for_the_write_lock_and_says_so(server: SourceServer, tmp_path: Path) -> None:
    """Before, a fetched page was written with no lock (and retried on a unique-constraint error
    recognised by the exception's class name); now it waits for another writer, told why."""
    db = str(tmp_path / "lib.db")
    heard: list[str] = []
    other, lib = Library(db, embedder="hashing"), Library(db, embedder="hashing", on_wait=heard.append)
    done = threading.Event()
    result: dict = {}

    def fetch() -> None:
        client = HttpClient(read_timeout=5.0)
        result["report"] = lib.sources.fetch("paperlists", ["colt", "2024"], base_url=server.url, client=client)
        done.set()

    t = threading.Thread(target=fetch)
    try:
        with other.store.write_lock():
            t.start()
            deadline = time.monotonic() + 30
            while not heard and time.monotonic() < deadline:
                time.sleep(0.02)
            assert heard and "waiting for it to finish" in heard[0], heard
            assert not done.is_set() and other.count() == 0
        assert done.wait(60)
        assert result["report"].new == lib.count() > 0
    finally:
        t.join(60)
        other.close()
        lib.close()


def test_add_papers_takes_records_and_files_and_reports(tmp_path: Path) -> None:
    with Library(str(tmp_path / "lib.db"), embedder="hashing") as lib:
        r = lib.add_papers(Records("page 1", "test", Format.JSON, _rows(5), {"venue": "WP", "year": 2026}))
        assert (r.new, r.unchanged, r.embedded) == (5, 0, 0)
        assert lib.get("w-3").venue == "WP" and lib.get("w-3").source == "test"
        again = lib.add_papers(Records("page 1", "test", Format.JSON, _rows(6), {"venue": "WP", "year": 2026}))
        assert (again.new, again.unchanged) == (1, 5)
        files = lib.add_papers([ROOT / "examples" / "neurips-2026.txt"], embed="after")
        assert files.new == 10 and files.embedded == 16 == lib.embedding_status()["embedded"]


def test_embed_policies(tmp_path: Path) -> None:
    cache = VectorCache(tmp_path / "v.sqlite")
    with Library(str(tmp_path / "lib.db"), embedder="hashing", vector_cache=cache) as lib:
        assert lib.add_papers(Records("p", "t", Format.JSON, _rows(3)), embed="no").embedded == 0
        assert lib.embedding_status()["embedded"] == 0
        assert lib.add_papers(Records("p", "t", Format.JSON, _rows(4)), embed="queue").embedded == 0
        assert lib._queued is not None
        lib._queued.join(60)
        assert lib.embedding_status()["embedded"] == 4
        with pytest.raises(ValueError, match="after, queue or no"):
            lib.embed_after("later")  # type: ignore[arg-type]


def test_a_programme_feed_writes_through_add_papers(tmp_path: Path) -> None:
    feed = Path(__file__).parent / "data" / "programme" / "neurips-2025-orals-posters.json"
    calls: list[str] = []
    with Library(str(tmp_path / "lib.db"), embedder="hashing") as lib:
        real = lib.add_papers

        def spy(papers: object, **kw: object) -> object:
            calls.append(type(papers).__name__)
            return real(papers, **kw)  # type: ignore[arg-type]

        lib.add_papers = spy  # type: ignore[method-assign]
        report = lib.ingest([feed])
        assert calls == ["Records"] and report.new > 0
        assert json.loads(feed.read_text())  # the feed itself is untouched


def test_files_a_capability_reads_itself_go_to_it_through_the_file_reader_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`ingest` names no capability: a capability that claims a file kind (a programme feed, a PDF,
    here a made-up `.colours` file) reads those files itself, after the lists, and a dry run lets it
    say what the file is, without opening a library."""
    import paperatlas.library as library_mod
    from paperatlas.ingest.pipeline import PreviewFile
    from paperatlas.models import IngestReport

    seen: list[list[str]] = []

    class Colours:
        def __init__(self, lib: object) -> None:
            self.lib = lib

        @staticmethod
        def claims_file(path: object, format: object) -> bool:
            return str(path).endswith(".colours")

        @staticmethod
        def preview_file(path: object) -> PreviewFile:
            return PreviewFile(str(path), "colours", "a colour chart")

        def ingest_files(self, paths: list[object], skip_bad: bool = False) -> IngestReport:
            seen.append([Path(str(p)).name for p in paths])
            # the lists of the same run are stored before a claimed file is read
            assert self.lib.count() == 10  # type: ignore[attr-defined]
            r = IngestReport(new=1)
            r.outcomes["colours"] = [{"file": str(p), "state": "read"} for p in paths]
            return r

    monkeypatch.setattr(library_mod, "CAPABILITIES", [*library_mod.CAPABILITIES, ("colours", Colours, ())])
    chart = tmp_path / "a.colours"
    chart.write_text("red\n")
    listing = ROOT / "examples" / "neurips-2026.txt"
    preview = Library.preview([chart, listing])
    assert [(p.format, len(p.papers)) for p in preview] == [("text", 10), ("colours", 0)]
    with Library(str(tmp_path / "lib.db"), embedder="hashing") as lib:
        report = lib.ingest([chart, listing])
    assert seen == [["a.colours"]]
    assert report.new == 11 and report.to_dict()["colours"] == [{"file": str(chart), "state": "read"}]


def test_library_methods_name_no_capability() -> None:
    """The core loops over what capabilities contribute; naming one inside a method would make
    every new capability an edit of `Library` again."""
    import ast

    import paperatlas.library as library_mod

    names = {c.name for c in library_mod.capabilities()}
    tree = ast.parse(Path(library_mod.__file__).read_text())
    lib_cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Library")
    named = sorted(
        f"{fn.name}: self.{node.attr}"
        for fn in lib_cls.body
        if isinstance(fn, ast.FunctionDef)
        for node in ast.walk(fn)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr in names
    )
    assert named == []
