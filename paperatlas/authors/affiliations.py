"""The institutions an author gives on their papers (the `affiliations` field, docs/fields.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..models import Paper
from .names import fold


def author_institutions(papers: Iterable[Paper], names: Iterable[str]) -> list[dict[str, Any]]:
    """The institutions an author gives on their papers (any of the spellings `names`), with how many
    papers give each, most first: what their page shows."""
    wanted = {fold(n) for n in names}
    counts: dict[str, list[Any]] = {}
    for p in papers:
        seen: set[str] = set()
        for a in p.extra.get("affiliations") or []:
            if not isinstance(a, dict) or fold(str(a.get("author") or "")) not in wanted:
                continue
            for name in a.get("institutions") or [a.get("institution")]:
                name = " ".join(str(name or "").split())
                if name and name not in seen:
                    seen.add(name)
                    row = counts.setdefault(name, [0, ""])
                    row[0] += 1
                    if name == a.get("institution") and a.get("country"):
                        row[1] = a["country"]
    return [
        {"name": n, "country": c, "papers": k}
        for n, (k, c) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0]))
    ]
