"""Personal recommendations: recommenders behind one registry, the editable profile, triage,
reading groups and digests. `Recommend` (capability.py) is what `lib.recommend` holds."""

from __future__ import annotations

from . import default as _default  # noqa: F401  (registers "default")
from . import svm as _svm  # noqa: F401  (registers "svm")
from .base import DEFAULT_RECOMMENDER, RECOMMENDERS, Corpus, Recommender, Scored, Signals
from .capability import Recommend

__all__ = ["RECOMMENDERS", "DEFAULT_RECOMMENDER", "Corpus", "Recommend", "Recommender", "Scored", "Signals"]
