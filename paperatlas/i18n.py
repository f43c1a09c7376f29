"""Translations of the user interface (placeholder: English only until the catalogues land).

Templates call `{{ _("Search") }}`; Python calls `gettext("Search", lang)`. Every new user-visible
string goes through one of them, so that a catalogue can translate it.
"""

from __future__ import annotations

from typing import Any


def gettext(message: str, lang: str = "en", **params: Any) -> str:
    """`message` in `lang`, with `{name}` placeholders filled from `params`."""
    return message.format(**params) if params else message
