"""Author names as comparable tokens, and the rule that says when two names are one person.

Lists spell one person many ways: "Percy Liang", "P. Liang", "Liang, Percy", "percy liang",
"Jürgen Schmidhuber" / "Jurgen Schmidhuber". Names are folded (accents dropped, case folded,
punctuation turned into spaces) and compared token by token: the family names must agree, and
each given name in the query must match the next given name of the author, in full or by its
initial. Middle names the query leaves out are skipped ("Percy Liang" finds "Percy S. Liang")."""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^\w]+|_", re.U)
# author:"Percy Liang", author:'P. Liang' or author:Liang (one word); case-insensitive
_FILTER = re.compile(r"""\bauthor:\s*(?:"([^"]*)"|'([^']*)'|([^\s"']+))""", re.I | re.U)


def fold(text: str) -> str:
    """Lowercase, accents dropped (ü -> u, ł -> l), punctuation as spaces: 'Jürgen  Schmidhuber'."""
    text = unicodedata.normalize(
        "NFKD", text.replace("ł", "l").replace("Ł", "L").replace("ø", "o").replace("Ø", "O").replace("ß", "ss")
    )
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


def name_tokens(name: str) -> list[str]:
    """Folded tokens, given names first: 'Liang, Percy' -> ['percy', 'liang']."""
    if name.count(",") == 1:  # "Family, Given" (BibTeX order)
        family, given = name.split(",")
        if family.strip() and given.strip():
            name = f"{given} {family}"
    return fold(name).split()


def _given_match(q: str, a: str) -> bool:
    """One given name against another: equal, or one is the other's initial."""
    return q == a or (len(q) == 1 and a.startswith(q)) or (len(a) == 1 and q.startswith(a))


def _ordered(query: list[str], author: list[str]) -> bool:
    """Every query given name matches a later author given name, in order (skipping middle names)."""
    i = 0
    for q in query:
        while i < len(author) and not _given_match(q, author[i]):
            i += 1
        if i == len(author):
            return False
        i += 1
    return True


def names_match(query: list[str], author: list[str]) -> bool:
    """True when the folded `query` tokens may name the author with these folded tokens.

    One word matches any of the author's names ("liang"); more words need the family name (the
    last word) to agree and the given names to match in order, in full or by initial. A name given
    family name first ("Zhang Hao" for "Hao Zhang") matches as well."""
    if not query or not author:
        return False
    if len(query) == 1:
        return query[0] in author
    if query == author:
        return True
    for q in (query, query[::-1]):
        if q[-1] == author[-1] and len(author) > 1 and _ordered(q[:-1], author[:-1]):
            return True
    return False


def split_author_filters(text: str) -> tuple[str, list[str]]:
    """The query without its `author:` filters, and the names they give."""
    names: list[str] = []

    def take(m: re.Match[str]) -> str:
        name = next((g for g in m.groups() if g is not None), "").strip()
        if name:
            names.append(name)
        return " "

    rest = _FILTER.sub(take, text or "")
    return " ".join(rest.split()), names
