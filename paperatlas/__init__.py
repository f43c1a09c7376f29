"""paperatlas: a navigable, personal research atlas of a conference's papers, offline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .library import Library
    from .models import Hit, IngestReport, Paper

__all__ = ["Library", "Paper", "Hit", "IngestReport", "__version__"]

# Loaded on first use (PEP 562): importing one submodule (the store, the settings, the command's
# `--version`) must not import every capability with it.
_LAZY = {"Library": "library", "Paper": "models", "Hit": "models", "IngestReport": "models"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
