"""Plain-text paper lists in the shapes people paste from conference pages.

- untitled abstracts, one per paragraph (the seed format: titles are derived later);
- a title line, an author line, then the abstract (in one paragraph, or one paragraph each);
- numbered titles (`1. Title`), alone or followed by authors and abstract;
- labelled fields: `Title:` / `Authors:` / `Abstract:` or `标题：` / `作者：` / `摘要：`;
- a title paragraph followed by its abstract paragraph.

`read_blocks(lines)` returns the rows (given titles and authors exactly as written) and notes that
say how the blocks were read, so an ingest can tell the user when it had to guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# label -> field; English and Chinese, as conference pages and their translations write them
LABELS = {
    "title": "title", "paper title": "title", "标题": "title", "题目": "title", "论文标题": "title",
    "authors": "authors", "author": "authors", "author(s)": "authors", "作者": "authors",
    "abstract": "abstract", "摘要": "abstract",
    "tl;dr": "tldr", "tldr": "tldr",
    "keywords": "keywords", "关键词": "keywords", "关键字": "keywords",
    "url": "url", "link": "url", "链接": "url", "pdf": "url",
}
LABEL_LINE = re.compile(
    r"^\s*(?:\d{1,4}\s*[.)、]\s*)?(" + "|".join(re.escape(k) for k in sorted(LABELS, key=len, reverse=True))
    + r")\s*[:：]\s*(.*)$", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*(?:\[\d{1,4}\]|\d{1,4}\s*[.)、])\s*(\S.*)$")
_NAME_PARTICLES = {"de", "van", "von", "der", "den", "la", "le", "di", "da", "del", "du", "bin", "al", "dos", "ten"}
_CJK = re.compile(r"[\u3400-\u9fff]")
_AUTHOR_SEP = re.compile(r"\s*(?:,|;|，|、|；|\band\b|&|\s·\s)\s*")  # "A · B": NeurIPS virtual-site style
# words of titles, never of names: "Deep Residual Learning" under a title is a title, not an author
_TITLE_WORDS = {
    "learning", "learn", "network", "networks", "model", "models", "neural", "deep", "language", "data",
    "training", "generative", "diffusion", "graph", "graphs", "transformer", "transformers", "attention",
    "reinforcement", "optimization", "inference", "efficient", "robust", "towards", "toward", "via", "using",
    "benchmark", "benchmarks", "agents", "agent", "large", "vision", "image", "images", "video", "analysis",
    "adversarial", "bayesian", "stochastic", "gradient", "policy", "scaling", "understanding", "representation",
    "representations", "multi", "zero-shot", "few-shot", "self-supervised", "contrastive", "causal", "theory",
}
_MARKS = re.compile(r"[\d*†‡§¶∗#]+$|\([^)]*\)|\[[^]]*\]")

MAX_TITLE_WORDS = 30
MAX_TITLE_CHARS = 300


def _words(s: str) -> list[str]:
    return s.split()


def numbered(line: str) -> str | None:
    """The title of a numbered line (`1. Title`, `[3] Title`), else None."""
    m = _NUMBERED.match(line)
    if not m or LABEL_LINE.match(line):
        return None
    rest = m.group(1).strip()
    return rest if is_title_like(rest) else None


def is_title_like(line: str) -> bool:
    """Short, one line, not a sentence: what a title looks like."""
    s = line.strip()
    if not s or len(s) > MAX_TITLE_CHARS or len(_words(s)) > MAX_TITLE_WORDS:
        return False
    if s[0].islower():
        return False
    # a title does not end with a full stop (an initial or "et al." is not one)
    return not (s.endswith(".") and not re.search(r"(?:\b[A-Z]|al)\.$", s))


def _is_name(part: str) -> bool:
    p = _MARKS.sub("", part).strip().strip("*").strip()
    if not p:
        return False
    if _CJK.search(p):
        return 2 <= len(p.replace(" ", "")) <= 6 and not re.search(r"[，。：:]", p)
    ws = p.split()
    if not 1 <= len(ws) <= 5 or any(w.lower().strip(".,:") in _TITLE_WORDS for w in ws):
        return False
    caps = 0
    for w in ws:
        w = w.strip(".,")
        if not w:
            continue
        if w.lower() in _NAME_PARTICLES:
            continue
        if not (w[0].isupper() or w[0] in "'’"):
            return False
        caps += 1
    return caps >= 1


def is_author_line(line: str) -> bool:
    """`Ada Lovelace, Alan Turing and Grace Hopper` / `张三，李四`: names and separators only."""
    s = line.strip()
    if not s or len(s) > 2000 or s.endswith((":", "：", "?")):
        return False
    parts = [x for x in _AUTHOR_SEP.split(s) if x.strip()]
    if not parts or not all(_is_name(x) for x in parts):
        return False
    if len(parts) == 1:  # one name: at most 4 words, and not a title in Title Case ("Deep Learning")
        return len(_words(parts[0])) <= 4 or bool(_CJK.search(parts[0]))
    return True


_FOOTNOTE_MARKS = re.compile(r"(?<=[^\W\d_])[\d*†‡§¶∗#]+$")


def author_line(line: str) -> str:
    """The author line without affiliation marks (`Hao Zhang2*` -> `Hao Zhang`); separators kept."""
    parts = re.split(f"({_AUTHOR_SEP.pattern})", line.strip())
    return "".join(p if i % 2 else _FOOTNOTE_MARKS.sub("", p) for i, p in enumerate(parts))


def is_prose(text: str) -> bool:
    """An abstract-like paragraph: sentences, or simply too long for a title."""
    s = text.strip()
    return len(_words(s)) > MAX_TITLE_WORDS or len(s) > MAX_TITLE_CHARS or (
        s.endswith((".", "。")) and len(_words(s)) >= 8) or bool(s) and s[0].islower()


def _title_case_share(line: str) -> float:
    ws = [w for w in re.findall(r"[A-Za-z][\w'-]*", line) if len(w) > 3]
    return sum(w[0].isupper() for w in ws) / len(ws) if ws else 0.0


@dataclass
class _Rec:
    line: int
    title: str = ""
    authors: str = ""
    abstract: list[str] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        if not self.title and not self.authors and not self.extra:
            return {"abstract": " ".join(self.abstract)}  # the seed shape, unchanged (its record hash too)
        d: dict[str, Any] = {}
        if self.title:
            d["title"] = self.title
        if self.authors:
            d["authors"] = self.authors
        if self.abstract:
            d["abstract"] = " ".join(self.abstract)
        d.update(self.extra)
        return d


@dataclass
class TextListReading:
    rows: list[tuple[str, dict[str, Any]]]
    shape: str  # "untitled", "titled", "labelled", "titles"
    notes: list[str]


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


def _labelled(lines: list[tuple[int, str]]) -> TextListReading:
    recs: list[_Rec] = []
    cur: _Rec | None = None
    last = ""
    for n, line in lines:
        s = line.strip()
        if not s:
            continue
        m = LABEL_LINE.match(s)
        if m:
            key, value = LABELS[m.group(1).lower()], m.group(2).strip()
            starts = key == "title" or cur is None or (key == "abstract" and cur.abstract) or (
                key == "authors" and cur.authors)
            if starts:
                cur = _Rec(n)
                recs.append(cur)
            assert cur is not None
            if key == "title":
                cur.title = value
            elif key == "authors":
                cur.authors = value
            elif key == "abstract":
                cur.abstract = [value] if value else []
            else:
                cur.extra[key] = value
            last = key
            continue
        if cur is None:
            continue  # text before the first label (a header was already taken off)
        # an unlabelled line continues the field above it (a wrapped title, a multi-line abstract)
        if last == "title":
            cur.title = f"{cur.title} {s}".strip()
        elif last == "authors":
            cur.authors = f"{cur.authors} {s}".strip()
        elif last in ("abstract", ""):
            cur.abstract.append(s)
        else:
            cur.extra[last] = f"{cur.extra[last]} {s}".strip()
    rows = [(f"line {r.line}", r.row()) for r in recs]
    return TextListReading(rows, "labelled", [f"read {len(rows)} papers from labelled fields (Title:/Authors:/Abstract:)"])


def read_blocks(lines: list[tuple[int, str]]) -> TextListReading:
    """Rows from (line number, text) lines after the header: see the module docstring."""
    if sum(1 for _, ln in lines if (m := LABEL_LINE.match(ln)) and LABELS[m.group(1).lower()] in ("title", "abstract")) >= 1 \
            and any((m := LABEL_LINE.match(ln)) and LABELS[m.group(1).lower()] == "title" for _, ln in lines):
        return _labelled(lines)
    blocks = _blocks(lines)
    recs: list[_Rec] = []
    guessed: list[int] = []  # lines where the reading was a judgement call
    wrapped = 0

    def pending() -> _Rec | None:
        return recs[-1] if recs and recs[-1].title and not recs[-1].abstract else None

    titled = any(numbered(b[0][1]) is not None or (len(b) == 1 and is_title_like(b[0][1]))
                 or (len(b) >= 2 and is_title_like(b[0][1]) and is_author_line(b[1][1])) for b in blocks)
    for block in blocks:
        n0, first = block[0]
        title = numbered(first)
        texts = [t for _, t in block]
        if len(block) >= 2 and all(numbered(t) is not None for t in texts) or (
                len(block) >= 3 and all(is_title_like(t) for t in texts) and not is_author_line(texts[1])):
            for n, t in block:  # one title per line
                recs.append(_Rec(n, title=numbered(t) or t))
            continue
        if title is None and len(block) >= 2 and is_title_like(first) and not texts[1][0].islower():
            rest = texts[1:]
            if is_author_line(texts[1]):
                title = first
            elif len(rest) == 1 and len(rest[0]) > 2 * len(first) and is_prose(rest[0]):
                title = first  # a title line above a one-line abstract
            elif _title_case_share(first) >= 0.6 and len(first) < 0.85 * max(len(t) for t in rest):
                title = first  # a Title Case line above a wrapped abstract
                guessed.append(n0)
            else:
                wrapped += 1
        if title is not None:
            rec = _Rec(n0, title=title)
            recs.append(rec)
            rest_lines = texts[1:]
            if rest_lines and is_author_line(rest_lines[0]):
                rec.authors = author_line(rest_lines[0])
                rest_lines = rest_lines[1:]
            if rest_lines:
                rec.abstract.append(" ".join(rest_lines))
            continue
        text = " ".join(texts)
        cur = pending()
        if len(block) == 1 and not is_prose(text):
            if cur is not None and not cur.authors and is_author_line(text):
                cur.authors = author_line(text)  # the author paragraph under a title paragraph
            elif is_title_like(text):
                recs.append(_Rec(n0, title=text))  # a title paragraph; its abstract (if any) follows
            else:
                recs.append(_Rec(n0, abstract=[text]))
                guessed.append(n0)
            continue
        if cur is not None:
            cur.abstract.append(text)
        elif titled and recs and recs[-1].title and recs[-1].abstract:
            recs[-1].abstract.append(text)  # a second paragraph of a titled paper's abstract
            guessed.append(n0)
        else:
            recs.append(_Rec(n0, abstract=[text]))
    rows = [(f"line {r.line}", r.row()) for r in recs]
    with_titles = sum(1 for r in recs if r.title)
    with_authors = sum(1 for r in recs if r.authors)
    with_abstracts = sum(1 for r in recs if r.abstract)
    if not with_titles:
        return TextListReading(rows, "untitled", [])  # the seed format: nothing to report
    parts = [f"{with_titles} with a title"]
    if with_authors:
        parts.append(f"{with_authors} with an author line")
    parts.append(f"{with_abstracts} with an abstract")
    notes = [f"read {len(rows)} papers as title blocks: " + ", ".join(parts)]
    untitled = len(rows) - with_titles
    if untitled:
        notes.append(f"{untitled} paragraphs had no title line above them and were read as untitled abstracts "
                     "(their titles are derived)")
    if guessed:
        where = ", ".join(f"line {n}" for n in guessed[:8]) + (" ..." if len(guessed) > 8 else "")
        notes.append(f"{len(guessed)} blocks were ambiguous ({where}): check them with `paperatlas show ID`, "
                     "or label the fields (Title: / Authors: / Abstract:)")
    if wrapped and with_titles:
        notes.append(f"{wrapped} multi-line paragraphs were read as one wrapped abstract each")
    shape = "titles" if not with_abstracts else "titled"
    return TextListReading(rows, shape, notes)
