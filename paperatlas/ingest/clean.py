"""Turn LaTeX/Markdown/HTML-laden abstract text into clean, readable plain text.

`clean_text` is what the library stores for display and indexes for search, so it
must keep every *word* while dropping markup: ``\\emph{x}`` -> ``x``,
``**x**`` -> ``x``, ``$\\alpha$`` -> ``α``, ``\\citep{...}`` -> nothing.

Design constraints (it runs on ~100k abstracts and on arbitrary user files):

* never raise: every step is a plain string transformation, and the public
  functions fall back to whitespace-collapsed input if anything unexpected
  happens;
* linear time: every regular expression is anchored on a literal character
  (``\\``, ``$``, ``*``, ``_`` ...) and its variable parts are either negated
  character classes that cannot cross their own delimiter or are length-bounded,
  so unbalanced braces or dollars cannot cause catastrophic backtracking;
* plain text stays byte-identical apart from whitespace collapsing: a fast path
  skips all work when no markup character occurs, and each rule only fires on
  unambiguous markup (``a*b`` and ``snake_case`` are left alone).

Only the standard library is used.
"""

from __future__ import annotations

import html
import re
import unicodedata

__all__ = ["clean_text", "is_known_command", "normalize_key"]

# ---------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------

#: LaTeX symbol commands -> Unicode (used inside and outside math mode).
SYMBOLS: dict[str, str] = {
    # Greek, lower case (with the var- forms)
    "alpha": "α",
    "beta": "β",
    "gamma": "γ",
    "delta": "δ",
    "epsilon": "ε",
    "varepsilon": "ε",
    "zeta": "ζ",
    "eta": "η",
    "theta": "θ",
    "vartheta": "ϑ",
    "iota": "ι",
    "kappa": "κ",
    "lambda": "λ",
    "mu": "μ",
    "nu": "ν",
    "xi": "ξ",
    "pi": "π",
    "varpi": "ϖ",
    "rho": "ρ",
    "varrho": "ϱ",
    "sigma": "σ",
    "varsigma": "ς",
    "tau": "τ",
    "upsilon": "υ",
    "phi": "φ",
    "varphi": "φ",
    "chi": "χ",
    "psi": "ψ",
    "omega": "ω",
    # Greek, upper case (only those that differ from Latin letters)
    "Gamma": "Γ",
    "Delta": "Δ",
    "Theta": "Θ",
    "Lambda": "Λ",
    "Xi": "Ξ",
    "Pi": "Π",
    "Sigma": "Σ",
    "Upsilon": "Υ",
    "Phi": "Φ",
    "Psi": "Ψ",
    "Omega": "Ω",
    # relations and operators
    "times": "×",
    "cdot": "·",
    "pm": "±",
    "mp": "∓",
    "div": "÷",
    "ast": "∗",
    "star": "⋆",
    "circ": "∘",
    "bullet": "•",
    "oplus": "⊕",
    "otimes": "⊗",
    "leq": "≤",
    "le": "≤",
    "geq": "≥",
    "ge": "≥",
    "neq": "≠",
    "ne": "≠",
    "ll": "≪",
    "gg": "≫",
    "sim": "∼",
    "simeq": "≃",
    "approx": "≈",
    "equiv": "≡",
    "cong": "≅",
    "propto": "∝",
    "lesssim": "≲",
    "gtrsim": "≳",
    "prec": "≺",
    "succ": "≻",
    "in": "∈",
    "notin": "∉",
    "ni": "∋",
    "subset": "⊂",
    "subseteq": "⊆",
    "supset": "⊃",
    "supseteq": "⊇",
    "cup": "∪",
    "cap": "∩",
    "setminus": "∖",
    "emptyset": "∅",
    "varnothing": "∅",
    "forall": "∀",
    "exists": "∃",
    "neg": "¬",
    "lnot": "¬",
    "land": "∧",
    "wedge": "∧",
    "lor": "∨",
    "vee": "∨",
    "top": "⊤",
    "bot": "⊥",
    "perp": "⊥",
    "parallel": "∥",
    "mid": "∣",
    "infty": "∞",
    "partial": "∂",
    "nabla": "∇",
    "ell": "ℓ",
    "hbar": "ℏ",
    "Re": "ℜ",
    "Im": "ℑ",
    "aleph": "ℵ",
    "prime": "′",
    "dagger": "†",
    "ddagger": "‡",
    "sum": "∑",
    "prod": "∏",
    "int": "∫",
    "oint": "∮",
    "coprod": "∐",
    "bigcup": "⋃",
    "bigcap": "⋂",
    # arrows
    "rightarrow": "→",
    "to": "→",
    "leftarrow": "←",
    "gets": "←",
    "leftrightarrow": "↔",
    "Rightarrow": "⇒",
    "Leftarrow": "⇐",
    "Leftrightarrow": "⇔",
    "implies": "⇒",
    "iff": "⇔",
    "mapsto": "↦",
    "uparrow": "↑",
    "downarrow": "↓",
    "Uparrow": "⇑",
    "Downarrow": "⇓",
    "coloneqq": "≔",
    "coloneq": "≔",
    "eqqcolon": "≕",
    "triangleq": "≜",
    "doteq": "≐",
    "asymp": "≍",
    "models": "⊨",
    "vdash": "⊢",
    "preceq": "⪯",
    "succeq": "⪰",
    "longrightarrow": "⟶",
    "longleftarrow": "⟵",
    "hookrightarrow": "↪",
    # delimiters and dots
    "langle": "⟨",
    "rangle": "⟩",
    "lceil": "⌈",
    "rceil": "⌉",
    "lfloor": "⌊",
    "rfloor": "⌋",
    "vert": "|",
    "Vert": "‖",
    "lvert": "|",
    "rvert": "|",
    "lVert": "‖",
    "rVert": "‖",
    "ldots": "…",
    "dots": "…",
    "cdots": "⋯",
    "vdots": "⋮",
    "ddots": "⋱",
    # text-mode symbols
    "textendash": "–",
    "textemdash": "—",
    "textbar": "|",
    "textasciitilde": "~",
    "textbackslash": "\\",
    "textless": "<",
    "textgreater": ">",
    "textregistered": "®",
    "texttrademark": "™",
    "copyright": "©",
    "textdegree": "°",
    "degree": "°",
    "S": "§",
    "P": "¶",
    "dag": "†",
    "ddag": "‡",
    "pounds": "£",
    "euro": "€",
    "ss": "ß",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "o": "ø",
    "O": "Ø",
    "aa": "å",
    "AA": "Å",
    "l": "ł",
    "L": "Ł",
    "i": "ı",
    "checkmark": "✓",
    "textquotedbl": '"',
}

#: Commands that only affect layout: dropped (they carry no words).
LAYOUT = {
    "left",
    "right",
    "big",
    "Big",
    "bigg",
    "Bigg",
    "bigl",
    "bigr",
    "Bigl",
    "Bigr",
    "biggl",
    "biggr",
    "middle",
    "displaystyle",
    "textstyle",
    "scriptstyle",
    "limits",
    "nolimits",
    "xspace",
    "noindent",
    "indent",
    "centering",
    "par",
    "newline",
    "linebreak",
    "pagebreak",
    "newpage",
    "clearpage",
    "medskip",
    "smallskip",
    "bigskip",
    "hfill",
    "vfill",
    "protect",
    "relax",
    "quad",
    "qquad",
    "maketitle",
    "item",
    "nonumber",
    "notag",
    "em",
    "bf",
    "it",
    "sc",
    "tt",
    "sf",
    "rm",
    "sl",
    "bfseries",
    "itshape",
    "scshape",
    "ttfamily",
    "sffamily",
    "rmfamily",
    "mdseries",
    "upshape",
    "normalfont",
    "tiny",
    "scriptsize",
    "footnotesize",
    "small",
    "normalsize",
    "large",
    "Large",
    "LARGE",
    "huge",
    "Huge",
    "cal",
    "boldmath",
    "unboldmath",
    "ensuremath",
    "hline",
    "toprule",
    "midrule",
    "bottomrule",
}

#: Commands whose brace argument is kept as plain text (fonts, boxes, links).
KEEP_ARG = {
    "emph",
    "textit",
    "textbf",
    "textsc",
    "texttt",
    "textsf",
    "textrm",
    "textup",
    "textmd",
    "textsl",
    "textnormal",
    "underline",
    "uline",
    "mbox",
    "hbox",
    "fbox",
    "text",
    "url",
    "nolinkurl",
    "textsuperscript",
    "textsubscript",
    "mathbf",
    "mathrm",
    "mathit",
    "mathcal",
    "mathsf",
    "mathtt",
    "mathnormal",
    "mathscr",
    "mathfrak",
    "boldsymbol",
    "bm",
    "pmb",
    "operatorname",
    "overline",
    "underbrace",
    "overbrace",
    "ensuremath",
    "enquote",
    "textmu",
    "mathds",
    "mathbbm",
    "emph*",
    "acro",
    "gls",
    "ac",
    "acs",
    "acl",
    "acf",
}

#: Commands removed together with their argument (citations, references, notes).
DROP_ARG = {
    "cite",
    "citep",
    "citet",
    "citealp",
    "citealt",
    "citeauthor",
    "citeyear",
    "citeyearpar",
    "parencite",
    "textcite",
    "autocite",
    "footcite",
    "nocite",
    "ref",
    "eqref",
    "autoref",
    "cref",
    "Cref",
    "pageref",
    "nameref",
    "label",
    "footnote",
    "footnotetext",
    "thanks",
    "vspace",
    "hspace",
    "begin",
    "end",
    "bibliography",
    "bibliographystyle",
    "index",
    "includegraphics",
    "input",
    "include",
    "color",
    "pagestyle",
    "thispagestyle",
    "setlength",
    "addtolength",
    "newcommand",
    "renewcommand",
    "def",
    "iffalse",
}

#: Math accents -> combining characters (applied when the argument is one letter).
ACCENTS = {
    "hat": "\u0302",
    "widehat": "\u0302",
    "tilde": "\u0303",
    "widetilde": "\u0303",
    "bar": "\u0304",
    "overline": "\u0304",
    "vec": "\u20d7",
    "dot": "\u0307",
    "ddot": "\u0308",
    "check": "\u030c",
    "breve": "\u0306",
    "acute": "\u0301",
    "grave": "\u0300",
}

#: Text-mode accents \'e, \"o, \c{c} ... -> combining characters.
TEXT_ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "c": "\u0327",
    "v": "\u030c",
    "u": "\u0306",
    "H": "\u030b",
    "k": "\u0328",
    "r": "\u030a",
}

#: Operator-like commands whose name is the word itself (\log -> log).
WORD_COMMANDS = {
    "log",
    "ln",
    "exp",
    "sin",
    "cos",
    "tan",
    "max",
    "min",
    "arg",
    "argmax",
    "argmin",
    "lim",
    "sup",
    "inf",
    "det",
    "Pr",
    "LaTeX",
    "TeX",
    "dim",
    "ker",
    "deg",
    "gcd",
    "mod",
    "bmod",
}

#: \mathbb{R} -> ℝ for the usual number sets.
BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}

_KNOWN = (
    set(SYMBOLS)
    | LAYOUT
    | KEEP_ARG
    | DROP_ARG
    | set(ACCENTS)
    | {
        "frac",
        "dfrac",
        "tfrac",
        "sqrt",
        "mathbb",
        "href",
        "textcolor",
        "colorbox",
        "c",
        "v",
        "u",
        "H",
        "k",
        "r",
    }
    | WORD_COMMANDS
)


def is_known_command(name: str) -> bool:
    """True if `name` (without backslash) is a LaTeX command this module understands.

    Callers use it to tell real markup from a paper's own, unexpanded macros such as
    ``\\modelname{}`` that only carry a placeholder name.
    """
    return name in _KNOWN


# ---------------------------------------------------------------------------
# Placeholders
# ---------------------------------------------------------------------------
# Escaped characters (\%, \_, ...) and already-converted math are parked in
# Private Use Area characters so later rules (Markdown emphasis, brace
# stripping) cannot touch them; they are restored at the very end.  Input that
# already contains these code points gets them replaced by U+FFFD first so the
# restore step can never mix the two up.

_ESCAPES = "%&_#{}$*"
_ESC_CHAR = {c: chr(0xE000 + i) for i, c in enumerate(_ESCAPES)}
_ESC_BACK = {v: k for k, v in _ESC_CHAR.items()}
_SLOT_OPEN, _SLOT_CLOSE = "\ue010", "\ue011"  # wraps an index into the stash list
_DROP_MARK = "\ue012"  # where a citation/reference was removed (spacing is fixed later)
_PUA = re.compile("[\ue000-\ue01f]")
_SLOT = re.compile(_SLOT_OPEN + r"(\d+)" + _SLOT_CLOSE)


class _Stash:
    """Holds converted fragments (math, code spans) out of the way of later rules."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def put(self, text: str) -> str:
        """Store `text`; return the placeholder that stands for it."""
        self.items.append(text)
        return f"{_SLOT_OPEN}{len(self.items) - 1}{_SLOT_CLOSE}"

    def restore(self, text: str) -> str:
        """Replace placeholders by the stored fragments (fragments never nest)."""
        if _SLOT_OPEN not in text:
            return text
        return _SLOT.sub(lambda m: self.items[int(m.group(1))] if int(m.group(1)) < len(self.items) else "", text)


_RE_ESCAPED = re.compile(r"\\([%&_#{}$*])")


def _protect_escapes(text: str) -> str:
    r"""\% \& \_ \# \{ \} \$ \* -> placeholder characters (restored as the bare char)."""
    return _RE_ESCAPED.sub(lambda m: _ESC_CHAR[m.group(1)], text)


_ESC_TABLE = str.maketrans(_ESC_BACK)


def _restore_escapes(text: str) -> str:
    """Placeholder characters -> the characters they protect."""
    return text.translate(_ESC_TABLE) if _PUA.search(text) else text


# ---------------------------------------------------------------------------
# Commands (shared by text and math mode)
# ---------------------------------------------------------------------------

_CMD = r"\\([A-Za-z]+)\*?"
_ARG = r"\{([^{}]*)\}"  # innermost group only: nesting is handled by repeating passes
_OPT = r"(?:\s*\[[^\[\]{}]{0,300}\])*"  # optional [..] arguments, bounded

TWO_ARG_COMMANDS = {"frac", "dfrac", "tfrac", "href", "textcolor", "colorbox"}
_TEXT_SECOND_ARG = {"href", "textcolor", "colorbox"}  # \href{url}{text} -> text
_RE_TWO_ARG = re.compile(_CMD + r"\s*\{[^{}]*\}\s*" + _ARG)
_RE_FRAC = re.compile(r"\\[dt]?frac\s*" + _ARG + r"\s*" + _ARG)
_RE_ONE_ARG = re.compile(_CMD + _OPT + r"\s*" + _ARG)
_RE_DECL = re.compile(
    r"\{\\(?:em|bf|it|sc|tt|sf|rm|sl|bfseries|itshape|scshape|ttfamily|sffamily|rmfamily"
    r"|normalfont|small|footnotesize|large|Large|tiny|scriptsize|cal|boldmath)(?![A-Za-z])\s*([^{}]*)\}"
)
_RE_TEXT_ACCENT = re.compile(r"\\([`'^\"~=.])\s*(?:\{([A-Za-z])\}|([A-Za-z]))|\\([cvuHkr])\s*\{([A-Za-z])\}")
_RE_BARE = re.compile(r"\\([A-Za-z]+)(?![A-Za-z])\*?")
_RE_SPACE_CMD = re.compile(r"\\[,;:! ]|\\\\(?:\[[^\[\]]{0,20}\])?")
_RE_SUBSUP = re.compile(r"([_^])\s*" + _ARG)
# A group not attached to a command (nor the 2nd argument of one) is just grouping.
_RE_GROUP = re.compile(r"\{(?<![A-Za-z\\*\]}]\{)([^{}]*)\}")

_MAX_PASSES = 30  # deeper nesting than this is garbage; leftovers are stripped


def _wrap(expr: str) -> str:
    """Parenthesise a multi-token expression (for fractions, roots, exponents)."""
    expr = expr.strip()
    if len(expr) <= 1 or re.fullmatch(r"[\w.′√]+", expr):
        return expr
    return f"({expr})"


def _accent(name: str, arg: str) -> str:
    """\\hat{x} -> x̂; longer arguments keep their text without the accent."""
    arg = arg.strip()
    if len(arg) == 1:
        return unicodedata.normalize("NFC", arg + ACCENTS[name])
    return arg


def _one_arg(m: re.Match[str]) -> str:
    r"""Rewrite one ``\cmd{arg}`` (innermost argument, no nested braces)."""
    name, arg = m.group(1), m.group(2)
    if name in TWO_ARG_COMMANDS:
        return m.group(0)  # wait until the second argument is innermost too
    if name in ("begin", "end"):
        return " "  # an environment boundary separates words; a citation mark would eat the space before it
    if name in DROP_ARG:
        return _DROP_MARK
    if name in ACCENTS:
        return _accent(name, arg)
    if name == "sqrt":
        return "√" + _wrap(arg)
    if name == "mathbb":
        return "".join(BLACKBOARD.get(ch, ch) for ch in arg.strip())
    if name in KEEP_ARG or name in SYMBOLS or name in LAYOUT:
        # A symbol/layout command followed by a group ("\alpha{}") keeps the group.
        return (SYMBOLS.get(name, "") + arg) if name in SYMBOLS else arg
    if not arg.strip():
        # An unexpanded user macro such as \modelname{}: its name is the only word.
        return name
    return arg


def _structure_pass(text: str, math: bool) -> str:
    """One pass over innermost brace groups: commands with arguments, sub/superscripts."""
    text = _RE_TWO_ARG.sub(lambda m: m.group(2) if m.group(1) in _TEXT_SECOND_ARG else m.group(0), text)
    text = _RE_FRAC.sub(lambda m: f"{_wrap(m.group(1))}/{_wrap(m.group(2))}", text)
    text = _RE_ONE_ARG.sub(_one_arg, text)
    text = _RE_DECL.sub(r"\1", text)
    if math:
        text = _RE_SUBSUP.sub(lambda m: m.group(1) + _wrap(m.group(2)), text)
    return text


def _commands(text: str, math: bool) -> str:
    """Convert LaTeX commands in `text` (math or text mode); brace groups are dissolved.

    Removed citations/references leave a `_DROP_MARK` behind so the caller can
    tidy the spacing around them.
    """
    if math:
        text = _RE_SPACE_CMD.sub(" ", text)
    else:
        text = _RE_SPACE_CMD.sub(lambda m: "" if m.group(0) == "\\!" else " ", text)
    text = _RE_TEXT_ACCENT.sub(_text_accent, text)
    # Symbols first so that \hat{\eta} sees a single letter.
    text = _RE_BARE.sub(lambda m: SYMBOLS[m.group(1)] if m.group(1) in SYMBOLS else m.group(0), text)
    for _ in range(_MAX_PASSES):
        new = _RE_GROUP.sub(r"\1", _structure_pass(text, math))
        if new == text:
            break
        text = new
    text = _RE_BARE.sub(_bare_command, text)
    return text.replace("{", "").replace("}", "")


def _text_accent(m: re.Match[str]) -> str:
    r"""\'e -> é, \c{c} -> ç (composed to a single code point when one exists)."""
    if m.group(1):
        mark, letter = TEXT_ACCENTS[m.group(1)], m.group(2) or m.group(3)
    else:
        mark, letter = TEXT_ACCENTS[m.group(4)], m.group(5)
    return unicodedata.normalize("NFC", letter + mark)


def _bare_command(m: re.Match[str]) -> str:
    r"""A command without (remaining) argument: symbol, layout, or unknown macro."""
    name = m.group(1)
    if name in SYMBOLS:
        return SYMBOLS[name]
    if name == "sqrt":  # \sqrt2, \sqrt n
        return "√"
    if name in WORD_COMMANDS or name not in _KNOWN:
        # \log, \LaTeX, or a paper's own macro (\ours): keeping the name keeps the word.
        return name
    return " "  # layout, or a font command that lost its argument to unbalanced braces


# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------

# Display math and \( \) spans, plus escaped \$..\$ pairs that contain TeX (a
# backslash, ^ or _): a common export artefact.  Plain inline $..$ is paired by
# `_stash_inline_math`, which needs more judgement than a regex gives.
_RE_MATH = re.compile(
    r"\$\$([^$]{1,5000})\$\$"
    r"|\\\[(.{1,500}?)\\\]"
    r"|\\\((.{1,500}?)\\\)"
    r"|\\\$([^$\\]{0,500}?[\\^_][^$]{0,500}?)\\\$",
    re.DOTALL,
)
_RE_DOLLAR = re.compile(r"\$(?<![\\$]\$)(?!\$)")  # a single, unescaped dollar
_RE_TEXISH = re.compile(r"[\\^_{}=<>|]")


def _is_math(body: str, after: str) -> bool:
    """Whether `$body$` (followed by the character `after`) is inline math.

    Pandoc's rule: no space just inside either dollar and no digit right after the
    closing one, so "costs $5 and $10" stays text.  Real abstracts are sloppier
    ("$S $ contexts", "$\\sim$10"), so a span that contains TeX, or is a
    one-to-three character symbol, is accepted anyway, unless it starts with a
    digit (money).
    """
    core = body.strip()
    if not core or len(body) > 2000 or "\n\n" in body:
        return False
    texish = bool(_RE_TEXISH.search(core))
    if body[0].isspace() or body[-1].isspace() or after.isdigit():
        return (texish or len(core) <= 3) and not core[0].isdigit()
    return True


def _stash_inline_math(text: str, stash: _Stash) -> str:
    """Pair up single dollars left to right; each accepted pair becomes a stash slot.

    A dollar that cannot close the current span becomes the next candidate
    opener, so one stray "$20" does not swallow the math that follows it.
    Linear in the number of dollars.
    """
    dollars = [m.start() for m in _RE_DOLLAR.finditer(text)]
    if len(dollars) < 2:
        return text
    out: list[str] = []
    last = 0  # end of the text already copied to `out`
    i = 0
    while i + 1 < len(dollars):
        start, end = dollars[i], dollars[i + 1]
        after = text[end + 1 : end + 2]
        if _is_math(text[start + 1 : end], after):
            out.append(text[last:start])
            out.append(stash.put(_math_to_text(text[start + 1 : end])))
            last = end + 1
            i += 2
        else:
            i += 1
    out.append(text[last:])
    return "".join(out)


_RE_STRAY_BACKSLASH = re.compile(r"\\(?![A-Za-z])")


def _math_to_text(src: str) -> str:
    """Make the content of a math span readable: $\\mathcal{O}(n)$ -> O(n), $\\alpha$ -> α."""
    text = _protect_escapes(src)
    text = _commands(text, math=True).replace(_DROP_MARK, "")
    text = _RE_STRAY_BACKSLASH.sub("", text.replace("\\|", "‖"))  # stray \+, \/ ...: the backslash is noise
    return _collapse(text)


def _stash_math(text: str, stash: _Stash) -> str:
    """Replace every math span by a placeholder holding its readable form."""
    if "$" not in text and "\\(" not in text and "\\[" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        body = next(g for g in m.groups() if g is not None)
        return stash.put(_math_to_text(body))

    text = _RE_MATH.sub(repl, text)
    return _stash_inline_math(text, stash) if "$" in text else text


# ---------------------------------------------------------------------------
# Markdown, quotes, dashes, entities
# ---------------------------------------------------------------------------

# Bold may sit inside a word ("**P**reference"); underscore and single-star
# emphasis must start and end at word boundaries so snake_case and a*b survive.
# Patterns start with their literal character and look behind it afterwards
# ("_(?<!\w_)" rather than "(?<!\w)_"): the regex engine can then jump from one
# candidate character to the next instead of trying every position.
_RE_BOLD_STAR = re.compile(r"\*\*([^*\s](?:[^*]{0,300}?[^*\s])?)\*\*")
_RE_BOLD_UNDER = re.compile(r"__(?<![\w\\]__)([^_\s](?:[^_]{0,300}?[^_\s])?)__(?!\w)")
_RE_EM_STAR = re.compile(r"\*(?<![\w*\\]\*)([^*\s](?:[^*\n]{0,300}?[^*\s])?)\*(?![\w*])")
_RE_EM_UNDER = re.compile(r"_(?<![\w\\]_)([^_\s](?:[^_\n]{0,300}?[^_\s])?)_(?!\w)")
_RE_CODE = re.compile(r"`[^`\n]{1,300}`")
_RE_DQUOTE = re.compile(r"``([^`]{0,1000}?)''")
_RE_SQUOTE = re.compile(r"`(?<!``)([^`'\n]{1,300})'(?!')")
_RE_EMDASH = re.compile(r"---(?<!----)(?!-)")
_RE_ENDASH = re.compile(r"--(?<![-<!]--)(?![->])")
_RE_TIE = re.compile(r"~(?<=[\w.,;:)\]}]~)(?=[\w(\[{\\" + _SLOT_OPEN + "])")
_RE_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_MARKS = _DROP_MARK + r"(?:[ ~]?[,;]?[ ~]?" + _DROP_MARK + r")*"  # one or more removed citations
_RE_DROPPED = re.compile(r"[ ~]?" + _MARKS)
_RE_EMPTY_PARENS = re.compile(r" ?[(\[][ ~]?" + _MARKS + r"[ ~]?[)\]]")


def _markdown(text: str) -> str:
    """Strip Markdown emphasis markers, keeping the emphasised words."""
    if "*" not in text and "_" not in text:
        return text
    for _ in range(2):  # twice, for ***x*** and **_x_**
        text = _RE_BOLD_STAR.sub(r"\1", text)
        text = _RE_BOLD_UNDER.sub(r"\1", text)
        text = _RE_EM_STAR.sub(r"\1", text)
        text = _RE_EM_UNDER.sub(r"\1", text)
    return text


def _typography(text: str) -> str:
    """LaTeX quotes, dashes and ties -> Unicode punctuation / spaces."""
    if "`" in text:
        text = _RE_DQUOTE.sub("“\\1”", text)
        text = _RE_SQUOTE.sub("‘\\1’", text)
    if "--" in text:
        text = _RE_EMDASH.sub("—", text)
        text = _RE_ENDASH.sub("–", text)
    if "~" in text:
        text = _RE_TIE.sub(" ", text)
    return text


# BibTeX-style protection of words ("{Thin and Deep GP}") in otherwise plain text;
# sets such as {0, 1} or {x_1, x_2} contain other characters and are kept.
_RE_WORD_GROUP = re.compile(r"\{(?<![\w$^_]\{)([A-Za-z][A-Za-z \-]{0,200})\}")

# Any of these means the text may contain markup; otherwise only whitespace changes.
_MARKUP_CHARS = "\\$*_{}&~`"


def _collapse(text: str) -> str:
    """Collapse runs of whitespace to one space and strip the ends (str.split is C-fast).
    Returns `text` itself when nothing changes, so a paper's `raw` and `abstract` can share
    one string (pickled once when parallel ingest sends papers between processes)."""
    out = " ".join(text.split())
    return text if out == text else out


_RE_MARKUP = re.compile("[" + re.escape(_MARKUP_CHARS) + "]")


def _may_have_markup(text: str) -> bool:
    """Cheap pre-check: only text with one of these characters (or "--") can hold markup."""
    return "--" in text or _RE_MARKUP.search(text) is not None


def _clean(raw: str) -> str:
    """The conversion proper (see `clean_text`)."""
    text = _PUA.sub("\ufffd", raw)
    if "&" in text:
        text = _RE_ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    stash = _Stash()
    text = _stash_math(text, stash)
    # Braces are only markup when the text is LaTeX; "the set {0, 1}" stays as is.
    latexish = "\\" in text
    text = _protect_escapes(text)
    if latexish:
        text = _commands(text, math=False)
    elif "{" in text:
        text = _RE_WORD_GROUP.sub(r"\1", text)
    text = _typography(text)
    if "`" in text:  # keep inline code (`__init__`) away from the Markdown rules
        # a span may hold stashed math ("`$x$`"): put it back first, since fragments never nest
        text = _RE_CODE.sub(lambda m: stash.put(stash.restore(m.group(0))), text)
    text = _markdown(text)
    text = _collapse(text)
    if _DROP_MARK in text:
        # "results~\citep{x}." -> "results." and "(\cite{x})" -> "". Done after the
        # whitespace collapse so the patterns never scan long runs of spaces.
        text = _RE_EMPTY_PARENS.sub("", text)
        text = _RE_DROPPED.sub("", text)
    text = _restore_escapes(stash.restore(text))
    if _PUA.search(text):  # a mark inside a stashed span ("`\\cite{x}`"): input PUA was replaced above
        text = _PUA.sub("", text)
    return _collapse(text)


def clean_texts(raws: list[str]) -> list[str]:
    """clean_text over many short strings (author names, keywords): one markup check for all."""
    if not _may_have_markup("\x00".join(raws)):
        return [" ".join(r.split()) for r in raws]
    return [clean_text(r) for r in raws]


def clean_text(raw: str) -> str:
    """Return `raw` as clean plain text: markup removed, words kept, whitespace collapsed.

    Handles LaTeX text commands (``\\emph``, ``\\textsc``, ``{\\em x}`` ...),
    citations and references (removed), inline math (made readable, Greek and
    common operators as Unicode), escaped characters, TeX quotes, dashes and ties,
    Markdown emphasis, and HTML entities.  Never raises; ``None`` gives ``""``.
    """
    if raw is None:
        return ""
    try:
        if not isinstance(raw, str):
            raw = str(raw)
        if not _may_have_markup(raw):
            return _collapse(raw)
        return _clean(raw)
    except Exception:  # pragma: no cover - defensive: cleaning must never break ingest
        return _collapse(raw) if isinstance(raw, str) else ""


_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)[^$\n]{1,200}?(?<![\s\\])\$(?!\$)|(?<=\s)-{2,3}(?=\s)")


def clean_title(raw: str) -> str:
    """clean_text for a title, with inline math (`$q^\\pi$`) and dashes (` -- `) kept as written.

    A title is quoted and compared as the authors wrote it (search results, citations, the
    conference's own page), and a rendering loses what `q^π` cannot show (`\\mathcal{O}`);
    abstracts are rendered, for reading and for search.
    """
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raw = str(raw)
    spans = _INLINE_MATH.findall(raw)
    if not spans:
        return clean_text(raw)
    # a placeholder word that cleaning leaves alone (it replaces private-use characters)
    marked = _INLINE_MATH.sub(lambda m: f"qzxmath{spans.index(m.group(0))}xzq", raw)
    out = clean_text(marked)
    kept = re.sub(r"qzxmath(\d+)xzq", lambda m: " ".join(spans[int(m.group(1))].split()), out)
    lost = "qzxmath" in kept or kept.count("$") < sum(x.count("$") for x in spans)
    return clean_text(raw) if lost else kept


def strip_braces(text: str) -> str:
    """BibTeX's protecting braces ("the {ELBO}") removed, except inside inline math (`$\\mathcal{O}$`)."""
    parts = re.split(f"({_INLINE_MATH.pattern})", text)
    return "".join(p if i % 2 else re.sub(r"(?<!\\)[{}]", "", p) for i, p in enumerate(parts))


def normalize_key(text: str, clean: bool = True) -> str:
    """A comparison key for duplicate detection.

    Cleans the text, applies NFKC (so full-width and ligature forms match their
    plain forms), case-folds, and drops punctuation, whitespace and invisible
    format characters entirely, so "Deep-Learning:  a survey" and
    "deep learning a survey" share a key. `clean=False` skips clean_text for
    text that is already clean.
    """
    if clean:
        text = clean_text(text)
    if text.isascii():  # most records: NFKC is a no-op and str.translate is 7x faster than the regex
        return text.casefold().translate(_ASCII_NON_WORD)
    # one regex pass, not a per-character category lookup: this runs twice per ingested record
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


# punctuation, symbols, whitespace and control/format characters (and "_")
_NON_WORD = re.compile(r"[\W_]+")
_ASCII_NON_WORD = str.maketrans({c: None for c in map(chr, range(128)) if not c.isalnum()})
