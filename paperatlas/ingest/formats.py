"""Read a paper-list file into raw row dicts: detect the format, decode, parse.

Every reader returns rows with their location ("line 12", "entry smith2020") so
that an error can name the record, and collects bad records instead of raising,
so the caller decides between failing the whole file and --skip-bad.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from .. import settings
from ..models import BadRecord
from ..safety import strip_controls
from .columns import ABSTRACT_KEYS


class Format(str, Enum):
    """File formats paperatlas reads. Record flavours (BEIR, OpenReview, arXiv) are
    recognised per record inside JSON/JSONL; naming them forces that flavour."""

    TEXT = "text"
    JSONL = "jsonl"
    JSON = "json"
    CSV = "csv"
    TSV = "tsv"
    BIBTEX = "bibtex"
    ATOM = "arxiv-atom"
    BEIR = "beir"
    OPENREVIEW = "openreview"
    ARXIV = "arxiv"


FORMAT_NAMES = [f.value for f in Format]
# flavours that are JSON/JSONL containers with a fixed record shape
RECORD_FLAVOURS = {Format.BEIR, Format.OPENREVIEW, Format.ARXIV}

Row = tuple[str, dict[str, Any]]  # (location, raw fields)


@dataclass
class ReadResult:
    format: Format
    rows: list[Row] = field(default_factory=list)
    bad: list[BadRecord] = field(default_factory=list)
    defaults: dict[str, Any] = field(default_factory=dict)  # venue/year from a list header or file name
    notes: list[str] = field(default_factory=list)  # how the file was read, when that was a judgement call
    problems: list[str] = field(default_factory=list)  # what may be damaged: the paper, its line, the fix
    shape: str = ""  # how a text list was laid out, in words ("a virtual-site page")


class FileError(Exception):
    """The whole file is unreadable; carries one BadRecord."""

    def __init__(self, bad: BadRecord) -> None:
        super().__init__(str(bad))
        self.bad = bad


# --- bytes -> text ---------------------------------------------------------------------


# Bounds on what one file may hold. A paper's fields are a few thousand characters; these limits are far
# above any real list yet stop a hostile or broken file before it costs gigabytes of memory or makes every
# later search slow. Each can be raised through its environment variable (named in the error's fix); the
# defaults and what each bounds are in the settings table (settings.py, docs/settings.md).
LIMITS = {s.env: s.default for s in settings.SETTINGS if s.env.startswith("PAPERATLAS_MAX_")}
_GZIP_RATIO_AFTER = 32 << 20  # the ratio is judged once this much has come out (small files may compress well)


def limit(name: str) -> int:
    """A bound from LIMITS, overridden by the environment variable of the same name (an unparsable
    value is an error naming the variable)."""
    return int(settings.get(settings.BY_ENV[name].name))


class NestedTooDeep(ValueError):
    """A document nests deeper than its bound: the same bytes fail the same way every time."""


def parse_xml(data: bytes | str, what: str = "the XML") -> ET.Element:
    """The root of an XML document, refused (ValueError) once it nests deeper than
    PAPERATLAS_MAX_XML_DEPTH: readers that walk every element's subtree take time that grows with
    the square of the depth, and a 3 MB file can nest 200,000 deep. Malformed XML: ET.ParseError."""
    max_depth = limit("PAPERATLAS_MAX_XML_DEPTH")
    raw = data.encode("utf-8") if isinstance(data, str) else data
    depth, root = 0, None
    for event, el in ET.iterparse(io.BytesIO(raw), events=("start", "end")):
        if event == "start":
            depth += 1
            if root is None:
                root = el
            if depth > max_depth:
                raise NestedTooDeep(
                    f"{what} nests elements more than {max_depth} deep (raise PAPERATLAS_MAX_XML_DEPTH if that is real)"
                )
        else:
            depth -= 1
    if root is None:
        raise ET.ParseError("no element found")
    return root


def _too_big(name: str, what: str, limit_name: str) -> FileError:
    return FileError(
        BadRecord(
            name,
            "file",
            f"{what} (the limit is {limit(limit_name):,} bytes)",
            f"split the file, or raise the limit with {limit_name}=N if it really holds that much text",
        )
    )


def _read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped as a stream that stops at the size and ratio limits (a gzip bomb is
    refused after a few MB of output, not after filling the memory)."""
    name = str(path)
    max_bytes = limit("PAPERATLAS_MAX_INPUT_BYTES")
    try:
        with path.open("rb") as fh:
            magic = fh.read(2)
            size = os.fstat(fh.fileno()).st_size
            if magic != b"\x1f\x8b":
                if size > max_bytes:
                    raise _too_big(name, f"the file has {size:,} bytes", "PAPERATLAS_MAX_INPUT_BYTES")
                return magic + fh.read()
            fh.seek(0)
            max_ratio = limit("PAPERATLAS_MAX_GZIP_RATIO")
            parts: list[bytes] = []
            total = 0
            try:
                with gzip.GzipFile(fileobj=fh, mode="rb") as g:
                    while chunk := g.read(1 << 20):
                        parts.append(chunk)
                        total += len(chunk)
                        if total > max_bytes:
                            raise _too_big(
                                name,
                                f"the gzip stream unpacks to more than {max_bytes:,} bytes",
                                "PAPERATLAS_MAX_INPUT_BYTES",
                            )
                        # the ratio of what came out to what was read so far: a bomb is caught after
                        # _GZIP_RATIO_AFTER bytes of output however large the whole file is
                        read = max(fh.tell(), 1)
                        if total > _GZIP_RATIO_AFTER and total > max_ratio * read:
                            raise FileError(
                                BadRecord(
                                    name,
                                    "file",
                                    f"the gzip stream unpacks to over {max_ratio}x its size ({read:,} compressed bytes"
                                    f" became more than {total:,}): this looks like a gzip bomb, not a paper list",
                                    "unpack it yourself and check what it holds, or raise the limit with "
                                    "PAPERATLAS_MAX_GZIP_RATIO=N",
                                )
                            )
            except (EOFError, OSError, zlib.error) as e:
                raise FileError(
                    BadRecord(
                        name,
                        "file",
                        f"the gzip stream is truncated or corrupt ({e})",
                        "re-download or re-create the file; `gzip -t FILE` checks it",
                    )
                ) from None
            return b"".join(parts)
    except FileNotFoundError:
        raise FileError(BadRecord(name, "file", "no such file", "check the path")) from None
    except IsADirectoryError:
        raise FileError(
            BadRecord(name, "file", "is a folder", "pass the files inside it, e.g. folder/*.jsonl")
        ) from None
    except PermissionError as e:
        raise FileError(BadRecord(name, "file", f"cannot read it ({e.strerror})", "check permissions")) from None
    except OSError as e:
        raise FileError(BadRecord(name, "file", f"cannot read it ({e.strerror or e})", "check the path")) from None


def read_text(path: Path, encoding: str = "utf-8") -> str:
    """Read, gunzip and decode a file, with errors that name the place and the fix.

    NUL and other control characters are dropped after decoding (they are invalid in XML, so they would
    break Atom feeds, and invisible everywhere else); a file that holds NULs once decoded is binary."""
    name = str(path)
    data = _read_bytes(path)
    if not data.strip():
        raise FileError(BadRecord(name, "file", "the file is empty", "pass a file that holds papers"))
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") and encoding.lower().replace("_", "-") in ("utf-8", "utf8"):
        encoding = "utf-16"
    elif data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as e:
        if b"\x00" in data[:65536]:
            raise _binary(name, data.index(b"\x00"), "byte") from None
        line = data[: e.start].count(b"\n") + 1
        bad_bytes = data[e.start : e.start + 4].hex(" ")
        raise FileError(
            BadRecord(
                name,
                f"line {line}",
                f"not valid {encoding} text (bytes {bad_bytes} at offset {e.start})",
                "convert the file to UTF-8 (e.g. `iconv -f latin1 -t utf-8`), or pass --encoding latin-1",
            )
        ) from None
    except LookupError:
        raise FileError(
            BadRecord(name, "file", f"unknown encoding {encoding!r}", "pass --encoding utf-8, latin-1, cp1252 ...")
        ) from None
    del data
    if "\x00" in text[:65536]:
        raise _binary(name, text.index("\x00"), "character")
    return strip_controls(text)


def _binary(name: str, offset: int, unit: str) -> FileError:
    return FileError(
        BadRecord(
            name,
            f"{unit} {offset}",
            "this looks like a binary file, not a paper list (it contains NUL bytes)",
            "pass a text list, JSON/JSONL, CSV/TSV, BibTeX or arXiv Atom file (optionally .gz); "
            "for UTF-16 without a byte-order mark pass --encoding utf-16-le (or utf-16-be)",
        )
    )


# --- record bounds ---------------------------------------------------------------------


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _clean(s: str) -> str:
    """`s` without control characters, lone surrogates (a JSON `\\ud83d` cut from its pair, which no
    encoder accepts) replaced by U+FFFD; the same object when there was nothing to change."""
    s = strip_controls(s)
    return _SURROGATE.sub("\ufffd", s) if _SURROGATE.search(s) else s


def _clean_keys(d: dict[Any, Any]) -> None:
    for k in [k for k in d if isinstance(k, str) and _clean(k) is not k]:
        d[_clean(k)] = d.pop(k)


def check_row(name: str, loc: str, row: dict[str, Any]) -> BadRecord | None:
    """Strip control characters and lone surrogates from every string and key of `row` (in place) and
    check its nesting and sizes.

    Returns the BadRecord that refuses the row, or None. One pass over the values, no recursion, so a
    hostile record cannot exhaust the stack here either."""
    max_field, max_record = limit("PAPERATLAS_MAX_FIELD_CHARS"), limit("PAPERATLAS_MAX_RECORD_CHARS")
    max_depth = limit("PAPERATLAS_MAX_JSON_DEPTH")
    total = 0
    _clean_keys(row)
    for key in list(row):
        field_chars = len(key) if isinstance(key, str) else 0
        stack: list[tuple[Any, Any, Any, int]] = [(row, key, row[key], 1)]  # (container, slot, value, depth)
        while stack:
            parent, slot, v, depth = stack.pop()
            if isinstance(v, str):
                clean = _clean(v)
                if clean is not v:  # re.sub returns the same object when nothing matched
                    v = parent[slot] = clean
                field_chars += len(v)
            elif isinstance(v, (dict, list)):
                if depth >= max_depth:
                    return BadRecord(
                        name,
                        loc,
                        f"the {key!r} field is nested more than {max_depth} levels deep",
                        "paper records nest a few levels; fix or remove this record, or pass --skip-bad",
                    )
                if isinstance(v, dict):
                    _clean_keys(v)
                items = v.items() if isinstance(v, dict) else enumerate(v)
                for k, x in items:
                    if isinstance(k, str):
                        field_chars += len(k)
                    stack.append((v, k, x, depth + 1))
            if field_chars > max_field:
                return BadRecord(
                    name,
                    loc,
                    f"the {key!r} field is longer than {max_field:,} characters",
                    "no paper field is that long: check the record (a missing quote or delimiter joins records), "
                    "raise the limit with PAPERATLAS_MAX_FIELD_CHARS=N if it is really that long, "
                    "or pass --skip-bad to ingest the rest",
                )
        total += field_chars
        if total > max_record:
            return BadRecord(
                name,
                loc,
                f"the record holds more than {max_record:,} characters",
                "check the record, raise the limit with PAPERATLAS_MAX_RECORD_CHARS=N, "
                "or pass --skip-bad to ingest the rest",
            )
    return None


def _deep_json(name: str, loc: str) -> BadRecord:
    return BadRecord(
        name,
        loc,
        f"the JSON is nested more than {limit('PAPERATLAS_MAX_JSON_DEPTH')} levels deep",
        "paper records nest a few levels; fix or remove this record, or pass --skip-bad to ingest the rest",
    )


# --- detection -------------------------------------------------------------------------

_BIB_ENTRY = re.compile(r"^\s*@\s*[A-Za-z]+\s*[{(]", re.MULTILINE)
_HEADER_WORDS = {"title", "abstract", "authors", "author", "summary", "text", "venue", "year", "id", "_id"}


def sniff(text: str, filename: str = "") -> Format:
    """Guess a file's format from its first bytes, with the extension as a tie-breaker."""
    head = text.lstrip()[:4096]
    lower = filename.lower().removesuffix(".gz")
    if head.startswith("<"):
        return Format.ATOM
    if head.startswith("{") or head.startswith("["):
        return _json_or_jsonl(text)
    if lower.endswith(".bib") or (_BIB_ENTRY.search(head) and head.startswith(("@", "%"))):
        return Format.BIBTEX
    first = head.splitlines()[0] if head else ""
    if lower.endswith(".tsv") or ("\t" in first and _looks_like_header(first.split("\t"))):
        return Format.TSV
    if lower.endswith(".csv") or ("," in first and _looks_like_header(next(csv.reader([first]), []))):
        return Format.CSV
    if _BIB_ENTRY.search(head):
        return Format.BIBTEX
    return Format.TEXT


def _looks_like_header(cells: list[str]) -> bool:
    names = {c.strip().strip('"').lower() for c in cells}
    return len(cells) >= 2 and bool(names & _HEADER_WORDS)


def _json_or_jsonl(text: str) -> Format:
    s = text.lstrip()
    if s.startswith("["):
        return Format.JSON
    try:
        json.loads(s)
        return Format.JSON  # one object (maybe holding a list) spanning the whole file
    except RecursionError:
        return _first_line_format(s)
    except json.JSONDecodeError as e:
        # "Extra data" after a complete first object means one object per line
        return Format.JSONL if e.msg.startswith("Extra data") else _first_line_format(s)


def _first_line_format(s: str) -> Format:
    first = s.split("\n", 1)[0]
    try:
        json.loads(first)
        return Format.JSONL
    except (json.JSONDecodeError, RecursionError):
        return Format.JSON if "\n" not in s.strip() else Format.JSONL


# --- readers ---------------------------------------------------------------------------


def read_file(path: str | Path, format: str | Format | None = None, encoding: str = "utf-8") -> ReadResult:
    """Detect (unless `format` is given) and parse one file into raw rows."""
    p = Path(path)
    text = read_text(p, encoding)
    if format in (None, "", "auto"):
        fmt = sniff(text, p.name)
    else:
        try:
            fmt = Format(format)
        except ValueError:
            raise FileError(
                BadRecord(str(p), "file", f"unknown format {format!r}", f"use one of: auto, {', '.join(FORMAT_NAMES)}")
            ) from None
    container = _json_or_jsonl(text) if fmt in RECORD_FLAVOURS else fmt
    result = _READERS[container](str(p), text)
    result.format = fmt
    rows = []
    for loc, row in result.rows:
        bad = check_row(str(p), loc, row)
        if bad is None:
            rows.append((loc, row))
        else:
            result.bad.append(bad)
    result.rows = rows
    if container in (Format.JSON, Format.JSONL) and not result.defaults:
        result.defaults = venue_year_from_name(p.name)  # a record's own venue/year still wins
    if not result.rows and not result.bad:
        raise FileError(BadRecord(str(p), "file", f"no papers found (read as {fmt.value})", "check --format"))
    return result


def read_string(name: str, text: str, fmt: Format) -> ReadResult:
    """Parse text that did not come from a file (a page a source fetched) as `fmt`; `name` (a URL)
    names it in errors. Bad records are collected in the result, as for files."""
    container = _json_or_jsonl(text) if fmt in RECORD_FLAVOURS else fmt
    result = _READERS[container](name, text)
    result.format = fmt
    return result


_YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")
_VENUE_YEAR_KV = re.compile(
    r"venue\s*[:=]\s*(?P<venue>[^,;|]+?)\s*[,;|]\s*year\s*[:=]\s*(?P<year>\d{4})", re.IGNORECASE
)


# papercopilot/paperlists names its files <venue><year>.json (nips2023.json, colm2025.json)
_NAME_VENUE_YEAR = re.compile(r"^([a-z][a-z-]*?)[-_]?((?:19|20)\d\d)(?:\.jsonl?)?(?:\.gz)?$", re.IGNORECASE)
VENUE_SPELLING = {
    "nips": "NeurIPS",
    "neurips": "NeurIPS",
    "corl": "CoRL",
    "colt": "COLT",
    "iclr": "ICLR",
    "icml": "ICML",
    "siggraph": "SIGGRAPH",
    "siggraphasia": "SIGGRAPH Asia",
    "aistats": "AISTATS",
}


def venue_year_from_name(filename: str) -> dict[str, Any]:
    """`colm2025.json` -> {venue: COLM, year: 2025}; {} when the name does not say."""
    m = _NAME_VENUE_YEAR.match(Path(filename).name)
    if not m or len(m.group(1)) < 2:
        return {}
    v = m.group(1).lower()
    return {"venue": VENUE_SPELLING.get(v, v.upper()), "year": int(m.group(2))}


_LIST_WORDS_RE = re.compile(
    r"(?i)\b(?:accepted|papers?|lists?|proceedings|orals?|posters?|spotlights?|program(?:me)?"
    r"|schedule|tracks?|submissions)\b|论文|列表|接收|录用|收录"
)
_HEADER_YEAR = re.compile(r"(?<![\w.])(19[5-9]\d|20\d\d)(?=年|\b)")
_VENUE_TOKEN = re.compile(r"^[A-Z][\w&@'’.+-]*$|^[A-Z0-9][A-Z0-9&@.+-]+$")


def _venue_before(words: list[str]) -> str:
    """The venue named by the last words before a year: "NeurIPS", "ACL Findings"; "" if none."""
    out: list[str] = []
    for w in reversed(words[-3:]):
        w = w.strip(",:;()[]（）")
        if not _VENUE_TOKEN.match(w) or _LIST_WORDS_RE.fullmatch(w):
            break
        out.insert(0, w)
    return " ".join(out)


def parse_list_header(line: str) -> dict[str, Any] | None:
    """`NeurIPS 2026 论文列表`, `ICML 2025`, `Venue: X, Year: Y`, and header sentences such as
    `COLM 2025 accepted papers (copied from the conference site)` or `Accepted papers at ICLR 2024`
    -> {venue, year}; else None."""
    s = line.strip().lstrip("#").strip()
    if not s or len(s) > 200:
        return None
    m = _VENUE_YEAR_KV.search(s)
    if m:
        return {"venue": m["venue"].strip(), "year": int(m["year"])}
    m = _HEADER_YEAR.search(s)
    if not m:
        return None
    # a header names a venue in a few words; a sentence that mentions a year is not one, unless it
    # says it is a list of papers ("accepted papers", "论文列表") right next to the venue and year
    short = len(s) <= 120 and len(s.split()) <= 8 and not s.endswith(".")
    before, after = s[: m.start()], s[m.end() :]
    listy = bool(_LIST_WORDS_RE.search(s))
    if short:
        venue = before.strip(" -–—:,()[]")
        if _LIST_WORDS_RE.search(venue):
            venue = _venue_before(before.split())  # "Accepted papers at ICLR 2024"
        elif not venue:
            # "2026 NeurIPS papers", "2025年ICML接收论文"
            venue = re.split(r"\s", after.lstrip("年").strip(" -–—:,()[]"), maxsplit=1)[0]
            venue = re.split(r"[\u3400-\u9fff]", venue, maxsplit=1)[0]
        if venue and len(venue.split()) <= 5:
            return {"venue": venue, "year": int(m.group(1))}
    if not listy:
        return None
    venue = (
        before.strip(" -–—:,()[]")
        if len(before.split()) <= 3 and _venue_before(before.split()) == before.strip(" -–—:,()[]")
        else _venue_before(before.split())
    )
    if venue and (_LIST_WORDS_RE.search(after[:40]) or _LIST_WORDS_RE.search(before)):
        return {"venue": venue, "year": int(m.group(1))}
    return None


def _read_text_list(name: str, text: str) -> ReadResult:
    """A header line naming venue and year, then the papers in one of the shapes people paste
    (untitled abstracts, title/author/abstract blocks, numbered titles, labelled fields):
    see ingest/textlist.py."""
    from .textlist import LABEL_LINE, numbered, read_blocks

    res = ReadResult(Format.TEXT)
    # split on "\n" only: str.splitlines() also breaks at U+2028 and friends inside abstracts
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    first = lines[i] if i < len(lines) else ""
    header = parse_list_header(first) if first and not LABEL_LINE.match(first) and numbered(first) is None else None
    if header is not None:
        res.defaults = header
        i += 1
    reading = read_blocks([(n + 1, ln) for n, ln in enumerate(lines) if n >= i])
    res.rows = reading.rows
    res.notes = [f"{name}: {note}" for note in reading.notes]
    res.problems = [f"{name}, {p}" for p in reading.problems]
    res.shape = reading.shape_name
    return res


def _read_jsonl(name: str, text: str) -> ReadResult:
    res = ReadResult(Format.JSONL)
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except RecursionError:
            res.bad.append(_deep_json(name, f"line {n}"))
            continue
        except json.JSONDecodeError as e:
            res.bad.append(
                BadRecord(
                    name,
                    f"line {n}",
                    f"not valid JSON ({e.msg} at column {e.colno})",
                    "repair or delete that line, or pass --skip-bad to ingest the rest",
                )
            )
            continue
        if not isinstance(obj, dict):
            res.bad.append(
                BadRecord(
                    name, f"line {n}", f"expected a JSON object, got {type(obj).__name__}", "one paper object per line"
                )
            )
            continue
        res.rows.append((f"line {n}", obj))
    return res


_LIST_KEYS = ("papers", "notes", "data", "records", "items", "results", "entries", "hits", "docs", "documents")


def _read_json(name: str, text: str) -> ReadResult:
    res = ReadResult(Format.JSON)
    try:
        obj = json.loads(text)
    except RecursionError:
        # one record nests too deep for the parser: read a top-level array one element at a time,
        # so the other records can still be ingested (--skip-bad)
        if text.lstrip().startswith("["):
            return _read_json_array(name, text)
        res.bad.append(_deep_json(name, "file"))
        return res
    except json.JSONDecodeError as e:
        res.bad.append(
            BadRecord(
                name,
                f"line {e.lineno}, column {e.colno}",
                f"not valid JSON ({e.msg})",
                "repair the JSON (e.g. `python -m json.tool FILE` shows where it breaks)",
            )
        )
        return res
    items: Any = obj
    if isinstance(obj, dict):
        items = None
        for k in _LIST_KEYS:
            if isinstance(obj.get(k), list):
                items = obj[k]
                break
        if items is None:
            items = next((v for v in obj.values() if isinstance(v, list) and v and isinstance(v[0], dict)), None)
        if items is None:
            items = [obj]  # a single paper object
    if not isinstance(items, list):
        res.bad.append(BadRecord(name, "file", "no list of papers found", "pass a JSON array of paper objects"))
        return res
    for n, it in enumerate(items, start=1):
        if isinstance(it, dict):
            res.rows.append((f"record {n}", it))
        else:
            res.bad.append(BadRecord(name, f"record {n}", f"expected an object, got {type(it).__name__}", "remove it"))
    return res


_WS = re.compile(r"[ \t\r\n]*")
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _skip_value(text: str, i: int) -> int:
    """The end of the JSON container starting at `i`, found without parsing it (strings are skipped whole)."""
    depth = 0
    for m in _STRING_OR_BRACKET.finditer(text, i):
        c = m.group()
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return m.end()
    return len(text)


def _read_json_array(name: str, text: str) -> ReadResult:
    """A top-level JSON array parsed element by element: an element nested too deep becomes a bad record."""
    res = ReadResult(Format.JSON)
    dec = json.JSONDecoder()
    i = _WS.match(text, text.index("[") + 1).end()
    n = 0
    while i < len(text) and text[i] != "]":
        n += 1
        try:
            obj, i = dec.raw_decode(text, i)
        except RecursionError:
            res.bad.append(_deep_json(name, f"record {n}"))
            i = _skip_value(text, i)
        except json.JSONDecodeError as e:
            res.bad.append(
                BadRecord(
                    name,
                    f"line {e.lineno}, column {e.colno}",
                    f"not valid JSON ({e.msg})",
                    "repair the JSON (e.g. `python -m json.tool FILE` shows where it breaks)",
                )
            )
            return res
        else:
            if isinstance(obj, dict):
                res.rows.append((f"record {n}", obj))
            else:
                res.bad.append(
                    BadRecord(name, f"record {n}", f"expected an object, got {type(obj).__name__}", "remove it")
                )
        i = _WS.match(text, i).end()
        if i < len(text) and text[i] == ",":
            i = _WS.match(text, i + 1).end()
        elif i < len(text) and text[i] != "]":
            res.bad.append(BadRecord(name, f"record {n}", "expected , or ] after it", "repair the JSON"))
            return res
    return res


def _read_delimited(delimiter: str, fmt: Format) -> Callable[[str, str], ReadResult]:
    def reader(name: str, text: str) -> ReadResult:
        res = ReadResult(fmt)
        csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
        rdr = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        try:
            header = [h.strip().lstrip("\ufeff") for h in next(rdr)]
        except (StopIteration, csv.Error) as e:
            res.bad.append(
                BadRecord(name, "line 1", f"cannot read the header ({e})", "the first line names the columns")
            )
            return res
        lowered = {h.lower() for h in header}
        if not lowered & set(ABSTRACT_KEYS):
            raise FileError(
                BadRecord(
                    name,
                    "line 1 (header)",
                    f"no abstract column; the columns are: {', '.join(header) or '(none)'}",
                    f"name the column that holds abstracts one of: {', '.join(ABSTRACT_KEYS)}",
                )
            )
        try:
            for cells in rdr:
                n = rdr.line_num
                if not any(c.strip() for c in cells):
                    continue
                if len(cells) != len(header):
                    res.bad.append(
                        BadRecord(
                            name,
                            f"line {n}",
                            f"{len(cells)} fields where the header has {len(header)}",
                            f"quote fields that contain {'a tab' if delimiter == chr(9) else 'the delimiter'} or quotes",
                        )
                    )
                    continue
                res.rows.append((f"line {n}", dict(zip(header, cells))))
        except csv.Error as e:
            res.bad.append(BadRecord(name, f"line {rdr.line_num}", f"broken CSV ({e})", "fix the quoting on that line"))
        return res

    return reader


def _read_bibtex(name: str, text: str) -> ReadResult:
    import bibtexparser

    res = ReadResult(Format.BIBTEX)
    lib = bibtexparser.parse_string(text)
    for block in lib.failed_blocks:
        line = getattr(block, "start_line", None)
        res.bad.append(
            BadRecord(
                name,
                f"line {line + 1}" if isinstance(line, int) else "entry",
                f"cannot parse this BibTeX entry ({type(block).__name__})",
                "check its braces and commas, or pass --skip-bad",
            )
        )
    for e in lib.entries:
        row: dict[str, Any] = {k.lower(): v for k, v in e.fields_dict.items()}
        row = {k: f.value for k, f in row.items()}
        row["id"] = e.key
        row["entrytype"] = e.entry_type
        res.rows.append((f"entry {e.key}", row))
    return res


_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"


def _read_atom(name: str, text: str) -> ReadResult:
    """arXiv API responses (Atom 1.0)."""
    res = ReadResult(Format.ATOM)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        line, col = e.position
        res.bad.append(BadRecord(name, f"line {line}, column {col}", f"malformed XML ({e})", "repair the XML"))
        return res
    for n, entry in enumerate(root.iter(f"{_ATOM}entry"), start=1):

        def t(tag: str, el: ET.Element = entry) -> str:
            x = el.find(tag)
            return (x.text or "").strip() if x is not None else ""

        links = {ln.get("title") or ln.get("rel") or "": ln.get("href", "") for ln in entry.findall(f"{_ATOM}link")}
        if not links.get("alternate"):
            # arXiv's feed since late 2025 writes bare <link href=".../abs/ID"/> and <link href=".../pdf/ID"/>
            hrefs = [ln.get("href", "") for ln in entry.findall(f"{_ATOM}link")]
            links["alternate"] = next((h for h in hrefs if "/abs/" in h), "")
            links.setdefault("pdf", next((h for h in hrefs if "/pdf/" in h), ""))
        cat = entry.find(f"{_ARXIV}primary_category")
        row = {
            "arxiv_id": t(f"{_ATOM}id"),
            "title": t(f"{_ATOM}title"),
            "abstract": t(f"{_ATOM}summary"),
            "authors": [t(f"{_ATOM}name", a) for a in entry.findall(f"{_ATOM}author")],
            "published": t(f"{_ATOM}published"),
            "url": links.get("alternate", ""),
            "journal_ref": t(f"{_ARXIV}journal_ref"),
            "doi": t(f"{_ARXIV}doi"),
            "categories": [c.get("term", "") for c in entry.findall(f"{_ATOM}category")],
            "primary_category": cat.get("term", "") if cat is not None else "",
            "pdf_url": links.get("pdf", ""),
        }
        res.rows.append((f"entry {n}", row))
    return res


_READERS: dict[Format, Callable[[str, str], ReadResult]] = {
    Format.TEXT: _read_text_list,
    Format.JSONL: _read_jsonl,
    Format.JSON: _read_json,
    Format.CSV: _read_delimited(",", Format.CSV),
    Format.TSV: _read_delimited("\t", Format.TSV),
    Format.BIBTEX: _read_bibtex,
    Format.ATOM: _read_atom,
}
