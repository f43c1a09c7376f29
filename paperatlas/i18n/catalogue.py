"""A gettext .po catalogue, read with the standard library (no Babel, no compiled .mo files).

Only what the project's catalogues use: `msgctxt` is not supported, `msgid_plural` with
`msgstr[N]` is, and so are `#, fuzzy` entries (skipped, as gettext does).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent


class CatalogueError(ValueError):
    pass


@dataclass
class Entry:
    msgid: str
    msgid_plural: str = ""
    msgstr: list[str] = field(default_factory=list)
    fuzzy: bool = False
    line: int = 0


@dataclass
class Catalogue:
    path: Path
    entries: dict[str, Entry]

    def get(self, message: str) -> str:
        e = self.entries.get(message)
        return e.msgstr[0] if e and e.msgstr and e.msgstr[0] and not e.fuzzy else message

    def get_plural(self, singular: str, plural: str, n: int) -> str:
        e = self.entries.get(singular)
        if e and not e.fuzzy and e.msgstr and all(e.msgstr):
            # the catalogues' languages (Chinese) have one form: 'nplurals=1; plural=0;'
            return e.msgstr[0]
        return singular if n == 1 else plural

    def translated(self, message: str) -> bool:
        e = self.entries.get(message)
        return bool(e and not e.fuzzy and e.msgstr and all(e.msgstr))


def _unquote(s: str, path: Path, line: int) -> str:
    s = s.strip()
    if not (len(s) >= 2 and s[0] == s[-1] == '"'):
        raise CatalogueError(
            f'{path}:{line}: expected a quoted string, got {s[:40]!r}; write it as "text" (escape inner quotes as \\")'
        )
    try:
        return str(ast.literal_eval(s))
    except (ValueError, SyntaxError):
        raise CatalogueError(f"{path}:{line}: bad string {s[:40]!r}; escape quotes and backslashes") from None


def parse(text: str, path: Path = Path("<catalogue>")) -> dict[str, Entry]:
    """msgid -> Entry. The header entry (msgid "") is dropped."""
    entries: dict[str, Entry] = {}
    cur: Entry | None = None
    key = ""  # which field the continuation lines ("...") extend
    fuzzy = False

    def finish() -> None:
        nonlocal cur
        if cur is not None and cur.msgid:
            if cur.msgid in entries:
                raise CatalogueError(
                    f"{path}:{cur.line}: msgid {cur.msgid[:50]!r} appears twice; "
                    f"keep one (the first is at line {entries[cur.msgid].line})"
                )
            entries[cur.msgid] = cur
        cur = None

    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("#,") and "fuzzy" in line:
                fuzzy = True
            continue
        if line.startswith("msgid "):
            finish()
            cur = Entry(_unquote(line[6:], path, n), fuzzy=fuzzy, line=n)
            fuzzy = False
            key = "msgid"
        elif cur is None:
            raise CatalogueError(f"{path}:{n}: {line[:40]!r} before any msgid")
        elif line.startswith("msgid_plural "):
            cur.msgid_plural = _unquote(line[13:], path, n)
            key = "msgid_plural"
        elif line.startswith("msgstr["):
            idx, _, rest = line[7:].partition("]")
            if not idx.isdigit() or int(idx) != len(cur.msgstr):
                raise CatalogueError(f"{path}:{n}: msgstr[{idx}] out of order; number them from 0")
            cur.msgstr.append(_unquote(rest, path, n))
            key = "msgstr"
        elif line.startswith("msgstr "):
            cur.msgstr = [_unquote(line[7:], path, n)]
            key = "msgstr"
        elif line.startswith('"'):
            s = _unquote(line, path, n)
            if key == "msgid":
                cur.msgid += s
            elif key == "msgid_plural":
                cur.msgid_plural += s
            else:
                cur.msgstr[-1] += s
        else:
            raise CatalogueError(f"{path}:{n}: cannot read {line[:40]!r}; expected msgid, msgstr or a quoted line")
    finish()
    return entries


@functools.lru_cache(maxsize=8)
def load(name: str) -> Catalogue:
    path = HERE / name
    return Catalogue(path, parse(path.read_text(encoding="utf-8"), path))


def quote(s: str) -> str:
    """A .po string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'
