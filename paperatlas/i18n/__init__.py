"""Translations of the user interface: English (the source language) and Simplified Chinese.

Mark a string once, where it is written: `{{ _("Search") }}` in a template, `gettext("Search")`
in Python, `ngettext("{n} paper", "{n} papers", n)` when English needs a plural. The English
text is the message id; `{name}` placeholders are filled after translation, so a translation may
move them. Translations live in one gettext catalogue per language (`zh_CN.po` here, parsed by
`catalogue.py`, no Babel needed); `python -m paperatlas.i18n.extract` lists and adds missing ones.

The language of the current request (or CLI call) is a context variable: the web middleware sets
it from `?lang=`, the `pa_lang` cookie or Accept-Language, so code deep inside a view, a
template macro or a recommender's explanation translates without passing `lang` around.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from .catalogue import Catalogue, load

DEFAULT = "en"
# code -> (name shown in the language switch, value of <html lang>, catalogue file or None)
LANGUAGES: dict[str, tuple[str, str, str | None]] = {
    "en": ("English", "en", None),
    "zh": ("中文", "zh-CN", "zh_CN.po"),
}
COOKIE = "pa_lang"

_current: contextvars.ContextVar[str] = contextvars.ContextVar("paperatlas_lang", default=DEFAULT)


def normalize(code: str | None) -> str | None:
    """'zh', 'zh-CN', 'zh_Hans', 'ZH-cn' -> 'zh'; 'en-GB' -> 'en'; anything else -> None."""
    if not code:
        return None
    base = code.strip().replace("_", "-").split("-")[0].lower()
    return base if base in LANGUAGES else None


def negotiate(accept_language: str | None) -> str | None:
    """The best supported language of an Accept-Language header (None when none is supported)."""
    best: tuple[float, int, str] | None = None
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        for p in params.split(";"):
            k, _, v = p.strip().partition("=")
            if k == "q":
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
        code = normalize(tag)
        if code and q > 0 and (best is None or (q, -i) > (best[0], best[1])):
            best = (q, -i, code)
    return best[2] if best else None


def current() -> str:
    """The language of the current request or command ('en' unless one was chosen)."""
    return _current.get()


def html_lang(lang: str | None = None) -> str:
    """The value for `<html lang>`: 'zh-CN' for Chinese."""
    return LANGUAGES.get(lang or current(), LANGUAGES[DEFAULT])[1]


def set_language(lang: str) -> contextvars.Token[str]:
    return _current.set(normalize(lang) or DEFAULT)


@contextlib.contextmanager
def language(lang: str | None) -> Iterator[str]:
    """`with language("zh"): ...` translates everything inside into Chinese."""
    token = set_language(lang or DEFAULT)
    try:
        yield current()
    finally:
        _current.reset(token)


def _catalogue(lang: str) -> Catalogue | None:
    entry = LANGUAGES.get(lang)
    return load(entry[2]) if entry and entry[2] else None


def translate(message: str, lang: str | None = None) -> str:
    """`message` in `lang` (default: the current language), placeholders left as they are.

    An untranslated message falls back to English (the tests make sure there are none)."""
    cat = _catalogue(lang or current())
    return cat.get(message) if cat else message


def translate_plural(singular: str, plural: str, n: int, lang: str | None = None) -> str:
    cat = _catalogue(lang or current())
    return cat.get_plural(singular, plural, n) if cat else (singular if n == 1 else plural)


def gettext(message: str, lang: str | None = None, **params: Any) -> str:
    """`message` in `lang` (default: the current language), `{name}` placeholders filled from `params`."""
    text = translate(message, lang)
    return text.format(**params) if params else text


def ngettext(singular: str, plural: str, count: int, lang: str | None = None, **params: Any) -> str:
    """The singular or plural form for `count`; `{n}` is `count` unless given. Chinese has one form."""
    params.setdefault("n", count)
    return translate_plural(singular, plural, count, lang).format(**params)


class Note(str):
    """A message for the reader made where the language is not known yet: as a string it is the English
    text (JSON and logs stay English), and `translated()` gives it in the current language."""

    msgid: str
    params: dict[str, Any]

    def __new__(cls, msgid: str, **params: Any) -> "Note":
        note = super().__new__(cls, msgid.format(**params) if params else msgid)
        note.msgid, note.params = msgid, params
        return note

    def translated(self, lang: str | None = None) -> str:
        return gettext(self.msgid, lang, **self.params)


def in_language(text: str, lang: str | None = None) -> str:
    """A Note in the current language; any other string as it is."""
    return text.translated(lang) if isinstance(text, Note) else text


def N_(message: str) -> str:
    """Mark a string for the catalogue where it is defined; translate it with gettext() where shown."""
    return message


__all__ = [
    "Note",
    "in_language",
    "COOKIE",
    "DEFAULT",
    "LANGUAGES",
    "N_",
    "current",
    "gettext",
    "html_lang",
    "language",
    "negotiate",
    "ngettext",
    "normalize",
    "set_language",
    "translate",
    "translate_plural",
]
