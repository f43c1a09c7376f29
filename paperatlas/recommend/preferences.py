"""Free-text preferences ("more theory, fewer benchmark papers") -> signed phrases.

The phrases are embedded and matched as keywords; each steers the ranking up (+1) or
down (-1) (the Omni-Reward / PLUS idea: a reader's own words are part of the ranking).
"""

from __future__ import annotations

import re

_SPLIT = re.compile(r"[,;\n.]+|\bbut\b|\band\b|\bplus\b", re.I)
_NEG = (
    "fewer",
    "less",
    "no",
    "not",
    "avoid",
    "without",
    "don't",
    "dont",
    "do not",
    "skip",
    "hate",
    "dislike",
    "exclude",
    "never",
    "stop",
    "nothing on",
    "nothing about",
    "minus",
    "-",
)
_POS = (
    "more",
    "prefer",
    "love",
    "like",
    "want",
    "interested in",
    "focus on",
    "especially",
    "mostly",
    "show me",
    "give me",
    "+",
)
_FILLER = {
    "papers",
    "paper",
    "work",
    "works",
    "stuff",
    "things",
    "on",
    "about",
    "of",
    "the",
    "a",
    "an",
    "please",
    "i",
    "me",
    "show",
    "want",
    "would",
    "to",
    "see",
    "in",
    "that",
    "with",
    "some",
    "any",
    "articles",
    "studies",
    "approaches",
    "methods",
    "related",
    "topics",
    "topic",
    "like",
    "more",
    "less",
    "fewer",
    "really",
    "much",
    "lots",
    "lot",
    "very",
    "also",
    "other",
    "than",
    "ones",
    "is",
    "are",
    "which",
}


def parse(text: str) -> list[tuple[int, str]]:
    """Signed phrases, in order. Example: parse("more theory, fewer benchmark papers")
    -> [(1, 'theory'), (-1, 'benchmark')]."""
    out: list[tuple[int, str]] = []
    for clause in _SPLIT.split(text or ""):
        c = " " + clause.strip().lower() + " "
        if not c.strip():
            continue
        sign = 1
        first_neg = min((c.find(f" {m} ") for m in _NEG if f" {m} " in c), default=-1)
        first_pos = min((c.find(f" {m} ") for m in _POS if f" {m} " in c), default=-1)
        if c.strip().startswith("-"):
            sign = -1
        elif first_neg >= 0 and (first_pos < 0 or first_neg <= first_pos):
            sign = -1
        words = [w for w in re.findall(r"[\w][\w\-']*", c) if w not in _FILLER]
        words = [w for w in words if w not in {m for m in _NEG + _POS if " " not in m}]
        phrase = " ".join(words).strip()
        if phrase:
            out.append((sign, phrase))
    return out
