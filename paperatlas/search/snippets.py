"""Snippets with highlighted matches, as escaped HTML (safe to insert into a page)."""

from __future__ import annotations

import html
import re
from functools import lru_cache

_TOKEN = re.compile(r"[^\W_]+", re.U)


@lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    try:
        import Stemmer

        return Stemmer.Stemmer("english").stemWord
    except ImportError:  # pragma: no cover - PyStemmer is a dependency
        return lambda w: w


def stem(word: str) -> str:
    return _stemmer()(word.lower())


def highlight(text: str, terms: list[str], width: int = 260, whole: bool = False) -> str:
    """Escaped HTML of `text` (a window around the densest match unless `whole`),
    with words whose stem matches a query term's stem wrapped in <mark>."""
    stems = {stem(t) for t in terms if len(t) > 1}
    matches = [m for m in _TOKEN.finditer(text) if stem(m.group()) in stems] if stems else []
    start, end = 0, len(text)
    if not whole and len(text) > width:
        if matches:
            # the window that holds the most matches
            best = max(range(len(matches)),
                       key=lambda i: sum(1 for m in matches[i:] if m.start() - matches[i].start() < width))
            start = max(0, matches[best].start() - 40)
        end = min(len(text), start + width)
        # do not cut words
        if start > 0:
            sp = text.find(" ", start)
            start = sp + 1 if 0 <= sp < start + 30 else start
        if end < len(text):
            sp = text.rfind(" ", start, end)
            end = sp if sp > start else end
    out: list[str] = ["… " if start > 0 else ""]
    pos = start
    for m in matches:
        if m.start() < start or m.end() > end:
            continue
        out.append(html.escape(text[pos : m.start()]))
        out.append("<mark>" + html.escape(m.group()) + "</mark>")
        pos = m.end()
    out.append(html.escape(text[pos:end]))
    if end < len(text):
        out.append(" …")
    return "".join(out)
