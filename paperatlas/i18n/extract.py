"""Find every marked UI string and check the catalogues against them.

    python -m paperatlas.i18n.extract            # list strings that lack a translation
    python -m paperatlas.i18n.extract --update   # also append them to the catalogues, msgstr ""

Marked strings: `_("...")`, `gettext("...")`, `ngettext("...", "...", n)` in templates
(web/templates, topics/static/*.html) and `gettext`, `ngettext`, `N_`, `_` calls in the
package's Python files, whose first argument is a literal.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment
from jinja2.ext import extract_from_ast

from . import LANGUAGES
from .catalogue import HERE, load, quote

PACKAGE = HERE.parent
TEMPLATE_DIRS = [PACKAGE / "web" / "templates", PACKAGE / "topics" / "static", PACKAGE / "report" / "templates"]
FUNCS = ("_", "gettext", "ngettext", "N_", "Note")


def _where(f: Path, line: int) -> str:
    try:
        return f"{f.relative_to(PACKAGE.parent)}:{line}"
    except ValueError:
        return f"{f}:{line}"


@dataclass(frozen=True)
class Message:
    msgid: str
    plural: str
    where: str  # "file:line", for the report and the catalogue comment


def template_messages() -> Iterator[Message]:
    env = Environment()
    for d in TEMPLATE_DIRS:
        for f in sorted(d.glob("*.html")):
            tree = env.parse(f.read_text(encoding="utf-8"))
            for line, func, msg in extract_from_ast(tree, gettext_functions=FUNCS):
                args = msg if isinstance(msg, tuple) else (msg,)
                if args and isinstance(args[0], str):
                    plural = args[1] if func == "ngettext" and len(args) > 1 and isinstance(args[1], str) else ""
                    yield Message(args[0], plural, _where(f, line))


def python_messages() -> Iterator[Message]:
    for f in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"), str(f))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            name = (
                node.func.id
                if isinstance(node.func, ast.Name)
                else node.func.attr
                if isinstance(node.func, ast.Attribute)
                else ""
            )
            if name not in FUNCS or name == "_" and f.parent.name != "web":
                continue  # `_` is a throwaway name elsewhere
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                plural = ""
                if name == "ngettext" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
                    plural = str(node.args[1].value)
                yield Message(first.value, plural, _where(f, node.lineno))


def messages() -> dict[str, Message]:
    """msgid -> its first use, over templates and Python."""
    out: dict[str, Message] = {}
    for m in [*template_messages(), *python_messages()]:
        out.setdefault(m.msgid, m)
    return out


def missing(lang: str) -> list[Message]:
    """Marked strings that `lang`'s catalogue does not translate."""
    file = LANGUAGES[lang][2]
    if file is None:
        return []
    load.cache_clear()
    cat = load(file)
    return [m for m in messages().values() if not cat.translated(m.msgid)]


def unused(lang: str) -> list[str]:
    file = LANGUAGES[lang][2]
    if file is None:
        return []
    known = messages()
    return [k for k in load(file).entries if k not in known]


def append(lang: str, msgs: list[Message]) -> int:
    """Add entries for messages the catalogue does not have at all (msgstr left empty)."""
    file = LANGUAGES[lang][2]
    assert file
    cat = load(file)
    new = [m for m in msgs if m.msgid not in cat.entries]
    if new:
        with open(cat.path, "a", encoding="utf-8") as fp:
            for m in new:
                fp.write(f"\n#: {m.where}\nmsgid {quote(m.msgid)}\n")
                if m.plural:
                    fp.write(f'msgid_plural {quote(m.plural)}\nmsgstr[0] ""\n')
                else:
                    fp.write('msgstr ""\n')
        load.cache_clear()
    return len(new)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    bad = 0
    for lang, (_name, _tag, file) in LANGUAGES.items():
        if file is None:
            continue
        miss = missing(lang)
        for m in miss:
            print(f"{file}: no translation for {m.msgid!r} ({m.where})")
        if "--update" in argv:
            print(f"{file}: added {append(lang, miss)} empty entries; fill in their msgstr")
        for k in unused(lang):
            print(f"{file}: unused entry {k!r} (no template or code marks it any more)")
        bad += len(miss)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
