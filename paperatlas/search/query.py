"""Parse any user text into safe search terms: words and "quoted phrases".

Nothing the user types reaches FTS5 syntax unquoted, so AND/OR/NEAR, `*`, stray
quotes or parentheses, emoji and 10 kB pastes are all plain words here."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.U)
_PHRASE = re.compile(r'"([^"]+)"')
MAX_TERMS = 64


@dataclass
class Query:
    text: str
    terms: list[str] = field(default_factory=list)  # lowercased words, in order, deduplicated
    phrases: list[list[str]] = field(default_factory=list)  # each a list of lowercased words

    @property
    def empty(self) -> bool:
        return not self.terms


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def parse(text: str) -> Query:
    text = (text or "")[:10_000]
    phrases = [ws for ws in (words(m) for m in _PHRASE.findall(text)) if len(ws) > 1]
    terms = list(dict.fromkeys(words(text)))[:MAX_TERMS]
    return Query(text=text, terms=terms, phrases=phrases[:8])


def fts5_match(q: Query) -> str:
    """An FTS5 MATCH expression: every term quoted, OR-ed; phrases as quoted phrases."""
    parts = ['"' + t.replace('"', "") + '"' for t in q.terms]
    return " OR ".join(parts)


def phrase_filter(q: Query, text: str) -> bool:
    """True when `text` contains every quoted phrase (word-sequence match, case-insensitive)."""
    if not q.phrases:
        return True
    ws = " " + " ".join(words(text)) + " "
    return all((" " + " ".join(p) + " ") in ws for p in q.phrases)
