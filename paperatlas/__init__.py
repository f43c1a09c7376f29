"""paperatlas: a navigable, personal research atlas of a conference's papers, offline."""

from __future__ import annotations

__version__ = "0.1.0"

from .library import Library  # noqa: E402
from .models import Hit, IngestReport, Paper  # noqa: E402

__all__ = ["Library", "Paper", "Hit", "IngestReport", "__version__"]
