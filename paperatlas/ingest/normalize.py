"""Raw row dict (any format) -> Paper.

Recognises record flavours by shape: OpenReview notes (API v2 `content.title.value`
or v1 `content.title`), arXiv metadata snapshot rows, BEIR corpus rows, BibTeX
entries, and generic rows whose columns go by common names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from ..models import Paper
from .clean import clean_text, clean_texts, clean_title, normalize_key, strip_braces
from .columns import (
    ABSTRACT_KEYS,
    AUTHOR_KEYS,
    EXTRA_KEYS,
    ID_KEYS,
    KEYWORD_KEYS,
    STATUS_KEYS,
    TITLE_KEYS,
    TRACK_KEYS,
    URL_KEYS,
    VENUE_KEYS,
    YEAR_KEYS,
)
from .fields import presentation_of, source_fields
from .formats import Format
from .titles import derive_title

_YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")
_ARXIV_ID = re.compile(
    r"(?:arxiv\.org/abs/|arXiv:)?(\d{4}\.\d{4,5}|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})(v\d+)?$", re.IGNORECASE
)
_STATUS_WORDS = {"oral": "Oral", "spotlight": "Spotlight", "poster": "Poster", "workshop": "Workshop"}


class RecordError(ValueError):
    """This record cannot become a paper; the message says why."""


def _lower_keys(row: dict[str, Any]) -> dict[str, Any]:
    return {str(k).strip().lower(): v for k, v in row.items() if k is not None}


def _first(row: dict[str, Any], keys: Iterable[str]) -> Any:
    for k in keys:
        v = row.get(k)
        if v not in (None, "", [], {}):
            return v
    return None


def _unwrap(v: Any) -> Any:
    """OpenReview API v2 wraps every content field as {"value": ...}."""
    return v.get("value") if isinstance(v, dict) and "value" in v else v


def flavour(row: dict[str, Any]) -> Format | None:
    """Which known record shape a JSON row has, if any."""
    content = row.get("content")
    if isinstance(content, dict) and ("title" in content or "abstract" in content):
        return Format.OPENREVIEW
    if "_id" in row and "text" in row:
        return Format.BEIR
    if "abstract" in row and ("versions" in row or "authors_parsed" in row or "update_date" in row):
        return Format.ARXIV
    return None


def _text(v: Any) -> str:
    v = _unwrap(v)
    if v is None:
        return ""
    if isinstance(v, list):
        return " ".join(_text(x) for x in v)
    return str(v).strip()


_CJK_SEPARATORS = str.maketrans({"，": ",", "、": ",", "；": ";"})


def split_authors(v: Any) -> list[str]:
    """A list, or 'A and B', 'Last, First and Last, First', 'A; B', 'A, B, C' -> names."""
    v = _unwrap(v)
    if v is None or v == "":
        return []
    if isinstance(v, list):
        names = [_text(x.get("name") if isinstance(x, dict) else x) for x in v]
        return clean_texts([n for n in names if n])
    # Chinese pages join names with full-width commas or 、
    s = str(v).replace("\n", " ").replace(" · ", ", ").translate(_CJK_SEPARATORS).strip()
    if re.search(r"\s+and\s+", s):
        parts = re.split(r"\s+and\s+", s)
        parts = [" ".join(reversed([x.strip() for x in p.split(",", 1)])) if p.count(",") == 1 else p for p in parts]
        # "A, B and C" (arXiv snapshot style): split the left side on commas too
        if len(parts) == 2 and "," in parts[0]:
            parts = [x for x in parts[0].split(",")] + [parts[1]]
    elif ";" in s:
        parts = s.split(";")
    else:
        parts = s.split(",")
    return clean_texts([p.strip() for p in parts if p.strip()])


def _year(v: Any) -> int | None:
    v = _unwrap(v)
    if v is None or v == "":
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if v != v or v in (float("inf"), float("-inf")):
            return None
        n = int(v)
        if n > 10**11:  # OpenReview epoch milliseconds
            try:
                n = datetime.fromtimestamp(n / 1000, tz=timezone.utc).year
            except (ValueError, OverflowError, OSError):
                return None
        return n if 1950 <= n <= 2100 else None
    m = _YEAR.search(str(v))
    return int(m.group(1)) if m else None


def _keywords(v: Any) -> list[str]:
    v = _unwrap(v)
    if not v:
        return []
    if isinstance(v, list):
        return clean_texts([t for t in map(_text, v) if t])
    s = str(v)
    sep = ";" if ";" in s else ("," if "," in s else " ")
    return clean_texts([x.strip() for x in s.split(sep) if x.strip()])


def _status_from(text: str) -> str:
    low = text.lower()
    for w, s in _STATUS_WORDS.items():
        if w in low:
            return s
    return ""


def dedup_key(title: str, abstract: str) -> str:
    """Same normalised title + abstract -> same key: duplicates across files merge.

    Takes text that to_paper has already cleaned."""
    blob = normalize_key(title, clean=False) + "\x1f" + normalize_key(abstract, clean=False)
    return hashlib.sha1(blob.encode("utf-8")).hexdigest()


def to_paper(
    row: dict[str, Any],
    fmt: Format,
    source: str = "",
    defaults: dict[str, Any] | None = None,
    overrides: dict[str, Any] | None = None,
) -> tuple[Paper, str]:
    """Normalise one raw row. Returns (paper, dedup_key). Raises RecordError."""
    shape = fmt if fmt in (Format.OPENREVIEW, Format.ARXIV, Format.BEIR) else flavour(row)
    if shape is Format.OPENREVIEW:
        f = _openreview(row)
    elif shape is Format.ARXIV:
        f = _arxiv_snapshot(row)
    elif shape is Format.BEIR:
        f = {"id": _text(row.get("_id")), "title": _text(row.get("title")), "abstract": _text(row.get("text"))}
    else:
        f = _generic(_lower_keys(row), fmt)
    for k, v in (defaults or {}).items():
        if not f.get(k):
            f[k] = v
    for k, v in (overrides or {}).items():
        if v not in (None, ""):
            f[k] = v

    raw_abstract = f.get("abstract") or ""
    abstract = clean_text(raw_abstract)
    title = clean_title(f.get("title") or "")
    if fmt is Format.BIBTEX:
        # BibTeX protects capitals with braces ("the {ELBO}"); they are not text (but a title's math keeps its own)
        title, abstract = strip_braces(title), re.sub(r"(?<!\\)[{}]", "", abstract)
    derived = False
    if not title:
        if not abstract:
            raise RecordError("has neither a title nor an abstract")
        title, derived = derive_title(raw_abstract), True
    key = dedup_key(title, abstract)
    pid = str(f.get("id") or "").strip() or "h" + key[:15]
    status = clean_text(str(f.get("status") or ""))
    paper = Paper(
        id=pid,
        title=title,
        title_derived=derived,
        abstract=abstract,
        authors=split_authors(f.get("authors")),
        venue=clean_text(str(f.get("venue") or "")),
        year=_year(f.get("year")),
        status=_status_from(status) or status,
        track=clean_text(str(f.get("track") or "")),
        keywords=_keywords(f.get("keywords")),
        url=str(f.get("url") or "").strip(),
        source=source,
        raw=raw_abstract,
        extra={k: v for k, v in (f.get("extra") or {}).items() if v not in (None, "", [], {})},
    )
    return paper, key


def _generic(r: dict[str, Any], fmt: Format) -> dict[str, Any]:
    f: dict[str, Any] = {
        "id": _text(_first(r, ID_KEYS)),
        "title": _text(_first(r, TITLE_KEYS)),
        "abstract": _text(_first(r, ABSTRACT_KEYS)),
        "authors": _first(r, AUTHOR_KEYS),
        "venue": _text(_first(r, VENUE_KEYS)),
        "year": _first(r, YEAR_KEYS),
        "status": _text(_first(r, STATUS_KEYS)),
        "track": _text(_first(r, TRACK_KEYS)),
        "keywords": _first(r, KEYWORD_KEYS),
        "url": _text(_first(r, URL_KEYS)),
        "extra": {k: r[k] for k in EXTRA_KEYS if k in r},
    }
    f["extra"].update(source_fields(r, split_authors(f["authors"]), f["status"]))
    if isinstance(f["extra"].get("presentation"), str):
        f["extra"]["presentation"] = f["extra"]["presentation"].strip().lower()  # "oral", as docs/fields.md says
    pdf = _text(r.get("pdf_url"))
    if pdf and f["url"] and pdf != f["url"]:  # a paper page and its PDF: the PDF is what full text fetches
        f["extra"]["pdf"] = pdf
    if fmt is Format.BIBTEX:
        if not f["url"] and r.get("doi"):
            f["url"] = "https://doi.org/" + _text(r["doi"])
        f["extra"]["bibtex_type"] = r.get("entrytype", "")
    if fmt is Format.ATOM:
        m = _ARXIV_ID.search(f["id"])
        if m:
            f["id"] = m.group(1)
        f["venue"] = f["venue"] or "arXiv"
        f["keywords"] = r.get("categories")
        if r.get("pdf_url"):
            f["extra"]["pdf"] = r["pdf_url"]
    return f


def _openreview(row: dict[str, Any]) -> dict[str, Any]:
    c = row.get("content")
    if not isinstance(c, dict):
        raise RecordError("is an OpenReview note without a `content` object")
    venue_str = _text(c.get("venue"))  # e.g. "ICLR 2024 oral", "Submitted to ICLR 2024"
    venueid = _text(c.get("venueid"))  # "ICLR.cc/2024/Conference", ".../Rejected_Submission"
    forum = _text(row.get("forum")) or _text(row.get("id"))
    m = _YEAR.search(venue_str)
    venue = venue_str[: m.start()].strip() if m else venue_str
    venue = re.sub(r"^(?:submitted to|withdrawn from|rejected by)\s+", "", venue, flags=re.IGNORECASE)
    pdf = _text(c.get("pdf"))
    if pdf.startswith("/"):
        pdf = "https://openreview.net" + pdf
    elif not pdf and forum and c.get("venueid") is not None:  # an API v2 note: its PDF lives at /pdf?id=
        pdf = f"https://openreview.net/pdf?id={forum}"
    return {
        "id": _text(row.get("id")) or forum,
        "title": _text(c.get("title")),
        "abstract": _text(c.get("abstract")),
        "authors": _unwrap(c.get("authors")),
        "venue": venue or venueid.split("/")[0].removesuffix(".cc"),
        "year": _year(venue_str) or _year(venueid) or _year(row.get("pdate")) or _year(row.get("cdate")),
        "status": _status_from(venue_str) or _decision_from_venueid(venueid),
        "keywords": _unwrap(c.get("keywords")),
        "url": f"https://openreview.net/forum?id={forum}" if forum else "",
        "extra": {
            "tldr": _text(c.get("TLDR") or c.get("tldr")),
            "primary_area": _text(c.get("primary_area")),
            "pdf": pdf,
            "venueid": venueid if "/" in venueid else "",
            "presentation": presentation_of(venue_str),
            "code_url": _code_url(_text(c.get("code"))),
        },
    }


def _code_url(v: str) -> str:
    return v if v.startswith(("http://", "https://")) else ""


# OpenReview API v2 marks a submission's fate in content.venueid: VENUE/Rejected_Submission, ...
_VENUEID_DECISIONS = {
    "rejected_submission": "Rejected",
    "withdrawn_submission": "Withdrawn",
    "desk_rejected_submission": "Desk rejected",
    "submission": "Under review",
}


def _decision_from_venueid(venueid: str) -> str:
    tail = venueid.rsplit("/", 1)[-1].lower() if "/" in venueid else ""
    return _VENUEID_DECISIONS.get(tail, "")


def _arxiv_snapshot(row: dict[str, Any]) -> dict[str, Any]:
    """Rows of the Kaggle arXiv metadata snapshot (arxiv-metadata-oai-snapshot.json)."""
    aid = _text(row.get("id"))
    versions = row.get("versions")
    first = versions[0] if isinstance(versions, list) and versions else None
    created = first.get("created", "") if isinstance(first, dict) else ""
    authors: Any = row.get("authors")
    parsed = row.get("authors_parsed")
    if isinstance(parsed, list) and parsed:
        authors = [" ".join(x for x in (p[1], p[0]) if x).strip() for p in parsed if isinstance(p, list) and p]
    return {
        "id": aid,
        "title": _text(row.get("title")),
        "abstract": _text(row.get("abstract")),
        "authors": authors,
        "venue": _text(row.get("journal-ref")) or "arXiv",
        "year": _year(created) or _year(row.get("update_date")),
        "keywords": _text(row.get("categories")).split(),
        "url": f"https://arxiv.org/abs/{aid}" if aid else "",
        "extra": {"doi": _text(row.get("doi")), "categories": _text(row.get("categories"))},
    }


def title_key(title: str) -> str:
    """The key under which an arXiv preprint and its venue version meet: the normalised title,
    or '' for titles too short to tell papers apart."""
    k = normalize_key(title)  # cleaned: a title with TeX math meets its rendered spelling
    return k if len(k) >= 20 else ""


def _surnames(authors: list[str]) -> set[str]:
    return {normalize_key(a.split()[-1], clean=False) for a in authors if a.split()}


def preprint_link(
    paper: Paper, candidates: list[tuple[str, str, list[str]]], taken: set[str] = frozenset()
) -> tuple[str, str] | None:  # type: ignore[assignment]
    """How a new paper relates to stored papers with the same title key:
    ("into", venue_id) when it is the arXiv preprint of a stored venue paper, ("absorb", arxiv_id)
    when it is the venue version of a stored preprint, None otherwise. Same title and one shared
    author surname are required; two venue papers (or two preprints) with one title stay apart."""
    mine_arxiv = paper.venue.strip().lower() == "arxiv"
    mine = _surnames(paper.authors)
    for oid, venue, authors in candidates:
        if oid == paper.id or oid in taken or (venue.strip().lower() == "arxiv") == mine_arxiv:
            continue
        if not mine or not (mine & _surnames(authors)):
            continue
        return ("into", oid) if mine_arxiv else ("absorb", oid)
    return None


def swallowed_copy(paper: Paper, stored: Sequence[Paper]) -> str | None:
    """The id of a stored paper that `paper` (with the same title) only repeats with text glued to its
    abstract, or None. A pasted list that missed a paper's start reads it into the abstract above it
    (`abstract + next title + authors + next abstract`) or its author line into its own abstract's
    start: the same paper, to merge rather than store twice. Same venue and year where both give them,
    and one abstract (at least 80 characters) wholly inside the other."""
    mine = normalize_key(paper.abstract, clean=False)
    for other in stored:
        if other.id == paper.id:
            continue
        if paper.venue and other.venue and paper.venue.strip().lower() != other.venue.strip().lower():
            continue
        if paper.year and other.year and paper.year != other.year:
            continue
        theirs = normalize_key(other.abstract, clean=False)
        short, long_ = sorted((mine, theirs), key=len)
        if len(short) >= 80 and short in long_:
            return other.id
    return None
