"""The web UI and HTTP API: `create_app(library)` (see app.py); served by `paperatlas serve`."""

from __future__ import annotations

from .app import create_app

__all__ = ["create_app"]
