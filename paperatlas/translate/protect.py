"""What a translation must keep exactly as written, and the checker that says whether it did.

A paper's body is sent to a model a section (or a chunk of one) at a time. Before it goes, every span
that must not change - mathematics (LaTeX or the Unicode symbols a PDF gives), citations (`[12]`,
`[3, 5-7]`, `(Smith et al., 2020)`), URLs and code - is replaced by a placeholder `{v1}`, `{v2}`... that
a model copies far more reliably than it copies `\\frac{a}{b}` (PDFMathTranslate's lesson). After the
reply the placeholders are put back, and `check` compares the result with the source: every protected
span present and unchanged, every number of the prose present, every glossary term rendered the one
way the glossary says. A checker, not a judgement: it counts, so its figures can be benchmarked.

Everything here is a pure function over strings: no model, no store.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

# -- what is protected -------------------------------------------------------------------------
_LATEX_ENV = r"\\begin\{(equation|align|gather|multline|eqnarray|displaymath|math)(\*?)\}.*?\\end\{\1\2\}"
_DISPLAY = r"\$\$.+?\$\$|\\\[.+?\\\]"
_INLINE = r"(?<![\\$])\$(?!\s)[^$\n]{1,400}?(?<![\s\\])\$(?!\d)|\\\(.+?\\\)"
_URL = r"\b(?:https?://|www\.)[^\s<>()\[\]{}\"']+[^\s<>()\[\]{}\"'.,;:!?]"
_CODE = r"`[^`\n]{1,300}`"
_DOI = r"\b10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;:)]"
# numeric citations: [12], [3, 5-7], [12; 14], [3-5]; not [a] or a lone [2024] year in prose
_NUM_CITE = r"\[\d{1,3}(?:\s*[-\u2013,;]\s*\d{1,3})*\]"
_NAME = r"[A-Z][A-Za-z\u00C0-\u024F'\-]+"
_AUTHORS = rf"{_NAME}(?:\s+(?:et\s+al\.?|and\s+{_NAME}|&\s+{_NAME}))?"
_YEAR = r"(?:19|20)\d{2}[a-z]?"
# (Smith et al., 2020), (Smith and Lee, 2020; Wu, 2021a), Smith et al. (2020)
_PAREN_CITE = rf"\((?:see\s+)?{_AUTHORS},?\s+{_YEAR}(?:\s*[;,]\s*{_AUTHORS},?\s+{_YEAR})*\)"
_TEXT_CITE = rf"{_AUTHORS}\s+\({_YEAR}(?:,\s*{_YEAR})*\)"

# Unicode mathematics as a PDF's text layer gives it: Greek letters, operators, arrows, sub/superscripts
_MATH_CHARS = (
    "\u0391-\u03a9\u03b1-\u03c9\u03d1\u03d5\u03f5"  # Greek
    "\u2200-\u22ff"  # mathematical operators
    "\u2190-\u21ff"  # arrows
    "\u27c0-\u27ef\u2980-\u29ff\u2a00-\u2aff"  # misc mathematical symbols
    "\u2070-\u209f"  # super/subscripts
    "\U0001d400-\U0001d7ff"  # mathematical alphanumerics (𝑥, 𝐖)
    "=<>^_|\u00b1\u00d7\u00f7\u00b7\u2016\u2032\u2033"
)
_MATHY = re.compile(f"[{_MATH_CHARS}]")
_WORD = re.compile(r"[A-Za-z]{3,}")
# function names inside a formula ("log p(y|x)", "arg max"): they do not end a run of mathematics
_MATH_WORDS = frozenset(
    "log exp max min arg argmax argmin sin cos tan tanh softmax sup inf lim det diag tr var cov".split()
)

_PATTERNS = [
    ("math", re.compile(_LATEX_ENV, re.DOTALL)),
    ("math", re.compile(_DISPLAY, re.DOTALL)),
    ("math", re.compile(_INLINE)),
    ("url", re.compile(_URL)),
    ("url", re.compile(_DOI)),
    ("code", re.compile(_CODE)),
    ("cite", re.compile(_NUM_CITE)),
    ("cite", re.compile(_PAREN_CITE)),
    ("cite", re.compile(_TEXT_CITE)),
]

# a number of the prose: 12, 3.5, 93.4%, 1,024, 1e-5, and with its magnitude 280M, 1.5B, 146K (not inside a
# protected span). Its neighbours are judged by ASCII letters and digits only: written Chinese puts no
# space around a number ("使用12层"), and a CJK neighbour must not hide it. The number is taken whole (an
# atomic group: "1.5B" never counts as "1"), and a magnitude must be kept, so "280M" rendered "280万"
# (2.8 million, not 280 million) is caught
# (a minus sign only where no letter of any script precedes it: "CoNLL-2003" rendered "词-2003" is 2003)
NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?>(?:(?<!\w)[-\u2212])?\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?)[kKMBT]?(?![A-Za-z0-9_])"
)
# a placeholder as sent, and the shapes models give it back in ({v1}, { v1 }, {V1}, full-width braces)
_PLACEHOLDER = re.compile(r"[{\uff5b]\s*[vV]\s*(\d{1,4})\s*[}\uff5d]")


@dataclass(frozen=True)
class Span:
    kind: str  # math, cite, url, code
    start: int
    end: int
    text: str


def protected_spans(text: str) -> list[Span]:
    """The spans of `text` a translation must keep as written, in order, never overlapping."""
    taken: list[Span] = []

    def free(s: int, e: int) -> bool:
        return all(e <= t.start or s >= t.end for t in taken)

    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if m.end() > m.start() and free(m.start(), m.end()):
                taken.append(Span(kind, m.start(), m.end(), m.group()))
    for s, e in _unicode_math(text):
        if free(s, e):
            taken.append(Span("math", s, e, text[s:e]))
    return sorted(taken, key=lambda t: t.start)


def _unicode_math(text: str) -> list[tuple[int, int]]:
    """Runs of whitespace-separated tokens that read as mathematics: a token with a mathematical
    symbol, and the short tokens (variables, brackets, numbers) between two such tokens. A word of
    three letters or more ends a run, so prose next to a formula stays translatable."""
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(tokens):
        s, e, tok = tokens[i]
        if not _MATHY.search(tok):
            i += 1
            continue
        start, end, j = s, e, i + 1
        last_math = i
        while j < len(tokens):
            tok_j = tokens[j][2]
            if _MATHY.search(tok_j):
                last_math = j
            elif (_WORD.search(tok_j) or len(tok_j) > 6) and tok_j.strip("()[]{},.;:").lower() not in _MATH_WORDS:
                break
            j += 1
        end = tokens[last_math][1]
        # trailing sentence punctuation belongs to the prose
        while end > start and text[end - 1] in ".,;:":
            end -= 1
        if end > start:
            runs.append((start, end))
        i = last_math + 1
    return runs


@dataclass
class Masked:
    """A text with its protected spans replaced by placeholders; `spans[n-1]` is `{vn}`."""

    text: str
    spans: list[Span] = field(default_factory=list)


def mask(text: str) -> Masked:
    spans = protected_spans(text)
    out, pos = [], 0
    for n, sp in enumerate(spans, start=1):
        out.append(text[pos : sp.start])
        out.append(f"{{v{n}}}")
        pos = sp.end
    out.append(text[pos:])
    return Masked("".join(out), spans)


def unmask(reply: str, masked: Masked) -> tuple[str, list[int]]:
    """The reply with each placeholder put back; and the numbers of placeholders the reply lost.

    A placeholder the model invented (a number that was never sent) is dropped rather than shown."""
    n_spans = len(masked.spans)
    seen: set[int] = set()

    def put(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if 1 <= n <= n_spans:
            seen.add(n)
            return masked.spans[n - 1].text
        return ""

    text = _PLACEHOLDER.sub(put, reply)
    return text, [n for n in range(1, n_spans + 1) if n not in seen]


def prose_numbers(text: str) -> Counter[str]:
    """The numbers written in `text` outside its protected spans (normalised: 1,024 -> 1024, − -> -)."""
    out: Counter[str] = Counter()
    spans = protected_spans(text)
    for m in NUMBER.finditer(text):
        if any(sp.start <= m.start() < sp.end for sp in spans):
            continue
        out[m.group().replace(",", "").replace("\u2212", "-")] += 1
    return out


@dataclass
class Check:
    """What a translation kept and lost, counted. `ok` when nothing was lost."""

    spans: int = 0  # protected spans in the source
    spans_kept: int = 0
    numbers: int = 0  # prose numbers in the source
    numbers_kept: int = 0
    terms: int = 0  # glossary terms the source uses
    terms_consistent: int = 0
    lost: list[str] = field(default_factory=list)  # what is missing, for the note

    @property
    def ok(self) -> bool:
        return not self.lost

    def add(self, other: Check) -> None:
        self.spans += other.spans
        self.spans_kept += other.spans_kept
        self.numbers += other.numbers
        self.numbers_kept += other.numbers_kept
        self.terms += other.terms
        self.terms_consistent += other.terms_consistent
        self.lost.extend(other.lost)

    def to_dict(self) -> dict[str, object]:
        return {
            "spans": self.spans,
            "spans_kept": self.spans_kept,
            "numbers": self.numbers,
            "numbers_kept": self.numbers_kept,
            "terms": self.terms,
            "terms_consistent": self.terms_consistent,
            "lost": list(self.lost),
        }


def check(source: str, translation: str, glossary: Mapping[str, str] | None = None) -> Check:
    """Whether `translation` kept every protected span of `source` unchanged, every prose number, and
    rendered every glossary term the source uses either as the glossary says or as written.

    Chinese typography may put full-width punctuation around a span; the span's own text must be
    there byte for byte."""
    c = Check()
    need = Counter(sp.text for sp in protected_spans(source))
    c.spans = sum(need.values())
    for text, n in need.items():
        have = translation.count(text)
        c.spans_kept += min(have, n)
        if have < n:
            c.lost.append(f"{_short(text)} (x{n - have})")
    nums = prose_numbers(source)
    got = prose_numbers(translation) + Counter(
        m.group().replace(",", "") for m in NUMBER.finditer(translation)
    )  # a number may land inside a re-inserted span's neighbourhood: count every occurrence
    c.numbers = sum(nums.values())
    for num, n in nums.items():
        have = min(got[num], n)
        c.numbers_kept += have
        if have < n:
            c.lost.append(f"number {num}")
    for term, rendering in (glossary or {}).items():
        if not re.search(rf"(?<!\w){re.escape(term)}(?!\w)", source, re.IGNORECASE):
            continue
        c.terms += 1
        if (rendering and rendering in translation) or re.search(
            rf"(?<!\w){re.escape(term)}(?!\w)", translation, re.IGNORECASE
        ):
            c.terms_consistent += 1
        else:
            c.lost.append(f"term {term!r} -> {rendering!r}")
    return c


def _short(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "\u2026"


# -- chunks a small model can take -------------------------------------------------------------
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[])")


def chunks(paragraphs: Sequence[str], max_chars: int = 1800) -> list[str]:
    """Paragraphs packed into chunks of at most `max_chars` (a paragraph longer than that is split at
    sentence ends, and a sentence longer than that at a space), so a 20,000-character section goes to a
    small model in pieces it can translate whole, and no protected span is cut in two."""
    out: list[str] = []
    cur = ""
    for para in paragraphs:
        para = para.strip()
        if not para:
            continue
        for piece in _split_long(para, max_chars):
            if cur and len(cur) + 2 + len(piece) > max_chars:
                out.append(cur)
                cur = ""
            cur = f"{cur}\n\n{piece}" if cur else piece
    if cur:
        out.append(cur)
    return out


def _split_long(text: str, max_chars: int) -> list[str]:
    if len(text) <= max_chars:
        return [text]
    spans = protected_spans(text)

    def inside(i: int) -> bool:
        return any(sp.start < i < sp.end for sp in spans)

    cuts = [m.start() for m in _SENTENCE_END.finditer(text) if not inside(m.start())]
    pieces: list[str] = []
    start = 0
    while len(text) - start > max_chars:
        limit = start + max_chars
        cut = max((c for c in cuts if start < c <= limit), default=0)
        if not cut:
            cut = text.rfind(" ", start + 1, limit)
            while cut > start and inside(cut):
                cut = text.rfind(" ", start + 1, cut)
            if cut <= start:  # one unbroken run (a long formula): cut where it must
                cut = limit
        pieces.append(text[start:cut].strip())
        start = cut
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]
