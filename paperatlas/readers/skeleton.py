"""Look-alike names: the skeleton of Unicode Technical Standard #39 (section 4), from a table of
Unicode's `confusables.txt` (readers/confusables.tsv; where it comes from is in its header).

skeleton(X) = NFD(each character of NFD(X) replaced by its prototype): two strings with the same
skeleton read the same ("mе" with a Cyrillic е and "me"). The table maps a small Cyrillic м to ʍ,
not m, so names are also compared in capitals (М and M share a skeleton): "ме" reads as "me" too.
Nothing is fetched at run time."""

from __future__ import annotations

import unicodedata
from functools import cache
from pathlib import Path

TABLE = Path(__file__).with_name("confusables.tsv")


@cache
def _prototypes() -> dict[str, str]:
    out: dict[str, str] = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            src, proto = line.split("\t")
            out[chr(int(src, 16))] = "".join(chr(int(h, 16)) for h in proto.split())
    return out


def skeleton(text: str) -> str:
    """UTS #39 skeleton of `text`."""
    table = _prototypes()
    nfd = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(table.get(ch, ch) for ch in nfd))


def looks_like(a: str, b: str) -> bool:
    """Whether `a` and `b` read the same: one skeleton, as written or in capitals (so case alone,
    full-width and mathematical forms, and letters of another script that look the same all count)."""
    a, b = unicodedata.normalize("NFKC", a), unicodedata.normalize("NFKC", b)
    return skeleton(a) == skeleton(b) or skeleton(a.upper()) == skeleton(b.upper())


def build_table(confusables_txt: str) -> str:
    """The body of confusables.tsv from the text of Unicode's confusables.txt: `source<TAB>prototype`
    in hexadecimal code points, one mapping a line (the comments and the type column dropped)."""
    rows = []
    for line in confusables_txt.splitlines():
        data = line.split("#", 1)[0].strip().lstrip("\ufeff")
        if not data:
            continue
        src, proto, _kind = (x.strip() for x in data.split(";"))
        rows.append(f"{src}\t{proto}")
    return "\n".join(rows) + "\n"
