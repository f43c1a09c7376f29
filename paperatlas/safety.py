"""Helpers that keep stored text inert wherever it leaves the library (exports, digests, web links).

Paper fields come from files anyone can write, so every place a value becomes a link, a Markdown line or a
spreadsheet cell goes through one of these. Pure functions, no imports from the rest of paperatlas, so the
web, export and feed code can all share them.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

SAFE_SCHEMES = frozenset({"http", "https"})

# C0 controls except tab/newline/CR, DEL and C1 controls: invalid in XML 1.0 or invisible in a terminal
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def safe_url(url: str | None) -> str:
    """`url` if it is an absolute http(s) URL, else "" (so `javascript:`, `data:`, `vbscript:` never become links).

    Browsers ignore tabs/newlines inside a scheme and leading spaces/controls (`java\\tscript:`), so those are
    stripped before the scheme is read; a URL that still has whitespace or controls inside is refused.
    """
    if not url:
        return ""
    u = url.strip(" \t\r\n\x00\x0b\x0c")
    if not u or _CONTROL.search(u) or any(c in u for c in "\t\r\n "):
        return ""
    try:
        parts = urlsplit(u)
    except ValueError:
        return ""
    if parts.scheme.lower() not in SAFE_SCHEMES or not parts.netloc:
        return ""
    return u


def strip_controls(text: str) -> str:
    """Drop NUL and other control characters (keeps tab, newline and CR)."""
    return _CONTROL.sub("", text) if text else text


_LIVE_SCHEME = re.compile(r"\b(javascript|vbscript|data)\s*:", re.IGNORECASE)
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|~>])")


def md_text(text: str) -> str:
    """Text that Markdown shows literally: HTML characters become entities, Markdown marks are backslashed.

    Newlines become spaces so a value cannot start a new block (a heading, a raw HTML block, a list item).
    """
    if not text:
        return ""
    t = strip_controls(text).replace("\r", " ").replace("\n", " ")
    t = t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    t = _MD_SPECIAL.sub(r"\\\1", t)
    # "javascript:" as plain text is inert, but a renderer with autolinking may pick it up: &#58; shows ":" still
    return _LIVE_SCHEME.sub(lambda m: m.group(1) + "&#58;", t)


def md_code(text: str) -> str:
    """`text` as an inline code span; falls back to escaped text when it holds a backtick, < or > (a code
    span cannot hold its own fence, and a raw `<` should not reach a file at all)."""
    t = strip_controls(text or "").replace("\r", " ").replace("\n", " ")
    if not t or any(c in t for c in "`<>") or _LIVE_SCHEME.search(t):
        return md_text(t)
    return f"`{t}`"


def md_link(label: str, url: str | None) -> str:
    """`[label](url)` when url is http(s), else just the escaped label (the dangerous URL is dropped)."""
    text = md_text(label)
    u = safe_url(url)
    if not u:
        return text
    # <...> form keeps spaces/parentheses in the URL from ending the link early; < > are escaped inside
    return f"[{text}](<{u.replace('<', '%3C').replace('>', '%3E')}>)"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_SCRIPT_TAG = re.compile(r"<(?=script)", re.IGNORECASE)
_WJ = "\u2060"  # WORD JOINER: zero width, invisible, but breaks the token a tag or a URL scheme needs


def csv_cell(value: object) -> object:
    """Neutralise a spreadsheet formula: a text cell starting with = + - @ tab or CR gets a leading apostrophe
    (OWASP's CSV-injection advice). Numbers pass through unchanged.

    CSV files are also pasted into web tools and Markdown tables that render HTML or autolink, so `<script`
    and `javascript:`-style schemes get an invisible word joiner (`<\u2060script`, `javascript\u2060:`):
    the text reads the same, nothing in it can run."""
    if not isinstance(value, str):
        return value
    if "<" in value:
        value = _SCRIPT_TAG.sub("<" + _WJ, value)
    if ":" in value:
        value = _LIVE_SCHEME.sub(lambda m: m.group(1) + _WJ + ":", value)
    if value.startswith(_FORMULA_START):
        return "'" + value
    return value
