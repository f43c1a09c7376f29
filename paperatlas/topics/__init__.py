"""Topics and the paper map: clusters at two levels with c-TF-IDF labels, a 2-D layout,
related-paper reasons, and a self-contained interactive HTML map. `Topics` (capability.py) is what
`lib.topics` holds."""

from __future__ import annotations

from .capability import Topics
from .pipeline import LEVELS, Topic, TopicModel, TopicPipeline
from .related import related_reason

__all__ = ["LEVELS", "Topic", "TopicModel", "TopicPipeline", "Topics", "related_reason", "render_map_html"]


def __getattr__(name: str):  # the map module pulls in the static assets only when asked
    if name == "render_map_html":
        from . import map as _map

        return getattr(_map, name)
    raise AttributeError(name)
