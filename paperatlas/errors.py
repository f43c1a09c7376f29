"""Errors that say what went wrong, where, and how to fix it."""

from __future__ import annotations

from .models import BadRecord


class PaperatlasError(Exception):
    """Base error; `fix` is shown after the message by the CLI and the API."""

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message}\nFix: {self.fix}" if self.fix else self.message


class IngestError(PaperatlasError):
    """A file could not be ingested; nothing from it was stored."""

    def __init__(self, bad: list[BadRecord], message: str = "", fix: str = "") -> None:
        self.bad = bad
        first = bad[0] if bad else None
        if not message:
            message = str(first) if first else "ingest failed"
            if len(bad) > 1:
                message += f" (and {len(bad) - 1} more bad records)"
        if not fix and first is not None and not first.fix:
            fix = "correct the record, or pass --skip-bad to ingest the good records and list the bad ones"
        super().__init__(message, fix)


class NotFound(PaperatlasError):
    """No such paper, reader, topic..."""


class ModelMismatch(PaperatlasError):
    """Stored vectors were made by another embedding model."""


class StoreUnavailable(PaperatlasError):
    """The library's database server is not answering (it stopped, restarted or cannot be reached);
    the store reconnects by itself once it is back, so trying again later is the fix."""
