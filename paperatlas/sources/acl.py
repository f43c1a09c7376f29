"""ACL Anthology: an event's papers with abstracts, from the Anthology's own XML.

`acl 2024.acl` (or `acl acl-2024`, `acl emnlp-2023`) reads the collection file
`https://raw.githubusercontent.com/acl-org/acl-anthology/master/data/xml/2024.acl.xml`: every volume
(long, short, demo ...) and paper, with title, authors, abstract, DOI and the Anthology link.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ..ingest.formats import Format, parse_xml
from .base import SOURCES, Page, SourceArgsError, get_parsed, reject_options
from ..http_client import HttpClient, Response

DEFAULT_BASE = "https://raw.githubusercontent.com/acl-org/acl-anthology/master"
_EVENT = re.compile(
    r"^(?:(?P<y1>(?:19|20)\d\d)\.(?P<v1>[a-z][a-z0-9-]*)|(?P<v2>[a-z][a-z0-9]*)-(?P<y2>(?:19|20)\d\d))$"
)


def _text(el: ET.Element | None) -> str:
    """An element's text with its markup (<fixed-case>, <tex-math>, <b>) dropped."""
    return " ".join("".join(el.itertext()).split()) if el is not None else ""


@SOURCES.register("acl")
class AclSource:
    name: ClassVar[str] = "acl"
    default_base: ClassVar[str] = DEFAULT_BASE
    polite_delay: ClassVar[float] = 1.0

    def __init__(self, args: Sequence[str], base_url: str | None = None, **options: Any) -> None:
        event = " ".join(args).strip().lower().replace(" ", "-")
        m = _EVENT.match(event)
        if len(args) not in (1, 2) or m is None:
            raise SourceArgsError(
                f"acl takes an EVENT like acl-2024 or 2024.acl, got {' '.join(args) or 'nothing'}",
                "e.g. `paperatlas fetch acl acl-2024` or `paperatlas fetch acl 2023.emnlp`",
            )
        reject_options("acl", options, "EVENT and --base-url")
        year, venue = (m["y1"], m["v1"]) if m["y1"] else (m["y2"], m["v2"])
        self.collection = f"{year}.{venue}"
        self.base_url = (base_url or DEFAULT_BASE).rstrip("/")
        self.key = f"acl {self.collection}"

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        url = f"{self.base_url}/data/xml/{self.collection}.xml"
        resp, rows = get_parsed(client, url, _rows, f"acl {self.collection}")
        yield Page(resp.url, rows, Format.JSON, {"complete": True}, total=len(rows))


def _rows(resp: Response) -> list[tuple[str, dict[str, Any]]]:
    root = parse_xml(resp.body, "the Anthology file")  # each volume's subtree is walked: depth is bounded first
    if root.tag != "collection":
        raise ValueError(f"expected an Anthology <collection>, got <{root.tag}>")
    rows = []
    for vol in root.iter("volume"):
        meta = vol.find("meta")
        venue = _text(meta.find("venue")) if meta is not None else ""
        year = _text(meta.find("year")) if meta is not None else ""
        for paper in vol.iter("paper"):
            anth = _text(paper.find("url"))
            if not anth:
                continue
            authors = [
                " ".join(x for x in (_text(a.find("first")), _text(a.find("last"))) if x)
                for a in paper.findall("author")
            ]
            row = {
                "id": anth,
                "title": _text(paper.find("title")),
                "abstract": _text(paper.find("abstract")),
                "authors": authors,
                "venue": venue.upper() or root.get("id", ""),
                "year": year,
                "track": vol.get("id", ""),
                "url": f"https://aclanthology.org/{anth}/",
                "doi": _text(paper.find("doi")),
            }
            if paper.find("award") is not None:
                row["status"] = _text(paper.find("award"))
            rows.append((f"paper {anth}", row))
    return rows
