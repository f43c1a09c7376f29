"""Render papers as JSONL, JSON, CSV, BibTeX, Markdown, RIS or CSL-JSON (CLI export and saved-list download)."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .models import Paper
from .refs.writers import to_csl_json, to_ris
from .safety import csv_cell, md_code, md_link, md_text, safe_url

EXPORT_FORMATS = ("jsonl", "json", "csv", "bibtex", "markdown", "ris", "csl-json")


def _public(p: Paper) -> dict[str, object]:
    d = p.to_dict()
    d.pop("raw", None)
    return d


def to_jsonl(papers: Sequence[Paper]) -> str:
    return "".join(json.dumps(_public(p), ensure_ascii=False) + "\n" for p in papers)


def to_json(papers: Sequence[Paper]) -> str:
    return json.dumps([_public(p) for p in papers], ensure_ascii=False, indent=2) + "\n"


CSV_COLUMNS = ("id", "title", "title_derived", "authors", "venue", "year", "status", "keywords", "url", "abstract")


def to_csv(papers: Sequence[Paper]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(CSV_COLUMNS)
    for p in papers:
        # csv_cell: a cell starting with = + - @ would run as a formula in a spreadsheet
        w.writerow(
            [
                csv_cell(v)
                for v in (
                    p.id,
                    p.title,
                    int(p.title_derived),
                    "; ".join(p.authors),
                    p.venue,
                    p.year or "",
                    p.status,
                    "; ".join(p.keywords),
                    safe_url(p.url),
                    p.abstract,
                )
            ]
        )
    return buf.getvalue()


def bibtex_key(p: Paper) -> str:
    first = (p.authors[0].split()[-1] if p.authors else "") or "anon"
    word = next((w for w in re.findall(r"[A-Za-z]{4,}", p.title)), "paper")
    key = f"{first}{p.year or ''}{word}".lower()
    return re.sub(r"[^a-z0-9]", "", key) or "paper"


def _bib_escape(s: str) -> str:
    # braces must balance inside a BibTeX value; special characters get their LaTeX escapes
    s = s.replace("\\", r"\textbackslash{}").replace("{", r"\{").replace("}", r"\}")
    for ch in "&%$#_":
        s = s.replace(ch, "\\" + ch)
    return s


def paper_bibtex(p: Paper) -> str:
    fields = [("title", "{" + _bib_escape(p.title) + "}")]
    if p.authors:
        fields.append(("author", _bib_escape(" and ".join(p.authors))))
    if p.venue:
        fields.append(("booktitle", _bib_escape(p.venue)))
    if p.year:
        fields.append(("year", str(p.year)))
    if p.url:
        fields.append(("url", p.url))
    if p.abstract:
        fields.append(("abstract", _bib_escape(p.abstract)))
    if p.title_derived:
        fields.append(("note", "Title derived from the abstract by paperatlas"))
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
    return f"@inproceedings{{{bibtex_key(p)},\n{body}\n}}\n"


def to_bibtex(papers: Sequence[Paper]) -> str:
    seen: dict[str, int] = {}
    out = []
    for p in papers:
        entry = paper_bibtex(p)
        key = bibtex_key(p)
        n = seen.get(key, 0)
        seen[key] = n + 1
        if n:  # keys must be unique within a file
            entry = entry.replace("{" + key + ",", "{" + key + chr(ord("a") + min(n, 25)) + ",", 1)
        out.append(entry)
    return "\n".join(out)


def to_markdown(papers: Sequence[Paper]) -> str:
    lines = []
    for p in papers:
        # every stored value is escaped and only http(s) URLs become links: a Markdown file is often rendered
        title = md_link(p.title, p.url)
        if p.title_derived:
            title += " *(title derived)*"
        meta = " · ".join(
            md_text(x) for x in (", ".join(p.authors[:6]), f"{p.venue} {p.year or ''}".strip(), p.status) if x
        )
        lines.append(f"- **{title}**" + (f"  \n  {meta}" if meta else "") + f"  \n  {md_code(p.id)}")
    return "\n".join(lines) + "\n"


EXPORTERS: dict[str, Callable[[Sequence[Paper]], str]] = {
    "jsonl": to_jsonl,
    "json": to_json,
    "csv": to_csv,
    "bibtex": to_bibtex,
    "markdown": to_markdown,
    "ris": to_ris,  # Zotero, EndNote, Mendeley
    "csl-json": to_csl_json,  # Zotero, pandoc, citeproc
}


def with_vectors(papers: Sequence[Paper], vectors: Mapping[str, np.ndarray], fmt: str) -> str:
    """JSON or JSONL with each paper's embedding as `vector` (9 significant digits: float32 exactly)."""
    rows = []
    for p in papers:
        d = _public(p)
        v = vectors.get(p.id)
        d["vector"] = None if v is None else [float(f"{x:.9g}") for x in np.asarray(v, dtype=np.float32).tolist()]
        rows.append(d)
    if fmt == "json":
        return json.dumps(rows, ensure_ascii=False, indent=2) + "\n"
    return "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in rows)


def export(papers: Sequence[Paper], fmt: str, vectors: Mapping[str, np.ndarray] | None = None) -> str:
    if vectors is not None:
        if fmt not in ("json", "jsonl"):
            raise ValueError(f"vectors export as json or jsonl, not {fmt!r}")
        return with_vectors(papers, vectors, fmt)
    try:
        return EXPORTERS[fmt](papers)
    except KeyError:
        raise ValueError(f"unknown export format {fmt!r}; use one of: {', '.join(EXPORT_FORMATS)}") from None
