"""A paper's own terms, so a translation renders each one the same way in every section.

A whole paper goes to the model a section at a time, and a small model translates "reward model"
three ways in three sections. The glossary is taken from the paper itself: the terms it defines with
an acronym ("Low-Rank Adaptation (LoRA)") and the multi-word terms it repeats. It is translated once,
and every section's request carries the part of it that section uses; `protect.check` then counts
how consistently the translation kept to it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

# "Low-Rank Adaptation (LoRA)", "direct preference optimization (DPO)"
_DEFINED = re.compile(r"((?:[A-Za-z][\w\-]*\s+){1,5}[A-Za-z][\w\-]*)\s+\(([A-Z][A-Za-z0-9\-]{1,11}s?)\)")
_WORDS = re.compile(r"[A-Za-z][A-Za-z\-]+")
_STOP = frozenset(
    "a an the of in on for to and or with by from as at is are was were be been this that these those we our "
    "it its which such than then when where while can may using used use based via into over under between "
    "each both all any not no more most less also however thus here there their they them has have had".split()
)
MAX_TERMS = 40


def _initials_match(phrase: str, acronym: str) -> list[str] | None:
    """The trailing words of `phrase` that `acronym` abbreviates (Schwartz & Hearst's rule: the
    acronym's letters found right to left in the words, its first letter starting a word), or None.
    "Low-Rank Adaptation" is LoRA's, "direct preference optimization" DPO's."""
    acr = acronym[:-1] if acronym.endswith("s") and len(acronym) > 2 else acronym
    letters = [c.lower() for c in acr if c.isalnum()]
    words = phrase.split()
    if not letters:
        return None
    for k in range(1, min(len(words), len(letters) + 2) + 1):
        tail = words[-k:]
        if tail[0].lower() in _STOP or tail[0][0].lower() != letters[0]:
            continue
        text = " ".join(tail).lower()
        i = len(text) - 1
        ok = True
        for j in range(len(letters) - 1, -1, -1):
            while i >= 0 and (text[i] != letters[j] or (j == 0 and i > 0 and text[i - 1].isalnum())):
                i -= 1
            if i < 0:
                ok = False
                break
            i -= 1
        if ok:
            return tail
    return None


def terms(texts: Sequence[str], limit: int = MAX_TERMS) -> list[str]:
    """The paper's terms, most used first: acronym definitions (the long form and the acronym) and
    two- or three-word phrases used at least three times, without stop words at either end."""
    whole = "\n".join(texts)
    out: dict[str, int] = {}
    for m in _DEFINED.finditer(whole):
        tail = _initials_match(m.group(1), m.group(2))
        if tail:
            long_form = " ".join(tail)
            out[long_form] = out.get(long_form, 0) + 100  # defined terms first
    counts: Counter[str] = Counter()
    for text in texts:
        words = [w.lower() for w in _WORDS.findall(text)]
        for n in (2, 3):
            for i in range(len(words) - n + 1):
                run = words[i : i + n]
                if run[0] in _STOP or run[-1] in _STOP or any(len(w) < 3 for w in run):
                    continue
                counts[" ".join(run)] += 1
    for gram, n in counts.items():
        if n >= 3 and not any(gram in t.lower() and gram != t.lower() for t in out):
            out.setdefault(gram, n)
    # a two-word phrase inside a kept three-word one with the same count adds nothing
    ranked = sorted(out.items(), key=lambda kv: (-kv[1], kv[0]))
    kept: list[str] = []
    for term, n in ranked:
        if any(term.lower() in k.lower() and out[k] >= n for k in kept):
            continue
        kept.append(term)
        if len(kept) >= limit:
            break
    return kept


def parse_glossary(reply: str, asked: Sequence[str]) -> dict[str, str]:
    """`term => rendering` lines of a model's reply, for the terms that were asked only. A line that
    is not that shape, a term never asked, or a rendering that is empty or absurdly long is skipped:
    the glossary is advice for later requests, and a bad entry must not poison them."""
    wanted = {t.lower(): t for t in asked}
    out: dict[str, str] = {}
    for line in reply.splitlines()[: 4 * len(asked) + 10]:
        m = re.match(r"^\s*(?:[-*\d.)]+\s*)?(.+?)\s*(?:=>|->|→|：|:|=)\s*(.+?)\s*$", line)
        if not m:
            continue
        term, rendering = m.group(1).strip(" \"'`"), m.group(2).strip(" \"'`")
        key = term.lower()
        if key in wanted and 0 < len(rendering) <= 40 and "\n" not in rendering:
            out[wanted[key]] = rendering
    return out


def used_in(glossary: dict[str, str], text: str) -> dict[str, str]:
    """The entries of `glossary` whose term `text` uses (what one request needs to see)."""
    found = {t: r for t, r in glossary.items() if re.search(rf"(?<!\w){re.escape(t)}(?!\w)", text, re.IGNORECASE)}
    # "pretrained language" inside "pretrained language models": the longer term is the one rendered
    # (asking for both makes a translation that honours one break the other)
    return {t: r for t, r in found.items() if not any(t.lower() in u.lower() and t != u for u in found)}
