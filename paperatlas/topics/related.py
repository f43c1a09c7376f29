"""Why two papers are related: the key phrases they share, rarest and most specific first."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..models import Hit, Paper
from .phrases import candidate_keys, is_label_worthy, pick_diverse, surface_forms


def _score(key: str, df: Mapping[str, int] | None, n_docs: int) -> float:
    words = key.count(" ") + 1
    if df is not None and n_docs > 0:
        # a shared phrase missing from the table is rare (the table keeps df >= 3)
        d = df.get(key, 2)
        if d > 0.2 * n_docs:  # "language models" in an NLP library says nothing
            return 0.0
        idf = math.log((1 + n_docs) / (1 + d)) + 1
    else:
        idf = 1.0
    return idf * (1.0 + 0.6 * (words - 1))


def shared_phrases(
    paper_a: Paper, paper_b: Paper, df: Mapping[str, int] | None = None, n_docs: int = 0, limit: int = 3
) -> list[str]:
    """Readable phrases that both papers use, the most telling first."""
    ka, kb = candidate_keys(paper_a.text), candidate_keys(paper_b.text)
    shared = [k for k in ka if k in kb and is_label_worthy(k)]
    ranked = sorted(((k, _score(k, df, n_docs)) for k in shared), key=lambda kv: (-kv[1], kv[0]))
    ranked = [(k, s) for k, s in ranked if s > 0]
    counts = {k: float(min(ka[k], kb[k])) for k, _ in ranked}
    keys = pick_diverse(ranked, limit, counts)
    forms = surface_forms([paper_a.text, paper_b.text], set(keys))
    return [forms.get(k, k) for k in keys]


def related_reason(paper_a: Paper, paper_b: Paper, df: Mapping[str, int] | None = None, n_docs: int = 0) -> str:
    """A short reason why paper_b is related to paper_a, e.g. "shares: diffusion models, protein design".

    Args:
        paper_a, paper_b: the two papers.
        df: document frequency of phrase keys in the library (from the last topic build);
            without it, longer phrases are preferred over single words.
        n_docs: the number of documents `df` was counted over.

    Returns:
        "shares: ..." with up to three phrases, or "" when they share none.

    Example:
        >>> a = Paper("a", "Diffusion models for protein design", "We use diffusion models.")
        >>> b = Paper("b", "Protein design with score-based diffusion models", "")
        >>> related_reason(a, b)
        'shares: diffusion models, protein design'
    """
    phrases = shared_phrases(paper_a, paper_b, df, n_docs, limit=2)
    return f"shares: {', '.join(phrases)}" if phrases else ""


def add_reasons(store: Any, paper: Paper, hits: Sequence[Hit]) -> list[Hit]:
    """Fill each hit's `reason` (shared phrases, else the shared topic); uses the phrase
    statistics and topics of the last `paperatlas topics build` when there is one."""
    hits = list(hits)
    if not hits:
        return hits
    meta = store.topics.topics_meta() if hasattr(store, "topics_meta") else None
    df: dict[str, int] | None = None
    n_docs = 0
    topics: dict[str, dict[str, Any]] = {}
    labels: dict[int, str] = {}
    if meta:
        df = store.topics.phrase_dfs(list(candidate_keys(paper.text)))
        n_docs = int(meta.get("papers", 0))
        topics = store.topics.paper_topics([paper.id] + [h.paper.id for h in hits])
        labels = {t["topic"]: t["label"] for t in store.topics.list_topics("fine")}
    mine = topics.get(paper.id)
    for h in hits:
        if h.reason:
            continue
        reason = related_reason(paper, h.paper, df, n_docs)
        other = topics.get(h.paper.id)
        if not reason and mine and other and mine["fine"] == other["fine"] and mine["fine"] in labels:
            reason = f"same topic: {labels[mine['fine']]}"
        h.reason = reason or "close in meaning"
    return hits
