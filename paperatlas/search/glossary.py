"""The English words of a Chinese query: a small zh -> en glossary of machine-learning terms.

Papers are written in English, so the keyword index finds nothing for 用户模拟器 (its character
bigrams occur in no abstract), and the multilingual model's cross-lingual view blurs as a library
grows. The glossary (glossary.tsv beside this file: data a reader can scan and extend) turns the
Chinese terms it knows into English words that the keyword route can match: 用户模拟器 -> user
simulator. Longest match first, left to right, so 大语言模型 is one term rather than 大 + 语言模型;
characters no term covers are skipped (their bigrams still go to the keyword index as before).
Pure functions; the table is read once.
"""

from __future__ import annotations

import functools
from pathlib import Path

from .cjk import CJK_RUN

TABLE = Path(__file__).with_name("glossary.tsv")


@functools.cache
def glossary(path: Path = TABLE) -> dict[str, str]:
    """Chinese term -> its English words, from `path` (`zh<TAB>en` rows; `#` comments skipped)."""
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        zh, sep, en = line.partition("\t")
        if not sep or not zh.strip() or not en.strip():
            raise ValueError(f"{path}:{n}: expected `Chinese<TAB>English`, got {line!r}")
        out[zh.strip()] = en.strip()
    return out


def translate(text: str, table: dict[str, str] | None = None) -> tuple[str, float]:
    """(the English words of the Chinese terms in `text` that the glossary knows, in order, each
    once; the share of `text`'s CJK characters those terms cover). ("", 0.0) when it knows none.
    Latin-script words in `text` are not repeated: they search as typed."""
    table = glossary() if table is None else table
    longest = max(map(len, table), default=0)
    found: list[str] = []
    covered = total = 0
    for m in CJK_RUN.finditer(text or ""):
        run, i = m.group(0), 0
        total += len(run)
        while i < len(run):
            for size in range(min(longest, len(run) - i), 0, -1):
                en = table.get(run[i : i + size])
                if en is not None and (size > 1 or len(run) == 1):
                    found.append(en)
                    covered += size
                    i += size
                    break
            else:
                i += 1
    english = " ".join(dict.fromkeys(" ".join(found).split()))
    return english, (covered / total if total else 0.0)


def english_terms(text: str, table: dict[str, str] | None = None) -> str:
    """The English words of the Chinese terms in `text` that the glossary knows ("" when none)."""
    return translate(text, table)[0]


def latin_words(text: str) -> str:
    """What `text` holds outside its CJK runs (the acronyms and English terms typed in a Chinese query)."""
    return " ".join(CJK_RUN.sub(" ", text or "").split())
