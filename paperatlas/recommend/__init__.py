"""Personal recommendations (issue 6): recommenders behind one registry, the editable
profile, triage, reading groups and digests. Library methods live in api.py."""

from __future__ import annotations

from . import default as _default  # noqa: F401  (registers "default")
from . import svm as _svm  # noqa: F401  (registers "svm")
from .base import DEFAULT_RECOMMENDER, RECOMMENDERS, Corpus, Recommender, Scored, Signals

__all__ = ["RECOMMENDERS", "DEFAULT_RECOMMENDER", "Corpus", "Recommender", "Scored", "Signals"]
