"""Snippets: a window of a text around the query's matches, the matches as spans (offsets), so
that each surface writes them its own way: a page as escaped HTML with <mark> (`Snippet.html`), the
CLI and MCP as plain text, JSON as the text and its spans."""

from __future__ import annotations

import re
from functools import lru_cache

from ..models import Snippet

from .cjk import CJK_RUN, bigrams, has_cjk

_TOKEN = re.compile(r"[^\W_]+", re.U)


@lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    try:
        import Stemmer

        return Stemmer.Stemmer("english").stemWord
    except ImportError:  # pragma: no cover - PyStemmer is a dependency
        return lambda w: w


@lru_cache(maxsize=1 << 16)  # highlight() stems every word of every shown abstract; most repeat
def stem(word: str) -> str:
    return _stemmer()(word.lower())


def _matches(text: str, stems: set[str]) -> list[tuple[int, int]]:
    """(start, end) of the words of `text` whose stem is in `stems`, in order.

    Stems each distinct word once and finds those words with str.find, instead of
    stemming every word in a Python loop (this runs for every hit shown)."""
    found: list[tuple[int, int]] = []
    # English Snowball stems keep a word's first letter (not always two: dying -> die), so
    # only words sharing it with a query stem need stemming: far fewer stem() calls
    heads = {s[:1] for s in stems}
    for w in {w for w in set(_TOKEN.findall(text)) if w[:1].lower() in heads and stem(w) in stems}:
        i = text.find(w)
        while i >= 0:
            e = i + len(w)
            # a whole token only ([^\W_] is exactly str.isalnum)
            if (i == 0 or not text[i - 1].isalnum()) and (e == len(text) or not text[e].isalnum()):
                found.append((i, e))
            i = text.find(w, i + 1)
    found.sort()
    return found


def _cjk_matches(text: str, grams: set[str]) -> list[tuple[int, int]]:
    """(start, end) of the stretches of `text` covered by the query's CJK bigrams, overlaps merged:
    query 扩散模型 marks 扩散模型 whole in 基于扩散模型的方法 (the keyword index matched those bigrams)."""
    spans: list[tuple[int, int]] = []
    for g in grams:
        i = text.find(g)
        while i >= 0:
            spans.append((i, i + len(g)))
            i = text.find(g, i + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _densest(starts: list[int], width: int) -> int:
    """Index of the first match whose window [start, start + width) holds the most matches; O(n)."""
    best, best_n, j = 0, 0, 0
    for i, s in enumerate(starts):
        j = max(j, i)
        while j < len(starts) and starts[j] - s < width:
            j += 1
        if j - i > best_n:
            best, best_n = i, j - i
    return best


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from .bm25 import english_stopwords

    return english_stopwords()


def snippet(text: str, terms: list[str], width: int = 260, whole: bool = False) -> Snippet:
    """`text` (a window around the densest match unless `whole`) with the words whose stem matches a
    query term's stem as spans.

    Stop words are never marked: the keyword index ignores them, so a marked `for` would
    claim a match that did not count."""
    cjk_terms = [t for t in terms if has_cjk(t)]
    stop = _stopwords()
    stems = {stem(t) for t in terms if len(t) > 1 and t not in cjk_terms and t.lower() not in stop}
    matches = _matches(text, stems) if stems else []
    if cjk_terms and has_cjk(text):
        grams = {g for t in cjk_terms for run in CJK_RUN.findall(t) for g in bigrams(run)}
        matches = sorted(matches + _cjk_matches(text, grams))
    start, end = 0, len(text)
    if not whole and len(text) > width:
        if matches:
            start = max(0, matches[_densest([a for a, _ in matches], width)][0] - 40)
        end = min(len(text), start + width)
        # do not cut words
        if start > 0:
            sp = text.find(" ", start)
            start = sp + 1 if 0 <= sp < start + 30 else start
        if end < len(text):
            sp = text.rfind(" ", start, end)
            # Chinese has no spaces: cut anywhere rather than drop most of the window
            end = sp if sp > start + width // 2 or (sp > start and not has_cjk(text[start:end])) else end
    head = "… " if start > 0 else ""
    shift = len(head) - start
    marks, last = [], start
    for a, b in matches:  # inside the window, and not inside an earlier mark (a word and a CJK run)
        if a < last or b > end:
            continue
        marks.append((a + shift, b + shift))
        last = b
    return Snippet(head + text[start:end] + (" …" if end < len(text) else ""), tuple(marks))


def highlight(text: str, terms: list[str], width: int = 260, whole: bool = False) -> str:
    """`snippet(...)` as escaped HTML with <mark> around the matches (the pages' `hl` filter)."""
    return snippet(text, terms, width, whole).html()
