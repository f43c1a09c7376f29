"""A research paper's PDF -> `Document`: its pages, sections (heading, number, page, paragraphs),
figure and table captions, and reference list.

The PDF library only gives lines of text with their font size and box (`Line`); everything after
that is ours and the same whichever library read the file, so a library can be swapped (and was
chosen: `benchmarks/fulltext_extract.py`, docs/fulltext.md) without changing what is stored.

What breaks a naive reader and what is done about it:
- two columns: pdfium returns each column's lines in reading order for the typeset papers measured;
  lines are kept in that order, never re-sorted by height (which would interleave the columns);
- hyphenation: pdfium marks a soft hyphen at a line end (U+FFFE), which is dropped and the word
  joined; a hard '-' at a line end before a lowercase letter is joined too;
- ligatures (fi, fl, ffi) and full-width forms: NFKC;
- running headers, footers and page numbers: a line in the top or bottom band of a page that recurs
  on other pages (digits ignored), or is only a number, is dropped; so is arXiv's margin stamp;
- footnotes: small type in a page's bottom third that starts with a mark is a footnote, kept as a
  passage of its own after the paragraph it interrupted (which is no longer cut in two);
- tables and figure labels: other short lines in a smaller font than the body are left out;
- headings: numbered, in larger or bold type, joined when they wrap onto a second line; the title
  block (title, authors, addresses) gives one heading, the title; numbering only goes up, so a
  numbered list is no run of sections;
- the reference list: under its heading in English, Spanish, French, German, Italian or Chinese.

A PDF is untrusted input: the file's size and page count are capped and a time budget is checked
between pages; whatever the library raises becomes a `FulltextError` with a reason and a fix.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..errors import PaperatlasError

MAX_FILE_BYTES = 64 << 20
MAX_PAGES = 300
TIME_BUDGET_S = 60.0
# fewer characters than this per page on average: the PDF has no text layer (a scan)
MIN_CHARS_PER_PAGE = 200

# why a file could not be read, each with what to do about it
REASONS: dict[str, str] = {
    "not_pdf": "get the PDF itself: the file does not start like a PDF (an HTML login or error page?)",
    "encrypted": "open it in a PDF viewer that knows the password and save an unprotected copy",
    "damaged": "download the PDF again: this copy is truncated or damaged",
    "scanned": "the PDF has no text layer (a scan); find a born-digital copy (arXiv, the publisher)",
    "not_paper": "attach the PDF of this paper: page 1 does not carry its title",
    "too_large": "the PDF is over the size or page cap; attach the paper without its supplement",
    "too_slow": "the PDF took longer than the time budget to read; attach a simpler copy",
    "fetch_failed": "fetch it again later, or download it yourself and run `fulltext add ID FILE.pdf`",
}


class FulltextError(PaperatlasError):
    """A PDF that could not be read as a paper; `reason` is one of REASONS."""

    def __init__(self, reason: str, message: str, fix: str = "") -> None:
        super().__init__(message, fix or REASONS.get(reason, ""))
        self.reason = reason


@dataclass
class Line:
    """One line of text as the PDF library placed it (PDF points, origin at the page's bottom left)."""

    text: str
    page: int  # 1-based
    size: float = 0.0
    bold: bool = False
    x0: float = 0.0
    y0: float = 0.0
    x1: float = 0.0
    y1: float = 0.0
    soft_hyphen: bool = False  # the line ended in a hyphen the typesetter inserted


@dataclass
class Section:
    heading: str
    number: str
    page: int
    paragraphs: list[str] = field(default_factory=list)
    paragraph_pages: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Caption:
    kind: str  # figure | table
    label: str  # "Figure 2"
    page: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Reference:
    raw: str
    title: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Document:
    pages: int
    sections: list[Section]
    captions: list[Caption]
    references: list[Reference]
    first_page: str = ""  # page 1's text, to check the file is the paper
    backend: str = ""
    title: str = ""  # page 1's largest type near the top: the paper's title, as the file tells it
    abstract: str = ""
    authors: list[str] = field(default_factory=list)  # the names in the title block, those that read as names

    def to_dict(self) -> dict[str, Any]:
        return {
            "pages": self.pages,
            "sections": [s.to_dict() for s in self.sections],
            "captions": [c.to_dict() for c in self.captions],
            "references": [r.to_dict() for r in self.references],
            "backend": self.backend,
        }


# -- the PDF libraries: each turns a file into Lines ----------------------------------------------
class _Budget:
    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds
        self.seconds = seconds

    def check(self, page: int) -> None:
        if time.monotonic() > self.end:
            raise FulltextError("too_slow", f"reading stopped at page {page}: over the {self.seconds:.0f} s budget")


def _lines_pdfium(data: bytes, max_pages: int, budget: _Budget) -> tuple[int, list[Line]]:
    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    try:
        doc = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        msg = str(e)
        if "password" in msg.lower():
            raise FulltextError("encrypted", "the PDF is encrypted (it asks for a password)") from None
        raise FulltextError("damaged", f"the PDF library could not open it ({msg})") from None
    try:
        n = len(doc)
        if n > max_pages:
            raise FulltextError("too_large", f"the PDF has {n} pages, over the cap of {max_pages}")
        out: list[Line] = []
        for i in range(n):
            budget.check(i + 1)
            page = doc[i]
            tp = page.get_textpage()
            count = tp.count_chars()
            # one line per run of characters between the line breaks pdfium generates; the text is
            # read char by char (the text of get_text_range can drift from the char indices)
            chars = [chr(raw.FPDFText_GetUnicode(tp.raw, k)) for k in range(count)]
            start = 0
            for k in range(count + 1):
                # a hyphen the typesetter added (U+0002 / U+FFFE) ends its line, though pdfium
                # does not always put a line break after it
                if k < count and chars[k] not in "\r\n\x02\ufffe":
                    continue
                seg = range(start, k + 1 if k < count and chars[k] in "\x02\ufffe" else k)
                start = k + 1
                idx = [j for j in seg if not chars[j].isspace() and chars[j] != "\x00"]
                if not idx:
                    continue
                # U+0002 / U+FFFE: pdfium's mark of a hyphen the typesetter added; the word is joined
                text = "".join(chars[j] for j in seg).strip().replace("\x00", "")
                soft = text.endswith(("\ufffe", "\u00ad", "\x02"))
                text = re.sub("[\x02\ufffe\u00ad]", "", text)
                # pdfium gives UTF-16 units: a character outside the BMP is a surrogate pair
                text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
                first, last = idx[0], idx[-1]
                # the loose box spans the font's ascent to descent: the same height for every
                # letter, so the distance between two lines is the line pitch whatever they say
                x0, y0, _, y1 = tp.get_charbox(first, loose=True)
                _, _, x1, _ = tp.get_charbox(last, loose=True)
                size = raw.FPDFText_GetFontSize(tp.raw, first)
                weight = raw.FPDFText_GetFontWeight(tp.raw, first)
                out.append(Line(text, i + 1, round(size, 1), weight >= 600, x0, y0, x1, y1, soft))
            tp.close()
            page.close()
        sizes = sorted(ln.size for ln in out)
        if sizes and sizes[len(sizes) // 2] < 3:
            # text drawn at size 1 and scaled by its matrix: pdfium reports 1 for every line, so
            # the height of the font's box (about 1.15 em) stands for the size
            for ln in out:
                ln.size = round((ln.y1 - ln.y0) / 1.15, 1)
        return n, out
    finally:
        doc.close()


def _lines_pdfminer(data: bytes, max_pages: int, budget: _Budget) -> tuple[int, list[Line]]:
    import io

    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTChar, LTTextContainer, LTTextLine

    out: list[Line] = []
    n = 0
    for n, layout in enumerate(extract_pages(io.BytesIO(data), laparams=LAParams(), maxpages=max_pages), 1):
        budget.check(n)
        for box in layout:
            if not isinstance(box, LTTextContainer):
                continue
            for line in box:
                if not isinstance(line, LTTextLine):
                    continue
                t = line.get_text().strip()
                if not t:
                    continue
                ch = next((c for c in line if isinstance(c, LTChar)), None)
                size = round(ch.size, 1) if ch else 0.0
                bold = bool(ch and "bold" in ch.fontname.lower())
                out.append(Line(t, n, size, bold, line.x0, line.y0, line.x1, line.y1))
    return n, out


def _lines_pdfplumber(data: bytes, max_pages: int, budget: _Budget) -> tuple[int, list[Line]]:
    import io

    import pdfplumber

    out: list[Line] = []
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        n = len(pdf.pages)
        for i, page in enumerate(pdf.pages[:max_pages], 1):
            budget.check(i)
            h = page.height
            for ln in page.extract_text_lines(return_chars=True):
                chars = ln.get("chars") or []
                size = round(chars[0]["size"], 1) if chars else 0.0
                bold = bool(chars and "bold" in chars[0]["fontname"].lower())
                out.append(Line(ln["text"].strip(), i, size, bold, ln["x0"], h - ln["bottom"], ln["x1"], h - ln["top"]))
    return n, out


def _lines_pypdf(data: bytes, max_pages: int, budget: _Budget) -> tuple[int, list[Line]]:
    import io

    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data))
    n = len(reader.pages)
    out: list[Line] = []
    for i, page in enumerate(reader.pages[:max_pages], 1):
        budget.check(i)
        # pypdf gives text without fonts or boxes: sizes stay 0, so headings come from numbering only
        out.extend(Line(t.strip(), i) for t in (page.extract_text() or "").splitlines() if t.strip())
    return n, out


BACKENDS: dict[str, Callable[[bytes, int, _Budget], tuple[int, list[Line]]]] = {
    "pdfium": _lines_pdfium,
    "pdfminer": _lines_pdfminer,
    "pdfplumber": _lines_pdfplumber,
    "pypdf": _lines_pypdf,
}
DEFAULT_BACKEND = "pdfium"


# -- lines -> document ------------------------------------------------------------------------------
_NUM_HEADING = re.compile(r"^((?:[1-9]\d?|[A-H])(?:\.\d{1,2}){0,3})\.?\s+([A-Z][^\n]{1,90})$")
# the reference list's heading in the languages papers are written in most (a Spanish working paper
# of the corpus ends in "7. Bibliografía": missed, its 39 references were read as body text)
_REFS_WORDS = (
    r"references|bibliography|literature cited|works cited|references and notes|bibliograf[íi]a|referencias"
    r"|r[ée]f[ée]rences|bibliographie|literatur|literaturverzeichnis|riferimenti bibliografici|参考文献"
)
_NAMED = re.compile(
    r"^(abstract|introduction|related work|background|conclusions?|discussion|acknowledge?ments?|"
    r"appendix|appendices|limitations|ethics statement|broader impact|methods?|results|materials and methods|"
    rf"experiments|evaluation|future work|summary|ccs concepts|keywords|index terms|{_REFS_WORDS})\s*:?$",
    re.IGNORECASE,
)
_REFS = re.compile(rf"^({_REFS_WORDS})$", re.IGNORECASE)
# journals set "FIG. 2." in capitals (the ASM paper of the corpus: 7 of its 8 captions were missed)
_CAPTION = re.compile(r"^(Figure|Fig\.|Table)\s*([0-9]+|[IVX]+)\s*[:.|]\s*(.*)$", re.IGNORECASE)
_YEAR = re.compile(r"\b(19[5-9]\d|20[0-4]\d)[a-z]?\b")
_APA_YEAR = re.compile(r"\(\s*(?:19[5-9]\d|20[0-4]\d)[a-z]?\s*\)\.?\s+")
_REF_MARK = re.compile(r"^\s*(\[\d{1,3}\]|\d{1,3}\.)\s+")


def _norm(text: str) -> str:
    # control characters are what a formula's glyphs without a Unicode mapping come out as (SPECTER's
    # "\x11" before "where d is a distance function"): no text, and a box on a page that shows it
    return re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\u00ad]", "", unicodedata.normalize("NFKC", text))


def _page_bands(lines: Sequence[Line]) -> dict[int, tuple[float, float]]:
    """page -> (lowest, highest) y of its lines: the bands near them hold headers and footers."""
    out: dict[int, tuple[float, float]] = {}
    for ln in lines:
        lo, hi = out.get(ln.page, (ln.y0, ln.y1))
        out[ln.page] = (min(lo, ln.y0), max(hi, ln.y1))
    return out


def _drop_running(lines: list[Line], pages: int) -> list[Line]:
    bands = _page_bands(lines)

    def in_band(ln: Line) -> bool:
        lo, hi = bands[ln.page]
        span = max(hi - lo, 1.0)
        return ln.y1 >= hi - 0.04 * span or ln.y0 <= lo + 0.04 * span

    has_geometry = any(ln.y1 for ln in lines)
    key = Counter(re.sub(r"\d+", "#", ln.text.lower()) for ln in lines if not has_geometry or in_band(ln))
    out = []
    for ln in lines:
        edge = in_band(ln) if has_geometry else True
        k = re.sub(r"\d+", "#", ln.text.lower())
        if edge and (re.fullmatch(r"[\divxlc\s\-–—/|.]+", ln.text.lower()) or (pages > 2 and key[k] >= 3)):
            continue
        out.append(ln)
    return out


def _body_size(lines: Sequence[Line]) -> float:
    sizes: Counter[float] = Counter()
    for ln in lines:
        sizes[ln.size] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _heading(ln: Line, body: float) -> tuple[str, str] | None:
    """(number, heading) when the line is a section heading."""
    t = ln.text.strip()
    if len(t) > 90 or t.endswith((",", ";")):
        return None
    larger = body > 0 and ln.size >= body + 0.5
    styled = larger or ln.bold or body == 0
    m = _NAMED.match(t)
    if m and (styled or t[0].isupper()):
        return "", t.rstrip(":")
    m = _NUM_HEADING.match(t)
    if m and styled:
        num, title = m.group(1), m.group(2).strip()
        words = title.split()
        letters = sum(c.isalpha() for c in title)
        if (
            len(words) <= 12
            and letters >= 3
            and letters >= 0.6 * len(title.replace(" ", ""))
            and not title.endswith(".")
        ):
            return num, title
    # an unnumbered heading in large type: on page 1 only (the title block); elsewhere large type
    # is mostly a figure's labels
    letters = sum(c.isalpha() for c in t)
    if (
        ln.page == 1
        and larger
        and ln.size >= body + 1.5
        and t[0].isupper()
        and letters >= 4
        and len(t.split()) <= 12
        and not t.endswith(".")
    ):
        return "", t
    return None


_FRONT = re.compile(r"^(?:1\.?\s+)?(?:abstract|introduction)\b", re.IGNORECASE)


_NOT_ABSTRACT = re.compile(r"permission|copyright|licen[cs]e|©|proceedings of|\bdoi\b|https?://", re.IGNORECASE)
# the arXiv stamp printed up page 1's left margin: not text of the paper
_ARXIV_STAMP = re.compile(r"^arXiv:\d{4}\.\d{4,5}(v\d+)?\s+\[[\w.\-]+\]\s+\d{1,2}\s+\w{3}\s+\d{4}$")


_NOTE_MARK = re.compile(r"^\s*(\d{1,2}|[*†‡§¶])(?=\s*[A-Za-z(“\"]|\s*https?:|\s*$)")


def _footnote_line(ln: Line, band: tuple[float, float], open_note: bool) -> bool:
    """Whether a small-type line is (part of) a footnote: in the bottom third of its page, and either
    starting with a footnote mark (a number or a dagger, maybe on a line of its own) or going on
    with the footnote just above it; mostly words (a table's rows of numbers are not)."""
    lo, hi = band
    if ln.y1 > lo + 0.35 * max(hi - lo, 1.0):
        return False
    text = ln.text.strip()
    if _NOTE_MARK.fullmatch(text):
        return True
    letters = sum(c.isalpha() for c in text)
    if letters < 0.5 * len(text.replace(" ", "")) and "http" not in text:
        return False
    return open_note or bool(_NOTE_MARK.match(text))


def _letter_heading(title: str) -> bool:
    """Whether the words after an appendix letter read as a heading: a word of three letters or more,
    no year, not an author's initial ("A. Stahl. 2009. …" is a reference entry)."""
    if re.search(r"\b(19|20)\d\d\b", title) or re.match(r"^[A-Z]\.\s", title):
        return False
    return max((sum(c.isalpha() for c in w) for w in title.split()), default=0) >= 3


def _continues_heading(head: Line, ln: Line, body: float, width: float, title: bool = False) -> bool:
    """Whether a line is the next line of the heading just above it: the heading fills its column
    (it wrapped), the line is set in the same type right below, starts under the heading's words
    and is no sentence (a run-in paragraph heading, "Citations. We …", is not the heading's). A
    title spans the page and is centred: its lines share a centre instead, whatever their width."""
    if not head.y1 or ln.page != head.page or ln.bold != head.bold or abs(ln.size - head.size) >= 0.3:
        return False
    if not (head.bold or (body and head.size >= body + 0.5)) or re.search(r"[.:;]\s+\S", ln.text):
        return False
    gap = head.y0 - ln.y0
    if not 0 < gap <= 1.8 * max(head.size, 1.0):
        return False
    if title:
        return head.x0 - 2 <= ln.x0 <= head.x0 + 80 or abs(ln.x0 + ln.x1 - head.x0 - head.x1) < 20
    if head.x1 - head.x0 < 0.6 * width or ln.x1 - ln.x0 > 0.92 * width:
        return False
    return head.x0 - 2 <= ln.x0 <= head.x0 + 80


def _join(lines: Sequence[Line]) -> str:
    out = ""
    for i, ln in enumerate(lines):
        t = ln.text
        if not out:
            out = t
        elif lines[i - 1].soft_hyphen:
            out += t
        elif out.endswith("-") and t[:1].islower() and len(out) > 1 and out[-2].isalpha():
            out = out[:-1] + t
        else:
            out += " " + t
    return _norm(re.sub(r"\s+", " ", out)).strip()


def _paragraph_break(prev: Line, ln: Line, width: float, leading: float) -> bool:
    if prev.page != ln.page or not ln.y1:
        return prev.page != ln.page and prev.text.rstrip().endswith((".", ":", "?", "!")) and not prev.soft_hyphen
    if abs(ln.x0 - prev.x0) > width * 0.5:  # next column: the paragraph goes on unless the last one ended
        return prev.text.rstrip().endswith((".", ":", "?", "!")) and (prev.x1 - prev.x0) < width * 0.85
    if prev.y0 - ln.y0 > leading * 1.3:  # more than a line's pitch: a blank between paragraphs
        return True
    ended = prev.text.rstrip().endswith((".", ":", "?", "!"))
    if ended and 4 < ln.x0 - prev.x0 < 40:  # the first line of a paragraph, indented
        return True
    short = (prev.x1 - prev.x0) < width * 0.8
    return short and prev.text.rstrip().endswith((".", ":", "?", "!"))


def _split_references(lines: Sequence[Line]) -> list[str]:
    if not lines:
        return []
    marked = sum(1 for ln in lines if _REF_MARK.match(ln.text))
    groups: list[list[Line]] = []
    if marked >= max(3, len(lines) // 6):
        for ln in lines:
            if _REF_MARK.match(ln.text) or not groups:
                groups.append([ln])
            else:
                groups[-1].append(ln)
    elif any(ln.x0 for ln in lines):
        # hanging indent: an entry starts at its column's left edge, its other lines are indented
        for ln in lines:
            col = [o.x0 for o in lines if o.page == ln.page and abs(o.x0 - ln.x0) < 40]
            start = ln.x0 <= min(col) + 2.0
            if start or not groups:
                groups.append([ln])
            else:
                groups[-1].append(ln)
    else:
        for ln in lines:
            prev = groups[-1][-1].text if groups else ""
            if not groups or (prev.endswith(".") and re.match(r"^[A-Z][a-zA-Z'\-]+,? ", ln.text)):
                groups.append([ln])
            else:
                groups[-1].append(ln)
    return [_join(g) for g in groups if len(_join(g)) >= 15]


def parse_reference(raw: str) -> Reference:
    """An entry's authors, title and year, by the shapes of the common styles: "A, B, and C. 2017.
    Title. In Venue." (ACL), "[3] A. B, C. D. Title. Venue, 2017." (numbered) and "A, J. y B, G.
    (2005) Title. Venue" (APA, with or without a period after the year, the title maybe quoted)."""
    text = _REF_MARK.sub("", raw).strip()
    ym = _YEAR.search(text)
    year = int(ym.group(1)) if ym else None
    parts = [p.strip() for p in re.split(r"(?<=[a-z0-9\)\]\"”?])\.\s+(?=[A-Z0-9“\"])", text) if p.strip()]
    authors_part, title = "", ""
    if ym and parts:
        # author-year: the year is its own part (or ends the authors' part), the title follows
        for i, p in enumerate(parts):
            if _YEAR.fullmatch(p.strip("(). ")) or re.fullmatch(r"\(?(19|20)\d\d[a-z]?\)?", p.strip(". ")):
                authors_part = " ".join(parts[:i])
                title = parts[i + 1] if i + 1 < len(parts) else ""
                break
    apa = _APA_YEAR.search(text)
    if not title and apa and 0 < apa.start() < 0.5 * len(text):
        authors_part, rest = text[: apa.start()], text[apa.end() :]
        quoted = re.match(r"^[“\"«]\s*(.+?)\s*[”\"»]", rest)
        title = quoted.group(1) if quoted else re.split(r"(?<=[^\s.]{2})\.\s+", rest, maxsplit=1)[0]
    if not title and len(parts) >= 2:
        authors_part, title = parts[0], parts[1]
    names = re.split(r",\s*(?:and\s+|y\s+|&\s*)?|\s+(?:and|y|&)\s+|;\s*", authors_part)
    authors = [n.strip(" .") for n in names if 1 < len(n.strip(" .")) <= 60 and not re.search(r"\d", n)]
    return Reference(raw=raw, title=title.strip(' .“”"'), authors=authors[:50], year=year)


def structure(pages: int, lines: list[Line], backend: str = "") -> Document:
    """Lines (in reading order) -> sections, captions and references."""
    first_page = _norm(" ".join(ln.text for ln in lines if ln.page == 1))
    raw_lines = [ln for ln in lines if ln.page == 1][:60]
    lines = [ln for ln in lines if ln.text.strip() and not _ARXIV_STAMP.match(ln.text.strip())]
    lines = _drop_running(lines, pages)
    body = _body_size(lines)
    widths = sorted(ln.x1 - ln.x0 for ln in lines if ln.size == body and ln.x1 > ln.x0)
    width = widths[int(len(widths) * 0.9)] if widths else 0.0
    text_chars = sum(len(ln.text) for ln in lines if ln.size == body)
    bold_chars = sum(len(ln.text) for ln in lines if ln.size == body and ln.bold)
    if width and bold_chars > 0.5 * text_chars:
        # fonts that report a heavy weight for every glyph (MapReduce's, Bunescu's): the weight tells
        # nothing, and would make each line of a numbered list a section; a short line is all a
        # heading set in bold can still be told by
        lines = [replace(ln, bold=ln.x1 - ln.x0 < 0.75 * width) for ln in lines]
    pitches = [
        a.y0 - b.y0
        for a, b in zip(lines, lines[1:])
        if a.page == b.page and a.size == body and b.size == body and abs(a.x0 - b.x0) < 20 and a.y0 > b.y0
    ]
    leading = sorted(pitches)[len(pitches) // 2] if pitches else 12.0

    sections: list[Section] = [Section("", "", 1)]
    captions: list[Caption] = []
    ref_lines: list[Line] = []
    in_refs = False
    para: list[Line] = []
    note: list[Line] = []  # the footnote being read
    notes: list[tuple[int, list[Line]]] = []  # footnotes read, waiting for the open paragraph to end
    bands = _page_bands(lines)
    caption: list[Line] | None = None
    cap_meta: tuple[str, str, int] = ("", "", 0)

    def flush() -> None:
        nonlocal para
        if para:
            text = _join(para)
            if len(text) >= 2:
                sections[-1].paragraphs.append(text)
                sections[-1].paragraph_pages.append(para[0].page)
        para = []
        flush_notes()

    def flush_notes() -> None:
        # a page's footnotes go after the paragraph that was open when they were met: a paragraph
        # running on past them is not cut in two
        nonlocal notes
        for page, group in notes:
            text = _join(group)
            if len(text) >= 10:
                sections[-1].paragraphs.append(text)
                sections[-1].paragraph_pages.append(page)
        notes = []

    def end_note() -> None:
        nonlocal note
        if note:
            notes.append((note[0].page, note))
        note = []

    def flush_caption() -> None:
        nonlocal caption
        if caption:
            kind, label, page = cap_meta
            captions.append(Caption(kind, label, page, _join(caption)))
        caption = None

    # where the title block ends: the first "Abstract" / "Introduction" line; before it, on page 1, a
    # numbered line is an address ("1 University Station C0500"), not a section
    front_at = next((i for i, ln in enumerate(lines) if _FRONT.match(ln.text.strip())), -1)
    last_top = 0  # the last top-level section number: numbering only goes up (a numbered list does not)
    head_ln: Line | None = None  # the heading line just read: the next may carry the rest of it
    head_more = 0
    head_title = False  # that heading is the paper's title (page 1, unnumbered, large)
    title_size = 0.0

    for i, ln in enumerate(lines):
        if head_ln is not None and head_more < 2 and _continues_heading(head_ln, ln, body, width, head_title):
            if _heading(ln, body) is None and not _CAPTION.match(ln.text) and len(sections[-1].heading) < 120:
                sections[-1].heading = _norm(f"{sections[-1].heading} {ln.text.strip()}")
                head_ln, head_more = ln, head_more + 1
                continue
        head_ln = None
        h = _heading(ln, body)
        if h is not None and not (in_refs and h[0] == "" and not _NAMED.match(ln.text)):
            num, title = h
            named = bool(_NAMED.match(title))
            if num and ln.page == 1 and i < front_at:
                # an address or affiliation in the title block; a title may start with "A …"
                h = ("", title if num.isdigit() else ln.text.strip()) if ln.size >= body + 1.5 else None
                if h and num.isdigit():
                    h = None
            elif num[:1].isalpha() and not _letter_heading(title):
                h = None  # "D A. Stahl. 2009. …": a reference entry, "A P A S": a figure's labels
            elif num[:1].isdigit() and not in_refs and int(num.split(".")[0]) < last_top:
                h = None  # "1 The library…" after section 3: an item of a numbered list
            elif not num and not named and ln.page == 1 and not in_refs:
                last = sections[-1]
                titled = any(s.heading and not s.number and not _NAMED.match(s.heading) for s in sections)
                if titled and (
                    para
                    or last.paragraphs
                    or last.number
                    or _NAMED.match(last.heading)
                    or not last.heading
                    or abs(ln.size - title_size) >= 0.3  # the first author's name, set smaller
                ):
                    h = None  # an author's name or an affiliation in large type, below the title
        if h is not None:
            flush()
            flush_caption()
            num, title = h
            if in_refs and not (num[:1].isalpha() or _NAMED.match(title)):
                # a numbered line inside the reference list is an entry, not a section
                ref_lines.append(ln)
                continue
            in_refs = bool(_REFS.match(title))
            last = sections[-1]
            if in_refs:
                last_top = 0  # an appendix after the references may number from 1 again
                continue
            if num[:1].isdigit():
                last_top = int(num.split(".")[0])
            if not num and not last.number and not last.paragraphs and last.heading and not _NAMED.match(title):
                last.heading = _norm(f"{last.heading} {title}")  # a heading set on two lines
            else:
                sections.append(Section(_norm(title), num, ln.page))
                head_title = not num and ln.page == 1 and not _NAMED.match(title)
                if head_title:
                    title_size = ln.size
                if num or head_title:
                    head_ln, head_more = ln, 0
            continue
        if in_refs:
            ref_lines.append(ln)
            continue
        cm = _CAPTION.match(ln.text)
        if cm:
            flush()
            flush_caption()
            kind = "table" if cm.group(1).lower().startswith("tab") else "figure"
            cap_meta = (kind, f"{'Table' if kind == 'table' else 'Figure'} {cm.group(2)}", ln.page)
            caption = [ln]
            continue
        if caption is not None:
            prev = caption[-1]
            if prev.page == ln.page and (not ln.y1 or prev.y0 - ln.y0 <= leading * 1.5) and ln.size <= prev.size + 0.3:
                caption.append(ln)
                continue
            flush_caption()
        front = sections[-1].heading.lower().startswith("abstract")  # often set smaller than the body
        small = not front and body and ln.size < body - 0.6
        if small and ln.y1 and _footnote_line(ln, bands[ln.page], bool(note) and note[-1].page == ln.page):
            if _NOTE_MARK.match(ln.text) and note and not _NOTE_MARK.fullmatch(note[-1].text.strip()):
                end_note()  # the next footnote
            note.append(ln)
            continue
        end_note()
        if small and (not width or (ln.x1 - ln.x0) < width * 0.95):
            continue  # a table cell, a label inside a figure
        if para and _paragraph_break(para[-1], ln, width, leading):
            flush()
        para.append(ln)
    end_note()
    flush()
    flush_caption()
    refs = [parse_reference(r) for r in _split_references(ref_lines)]
    kept = [s for s in sections if s.paragraphs or s.heading]
    abstract = next((" ".join(s.paragraphs) for s in kept if s.heading.lower().startswith("abstract")), "")
    if not abstract:
        # no "Abstract" heading (a journal sets it as the first paragraph, in its own type): the
        # first long paragraph of page 1 that is no footnote or licence, before any numbered section
        for sec in kept:
            if sec.number:
                break
            if not sec.heading:
                continue  # before the title: a venue's header, or a page that is no paper's first
            page1 = [t for t, pg in zip(sec.paragraphs, sec.paragraph_pages) if pg == 1]
            abstract = next((t for t in page1 if len(t) >= 400 and not _NOT_ABSTRACT.search(t[:200])), "")
            if abstract:
                break
    title = _title(raw_lines)
    authors = _authors([ln for ln in lines if ln.page == 1], title)
    return Document(pages, kept, captions, refs, first_page, backend, title, abstract, authors)


def read_pdf(
    data: bytes,
    backend: str = DEFAULT_BACKEND,
    max_pages: int = MAX_PAGES,
    time_budget_s: float = TIME_BUDGET_S,
) -> Document:
    """Read a PDF's bytes into a Document, or raise FulltextError naming why it could not."""
    if len(data) > MAX_FILE_BYTES:
        raise FulltextError("too_large", f"the file is {len(data) >> 20} MB, over the cap of {MAX_FILE_BYTES >> 20} MB")
    if b"%PDF-" not in data[:1024]:
        raise FulltextError("not_pdf", "the file is not a PDF (it does not start with %PDF-)")
    try:
        pages, lines = BACKENDS[backend](data, max_pages, _Budget(time_budget_s))
    except FulltextError:
        raise
    except Exception as e:  # the library's own errors, whatever their class: the file is damaged
        name = type(e).__name__
        if "password" in str(e).lower() or "encrypt" in str(e).lower():
            raise FulltextError("encrypted", "the PDF is encrypted (it asks for a password)") from None
        raise FulltextError("damaged", f"the PDF could not be read ({name}: {str(e)[:200]})") from None
    chars = sum(len(ln.text) for ln in lines)
    if pages == 0 or chars < MIN_CHARS_PER_PAGE * pages / 4:
        raise FulltextError("scanned", f"the PDF has {pages} pages but only {chars} characters of text")
    return structure(pages, lines, backend)


def _title(page1: Sequence[Line]) -> str:
    """The run of lines in page 1's largest type (of those with letters, in the upper part)."""
    cand = [ln for ln in page1 if sum(c.isalpha() for c in ln.text) >= 3]
    if not cand or not any(ln.size for ln in cand):
        return _norm(cand[0].text) if cand else ""
    top = max(ln.y1 for ln in cand)
    upper = [ln for ln in cand if ln.y1 >= top - 0.6 * max(top, 1.0)] or cand
    # a title is words, not a table row or a stamp: few digits, no "arXiv:", at most three lines
    upper = [
        ln
        for ln in upper
        if sum(c.isdigit() for c in ln.text) < 0.15 * len(ln.text) and "arxiv:" not in ln.text.lower()
    ] or upper
    for _ in range(2):
        big = max(ln.size for ln in upper)
        run: list[str] = []
        for ln in upper:
            if abs(ln.size - big) < 0.3 and len(run) < 3:
                run.append(ln.text)
            elif run:
                break
        rest = [ln for ln in upper if abs(ln.size - big) >= 0.3]
        if len(" ".join(run).split()) > 1 or not rest:
            break
        upper = rest  # one word in the largest type is a logo (a repository's cover page: "MPRA")
    return _norm(" ".join(run))[:300]


# a line of the title block that is an affiliation, an address, a venue or a note: no names in it
_AFFIL = re.compile(
    r"universit|institut|department|dept\b|laborator|\blab\b|school|college|\binc\b|corporation|corp\b|research|"
    r"center|centre|academy|sciences|faculty|hospital|division|group|google|microsoft|facebook|amazon|ibm\b|@|"
    r"www\.|http|\bstreet\b|\bway\b|\broad\b|\busa\b|\bu\.s\.a|china|germany|france|japan|canada|\bcity\b|"
    r"avenue|ave\b|proceedings|conference|workshop|journal|volume|copyright|©|arxiv|preprint|abstract|keywords|"
    r"correspond|equal contribution",
    re.IGNORECASE,
)
_NAME_WORD = re.compile(r"^(?:[A-Z][a-zA-Z'’\-]+|[A-Z]\.(?:-?[A-Z]\.)?|de|da|del|van|von|der|den|la|le|di|du)$")


def _is_name(words: Sequence[str]) -> bool:
    if not all(_NAME_WORD.match(w) or _NAME_WORD.match(w + ".") for w in words):
        return False
    last = words[-1].rstrip(".")
    return len(last) >= 2 and last[0].isupper() and not (len(last) == 2 and last.isupper())  # "WA": a state


def _names_in(text: str) -> list[str] | None:
    """The names on a line of the title block ("Kyle Lo† Lucy Lu Wang†", "A and B"), or None when
    any part of it is no name (then the line is something else and gives none)."""
    t = re.sub(r"[\d∗*†‡§¶♠♣♦♥⋆\u2020-\u2022]+", ",", text)  # affiliation marks separate names
    out: list[str] = []
    for part in re.split(r",|;|\band\b|&|·|\s{2,}", t):
        w = part.strip(" .").split()
        if not w:
            continue
        if 2 <= len(w) <= 3 and _is_name(w):
            out.append(" ".join(w))
        elif len(w) in (4, 6) and all(_is_name(w[i : i + 2]) for i in range(0, len(w), 2)):
            out += [" ".join(w[i : i + 2]) for i in range(0, len(w), 2)]  # names set apart by spaces only
        else:
            return None
    return out


def _authors(page1: Sequence[Line], title: str) -> list[str]:
    """The authors' names: the lines right after the title, up to the abstract, that read wholly as
    names (affiliations, addresses and e-mails are passed over). A line in doubt gives no name:
    a paper with no authors is better than one with a department for an author."""
    key = re.sub(r"\s+", " ", _norm(title)).lower()
    i, seen = 0, False
    while i < min(len(page1), 60):
        t = re.sub(r"\s+", " ", _norm(page1[i].text.strip())).lower()
        if t and t in key:
            seen = True
        elif seen:
            break
        i += 1
    if not seen:
        return []
    names: list[str] = []
    for ln in page1[i : i + 30]:
        if _FRONT.match(ln.text.strip()):
            break
        if _AFFIL.search(ln.text):
            continue
        names += [n for n in _names_in(_norm(ln.text)) or [] if n not in names]
    return names[:50]


_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;])")
_ARXIV = re.compile(r"\barXiv:\s*(\d{4}\.\d{4,5})(?:v\d+)?", re.IGNORECASE)


def identifiers(first_page: str) -> dict[str, str]:
    """The DOI and arXiv id printed on page 1, those that are."""
    out = {}
    if m := _DOI.search(first_page):
        out["doi"] = m.group(1)
    if m := _ARXIV.search(first_page):
        out["arxiv"] = m.group(1)
    return out


def title_on_first_page(title: str, first_page: str) -> bool:
    """Whether page 1 carries the title: most of the title's words, in the first page's words."""
    words = [w for w in re.findall(r"[a-z0-9]+", _norm(title).lower()) if len(w) > 2]
    if not words:
        return True
    page = set(re.findall(r"[a-z0-9]+", _norm(first_page).lower().replace("-", "")))
    page |= set(re.findall(r"[a-z0-9]+", _norm(first_page).lower()))
    found = sum(1 for w in words if w in page)
    return found >= 0.75 * len(words)
