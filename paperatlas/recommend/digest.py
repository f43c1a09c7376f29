"""Digest rendering: Markdown, HTML and Atom from recommendation hits (pure functions)."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from xml.sax.saxutils import escape as _xml_escape

from ..i18n import gettext, html_lang
from ..models import Hit
from ..safety import md_code, md_link, md_text, safe_url, strip_controls


def escape(text: str, entities: dict[str, str] | None = None) -> str:
    """XML-escaped text without the control characters XML 1.0 forbids (a NUL makes the whole feed
    unreadable; papers stored before ingest stripped them may still hold some)."""
    return _xml_escape(strip_controls(text), entities or {})


FORMATS = ("markdown", "html", "atom")


def _authors(hit: Hit, n: int = 6) -> str:
    a = hit.paper.authors
    return ", ".join(a[:n]) + (" " + gettext("et al.") if len(a) > n else "")


def _meta(hit: Hit) -> str:
    p = hit.paper
    return " · ".join(x for x in (f"{p.venue} {p.year or ''}".strip(), p.status) if x)


def markdown(hits: Sequence[Hit], title: str, subtitle: str = "", tldrs: Mapping[str, str] | None = None) -> str:
    # the title and subtitle carry reader names and search queries: escaped like paper fields
    lines = [f"# {md_text(title)}", ""]
    if subtitle:
        lines += [md_text(subtitle), ""]
    if not hits:
        lines.append(gettext("Nothing new: every paper has been seen or judged."))
    for i, h in enumerate(hits, start=1):
        p = h.paper
        t = md_link(p.title, p.url)  # escaped; only http(s) URLs become links
        lines.append(f"{i}. **{t}**" + (f" — {md_text(_meta(h))}" if _meta(h) else ""))
        if p.authors:
            lines.append(f"   {md_text(_authors(h))}")
        if h.reason:
            lines.append(f"   *{gettext('Why: {reason}', reason=md_text(h.reason))}*")
        if tldrs and tldrs.get(p.id):
            lines.append(f"   TL;DR: {md_text(tldrs[p.id])}")
        lines.append(f"   {md_code(p.id)}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def to_html(hits: Sequence[Hit], title: str, subtitle: str = "", tldrs: Mapping[str, str] | None = None) -> str:
    e = html.escape
    items = []
    for h in hits:
        p = h.paper
        url = safe_url(p.url)  # a javascript: URL in href runs when clicked
        # dir="auto"/<bdi>: a right-to-left override in a title or name cannot reorder the text around it
        t = f'<a href="{e(url)}" dir="auto">{e(p.title)}</a>' if url else f"<bdi>{e(p.title)}</bdi>"
        items.append(
            f"<li><strong>{t}</strong>"
            + (f' <span class="meta">{e(_meta(h))}</span>' if _meta(h) else "")
            + (f'<div class="authors"><bdi>{e(_authors(h))}</bdi></div>' if p.authors else "")
            + (f'<div class="why">{e(gettext("Why: {reason}", reason=h.reason))}</div>' if h.reason else "")
            + (f'<div class="tldr">TL;DR: {e(tldrs[p.id])}</div>' if tldrs and tldrs.get(p.id) else "")
            + f'<div class="id"><code>{e(p.id)}</code></div></li>'
        )
    body = "\n".join(items) if items else f"<p>{e(gettext('Nothing new: every paper has been seen or judged.'))}</p>"
    sub = f"<p>{e(subtitle)}</p>" if subtitle else ""
    return (
        f'<!doctype html>\n<html lang="{html_lang()}"><head><meta charset="utf-8"><title>{e(title)}</title></head>\n'
        f"<body><h1>{e(title)}</h1>{sub}\n<ol>\n{body}\n</ol></body></html>\n"
    )


def atom(
    hits: Sequence[Hit],
    title: str,
    feed_id: str,
    updated: dict[str, str] | None = None,
    link: str = "",
    now: datetime | None = None,
) -> str:
    """An Atom 1.0 feed; entry ids are stable (`urn:paperatlas:paper:<id>`) so readers dedupe."""
    updated = updated or {}
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = [
        '<?xml version="1.0" encoding="utf-8"?>',
        f'<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="{html_lang()}">',
        f"  <title>{escape(title)}</title>",
        f"  <id>{escape(feed_id)}</id>",
        f"  <updated>{stamp}</updated>",
        "  <generator>paperatlas</generator>",
    ]
    if link:
        out.append(f'  <link rel="self" href="{escape(link, {chr(34): "&quot;"})}"/>')
    for h in hits:
        p = h.paper
        summary = (gettext("Why: {reason}", reason=h.reason) + "\n\n" if h.reason else "") + p.abstract
        out += [
            "  <entry>",
            f"    <title>{escape(p.title)}</title>",
            f"    <id>urn:paperatlas:paper:{escape(p.id)}</id>",
            f"    <updated>{escape(_iso(updated.get(p.id)) or stamp)}</updated>",
        ]
        if safe_url(p.url):
            out.append(f'    <link href="{escape(safe_url(p.url), {chr(34): "&quot;"})}"/>')
        out += [f"    <author><name>{escape(a)}</name></author>" for a in p.authors[:20]]
        if not p.authors:
            out.append(f"    <author><name>{escape(gettext('unknown'))}</name></author>")
        out += [f'    <summary type="text">{escape(summary)}</summary>', "  </entry>"]
    out.append("</feed>")
    return "\n".join(out) + "\n"


def _iso(ts: str | None) -> str:
    """SQLite's '2026-11-29T17:38:00Z' or '...00.123Z' -> RFC 3339 (Atom wants exactly that)."""
    if not ts:
        return ""
    ts = ts.replace(" ", "T")
    if "." in ts:
        ts = ts.split(".")[0] + "Z"
    return ts if ts.endswith("Z") else ts + "Z"


def render(
    hits: Sequence[Hit],
    fmt: str,
    title: str,
    subtitle: str = "",
    feed_id: str = "",
    updated: dict[str, str] | None = None,
    link: str = "",
    tldrs: Mapping[str, str] | None = None,
) -> str:
    """The digest as markdown, html or atom; `tldrs` (paper id -> text) adds a TL;DR line to each paper."""
    if fmt == "markdown":
        return markdown(hits, title, subtitle, tldrs)
    if fmt == "html":
        return to_html(hits, title, subtitle, tldrs)
    if fmt == "atom":
        return atom(hits, title, feed_id or f"urn:paperatlas:feed:{title}", updated, link)
    raise ValueError(f"unknown digest format {fmt!r}; use one of {', '.join(FORMATS)}")
