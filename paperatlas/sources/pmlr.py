"""PMLR (ICML, AISTATS, COLT, CoRL, UAI ... proceedings): one volume's BibTeX, abstracts included.

`GET https://proceedings.mlr.press/v{N}/assets/bib/bibliography.bib` (older volumes:
`/v{N}/bibliography.bib`), read as `paperatlas ingest volume.bib` reads it; the venue's short name
comes from the booktitle ("... Conference on Learning Theory" -> COLT).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

from ..ingest.formats import Format, read_string
from .base import SOURCES, Page, SourceArgsError, get_parsed, reject_options
from ..http_client import FetchError, HttpClient, Response

DEFAULT_BASE = "https://proceedings.mlr.press"
# booktitle words -> the name people use (checked in this order)
SHORT_NAMES = (
    ("International Conference on Machine Learning", "ICML"),
    ("Artificial Intelligence and Statistics", "AISTATS"),
    ("Conference on Learning Theory", "COLT"),
    ("Conference on Robot Learning", "CoRL"),
    ("Uncertainty in Artificial Intelligence", "UAI"),
    ("Asian Conference on Machine Learning", "ACML"),
    ("Algorithmic Learning Theory", "ALT"),
    ("Learning for Dynamics and Control", "L4DC"),
    ("Conference on Lifelong Learning Agents", "CoLLAs"),
    ("Causal Learning and Reasoning", "CLeaR"),
    ("Machine Learning for Health", "ML4H"),
)


def short_venue(booktitle: str) -> str:
    for words, name in SHORT_NAMES:
        if words.lower() in booktitle.lower():
            return name
    return booktitle


@SOURCES.register("pmlr")
class PmlrSource:
    name: ClassVar[str] = "pmlr"
    default_base: ClassVar[str] = DEFAULT_BASE
    polite_delay: ClassVar[float] = 1.0

    def __init__(self, args: Sequence[str], base_url: str | None = None, **options: Any) -> None:
        m = re.fullmatch(r"v?(\d{1,4})", args[0].strip().lower()) if len(args) == 1 else None
        if m is None:
            raise SourceArgsError(
                f"pmlr takes one VOLUME number, got {' '.join(args) or 'nothing'}",
                "e.g. `paperatlas fetch pmlr 235` (ICML 2024; the volumes: proceedings.mlr.press)",
            )
        reject_options("pmlr", options, "VOLUME and --base-url")
        self.volume = int(m.group(1))
        self.base_url = (base_url or DEFAULT_BASE).rstrip("/")
        self.key = f"pmlr v{self.volume}"

    def pages(self, client: HttpClient, state: dict[str, Any]) -> Iterator[Page]:
        def parse(resp: Response) -> Any:
            res = read_string(resp.url, resp.body.decode("utf-8"), Format.BIBTEX)
            if not res.rows:
                raise ValueError(str(res.bad[0]) if res.bad else "no BibTeX entries")
            return res

        what = f"pmlr volume {self.volume}"
        urls = [
            f"{self.base_url}/v{self.volume}/assets/bib/bibliography.bib",
            f"{self.base_url}/v{self.volume}/bibliography.bib",
        ]
        try:
            resp, res = get_parsed(client, urls[0], parse, what)
        except FetchError as e:
            if "HTTP 404" not in str(e):
                raise
            resp, res = get_parsed(client, urls[1], parse, what)
        rows = []
        for loc, row in res.rows:
            row = dict(row)
            row["venue"] = short_venue(str(row.get("booktitle", "")))
            rows.append((loc, row))
        yield Page(resp.url, rows, Format.BIBTEX, {"complete": True}, total=len(rows))
