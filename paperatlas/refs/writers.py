"""Papers as RIS and CSL-JSON, the two formats Zotero imports most faithfully (File > Import).

Conference papers become RIS `CONF` / CSL `paper-conference` with the venue as the proceedings;
papers without a venue become `GEN` / `article`. The paper's DOI and arXiv id travel with it
(DO and UR in RIS; DOI, URL and `number: arXiv:...` in CSL-JSON, as Zotero writes them), so an
import back into paperatlas, or Zotero's duplicate detection, recognises the paper.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ..models import Paper
from ..safety import safe_url
from . import ids as idmod

DERIVED_NOTE = "Title derived from the abstract by paperatlas"


def split_name(name: str) -> tuple[str, str]:
    """("family", "given") of a name as lists write it: "Edward J. Hu" -> ("Hu", "Edward J."),
    "Hu, Edward J." -> ("Hu", "Edward J."); one word is a family name."""
    name = " ".join(name.split())
    if "," in name:
        family, _, given = name.partition(",")
        return family.strip(), given.strip()
    parts = name.rsplit(" ", 1)
    return (parts[1], parts[0]) if len(parts) == 2 else (name, "")


def _url(p: Paper, arxiv: str) -> str:
    return safe_url(p.url) or (f"https://arxiv.org/abs/{arxiv}" if arxiv else "")


def _one_line(s: str) -> str:
    return re.sub(r"\s+", " ", s or "").strip()


def paper_ris(p: Paper) -> str:
    doi, arxiv = idmod.paper_ids(p)
    lines = [("TY", "CONF" if p.venue else "GEN"), ("TI", p.title)]
    for a in p.authors:
        family, given = split_name(a)
        lines.append(("AU", f"{family}, {given}" if given else family))
    if p.venue:
        lines.append(("T2", p.venue))
    if p.year:
        lines += [("PY", str(p.year)), ("DA", f"{p.year}///")]
    if p.abstract:
        lines.append(("AB", p.abstract))
    if doi:
        lines.append(("DO", doi))
    if url := _url(p, arxiv):
        lines.append(("UR", url))
    lines += [("KW", k) for k in p.keywords]
    if p.status:
        lines.append(("N1", p.status))
    if p.title_derived:
        lines.append(("N1", DERIVED_NOTE))
    lines.append(("ID", p.id))
    # one value a line: a newline inside a value would start a new (untagged) line
    return "".join(f"{tag}  - {_one_line(value)}\n" for tag, value in lines) + "ER  - \n"


def to_ris(papers: Sequence[Paper]) -> str:
    return "\n".join(paper_ris(p) for p in papers)


def paper_csl(p: Paper) -> dict[str, Any]:
    doi, arxiv = idmod.paper_ids(p)
    item: dict[str, Any] = {"id": p.id, "type": "paper-conference" if p.venue else "article", "title": p.title}
    if p.authors:
        names = []
        for a in p.authors:
            family, given = split_name(a)
            names.append({"family": family, "given": given} if given else {"literal": family})
        item["author"] = names
    if p.venue:
        item["container-title"] = p.venue
        item["event-title"] = p.venue
    if p.year:
        item["issued"] = {"date-parts": [[p.year]]}
    if p.abstract:
        item["abstract"] = p.abstract
    if doi:
        item["DOI"] = doi
    if url := _url(p, arxiv):
        item["URL"] = url
    if arxiv:
        item["number"] = f"arXiv:{arxiv}"
    if p.keywords:
        item["keyword"] = ", ".join(p.keywords)
    if p.status:
        item["genre"] = p.status
    if p.title_derived:
        item["note"] = DERIVED_NOTE
    return item


def to_csl_json(papers: Sequence[Paper]) -> str:
    return json.dumps([paper_csl(p) for p in papers], ensure_ascii=False, indent=2) + "\n"
