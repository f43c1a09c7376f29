"""A query expanded into the weighted variants search ranks: the query as typed; for a query in CJK
script, the English the glossary reads it as, and the English a language model renders it in (a
callable handed in: the engine never asks a model itself). Each variant is ranked alike
(search/rank.py) and the engine blends them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cjk import has_cjk
from .glossary import latin_words, translate
from .query import MAX_TERMS, Query, parse

if TYPE_CHECKING:
    from .settings import SearchSettings

Reading = tuple[str, float]  # the glossary's English for a query, and the share of its Chinese it read


@dataclass(frozen=True)
class Variant:
    """One query to rank and how its ranking joins the answer.

    `stage`: "typed" (the query itself), "glossary" (blended in before the relevance floor, which then
    reads the query's words in English), "model" (past its own floor, blended in after). `words`: the
    query whose words the floor's coverage counts (default `query`)."""

    query: Query
    weight: float
    stage: str
    words: Query | None = None


def glossary_reading(q: Query, settings: SearchSettings) -> Reading | None:
    """The glossary's reading of a query in CJK script: (its English words, the share of its Chinese
    characters they cover); None for any other query or with the glossary off."""
    if not settings.glossary or not has_cjk(q.text):
        return None
    return translate(q.text)


def english_query(q: Query, reading: Reading | None, settings: SearchSettings) -> tuple[Query, float] | None:
    """(the query read in English through the glossary, the share of its Chinese it read), or None when
    the glossary reads too little of it to stand for the query."""
    if settings.glossary_weight <= 0 or reading is None:
        return None
    english, share = reading
    if not english or share < settings.glossary_min_share:
        return None
    return parse(f"{latin_words(q.text)} {english}"), share


def translation(q: Query, translator: Callable[[str], str | None] | None, settings: SearchSettings) -> str | None:
    """A language model's English rendering of a query in CJK script, when one is configured and
    answered with English (a reply still in CJK script would route back to the multilingual index)."""
    if translator is None or settings.translation_weight <= 0 or not has_cjk(q.text):
        return None
    english = translator(q.text)
    if not english or has_cjk(english) or parse(english).empty:
        return None
    return english


def keyword_query(q: Query, reading: Reading | None) -> Query:
    """What the keyword index is asked: the query, plus the English words of the Chinese terms the
    glossary knows (the papers are in English; a Chinese term's bigrams match none of them)."""
    english = reading[0] if reading is not None else ""
    if not english:
        return q
    extra = parse(english)
    return Query(
        text=f"{q.text} {english}", terms=list(dict.fromkeys(q.terms + extra.terms))[:MAX_TERMS], phrases=q.phrases
    )


def expand(
    q: Query,
    settings: SearchSettings,
    reading: Reading | None,
    translated: str | None,
    multilingual: bool,
    words: Query | None = None,
) -> list[Variant]:
    """The variants of `q`, the typed one first. The glossary's English stands in where no model rendered
    the query (as a second opinion beside the multilingual index, as the query itself without one); a
    model's English is a whole English query,
    searched as one (its floor counts only the words the reader typed in Latin script, "LoRA": the
    rendering's own words are the model's choice, and a short everyday phrase in English shares them
    with some abstract)."""
    out = [Variant(q, 1.0, "typed", words)]
    english = english_query(q, reading, settings) if not translated else None
    if english is not None:
        # beside the multilingual index the glossary's English is a second opinion; without one (not
        # built yet, or still building) it is the only reading by meaning there is, so it carries the
        # query as far as the glossary read it
        weight = settings.glossary_weight * english[1] if multilingual else english[1]
        out.append(Variant(english[0], weight, "glossary"))
    if translated:
        own = latin_words(q.text)
        out.append(Variant(parse(f"{own} {translated}"), settings.translation_weight, "model", parse(own)))
    return out
