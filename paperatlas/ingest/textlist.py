"""Plain-text paper lists in the shapes people paste from conference pages.

- untitled abstracts, one per paragraph (the seed format: titles are derived later);
- a title line, an author line, then the abstract, with or without blank lines between papers
  and between the lines of one paper;
- numbered titles (`1. Title`, `## 3. Title`), alone or followed by authors and abstract;
- virtual-site pages: a presentation line (`Poster`, `San Diego Oral`), title, ` · ` authors, a
  location line (`Exhibit Hall C,D,E #2504`), a session time, `Abstract:` and the abstract;
- labelled fields: `Title:` / `Authors:` / `Abstract:` or `标题：` / `作者：` / `摘要：`, and arXiv
  listing pages (`[1] arXiv:2401.01234 [pdf, other]`, `Title:`, `Authors:`, `Subjects:`, abstract);
- one line per paper (`Title — Authors`), markdown tables (`| Title | Authors | Type |`) and
  markdown headings with bold labels (`**Authors:** A; B`);
- a title paragraph followed by its abstract paragraph.

Presentation, location, session and time lines become fields of the paper they belong to
(`presentation`, `room`, `poster_position`, `session`, `time`), never papers; labels are taken
off wherever they stand. `read_blocks(lines)` returns the rows (titles and authors exactly as
written), the shape it read, notes on how, and the problems a reader should look at (a guessed
block, a title-like line inside an abstract, a paper without an abstract, numbering that does not
match the papers found), each naming the paper by title and line with the fix.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

# ---------------------------------------------------------------------------
# Tables: the words the rules below read. Tune here.
# ---------------------------------------------------------------------------

#: label -> field; English and Chinese, as conference pages and their translations write them
LABELS = {
    "title": "title",
    "paper title": "title",
    "标题": "title",
    "题目": "title",
    "论文标题": "title",
    "authors": "authors",
    "author": "authors",
    "author(s)": "authors",
    "作者": "authors",
    "abstract": "abstract",
    "摘要": "abstract",
    "tl;dr": "tldr",
    "tldr": "tldr",
    "keywords": "keywords",
    "关键词": "keywords",
    "关键字": "keywords",
    "subjects": "keywords",
    "url": "url",
    "link": "url",
    "链接": "url",
    "pdf": "url",
    "presentation": "presentation",
    "presentation type": "presentation",
    "decision": "presentation",
    "room": "room",
    "location": "room",
    "session": "session",
    "time": "time",
    "affiliation": "institutions",
    "affiliations": "institutions",
    "institution": "institutions",
    "institutions": "institutions",
    "单位": "institutions",
    "comments": "comments",
    "journal-ref": "journal_ref",
}
#: presentation types as pages write them -> the stored value (extra.presentation)
PRESENTATIONS = {
    "poster": "poster",
    "oral": "oral",
    "spotlight": "spotlight",
    "highlight": "highlight",
    "口头报告": "oral",
    "海报": "poster",
    "亮点": "spotlight",
}
#: link bars and buttons that pages repeat around every paper; never part of a paper
CHROME = {
    "openreview",
    "project page",
    "pdf",
    "code",
    "slides",
    "video",
    "paper",
    "bibtex",
    "poster pdf",
    "show abstract",
    "hide abstract",
    "show detail",
    "show details",
    "add to calendar",
    "chat",
    "website",
    "abstract",
    "arxiv",
    "github",
    "[pdf]",
    "[code]",
    "[bibtex]",
}
#: words of titles, never of names: "Deep Residual Learning" under a title is a title, not an author
TITLE_WORDS = {
    "learning",
    "learn",
    "network",
    "networks",
    "model",
    "models",
    "neural",
    "deep",
    "language",
    "data",
    "training",
    "generative",
    "diffusion",
    "graph",
    "graphs",
    "transformer",
    "transformers",
    "attention",
    "reinforcement",
    "optimization",
    "inference",
    "efficient",
    "robust",
    "towards",
    "toward",
    "via",
    "using",
    "benchmark",
    "benchmarks",
    "agents",
    "agent",
    "large",
    "vision",
    "image",
    "images",
    "video",
    "analysis",
    "adversarial",
    "bayesian",
    "stochastic",
    "gradient",
    "policy",
    "scaling",
    "understanding",
    "representation",
    "representations",
    "multi",
    "zero-shot",
    "few-shot",
    "self-supervised",
    "contrastive",
    "causal",
    "theory",
}
#: words of sentences, never of names (a lower-case author line has none of them)
FUNCTION_WORDS = {
    "the",
    "of",
    "a",
    "an",
    "and",
    "or",
    "to",
    "in",
    "on",
    "for",
    "with",
    "by",
    "from",
    "we",
    "is",
    "are",
    "be",
    "this",
    "that",
    "as",
    "at",
    "our",
    "their",
    "its",
    "can",
    "which",
    "it",
    "not",
    "via",
    "into",
    "than",
    "such",
    "these",
    "those",
    "has",
    "have",
    "was",
    "were",
    "both",
    "each",
    "all",
    "also",
    "but",
    "while",
    "when",
}
NAME_PARTICLES = {
    "de",
    "van",
    "von",
    "der",
    "den",
    "la",
    "le",
    "di",
    "da",
    "del",
    "du",
    "bin",
    "al",
    "dos",
    "ten",
    "y",
    "e",
    "st.",
    "jr.",
    "jr",
    "ii",
    "iii",
}
#: words a header adds to a venue and year ("ICLR 2024 accepted papers (copied from ...)")
LIST_WORDS = {
    "papers",
    "paper",
    "accepted",
    "list",
    "lists",
    "proceedings",
    "orals",
    "posters",
    "spotlights",
    "program",
    "programme",
    "schedule",
    "track",
    "conference",
    "main",
    "submissions",
    "论文",
    "列表",
    "接收",
    "录用",
    "收录",
    "会议",
}

MAX_TITLE_WORDS = 30
MAX_TITLE_CHARS = 300

# ---------------------------------------------------------------------------
# Line classes
# ---------------------------------------------------------------------------

_LABEL_RE = re.compile(
    r"^\s*(?:\d{1,4}\s*[.)、]\s*)?("
    + "|".join(re.escape(k) for k in sorted(LABELS, key=len, reverse=True))
    + r")\s*[:：]\s*(.*)$",
    re.IGNORECASE,
)
# what a label's value must look like, for labels that also begin titles ("PDF: Point Diffusion ...")
_LABEL_VALUE = {
    "url": re.compile(r"^(?:https?://|www\.|\S+/\S+)"),
    "presentation": re.compile(r"^\S+(?:\s+\S+){0,4}$"),
    "room": re.compile(r"^.{0,80}$"),
    "session": re.compile(r"^.{0,100}$"),
    "time": re.compile(r"\d"),
    "comments": re.compile(r"\d|pages?|accepted|figures?", re.IGNORECASE),
}


class _LabelLine:
    """`Authors: A, B`, `摘要：…`: group 1 the label, group 2 its value; None for a title that merely
    starts like a label (`PDF: Point Diffusion Implicit Function …`)."""

    def match(self, line: str) -> re.Match[str] | None:
        m = _LABEL_RE.match(line)
        if m is None:
            return None
        check = _LABEL_VALUE.get(LABELS[m.group(1).lower()])
        return m if check is None or not m.group(2).strip() or check.search(m.group(2).strip()) else None


LABEL_LINE = _LabelLine()
_NUMBERED = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,4})\s*[.)、])\s*(\S.*)$")
_CJK = re.compile(r"[\u3400-\u9fff]")
# "A · B" (NeurIPS virtual site), also with one space missing ("A ·B")
_AUTHOR_SEP = re.compile(r"\s*(?:,|;|，|、|；|\band\b|&|\s·|·\s)\s*")
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_MARK_CHARS = r"\d*†‡§¶∗#" + _SUPERSCRIPTS
_MARKS = re.compile(rf"[{_MARK_CHARS}]+$|\([^)]*\)|\[[^]]*\]")
_TRAILING_MARKS = re.compile(rf"[{_MARK_CHARS}]+$")
# affiliation marks glued to a name: "Hao Zhang2*", "Aaron Archer¹*", "Qi Liu1,3"
_FOOTNOTE_MARKS = re.compile(rf"(?<=[^\W\d_])[{_MARK_CHARS}]+(?:,(?=\d)\d+)*(?=\s*(?:[,;，、；&·]|\band\b|$))")
_PRESENTATION_LINE = re.compile(
    r"^(?P<where>(?:[A-Z][\w.'-]*\s+){0,3}?)(?P<kind>poster|oral|spotlight|highlight|口头报告|海报)"
    r"(?:\s+(?:presentation|poster|paper))?s?$",
    re.IGNORECASE,
)
_SESSION_LINE = re.compile(
    r"^(?P<kind>oral|poster|spotlight)\s+(?:session\s+)?\d{1,2}[A-Za-z]?(?:\b.{0,80})?$", re.IGNORECASE
)
_POSITION = re.compile(r"^(?P<room>.{0,80}?)\s*(?P<pos>#\s?\d{1,5}[A-Za-z]?)$")
_ROOM_WORDS = re.compile(
    r"^(?:Exhibit\s+Hall|Great\s+Hall|Poster\s+Hall|Poster\s+Session|Hall|Halle|Room|Ballroom"
    r"|(?:West|East|North|South)\s+(?:Ballroom|Hall|Exhibition\s+Hall)|Auditorium|Level)\b"
)
_TIME_LINE = re.compile(
    r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?,?\s+(?:\d{1,2}\s+[A-Z][a-z]{2,8}|[A-Z][a-z]{2,8}\.?\s+\d{1,2})"
    r"\b.{0,80}?\d(?::\d\d)?\s*(?:a\.m\.|p\.m\.|am\b|pm\b|AM\b|PM\b|:\d\d).*$"
)
_ARXIV_LINE = re.compile(r"^\[(\d{1,5})\]\s+arXiv:(\S+?)(?:v\d+)?(?:\s+\[.*\])?\s*$")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
_MD_BOLD_LABEL = re.compile(r"^\s*[*_]{2}([^*_]{1,40}?)\s*([:：])\s*[*_]{2}\s*")
_MD_HEADING = re.compile(r"^\s*#{1,6}\s+")
_MD_BOLD_LINE = re.compile(r"^\s*[*_]{2}(.+?)[*_]{2}\s*$")
_ONE_LINER = re.compile(r"^(?P<title>.+?)\s+(?:—|–|--|-|\|)\s+(?P<authors>[^—–|]+)$")
_SENTENCE_END = re.compile(r"[.!?。！？)\]]$")


def _words(s: str) -> list[str]:
    return s.split()


_HYPHEN_END = re.compile(r"[^\W\d_]-$")


def join_lines(lines: list[str]) -> str:
    """Lines of one wrapped paragraph as one line; a word wrapped at its hyphen ("dimension-" /
    "free") is joined back without a space."""
    out = ""
    for line in lines:
        if out and _HYPHEN_END.search(out) and line[:1].isalpha():
            out += line
        else:
            out = f"{out} {line}" if out else line
    return out


@functools.lru_cache(maxsize=65536)
def is_title_like(line: str) -> bool:
    """Short, one line, not a sentence: what a title looks like."""
    s = line.strip()
    if not s or len(s) > MAX_TITLE_CHARS or len(_words(s)) > MAX_TITLE_WORDS:
        return False
    first = s.split()[0]
    if s[0].islower() and first.isalpha() and first.islower():
        return False  # "mPLUG-Owl", "k-Means", "iVAE" start in lower case and are titles
    # a title does not end with a full stop (an initial or "et al." is not one)
    return not (s.endswith(".") and not re.search(r"(?:\b[A-Z]|al)\.$", s))


@functools.lru_cache(maxsize=65536)
def numbered(line: str) -> str | None:
    """The title of a numbered line (`1. Title`, `[3] Title`, also `3. A title.`), else None."""
    m = _NUMBERED.match(line)
    if not m or LABEL_LINE.match(line):
        return None
    rest = m.group(3).strip()
    return rest if is_title_like(rest) or title_with_stop(rest) else None


def title_with_stop(line: str) -> bool:
    """A title some lists end with a full stop ("… censored time-to-event data."): one sentence, short."""
    s = line.strip()
    return s.endswith(".") and ". " not in s[:-1] and len(s.split()) <= 25 and is_title_like(s[:-1])


def _number(line: str) -> int | None:
    m = _NUMBERED.match(line)
    return int(m.group(1) or m.group(2)) if m else None


# a word of a name starts with a letter; a nickname stands in quotes (`Zhangyang "Atlas" Wang`)
_NAME_WORD = r"(?:[^\W\d_][\w'’.-]*|[\"“][^\W\d_][\w'’.-]*[\"”])"
_NAME_WORDS = re.compile(rf"{_NAME_WORD}(?:\s+{_NAME_WORD})*")  # every word of the name starts with a letter
_CJK_PUNCT = re.compile(r"[，。：:]")
_SUFFIX_COMMA = re.compile(r",\s*(?=(?:jr|sr|ii|iii|iv)\.?$)", re.IGNORECASE)


@functools.lru_cache(maxsize=65536)
def _is_name(part: str, lower_ok: bool = False) -> bool:
    p = _MARKS.sub("", _FORMAT_CHARS.sub("", part)).strip().strip("*").strip()
    if not p:
        return False
    if "," in p:
        p = _SUFFIX_COMMA.sub(" ", p)
    if _CJK.search(p):
        return 2 <= len(p.replace(" ", "")) <= 6 and not _CJK_PUNCT.search(p)
    ws = p.split()
    if not 1 <= len(ws) <= 5 or not _NAME_WORDS.fullmatch(p):
        return False  # digits, symbols: not a name
    if any(w.lower().strip(".,:") in TITLE_WORDS for w in ws):
        return False
    if lower_ok and len(ws) >= 2 and any(w.islower() for w in ws):
        # "zheng zhang", "weitao Du": a name written (partly) in lower case; a phrase has function words
        # (an initial such as `a.` is none, nor a surname such as `an` at the end)
        return not any(
            w.strip(".").lower() in FUNCTION_WORDS
            and not (len(w) == 2 and w.endswith("."))
            and not (i == len(ws) - 1 and w.lower() in _FUNCTION_SURNAMES)
            for i, w in enumerate(ws)
        )
    caps = 0
    for w in ws:
        w = w.strip('.,"“”')
        if not w or w.lower() in NAME_PARTICLES and not (len(w) == 1 and w.isupper()):  # `Y. Du`: an initial
            continue
        if not (w[0].isupper() or w[0] in "'’" or w[1:2] in ("'", "’") and w[2:3].isupper()):  # `d'Orsi`
            return False
        caps += 1
    return caps >= 1


#: endings of English words that are rare at the end of a name (`sampling`, `estimation`, `robustness`);
#: pinyin given names end in -ing too, so that ending counts only in longer words
_WORD_ENDINGS = re.compile(r"(?:tion|sion|ment|ness|ity|ism|ics|ive|ance|ence|able|ous|ful|less)s?$")
#: words of sentences that are names too, as a name's last word (`weixin an`)
_FUNCTION_SURNAMES = {"an", "be", "e", "y", "da", "de", "du", "le", "la", "di", "al"}


def _is_lower_name(part: str) -> bool:
    """A name written all in lower case (`ernest k. ryu`): two to five words, none of them a word of
    sentences or titles or with an English word's ending. A line of them is an author line only when
    every part is one, so a lower-case keyword list (`sampling, robustness`) is turned away."""
    p = " ".join(_MARKS.sub("", _FORMAT_CHARS.sub("", part)).split())
    ws = p.split()
    return (
        2 <= len(ws) <= 5
        and _is_name(p, True)
        and not any(_WORD_ENDINGS.search(w.strip(".")) for w in ws if len(w) > 3)
    )


_ET_AL = re.compile(r"[,;]?\s*(?:\bet\s+al\.?|等)\s*$", re.IGNORECASE)


_FORMAT_CHARS = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def _drop_et_al(s: str) -> str:
    """ "A, B, et al." names A and B. The regex is tried only on a line that ends like it: searched for
    over a whole abstract, its `$` costs more than the rest of the author-line test."""
    t = s.rstrip()
    return _ET_AL.sub("", s) if t.endswith("等") or t.lower().endswith(("al", "al.")) else s


#: what follows a name after a comma and belongs to it (`Martin Luther King, Jr.`)
_SUFFIXES = {"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"}


@functools.lru_cache(maxsize=65536)
def _author_parts(line: str) -> tuple[str, ...]:
    s = _drop_et_al(_FOOTNOTE_MARKS.sub("", _FORMAT_CHARS.sub("", line.strip())))
    parts = [x.strip() for x in _AUTHOR_SEP.split(s) if x and x.strip() and _not_only_marks(x)]
    for i in range(len(parts) - 1, 0, -1):
        if parts[i].lower() in _SUFFIXES:
            parts[i - 1] += ", " + parts.pop(i)
    return tuple(parts)


def _not_only_marks(x: str) -> bool:
    """Something is left of `x` once its marks and bracketed parts are gone. A part that starts with a
    letter and has no bracket surely keeps that letter (marks are only taken off its end)."""
    if x[:1].isalpha() and "(" not in x and "[" not in x:
        return True
    return bool(_MARKS.sub("", x).strip())


_PREFIX_CHARS = 240
_OPEN_BRACKET = re.compile(r"[(\[]")


def _prefix_has_no_name(s: str) -> bool:
    """True when the line's start already holds a part that is no name, read either way (`lower_ok`
    or not), so the whole line is no author line: splitting a whole abstract costs far more.

    The prefix is cut before a space, so every separator in it is one of the whole line's and every
    part but the last is a part of the whole line too. The last part is only the start of one: it
    is surely no name when it has more words (before any bracket) than a name has, with room to spare
    for marks stripped off its end."""
    cut = s.rfind(" ", 0, _PREFIX_CHARS + 1)
    if cut <= 0:
        return False
    parts = _author_parts(s[:cut])
    if not parts:
        return False
    if any(not _is_name(x, True) and not _is_name(x, False) for x in parts[:-1]):
        return True
    return len(_OPEN_BRACKET.split(_FORMAT_CHARS.sub("", parts[-1]), maxsplit=1)[0].split()) >= 8


@functools.lru_cache(maxsize=65536)
def is_author_line(line: str) -> bool:
    """`Ada Lovelace, Alan Turing and Grace Hopper` / `zheng zhang · Qi Liu` / `张三，李四`: names only."""
    s = line.strip()
    if not s or len(s) > 3000 or s.endswith((":", "：", "?")):
        return False
    # most lines asked about are prose: their first part is no name, and the whole line need not be split
    head = _AUTHOR_SEP.split(_FOOTNOTE_MARKS.sub("", s[:200]), maxsplit=1)[0].strip()
    if head and len(head) < 200 and not _is_name(head, True):
        return False
    if len(s) > _PREFIX_CHARS and _prefix_has_no_name(s):
        return False
    parts = _author_parts(s)
    if not parts:
        return False
    if len(parts) >= 2 and all(x.islower() for x in parts):
        return all(_is_lower_name(x) for x in parts)  # `sehyun kwon, jaeseung park`
    lower_ok = len(parts) >= 2 and any(not x.islower() for x in parts)
    if not all(_is_name(x, lower_ok) for x in parts):
        return False
    if len(parts) == 1:  # one name: at most 4 words, and not a title in Title Case ("Deep Learning")
        return len(_words(_MARKS.sub("", parts[0]))) <= 4 or bool(_CJK.search(parts[0]))
    return True


_PAREN = re.compile(r"\(([^)]*)\)")
#: a short bracketed word between the words of a name is a nickname, not an affiliation: `Ruian (Ian) Shi`
_NICKNAME = re.compile(r"^[^\W\d_][\w'’.-]*\s+\([^\W\d_][\w.-]{0,15}\)\s+[^\W\d_][\w'’.-]*\s*$")
_BRACKETS = re.compile(r"\([^)]*\)|\[[^]]*\]")


def split_author_line(line: str) -> tuple[list[str], list[dict[str, str]]]:
    """Names in order, without affiliation marks, and the affiliations given in parentheses."""
    names, affiliations = [], []
    for part in _author_parts(line):
        if _NICKNAME.search(part):
            names.append(" ".join(_TRAILING_MARKS.sub("", part).split()).strip("* "))
            continue
        bracketed = "(" in part or "[" in part
        m = _PAREN.search(part) if bracketed else None
        name = " ".join(_MARKS.sub("", _BRACKETS.sub("", part) if bracketed else part).split()).strip("* ")
        if not name:
            continue
        names.append(name)
        if m and m.group(1).strip():
            affiliations.append({"author": name, "institution": m.group(1).strip(), "country": ""})
    if affiliations and len(affiliations) < len(names):
        given = {a["author"]: a for a in affiliations}
        affiliations = [given.get(n, {"author": n, "institution": "", "country": ""}) for n in names]
    return names, affiliations


def author_line(line: str) -> str:
    """The author line without affiliation marks (`Hao Zhang2*` -> `Hao Zhang`), joined with ", "."""
    return ", ".join(split_author_line(line)[0])


def is_prose(text: str) -> bool:
    """An abstract-like paragraph: sentences, or simply too long for a title."""
    s = text.strip()
    return (
        len(s) > MAX_TITLE_CHARS
        or len(_words(s)) > MAX_TITLE_WORDS
        or (s.endswith((".", "。")) and len(_words(s)) >= 8)
        or bool(s)
        and s[0].islower()
    )


def _title_case_share(line: str) -> float:
    ws = [w for w in re.findall(r"[A-Za-z][\w'-]*", line) if len(w) > 3]
    return sum(w[0].isupper() for w in ws) / len(ws) if ws else 0.0


def presentation_of(line: str) -> str | None:
    """`Poster`, `San Diego Oral`, `Spotlight Poster` -> "poster", "oral", "spotlight"; else None."""
    s = line.strip().strip("[]()").strip()
    m = _PRESENTATION_LINE.match(s)
    if not m or len(s) > 40:
        return None
    kind = m.group("kind").lower()
    if re.search(r"spotlight", s, re.IGNORECASE):
        kind = "spotlight"  # "Spotlight Poster" is a spotlight
    return PRESENTATIONS.get(kind, kind)


def location_of(line: str) -> dict[str, str] | None:
    """`Exhibit Hall C,D,E #2504` -> {room, poster_position}; `Hall C 4-9` -> {room}; else None."""
    s = line.strip()
    if len(s) > 100 or _SENTENCE_END.search(s) and not s.endswith(")"):
        return None
    m = _POSITION.match(s)
    if m:
        room = m.group("room").strip(" ,-–—:")
        if room and (len(room.split()) > 10 or re.search(r"[.!?]\s", room)):
            return None
        out = {"poster_position": m.group("pos").replace(" ", "")}
        if room:
            out["room"] = room
        return out
    if _ROOM_WORDS.match(s) and len(s.split()) <= 8 and re.search(r"[\d,&+]|\b[A-Z]\b", s):
        return {"room": s}
    return None


def _is_chrome(line: str) -> bool:
    s = line.strip().lower()
    if s in CHROME:
        return True
    cells = re.findall(r"\[\s*([^\]]+?)\s*\]", s)
    return bool(cells) and re.fullmatch(r"(?:\s*\[[^\]]+\]\s*)+", s) is not None and all(c in CHROME for c in cells)


# ---------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------


@dataclass
class _Rec:
    line: int
    title: str = ""
    authors: list[str] = field(default_factory=list)
    abstract: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    lines: list[int] = field(default_factory=list)  # every line this paper was read from
    abstract_lines: list[tuple[int, str]] = field(default_factory=list)
    number: int | None = None
    guessed: bool = False

    def set_authors(self, line: str) -> None:
        names, affiliations = split_author_line(line)
        self.authors = names
        if affiliations:
            self.extra["affiliations"] = affiliations

    def row(self) -> dict[str, Any]:
        if not self.title and not self.authors and not self.extra:
            return {"abstract": join_lines(self.abstract)}  # the seed shape, unchanged (its record hash too)
        d: dict[str, Any] = {}
        if self.title:
            d["title"] = self.title
        if self.authors:
            d["authors"] = self.authors
        if self.abstract:
            d["abstract"] = join_lines(self.abstract)
        d.update(self.extra)
        return d


@dataclass
class TextListReading:
    rows: list[tuple[str, dict[str, Any]]]
    shape: str  # "untitled", "titled", "labelled", "titles", "table", "one-liners"
    notes: list[str]
    problems: list[str] = field(default_factory=list)  # damage a reader should check: title, line, fix
    shape_name: str = ""  # in words, for the ingest summary


# what an annotation line gives (a field), attached to the paper of a neighbouring content line
@dataclass
class _Lines:
    content: list[tuple[int, str]]  # (line number, text) of the lines left to read; "" for a blank line
    before: dict[int, dict[str, Any]]  # fields for the paper that the next content line belongs to
    after: dict[int, dict[str, Any]]  # fields for the paper that the previous content line belongs to
    starts: set[int]  # lines that surely start a paper (after a presentation line)
    abstract_starts: set[int]  # lines that surely are the start of an abstract (after `Abstract:`)
    authors: set[int]  # lines labelled `Authors:`
    dropped: list[int]  # page chrome taken out


def _strip_markdown(text: str) -> str:
    s = _MD_HEADING.sub("", text)
    s = _MD_BOLD_LABEL.sub(lambda m: f"{m.group(1)}{m.group(2)} ", s)
    m = _MD_BOLD_LINE.match(s)
    if m:
        s = m.group(1)
    return s.strip()


def _field_value(key: str, value: str) -> dict[str, Any]:
    if key == "presentation":
        kind = presentation_of(value)
        return {"presentation": kind or value.strip().lower()}
    if key == "room":
        return location_of(value) or {"room": value.strip()}
    if key == "institutions":
        return {"institutions": [x.strip() for x in re.split(r"\s*[;；]\s*", value) if x.strip()]}
    return {key: value.strip()}


def _add_content(out: _Lines, n: int, s: str, before: dict[str, Any], start: bool, abstract: bool) -> None:
    """A line that stays in the text, with what the annotation lines above it said about it."""
    if before:
        out.before[n] = before
    if start:
        out.starts.add(n)
    if abstract:
        out.abstract_starts.add(n)
    out.content.append((n, s))


def _classify(lines: list[tuple[int, str]]) -> _Lines:
    """Take presentation/location/time/label lines out of the text; remember where their fields go."""
    out = _Lines([], {}, {}, set(), set(), set(), [])
    pending_before: dict[str, Any] = {}
    pending_start = False
    pending_abstract = False
    last_content: int | None = None
    markdown = sum(1 for _, t in lines if _MD_HEADING.match(t) or _MD_BOLD_LABEL.match(t)) >= 2
    for n, raw in lines:
        text = raw.strip()
        if not text:
            out.content.append((n, ""))
            continue
        if markdown:
            text = _strip_markdown(text)
        s = _MD_LINK.sub(lambda m: m.group(1), text) if markdown else text
        if len(s) > 300:  # an abstract line: none of the short lines below (and no regex over megabytes)
            m = LABEL_LINE.match(s[:40])
            if m and LABELS[m.group(1).lower()] == "abstract":
                s, pending_abstract = s[m.start(2) :].strip(), True
            _add_content(out, n, s, pending_before, pending_start, pending_abstract)
            pending_before, pending_start, pending_abstract, last_content = {}, False, False, n
            continue
        kind = presentation_of(s)
        m_session = _SESSION_LINE.match(s) if kind is None and len(s.split()) <= 12 else None
        if kind is not None or m_session:
            fields: dict[str, Any] = (
                {"presentation": kind}
                if kind
                else {"session": s, "presentation": PRESENTATIONS.get(m_session.group("kind").lower(), "")}
            )
            pending_before.update(fields)
            pending_start = True
            continue
        loc = location_of(s)
        if loc is not None:
            if last_content is not None:
                out.after.setdefault(last_content, {}).update(loc)
            else:
                pending_before.update(loc)
            continue
        if _TIME_LINE.match(s):
            if last_content is not None:
                out.after.setdefault(last_content, {})["time"] = s
            continue
        if _is_chrome(s):
            if s.strip("[] ").lower() == "abstract":
                pending_abstract = True
            else:
                out.dropped.append(n)
            continue
        m = LABEL_LINE.match(s)
        if m:
            key, value = LABELS[m.group(1).lower()], m.group(2).strip()
            if key == "abstract":
                if not value:
                    pending_abstract = True
                    continue
                s = value
                pending_abstract = True
            elif key == "authors":
                s = value
                out.authors.add(n)
            elif key != "title":
                if value and last_content is not None and not pending_start:
                    out.after.setdefault(last_content, {}).update(_field_value(key, value))
                elif value:
                    pending_before.update(_field_value(key, value))
                continue
            else:
                s = value
            if not s:
                continue
        _add_content(out, n, s, pending_before, pending_start, pending_abstract)
        pending_before, pending_start, pending_abstract, last_content = {}, False, False, n
    if pending_before and last_content is not None:
        out.after.setdefault(last_content, {}).update(pending_before)
    return out


def _blocks(lines: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    blocks: list[list[tuple[int, str]]] = []
    cur: list[tuple[int, str]] = []
    for n, line in lines:
        if line.strip():
            cur.append((n, line.strip()))
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    return blocks


def _split_block(
    block: list[tuple[int, str]], cl: _Lines, last_number: list[int | None]
) -> list[list[tuple[int, str]]]:
    """A block holding several papers (no blank line between them) -> one block per paper.

    A paper starts at a line after a presentation line, at the next number of a numbered list, and
    at a title-like line followed by an author line where the line before ends a paper (a sentence,
    or an author line). A paper is at least two lines (a title and what follows), so a title that
    looks like a name ("Private Everlasting Prediction") does not cut its own author line off."""
    cuts = [0]
    for i, (n, text) in enumerate(block):
        num = _number(text) if numbered(text) is not None else None
        if i == 0:
            if num is not None:
                last_number[0] = num
            continue
        prev_n, prev = block[i - 1]
        if n in cl.abstract_starts or prev_n in cl.abstract_starts and not _SENTENCE_END.search(prev):
            continue
        nxt_n, nxt = block[i + 1] if i + 1 < len(block) else (0, "")
        after_presentation = n in cl.starts
        next_number = num is not None and last_number[0] is not None and num == last_number[0] + 1
        # cheapest tests first: the author-line test is what a long paste spends its time on
        cut = (
            after_presentation
            or next_number
            or (
                i - cuts[-1] >= 2
                and (is_title_like(text) or title_with_stop(text))
                and bool(nxt)
                and (nxt_n in cl.authors or is_author_line(nxt))
                and (
                    bool(_SENTENCE_END.search(prev) and is_prose(prev))
                    or prev_n in cl.authors
                    or prev_n in cl.after
                    or is_author_line(prev)
                )
            )
        )
        if cut:
            cuts.append(i)
            if num is not None:
                last_number[0] = num
    cuts.append(len(block))
    return [block[a:b] for a, b in itertools.pairwise(cuts) if b > a]


def _one_liners(content: list[tuple[int, str]]) -> list[_Rec] | None:
    """`Title — Authors` one line per paper, if most lines are that."""
    texts = [(n, t) for n, t in content if t]
    hits = []
    misses, allowed = 0, 0.2 * len(texts)  # more misses than this and the file is not one-liners
    for n, t in texts:
        m = _ONE_LINER.match(t)
        if m and is_title_like(m.group("title")) and is_author_line(m.group("authors")):
            hits.append((n, m))
        else:
            misses += 1
            if misses > allowed:
                return None
    if len(hits) < 2 or len(hits) < 0.8 * len(texts):
        return None
    recs = []
    for n, m in hits:
        rec = _Rec(n, title=m.group("title").strip(), lines=[n])
        rec.set_authors(m.group("authors"))
        recs.append(rec)
    return recs


_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")
_COLUMN = {
    "title": "title",
    "paper": "title",
    "paper title": "title",
    "name": "title",
    "标题": "title",
    "论文": "title",
    "authors": "authors",
    "author": "authors",
    "author(s)": "authors",
    "speakers": "authors",
    "作者": "authors",
    "abstract": "abstract",
    "摘要": "abstract",
    "type": "presentation",
    "presentation": "presentation",
    "status": "presentation",
    "decision": "presentation",
    "format": "presentation",
    "room": "room",
    "location": "room",
    "poster": "poster_position",
    "poster #": "poster_position",
    "board": "poster_position",
    "session": "session",
    "time": "time",
    "url": "url",
    "link": "url",
    "pdf": "url",
}


def _table(lines: list[tuple[int, str]]) -> TextListReading | None:
    """A markdown table whose header names a title column."""
    rows = [(n, t) for n, t in lines if _TABLE_ROW.match(t)]
    rule = next((i for i, (n, t) in enumerate(lines) if _TABLE_RULE.match(t) and "|" in t), None)
    if rule is None or rule == 0 or not _TABLE_ROW.match(lines[rule - 1][1]):
        return None
    header = [c.strip().strip("*").strip().lower() for c in _TABLE_ROW.match(lines[rule - 1][1]).group(1).split("|")]
    cols = {i: _COLUMN[h] for i, h in enumerate(header) if h in _COLUMN}
    if "title" not in cols.values():
        return None
    recs: list[_Rec] = []
    table_lines = {lines[rule - 1][0], lines[rule][0]}
    for n, t in lines[rule + 1 :]:
        m = _TABLE_ROW.match(t)
        if not m:
            if t.strip():
                break
            continue
        table_lines.add(n)
        cells = [c.strip() for c in m.group(1).split("|")]
        rec = _Rec(n, lines=[n])
        for i, key in cols.items():
            if i >= len(cells) or not cells[i]:
                continue
            cell = cells[i]
            link = _MD_LINK.search(cell)
            if link:
                cell = _MD_LINK.sub(lambda x: x.group(1), cell).strip()
                if key == "title":
                    rec.extra["url"] = link.group(2)
            cell = cell.strip("* ")
            if key == "title":
                rec.title = cell
            elif key == "authors":
                rec.set_authors(cell)
            elif key == "abstract":
                rec.abstract = [cell]
            else:
                rec.extra.update(_field_value(key, cell))
        if rec.title:
            recs.append(rec)
    outside = sum(1 for n, t in lines if t.strip() and n not in table_lines)
    del rows
    notes = [f"read {len(recs)} papers from a markdown table (line {lines[rule - 1][0]})"]
    if outside:
        notes.append(f"{outside} lines outside the table were not read as papers")
    return TextListReading([(f"line {r.line}", r.row()) for r in recs], "table", notes, [], "a markdown table")


def _labelled(lines: list[tuple[int, str]]) -> TextListReading:
    recs: list[_Rec] = []
    cur: _Rec | None = None
    last = ""
    blank = False
    for n, line in lines:
        s = line.strip()
        if not s:
            blank = True
            continue
        arxiv = _ARXIV_LINE.match(s)
        if arxiv:
            cur = _Rec(n, lines=[n])
            cur.extra["id"] = arxiv.group(2)
            recs.append(cur)
            last, blank = "", False
            continue
        m = LABEL_LINE.match(_strip_markdown(s))
        if m:
            key, value = LABELS[m.group(1).lower()], m.group(2).strip()
            starts = (
                cur is None
                or (key == "title" and (cur.title or cur.abstract))
                or (key == "abstract" and cur.abstract)
                or (key == "authors" and cur.authors)
            )
            if starts:
                cur = _Rec(n)
                recs.append(cur)
            assert cur is not None
            cur.lines.append(n)
            if key == "title":
                cur.title = value
            elif key == "authors":
                cur.set_authors(value)
            elif key == "abstract":
                cur.abstract = [value] if value else []
            elif key == "keywords":
                cur.extra["keywords"] = value
            else:
                cur.extra.update(_field_value(key, value))
            last, blank = key, False
            continue
        if cur is None:
            continue  # text before the first label (a header was already taken off)
        cur.lines.append(n)
        # an unlabelled line continues the field above it (a wrapped title, a multi-line abstract);
        # after a blank line it is the abstract (arXiv listings put it under Subjects:)
        if blank and last not in ("abstract", "title", "authors"):
            last = "abstract"
        if last == "title":
            cur.title = f"{cur.title} {s}".strip()
        elif last == "authors":
            cur.set_authors(f"{', '.join(cur.authors)}, {s}")
        elif last in ("abstract", ""):
            cur.abstract.append(s)
            cur.abstract_lines.append((n, s))
            last = "abstract"
        elif last == "keywords":
            cur.extra["keywords"] = f"{cur.extra.get('keywords', '')} {s}".strip()
        elif isinstance(cur.extra.get(last), str):
            cur.extra[last] = f"{cur.extra[last]} {s}".strip()
        blank = False
    arxiv_listing = any("id" in r.extra for r in recs)
    for r in recs:
        if arxiv_listing and "id" in r.extra:
            r.extra["arxiv_id"] = r.extra.pop("id")
    rows = [(f"line {r.line}", r.row()) for r in recs]
    name = "an arXiv listing" if arxiv_listing else "labelled fields (Title:/Authors:/Abstract:)"
    reading = TextListReading(rows, "labelled", [f"read {len(rows)} papers from {name}"], [], name)
    reading.problems = _problems(recs, [], set())
    return reading


def _problems(
    recs: list[_Rec], guessed: list[_Rec], numbers: set[int], appended: Sequence[tuple[int, _Rec]] = ()
) -> list[str]:
    """What a reader should check, each naming the paper by title and line, with the fix."""
    out = []
    for n, r in appended:
        if r in guessed:
            continue
        out.append(
            f"line {n}: a paragraph with no title line above it was read as more of the abstract of "
            f"{_name(r)} (line {r.line}): if it is another paper, put its title line and author line above it"
        )
    for r in guessed:
        out.append(
            f"line {r.line}: {_name(r)}: the title was a guess (a Title Case line above a paragraph, "
            "with no author line): check it, or label the fields (Title: / Authors: / Abstract:)"
        )
    for r in recs:
        for i, (n, t) in enumerate(r.abstract_lines):
            if i == 0:
                continue
            prev = r.abstract_lines[i - 1][1]
            if is_title_like(t) and _title_case_share(t) >= 0.6 and len(t.split()) >= 3 and _SENTENCE_END.search(prev):
                out.append(
                    f"line {n}: the abstract of {_name(r)} (line {r.line}) holds a title-like line "
                    f"({t[:60]!r}): if it is the next paper's title, put a blank line or its author line "
                    "under it"
                )
                break
    titled = [r for r in recs if r.title]
    with_abstract = sum(1 for r in titled if r.abstract)
    if with_abstract and with_abstract < len(titled):
        missing = [r for r in titled if not r.abstract]
        where = "; ".join(f"line {r.line}: {_name(r)}" for r in missing[:5]) + (" ..." if len(missing) > 5 else "")
        out.append(
            f"{len(missing)} of {len(titled)} papers {'has' if len(missing) == 1 else 'have'} no abstract "
            f"({where}): check that the list "
            "gives one under each title"
        )
    with_authors = sum(1 for r in titled if r.authors)
    if with_authors and with_authors < len(titled):
        # a list that gives authors gives them for every paper: one without was likely read into its abstract
        missing = [r for r in titled if not r.authors]
        where = "; ".join(f"line {r.line}: {_name(r)}" for r in missing[:5]) + (" ..." if len(missing) > 5 else "")
        out.append(
            f"{len(missing)} of {len(titled)} papers {'has' if len(missing) == 1 else 'have'} no author line "
            f"({where}): check the line under "
            "each title (an author line not taken for one starts the abstract)"
        )
    if numbers:
        expected = set(range(min(numbers), max(numbers) + 1))
        gaps = sorted(expected - numbers)
        if gaps or len(numbers) != len(titled):
            gap = (
                f" (numbers missing: {', '.join(map(str, gaps[:10]))}{' ...' if len(gaps) > 10 else ''})"
                if gaps
                else ""
            )
            out.append(
                f"the list is numbered {min(numbers)}-{max(numbers)}{gap} but {len(titled)} papers "
                "were read: check the papers around the gaps, or pass --format to read it another way"
            )
    return out


def _name(r: _Rec) -> str:
    t = r.title or (" ".join(r.abstract)[:50] + "…")
    return f"{t[:70]!r}" if len(t) <= 70 else f"{t[:67]!r}…"


def read_blocks(lines: list[tuple[int, str]]) -> TextListReading:
    """Rows from (line number, text) lines after the header: see the module docstring."""
    if (
        any((m := LABEL_LINE.match(_strip_markdown(ln))) and LABELS[m.group(1).lower()] == "title" for _, ln in lines)
        or sum(1 for _, ln in lines if _ARXIV_LINE.match(ln.strip())) >= 1
    ):
        return _labelled(lines)
    table = _table(lines)
    if table is not None:
        return table
    cl = _classify(lines)
    one = _one_liners(cl.content)
    if one is not None:
        rows = [(f"line {r.line}", r.row()) for r in one]
        return TextListReading(
            rows,
            "one-liners",
            [f"read {len(rows)} papers as one line each (Title — Authors)"],
            [],
            "one line per paper",
        )
    blocks = _blocks(cl.content)
    recs: list[_Rec] = []
    guessed: list[_Rec] = []
    appended: list[tuple[int, _Rec]] = []  # (line, paper): a paragraph read as more of that paper's abstract
    wrapped = 0
    last_number: list[int | None] = [None]
    numbers: set[int] = set()

    def pending() -> _Rec | None:
        return recs[-1] if recs and recs[-1].title and not recs[-1].abstract else None

    def add_abstract(rec: _Rec, block: list[tuple[int, str]]) -> None:
        rec.abstract.append(join_lines([t for _, t in block]))
        rec.abstract_lines.extend(block)
        rec.lines.extend(n for n, _ in block)

    split = [sub for block in blocks for sub in _split_block(block, cl, last_number)]
    titled = any(
        numbered(b[0][1]) is not None
        or (len(b) == 1 and is_title_like(b[0][1]))
        or (len(b) >= 2 and is_title_like(b[0][1]) and is_author_line(b[1][1]))
        for b in split
    )
    for block in split:
        n0, first = block[0]
        texts = [t for _, t in block]
        forced_abstract = n0 in cl.abstract_starts
        title = None if forced_abstract else numbered(first)
        if (
            len(block) >= 2
            and all(numbered(t) is not None for t in texts)
            or (
                len(block) >= 3
                and all(is_title_like(t) for t in texts)
                and not is_author_line(texts[1])
                and not any(n in cl.abstract_starts for n, _ in block)
            )
        ):
            for n, t in block:  # one title per line
                recs.append(_Rec(n, title=numbered(t) or t, lines=[n], number=_number(t) if numbered(t) else None))
            continue
        if (
            title is None
            and not forced_abstract
            and len(block) >= 2
            and (is_title_like(first) or title_with_stop(first) and is_author_line(texts[1]))
            and (not texts[1][0].islower() or is_author_line(texts[1]))
        ):
            rest = texts[1:]
            if is_author_line(texts[1]) or block[1][0] in cl.authors or block[1][0] in cl.abstract_starts:
                title = first
            elif len(rest) == 1 and len(rest[0]) > 2 * len(first) and is_prose(rest[0]):
                title = first  # a title line above a one-line abstract
            elif _title_case_share(first) >= 0.6 and len(first) < 0.85 * max(len(t) for t in rest):
                title = first  # a Title Case line above a wrapped abstract
                guessed.append(_Rec(n0, title=first))
            else:
                wrapped += 1
        if title is not None:
            rec = _Rec(n0, title=title, lines=[n0])
            if numbered(first) is not None and title == numbered(first):
                rec.number = _number(first)
            if guessed and guessed[-1].line == n0:
                guessed[-1] = rec
            recs.append(rec)
            rest_lines = block[1:]
            if (
                rest_lines
                and rest_lines[0][0] not in cl.abstract_starts
                and (rest_lines[0][0] in cl.authors or is_author_line(rest_lines[0][1]))
            ):
                rec.set_authors(rest_lines[0][1])
                rec.lines.append(rest_lines[0][0])
                rest_lines = rest_lines[1:]
            if rest_lines:
                add_abstract(rec, rest_lines)
            continue
        text = join_lines(texts)
        cur = pending()
        if len(block) == 1 and not forced_abstract and not is_prose(text):
            if cur is not None and not cur.authors and (is_author_line(text) or n0 in cl.authors):
                cur.set_authors(text)  # the author paragraph under a title paragraph
                cur.lines.append(n0)
            elif is_title_like(text):
                recs.append(_Rec(n0, title=text, lines=[n0]))  # a title paragraph; its abstract (if any) follows
            else:
                recs.append(_Rec(n0, abstract=[text], lines=[n0], abstract_lines=list(block)))
                guessed.append(recs[-1])
            continue
        if cur is not None:
            add_abstract(cur, block)
        elif titled and recs and recs[-1].title and recs[-1].abstract:
            add_abstract(recs[-1], block)  # a second paragraph of a titled paper's abstract
            if not forced_abstract:
                appended.append((n0, recs[-1]))
        else:
            recs.append(_Rec(n0, abstract=[text], lines=[n0 for n0, _ in block], abstract_lines=list(block)))

    # the fields of presentation/location/label lines go to the paper their neighbouring line is in
    owner = {n: r for r in recs for n in r.lines}
    starts = sorted(owner)
    for n, fields in cl.before.items():
        r = owner.get(n) or next((owner[m] for m in starts if m > n), None)
        if r is not None:
            for k, v in fields.items():
                r.extra.setdefault(k, v)
    for n, fields in cl.after.items():
        r = owner.get(n) or next((owner[m] for m in reversed(starts) if m < n), None)
        if r is not None:
            for k, v in fields.items():
                r.extra.setdefault(k, v)
    for r in recs:
        if r.extra.get("presentation") == "":
            del r.extra["presentation"]
        if r.number is not None:
            numbers.add(r.number)

    rows = [(f"line {r.line}", r.row()) for r in recs]
    with_titles = sum(1 for r in recs if r.title)
    with_authors = sum(1 for r in recs if r.authors)
    with_abstracts = sum(1 for r in recs if r.abstract)
    with_fields = sum(1 for r in recs if {"presentation", "room", "poster_position"} & set(r.extra))
    if not with_titles:
        return TextListReading(rows, "untitled", [], [], "untitled abstracts")  # the seed format: nothing to report
    shape_name = "a virtual-site page" if with_fields else "a numbered list" if numbers else "title blocks"
    parts = [f"{with_titles} with a title"]
    if with_authors:
        parts.append(f"{with_authors} with an author line")
    parts.append(f"{with_abstracts} with an abstract")
    if with_fields:
        parts.append(f"{with_fields} with a presentation type or location")
    notes = [f"read {len(rows)} papers as {shape_name}: " + ", ".join(parts)]
    untitled = len(rows) - with_titles
    if untitled:
        notes.append(
            f"{untitled} paragraphs had no title line above them and were read as untitled abstracts "
            "(their titles are derived)"
        )
    if wrapped and with_titles:
        notes.append(f"{wrapped} multi-line paragraphs were read as one wrapped abstract each")
    if cl.dropped:
        notes.append(
            f"{len(cl.dropped)} page-navigation lines ([ OpenReview ], PDF ...) were left out "
            f"(line {', line '.join(map(str, cl.dropped[:5]))}{' ...' if len(cl.dropped) > 5 else ''})"
        )
    problems = _problems(recs, guessed, numbers, appended)
    shape = "titles" if not with_abstracts else "titled"
    return TextListReading(rows, shape, notes, problems, shape_name)
