"""Semantic Scholar's Graph API beside OpenAlex: a paper's TL;DR, external ids, counts, and which
papers cite it (and which it cites) with S2's `isInfluential` mark.

`GET {base}/paper/DOI:{doi}` (or `ARXIV:{id}`) with `fields=`, then `GET {base}/paper/{id}/citations`
and `/references`, paged by `offset` and `next`. An API key (setting `s2_api_key`) goes in the
`x-api-key` header; without one the public rate is kept (S2_DELAY between requests) and a 429 is
waited out as its Retry-After asks (the shared HTTP client). Every answer is parsed defensively: a
record that is not what the service sends is refused, a list is cut at MAX_LINKS.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import settings
from ..http_client import FetchError, HttpClient
from ..sources.base import get_parsed, parse_json
from ..sources.openalex import bare_doi
from ..store.semantic_scholar import S2Link, S2Record

if TYPE_CHECKING:
    from ..http_client import Response

DEFAULT_BASE = "https://api.semanticscholar.org/graph/v1"
S2_DELAY = 1.1  # seconds between requests: S2 allows about one a second
PAPER_FIELDS = "paperId,externalIds,title,year,citationCount,influentialCitationCount,tldr"
LINK_FIELDS = "paperId,externalIds,title,isInfluential"
PAGE = 1000  # the largest page the citations and references endpoints give
MAX_LINKS = 5000  # links kept per direction: past what any library holds of one paper's citers
MAX_TLDR = 2000
_S2_ID = re.compile(r"^[0-9a-f]{40}$")


def api_key_default() -> str:
    return str(settings.get("s2_api_key")).strip()


def _text(v: Any) -> str:
    return v.strip() if isinstance(v, str) else ""


def _count(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _parse_paper(resp: Response) -> dict[str, Any]:
    data = parse_json(resp)
    if not isinstance(data, dict) or not _S2_ID.match(_text(data.get("paperId"))):
        raise ValueError("no `paperId` in the answer")
    return data


def _parse_links(resp: Response) -> dict[str, Any]:
    data = parse_json(resp)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError("no `data` list in the answer")
    return data


def external_keys(ids: Any) -> tuple[str, str]:
    """(DOI, arXiv id) of an S2 `externalIds` object, "" where absent."""
    if not isinstance(ids, dict):
        return "", ""
    return bare_doi(ids.get("DOI")), _text(ids.get("ArXiv"))


@dataclass
class S2Report:
    """What one Semantic Scholar pass of `enrich` did."""

    looked_up: int = 0
    matched: int = 0
    unmatched: int = 0
    no_id: int = 0  # papers with neither DOI nor arXiv id: not asked about
    influential: int = 0  # influential links to library papers found
    requests: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        s = f"{self.matched} of {self.looked_up} papers matched in Semantic Scholar, {self.unmatched} not found"
        if self.no_id:
            s += f", {self.no_id} without a DOI or arXiv id (not asked)"
        return s + f", {self.influential} influential citations within the library ({self.requests} requests)"

    def to_dict(self) -> dict[str, Any]:
        return {
            "looked_up": self.looked_up,
            "matched": self.matched,
            "unmatched": self.unmatched,
            "no_id": self.no_id,
            "influential": self.influential,
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
            "notes": self.notes,
            "summary": self.summary(),
        }


class S2Client:
    """The few Graph API calls `enrich` makes, through the shared HTTP client."""

    def __init__(self, client: HttpClient, base_url: str | None = None, api_key: str | None = None) -> None:
        self.client = client
        self.base = (base_url or DEFAULT_BASE).rstrip("/")
        key = api_key if api_key is not None else api_key_default()
        self.headers = {"x-api-key": key} if key else {}

    def paper(self, key: str) -> dict[str, Any] | None:
        """The record of `DOI:…` / `ARXIV:…` (None when S2 does not know it)."""
        try:
            _, data = get_parsed(
                self.client,
                f"{self.base}/paper/{key}",
                _parse_paper,
                f"semantic scholar {key}",
                {"fields": PAPER_FIELDS},
                self.headers,
            )
        except FetchError as e:
            if e.status == 404:
                return None
            raise
        return data

    def links(self, s2_id: str, direction: str) -> list[dict[str, Any]]:
        """Citation edges of a paper: `citations` (who cites it) or `references` (what it cites)."""
        out: list[dict[str, Any]] = []
        offset = 0
        while len(out) < MAX_LINKS:
            _, data = get_parsed(
                self.client,
                f"{self.base}/paper/{s2_id}/{direction}",
                _parse_links,
                f"semantic scholar {direction} of {s2_id}",
                {"fields": LINK_FIELDS, "offset": offset, "limit": PAGE},
                self.headers,
            )
            out += [e for e in data["data"] if isinstance(e, dict)]
            nxt = data.get("next")
            # a `next` that does not move forward would page in a circle
            if not isinstance(nxt, int) or isinstance(nxt, bool) or nxt <= offset or not data["data"]:
                break
            offset = nxt
        return out[:MAX_LINKS]


def s2_record(
    paper_id: str,
    paper: dict[str, Any],
    citations: list[dict[str, Any]],
    references: list[dict[str, Any]],
    library_of: Callable[[str, str], str | None],
) -> S2Record:
    """A paper's S2 record and its links; `library_of(doi, arxiv)` names the library paper an end is."""
    tldr = paper.get("tldr")
    t: dict[str, Any] = tldr if isinstance(tldr, dict) else {}
    ext = paper.get("externalIds")
    links = []
    for direction, key, edges in (("cited_by", "citingPaper", citations), ("cites", "citedPaper", references)):
        for e in edges:
            other = e.get(key)
            if not isinstance(other, dict) or not _S2_ID.match(_text(other.get("paperId"))):
                continue  # S2 lists references it could not resolve with a null paper
            doi, arxiv = external_keys(other.get("externalIds"))
            links.append(S2Link(direction, other["paperId"], library_of(doi, arxiv), e.get("isInfluential") is True))
    return S2Record(
        paper_id,
        _text(paper.get("paperId")),
        True,
        _text(t.get("text"))[:MAX_TLDR],
        _text(t.get("model"))[:100],
        {str(k): v for k, v in ext.items() if isinstance(v, (str, int))} if isinstance(ext, dict) else {},
        _count(paper.get("citationCount")),
        _count(paper.get("influentialCitationCount")),
        links,
    )
