"""Read a reference manager's export into Entries: CSL-JSON, RIS, BibTeX/BibLaTeX, Zotero RDF, or a plain list.

These are the files Zotero writes (File > Export Library, or Better BibTeX), and what Mendeley,
EndNote and JabRef write too. Each reader keeps only what matching needs: the identifiers (DOI,
arXiv id, URL, key) and the title, plus a short label for the import report.
"""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PaperatlasError
from ..ingest.formats import limit, parse_xml
from . import ids as idmod

_TAG = re.compile(r"<[^>]+>")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d|21\d\d)\b")


@dataclass
class Entry:
    """One thing the reader listed: what it said (for the report), the ids and the title to try."""

    text: str
    ids: list[str] = field(default_factory=list)
    title: str = ""
    doi: str = ""
    arxiv: str = ""
    year: int | None = None
    authors: list[str] = field(default_factory=list)


def _entry(
    title: str,
    key: str = "",
    year: Any = None,
    authors: list[str] | None = None,
    doi: str = "",
    arxiv: str = "",
    urls: list[str] | None = None,
    notes: list[str] | None = None,
) -> Entry:
    """An Entry from a record's parts; DOI and arXiv id are also looked for in the urls and notes."""
    title = _plain(title)
    urls = [u for u in (urls or []) if u]
    found_doi = idmod.doi(doi) or next((d for u in urls if "doi" in u.lower() and (d := idmod.doi(u))), "")
    found_arxiv = (
        idmod.arxiv(arxiv, trusted=True)
        or idmod.arxiv(found_doi)
        or next((a for t in [*urls, *(notes or [])] if (a := idmod.arxiv(t))), "")
    )
    if not found_doi:
        found_doi = next((d for t in notes or [] if re.search(r"\bdoi\b", t, re.I) and (d := idmod.doi(t))), "")
    y = _year(year)
    label = title or key or found_doi or found_arxiv or (urls[0] if urls else "(an entry without a title)")
    ids = [i for i in dict.fromkeys([key, *urls]) if i]
    return Entry(label, ids, title, found_doi, found_arxiv, y, [a for a in (authors or []) if a])


def _plain(s: Any) -> str:
    """Title text without HTML markup (CSL-JSON allows <i>), LaTeX braces, or doubled spaces."""
    s = html.unescape(_TAG.sub("", str(s or "")))
    s = re.sub(r"(?<!\\)[{}]", "", s)
    return re.sub(r"\s+", " ", s).strip()


def _year(v: Any) -> int | None:
    m = _YEAR.search(str(v or ""))
    return int(m.group(1)) if m else None


# -- CSL-JSON (Zotero "CSL JSON", Better BibTeX "Better CSL JSON") --------------------------------
def _csl_date(d: Any) -> Any:
    if isinstance(d, dict):
        parts = d.get("date-parts") or [[]]
        if parts and parts[0]:
            return parts[0][0]  # real exports write the year as a string too: [["2006"]]
        return d.get("raw") or d.get("literal") or ""
    return d


def _csl_name(a: Any) -> str:
    if not isinstance(a, dict):
        return str(a)
    if a.get("literal"):
        return str(a["literal"])
    return " ".join(
        str(a[k]) for k in ("given", "dropping-particle", "non-dropping-particle", "family", "suffix") if a.get(k)
    )


def read_csl_json(text: str, name: str = "") -> list[Entry]:
    try:
        data = json.loads(text)
    except RecursionError:  # the decoder recurses once per level: 100,000 nested brackets end here
        raise PaperatlasError(
            f"{name}: JSON nested too deep to read (real CSL-JSON nests a few levels)",
            "export it again from Zotero as CSL JSON",
        ) from None
    except json.JSONDecodeError as e:
        if e.msg == "Extra data":  # one item a line (JSON Lines, e.g. `paperatlas export --format jsonl`)
            data = []
            for n, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        data.append(json.loads(line))
                    except RecursionError:
                        raise PaperatlasError(
                            f"{name}, line {n}: JSON nested too deep to read",
                            "one JSON object a line, or export a CSL JSON list",
                        ) from None
                    except json.JSONDecodeError as le:
                        raise PaperatlasError(
                            f"{name}, line {n}: not valid JSON ({le.msg})",
                            "one JSON object a line, or export a CSL JSON list",
                        ) from None
            return _csl_items(data, name)
        raise PaperatlasError(
            f"{name}, line {e.lineno}: not valid JSON ({e.msg})",
            "export it again from Zotero as CSL JSON (File > Export Library...)",
        ) from None
    return _csl_items(data, name)


def _csl_items(data: Any, name: str) -> list[Entry]:
    if isinstance(data, dict):
        data = data.get("items", [data])
    if not isinstance(data, list):
        raise PaperatlasError(
            f"{name}: CSL-JSON is a list of items, not {type(data).__name__}", "export it again from Zotero as CSL JSON"
        )
    out = []
    for i, it in enumerate(data, start=1):
        if not isinstance(it, dict):
            raise PaperatlasError(
                f"{name}, item {i}: an item must be an object, not {type(it).__name__}",
                "export it again from Zotero as CSL JSON",
            )
        out.append(
            _entry(
                it.get("title", ""),
                str(it.get("citation-key") or it.get("id") or ""),
                _csl_date(it.get("issued")),
                [_csl_name(a) for a in it.get("author") or []],
                str(it.get("DOI") or ""),
                "",
                [str(it.get("URL") or "")],
                [str(it.get(k) or "") for k in ("number", "note", "archive_location")],
            )
        )
    return out


# -- RIS ----------------------------------------------------------------------------------------------
_RIS_LINE = re.compile(r"^([A-Z][A-Z0-9])  ?-(?: (.*))?$")


def ris_records(text: str, name: str = "") -> list[dict[str, list[str]]]:
    """RIS records as tag -> values (TY ... ER); a line without a tag continues the previous value."""
    records: list[dict[str, list[str]]] = []
    cur: dict[str, list[str]] | None = None
    last = ""
    for n, raw in enumerate(text.lstrip("\ufeff").splitlines(), start=1):
        line = raw.rstrip()
        m = _RIS_LINE.match(line)
        if m:
            tag, value = m.group(1), (m.group(2) or "").strip()
            if tag == "TY":
                cur = {"TY": [value]}
                records.append(cur)
            elif cur is None:
                raise PaperatlasError(
                    f"{name}, line {n}: {tag} before the first TY (a record starts with TY  - )",
                    "export it again from Zotero as RIS",
                )
            elif tag == "ER":
                cur = None
            else:
                cur.setdefault(tag, []).append(value)
            last = tag
        elif line.strip() and cur is not None and last in cur:
            cur[last][-1] = (cur[last][-1] + " " + line.strip()).strip()
    return records


def read_ris(text: str, name: str = "") -> list[Entry]:
    out = []
    for r in ris_records(text, name):

        def first(*tags: str) -> str:
            return next((r[t][0] for t in tags if r.get(t)), "")

        out.append(
            _entry(
                first("TI", "T1", "CT", "BT"),
                first("ID"),
                first("PY", "Y1", "DA"),
                [n for t in ("AU", "A1") for a in r.get(t, []) for n in _bib_authors(a)],
                first("DO"),
                "",
                [*r.get("UR", []), *r.get("L1", []), *r.get("L2", [])],
                [*r.get("N1", []), *r.get("M3", []), *r.get("AN", []), *r.get("DO", [])],
            )
        )
    return out


# -- BibTeX / BibLaTeX (Zotero and Better BibTeX) ---------------------------------------------------
def read_bibtex(text: str, name: str = "") -> list[Entry]:
    import bibtexparser

    out = []
    lib = bibtexparser.parse_string(text)
    for e in lib.entries:
        f = {k.lower(): str(v.value) for k, v in e.fields_dict.items()}
        eprint_is_arxiv = (f.get("eprinttype", "") + f.get("archiveprefix", "")).lower().startswith("arxiv")
        out.append(
            _entry(
                f.get("title", ""),
                e.key,
                f.get("year") or f.get("date"),
                _bib_authors(f.get("author", "")),
                f.get("doi", ""),
                f.get("eprint", "") if eprint_is_arxiv else f.get("arxiv", ""),
                [f.get("url", ""), f.get("openreview", "")],
                [f.get(k, "") for k in ("journal", "journaltitle", "note", "number", "howpublished", "eprint")],
            )
        )
    if not out and lib.failed_blocks:
        b = lib.failed_blocks[0]
        raise PaperatlasError(
            f"{name}, line {getattr(b, 'start_line', 0) + 1}: a BibTeX entry could not be read",
            "check its braces and commas, or export it again from Zotero",
        )
    return out


def _bib_authors(s: str) -> list[str]:
    names = []
    for part in re.split(r"\s+and\s+", s):
        part = _plain(part)
        if "," in part:
            last, _, first = part.partition(",")
            part = f"{first.strip()} {last.strip()}".strip()
        if part:
            names.append(part)
    return names


# -- Zotero RDF ---------------------------------------------------------------------------------------
NS = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "z": "http://www.zotero.org/namespaces/export#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "bib": "http://purl.org/net/biblio#",
    "foaf": "http://xmlns.com/foaf/0.1/",
}
_ABOUT = f"{{{NS['rdf']}}}about"
_RESOURCE = f"{{{NS['rdf']}}}resource"
_NOT_ITEMS = {"attachment", "note"}


def read_zotero_rdf(text: str, name: str = "") -> list[Entry]:
    try:
        root = parse_xml(text.lstrip("\ufeff").encode("utf-8"), name or "the file")
    except ValueError as e:
        raise PaperatlasError(str(e), "export it again from Zotero as Zotero RDF") from None
    except ET.ParseError as e:
        line = e.position[0] if getattr(e, "position", None) else 0
        raise PaperatlasError(
            f"{name}, line {line}: not well-formed XML ({e})", "export it again from Zotero as Zotero RDF"
        ) from None
    by_about = {el.get(_ABOUT): el for el in root if el.get(_ABOUT)}
    out = []
    for el in root:
        itype = (el.findtext("z:itemType", "", NS) or "").strip()
        if not itype or itype in _NOT_ITEMS:
            continue  # attachments, notes, journals (containers), collections
        containers = []
        for part in el.findall("dcterms:isPartOf", NS):
            ref = part.get(_RESOURCE)
            containers += [by_about[ref]] if ref in by_about else list(part)
        identifiers = [t for c in [el, *containers] for t in _texts(c, "dc:identifier")]
        urls = [u for u in [el.get(_ABOUT, ""), *_uris(el)] if u.startswith(("http://", "https://"))]
        dois = [t[4:] for t in identifiers if t.upper().startswith("DOI ")]
        authors = []
        for p in el.findall("bib:authors/rdf:Seq/rdf:li/foaf:Person", NS):
            given = p.findtext("foaf:givenName", "", NS) or p.findtext("foaf:givenname", "", NS)
            authors.append(f"{given.strip()} {p.findtext('foaf:surname', '', NS).strip()}".strip())
        out.append(
            _entry(
                el.findtext("dc:title", "", NS),
                "" if el.get(_ABOUT, "").startswith("#") else el.get(_ABOUT, ""),
                el.findtext("dc:date", "", NS),
                authors,
                dois[0] if dois else "",
                el.findtext("z:archiveID", "", NS),
                urls,
                [*identifiers, *_texts(el, "dc:description"), el.findtext("z:archiveID", "", NS)],
            )
        )
    return out


def _texts(el: ET.Element, path: str) -> list[str]:
    return [(c.text or "").strip() for c in el.findall(path, NS) if (c.text or "").strip()]


def _uris(el: ET.Element) -> list[str]:
    return [(v.text or "").strip() for v in el.findall("dc:identifier/dcterms:URI/rdf:value", NS)]


# -- a plain list: one title, DOI, arXiv id or URL a line ---------------------------------------------
def read_list(text: str, name: str = "") -> list[Entry]:
    out = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        e = _entry(
            s,
            notes=[s],
            urls=[s] if "://" in s else None,
            doi=s if idmod.doi(s) else "",
            arxiv=s if idmod.ARXIV_ID_ONLY.fullmatch(s) else "",
        )
        e.ids = [s, *(m.group(1).rstrip(".,;") for m in re.finditer(r"forum\?id=([\w\-]+)", s))]
        e.text = s
        out.append(e)
    return out


READERS: dict[str, Callable[[str, str], list[Entry]]] = {
    "csl-json": read_csl_json,
    "ris": read_ris,
    "bibtex": read_bibtex,
    "zotero-rdf": read_zotero_rdf,
    "list": read_list,
}
FORMATS = tuple(READERS)


def sniff(text: str) -> str:
    """The format of a reference file, from its content."""
    head = text.lstrip("\ufeff \t\r\n")[:4000]
    if head[:1] in "[{":
        return "csl-json"
    if head.startswith("<") and "rdf" in head[:2000].lower():
        return "zotero-rdf"
    if re.search(r"^TY  ?- ", head, re.M):
        return "ris"
    if re.search(r"@\w+\s*\{", head):
        return "bibtex"
    return "list"


def read_entries(path: str | Path, format: str | None = None) -> list[Entry]:
    """The entries of a reference file (format detected from its content unless given)."""
    p = Path(path)
    max_bytes = limit("PAPERATLAS_MAX_INPUT_BYTES")  # the same bound as ingest's: a reference file is far smaller
    try:
        size = p.stat().st_size
    except OSError as e:
        raise PaperatlasError(f"cannot read {p}: {e.strerror or e}", "check the path") from None
    if size > max_bytes:
        raise PaperatlasError(
            f"{p}: the file has {size:,} bytes (the limit is {max_bytes:,})",
            "split the file, or raise the limit with PAPERATLAS_MAX_INPUT_BYTES=N if it really "
            "holds that many references",
        )
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise PaperatlasError(
            f"{p}: not UTF-8 text (byte {e.start})", "export it again with the UTF-8 character encoding"
        ) from None
    fmt = format or sniff(text)
    if fmt not in READERS:
        raise PaperatlasError(f"unknown reference format {fmt!r}", f"use one of: {', '.join(FORMATS)}")
    return READERS[fmt](text, str(p))
