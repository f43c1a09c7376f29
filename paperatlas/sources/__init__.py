"""Sources: fetch a venue's papers from the web into the library (`lib.sources`, capability.py).

`SOURCES` maps a name to a Source; `fetch(store, source)` stores what it yields through the ingest
pipeline. Every source shares one HTTP client (http_client.py) with timeouts, retries and manners.
"""

from __future__ import annotations

from . import acl, arxiv, cvf, miniconf, openalex, openreview, paperlists, pmlr, virtual  # noqa: F401  (they register themselves)
from .base import SOURCES, FetchReport, Page, Source, SourceArgsError, create_source, fetch
from .capability import ClientFactory, Sources, UpdateResult
from ..http_client import FetchError, HttpClient

__all__ = [
    "SOURCES",
    "ClientFactory",
    "FetchError",
    "FetchReport",
    "HttpClient",
    "Page",
    "Source",
    "SourceArgsError",
    "Sources",
    "UpdateResult",
    "create_source",
    "fetch",
]
