"""DOIs and arXiv ids: find them in free text, URLs and fields, and put them in one canonical form.

A reference manager writes the same paper's identity many ways (`https://doi.org/10.1/X`,
`doi:10.1/x`, `arXiv:2106.09685v2 [cs.CL]`, `http://arxiv.org/abs/2106.09685`, the arXiv DOI
`10.48550/arXiv.2106.09685`); matching compares the canonical forms.
"""

from __future__ import annotations

import re
from typing import Any

_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>?#&]+)", re.I)  # ? # & end a DOI inside an URL
_ARXIV_NEW = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")
_ARXIV_OLD = re.compile(r"\b([a-z\-]+(?:\.[A-Z]{2})?/\d{7})(?:v\d+)?\b")
_ARXIV_CONTEXT = re.compile(r"arxiv", re.I)
ARXIV_ID_ONLY = re.compile(r"\d{4}\.\d{4,5}(?:v\d+)?")
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.I)


def doi(text: str | None) -> str:
    """The first DOI in `text`, lower-cased, without a resolver prefix or trailing punctuation ("" if none)."""
    if not text:
        return ""
    m = _DOI.search(str(text))
    return m.group(1).rstrip(".,;)]}").lower() if m else ""


def arxiv(text: str | None, trusted: bool = False) -> str:
    """The arXiv id (no version) in `text`, or "".

    A bare `2106.09685` also looks like a page range or a number, so it counts only when the
    text mentions arXiv (an URL, `arXiv:` prefix, the arXiv DOI) or when `trusted` (a field that
    holds nothing else, such as BibLaTeX's eprint with eprinttype arxiv)."""
    if not text:
        return ""
    s = str(text)
    d = _ARXIV_DOI.match(doi(s))
    if d:
        s, trusted = d.group(1), True
    if not (trusted or _ARXIV_CONTEXT.search(s)):
        return ""
    m = _ARXIV_NEW.search(s) or _ARXIV_OLD.search(s)
    return m.group(1) if m else ""


def paper_ids(paper: Any) -> tuple[str, str]:
    """(doi, arxiv id) of a stored Paper, from its extra fields, its url and its own id."""
    extra = getattr(paper, "extra", None) or {}
    d = doi(str(extra.get("doi") or "")) or (doi(paper.url) if "doi.org/" in (paper.url or "") else "")
    a = (
        arxiv(str(extra.get("arxiv_id") or extra.get("arxiv") or ""), trusted=True)
        or arxiv(paper.url or "")
        or arxiv(d)
        or arxiv(paper.id, trusted=bool(ARXIV_ID_ONLY.fullmatch(paper.id)))
    )
    return d, a
