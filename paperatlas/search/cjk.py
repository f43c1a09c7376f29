"""Chinese, Japanese and Korean text: which queries go to the multilingual index, and
how CJK runs (written without spaces) become keyword terms.

Pure functions. Keyword terms of a CJK run are its overlapping character bigrams
("扩散模型" -> 扩散 散模 模型), the scheme Lucene's CJKAnalyzer uses: no dictionary, no
model, and a technical term no dictionary knows still matches (see docs/search.md).
"""

from __future__ import annotations

import re

# Han (CJK Unified Ideographs + extension A + compatibility), kana, Hangul
_CJK_CLASS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\u31f0-\u31ff\uac00-\ud7af"
CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_CJK_CHAR = re.compile(f"[{_CJK_CLASS}]")


def has_cjk(text: str) -> bool:
    """True when `text` holds at least one CJK character: such a query is routed to the multilingual index."""
    return bool(text) and _CJK_CHAR.search(text) is not None


_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")


def letter_counts(text: str) -> tuple[int, int]:
    """(CJK characters, Latin letters) of `text`; digits, spaces and punctuation count as neither."""
    return len(_CJK_CHAR.findall(text or "")), len(_LATIN.findall(text or ""))


def bigrams(run: str) -> list[str]:
    """Overlapping character bigrams of one CJK run; a single character stays itself."""
    if len(run) < 2:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def split_cjk(text: str) -> tuple[str, list[str]]:
    """(`text` with every CJK run replaced by a space, the bigrams of those runs in order).

    The first part goes through the usual (English) word analysis unchanged, so text without
    CJK characters yields exactly the terms it always did."""
    grams: list[str] = []

    def cut(m: re.Match[str]) -> str:
        grams.extend(bigrams(m.group(0)))
        return " "

    if not has_cjk(text):
        return text, grams
    return CJK_RUN.sub(cut, text), grams
