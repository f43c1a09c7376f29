"""Where a paper can be read: PDF, OpenReview, arXiv, DOI and source links built from its record.

Every link goes through safety.safe_url, so a record cannot smuggle a `javascript:` URL into a page."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import parse_qs, quote, urlsplit

from .models import Paper
from .safety import safe_url

_ARXIV_ID = re.compile(r"^(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$")
_ARXIV_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/([^?#]+?)(?:\.pdf)?$", re.I)
_OR_ID = re.compile(r"^[A-Za-z0-9_\-]{6,40}$")


def _openreview_id(p: Paper) -> str:
    oid = str(p.extra.get("openreview_id") or "")
    if not oid:
        parts = urlsplit(p.url or "")
        if parts.netloc.endswith("openreview.net") and parts.path in ("/forum", "/pdf"):
            oid = (parse_qs(parts.query).get("id") or [""])[0]
    return oid if _OR_ID.match(oid) else ""


def _arxiv_id(p: Paper, aliases: Sequence[str] = ()) -> str:
    m = _ARXIV_URL.search(p.url or "")
    if m and _ARXIV_ID.match(m.group(1)):
        return m.group(1)
    for cand in (str(p.extra.get("arxiv_id") or ""), p.id):
        if _ARXIV_ID.match(cand) and (cand != p.id or "arxiv" in (p.source or "").lower() or p.extra.get("categories")):
            return cand
    # an arXiv preprint merged into its venue version keeps its arXiv id as an alias
    return next((a for a in aliases if _ARXIV_ID.match(a)), "")


def paper_links(p: Paper, aliases: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(label, http(s) URL) pairs, most useful first: PDF, OpenReview, arXiv, DOI, then the source URL.
    `aliases`: the paper's other ids (store.aliases_of), where a merged arXiv preprint's id lives."""
    links: list[tuple[str, str]] = []
    oid, aid = _openreview_id(p), _arxiv_id(p, aliases)
    url = safe_url(p.url)
    pdf = safe_url(str(p.extra.get("pdf") or ""))
    if pdf:
        links.append(("PDF", pdf))
    elif url and url.lower().split("?")[0].endswith(".pdf") or "openreview.net/pdf" in url:
        links.append(("PDF", url))
    elif oid:
        links.append(("PDF", f"https://openreview.net/pdf?id={oid}"))
    elif aid:
        links.append(("PDF", f"https://arxiv.org/pdf/{aid}"))
    if oid:
        links.append(("OpenReview", f"https://openreview.net/forum?id={oid}"))
    if aid:
        links.append(("arXiv", f"https://arxiv.org/abs/{aid}"))
    doi = str(p.extra.get("doi") or "").strip()
    if doi.lower().startswith("10."):
        links.append(("DOI", "https://doi.org/" + quote(doi, safe="/:;()._-")))
    if url and all(u != url for _, u in links):
        links.append(("Source", url))
    seen: set[str] = set()
    out = []
    for label, u in links:
        u = safe_url(u)
        if u and u not in seen:
            seen.add(u)
            out.append((label, u))
    return out


def link_map(p: Paper, aliases: Sequence[str] = ()) -> dict[str, str]:
    """{"page", "pdf", "arxiv"}, those the paper has: its own page and PDF as its record gives them,
    and its arXiv preprint when the library knows it under that id too (the venue version is the
    one shown). Every URL is http(s) (safe_url), as in `paper_links`."""
    out: dict[str, str] = {}
    page, pdf = safe_url(p.url), safe_url(str(p.extra.get("pdf") or ""))
    if page:
        out["page"] = page
    if pdf:
        out["pdf"] = pdf
    # an alias with a version suffix names one revision, not the preprint
    aid = next((a for a in aliases if (m := _ARXIV_ID.match(a)) and not m.group(2)), "")
    if aid:
        out["arxiv"] = f"https://arxiv.org/abs/{aid}"
    return out
