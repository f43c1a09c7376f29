"""Library: the one object the CLI, the web UI and the HTTP API all use."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import NotFound
from .ingest.pipeline import Progress, ingest_files
from .models import IngestReport, Paper
from .store.sqlite import SQLiteStore

DEFAULT_DB = "paperatlas.db"


def default_db_path() -> str:
    return os.environ.get("PAPERATLAS_DB") or DEFAULT_DB


class Library:
    """A paper library in one SQLite file.

    Example:
        >>> lib = Library(":memory:")
        >>> lib.ingest(["examples/neurips-2026.txt"]).summary()
        '10 new, 0 updated, 0 unchanged'
        >>> [p.venue for p in lib.papers(limit=1)]
        ['NeurIPS']
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = str(path) if path is not None else default_db_path()
        self.store = SQLiteStore(self.path)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingest ------------------------------------------------------------------------
    def ingest(
        self,
        paths: Sequence[str | Path] | str | Path,
        format: str | None = None,
        venue: str | None = None,
        year: int | None = None,
        encoding: str = "utf-8",
        skip_bad: bool = False,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Ingest paper-list files (format auto-detected unless `format` is given).

        Args:
            paths: one path or several; gzipped files are read transparently.
            format: force a format (see `paperatlas.ingest.formats.FORMAT_NAMES`).
            venue: set every paper's venue (overrides the file's).
            year: set every paper's year (overrides the file's).
            encoding: text encoding of the files.
            skip_bad: store the good records and list the bad ones instead of failing.
            progress: callback `(done, total)` called after each written batch.

        Returns:
            IngestReport with new / updated / unchanged / merged counts and bad records.

        Raises:
            IngestError: a file or record is bad (and `skip_bad` is False); nothing was stored.
        """
        if isinstance(paths, (str, Path)):
            paths = [paths]
        return ingest_files(self.store, paths, format, venue, year, encoding, skip_bad, progress)

    # -- reading -----------------------------------------------------------------------
    def get(self, paper_id: str) -> Paper:
        """The paper with this id (or an alias of a merged duplicate). Raises NotFound."""
        p = self.store.get_paper(paper_id)
        if p is None:
            raise NotFound(f"no paper with id {paper_id!r}", "`paperatlas list` shows the ids in this library")
        return p

    def get_many(self, ids: Sequence[str]) -> list[Paper]:
        """Papers in the order of `ids`, skipping unknown ids."""
        found = self.store.get_papers(ids)
        return [found[i] for i in ids if i in found]

    def papers(
        self,
        venue: str | None = None,
        year: int | None = None,
        status: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: str = "rowid",
        descending: bool = False,
    ) -> list[Paper]:
        """Papers matching the filters, in `order` (rowid = ingest order)."""
        return self.store.list_papers(venue, year, status, limit, offset, order, descending)

    def count(self, venue: str | None = None, year: int | None = None, status: str | None = None) -> int:
        return self.store.count_papers(venue, year, status)

    def stats(self) -> dict[str, Any]:
        """Counts per venue / year / status, vector models and the file size."""
        venues: dict[str, dict[str, Any]] = {}
        for venue, year, status, n in self.store.facet_counts():
            key = f"{venue or '(no venue)'} {year or ''}".strip()
            v = venues.setdefault(key, {"venue": venue, "year": year, "papers": 0, "status": {}})
            v["papers"] += n
            if status:
                v["status"][status] = n
        return {
            "path": self.path,
            "papers": self.count(),
            "venues": list(venues.values()),
            "vectors": self.store.vector_models(),
            "schema_version": self.store.schema_version,
            "file_bytes": self.store.file_size(),
        }
