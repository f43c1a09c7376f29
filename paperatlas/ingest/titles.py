"""Display titles for untitled abstracts.

Some conference lists are bare abstracts.  `derive_title` gives each one a short,
readable title using general cues, never a table of known paper names:

1. If the abstract introduces a named system, benchmark or method ("we propose
   scPertCRL, a causally structured generative framework for ..."), the title is
   ``"NAME: headline"``.  A name must be introduced by a contribution cue (we
   introduce/present/propose/develop ..., "called/dubbed/namely X", "our method
   X", "X is a ...", an acronym defined right after the cue), or recur as the
   subject of results, or be the code repository's name; and it must look like
   a name (CamelCase, internal capitals, digits, hyphenated capitals, ALL-CAPS,
   or Title Case right after the cue).  Generic acronyms (LLM, RAG ...) never
   qualify.  When several names qualify, the strongest cue wins, then frequent
   mention, then the earliest introduction.
2. The headline is the spelled-out acronym when the name is one ("VISTA: Virtual
   Sequential Target Attention"), otherwise the appositive that follows the name
   ("a benchmark for modeling user decisions from ..."), cut at a clause boundary.
3. Without a name, the headline of the main contribution sentence ("we study X"
   -> "X", "we formalize X" -> "Formalizing X"), prefixed with the topic when the
   abstract opens by defining it ("Link sign prediction on a signed graph is a
   task ..."), else a headline from the first sentence.

Titles are cleaned of LaTeX/Markdown (via `clean_text`), at most
`MAX_TITLE_CHARS` long, never end on a function word, and are never empty
("Untitled" for empty input).  Everything is plain `re` and string work: about
1-2 ms per abstract.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .clean import clean_text, is_known_command

__all__ = ["MAX_TITLE_CHARS", "derive_title", "gerund", "split_sentences", "trim_phrase"]

MAX_TITLE_CHARS = 100
NAME_HEADLINE_WORDS = 10  # the headline after "NAME: "
PLAIN_HEADLINE_WORDS = 12  # a headline standing alone
SLACK_WORDS = 2  # a phrase this much over the limit is kept whole if it ends well
MIN_WORDS = 3  # never cut a phrase shorter than this at a soft boundary
# Only so much text can matter for a title; the bounds keep pathological input linear.
MAX_INPUT_CHARS = 8000  # of the abstract (real ones are ~1,500)
WINDOW = 400  # characters after a cue that a name or headline is looked for in

# ---------------------------------------------------------------------------
# Word lists (grammar, not paper names) and cue weights: data, in titles.tsv beside this file
# ---------------------------------------------------------------------------


class _Table:
    """titles.tsv: `list<TAB>word[<TAB>weight[<TAB>why]]` rows; `#` comments and blank lines skipped."""

    def __init__(self, path: Path) -> None:
        self.rows: dict[str, list[tuple[str, float | None]]] = {}
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.split("\t")
            if len(cells) < 2 or not cells[1]:
                raise ValueError(f"{path.name}, line {n}: expected list<TAB>word[<TAB>weight], got {line!r}")
            weight = float(cells[2]) if len(cells) > 2 and cells[2] else None
            self.rows.setdefault(cells[0], []).append((cells[1], weight))

    def ordered(self, name: str) -> list[str]:
        return [w for w, _ in self.rows[name]]

    def words(self, name: str) -> set[str]:
        return set(self.ordered(name))

    def weights(self, name: str) -> dict[str, float]:
        return {w: float(wt if wt is not None else 0.0) for w, wt in self.rows[name]}


_TABLE = _Table(Path(__file__).with_name("titles.tsv"))
#: How strongly each kind of cue says "this is the paper's own name", and how a candidate is scored.
CUES = _TABLE.weights("cue")

#: A headline must not end on one of these: function words, common adjectives, bare verbs.
BAD_ENDINGS = _TABLE.words("bad_ending")

#: Words a long phrase may be cut before (prepositions, conjunctions, relatives).
#: "of" is deliberately absent: it binds too tightly ("capable of", "number of").
SOFT_BOUNDARIES = _TABLE.words("soft_boundary")

#: Where a headline phrase always ends: punctuation, relative/contrastive clauses,
#: examples, and purpose clauses ("... to address the challenge of ...").
_HARD_BOUNDARY = re.compile(
    r",(?=\s)|;|:(?=\s)|\s[(\[]|[()\[\]]|—|\s[–-]\s|[.!?](?=\s|$)"
    r"|\b(?:which|whereas|while|thereby|whereby|we|i\.e\.|e\.g\.|such as|in order to|so as to|so that"
    r"|to (?:address|tackle|overcome|bridge|mitigate|solve|handle|alleviate|resolve|remedy|close)"
    r"|(?:and|but)\s+(?:then\s+)?(?:find|found|show|showed|observe|demonstrate|prove|reveal|conclude|argue))\b",
    re.IGNORECASE,
)

#: Nouns ending in adjective-like suffixes; they are fine at the end of a headline.
_NOUN_EXCEPTIONS = _TABLE.words("noun_exception")

#: Compound prefixes that make a hyphenated word a noun ("self-improvement").
_NOUN_PREFIXES = _TABLE.words("noun_prefix")

#: Generic acronyms that are never a paper's own name.
COMMON_ACRONYMS = _TABLE.words("common_acronym")

#: Words that start sentences or noun phrases and are never names themselves.
_NOT_NAME_START = _TABLE.words("not_name_start")

#: Nouns that may follow "(ACR)" and belong to the name's headline ("... (APM) benchmark").
_HEAD_NOUNS = _TABLE.words("head_noun")

# ---------------------------------------------------------------------------
# Verbs
# ---------------------------------------------------------------------------

#: Verbs whose object is itself a good title ("we study X" -> "X").
OBJECT_VERBS = _TABLE.words("object_verb")
#: Verbs that need to stay in the title as a gerund ("we formalize X" -> "Formalizing X").
GERUND_VERBS = _TABLE.words("gerund_verb")
#: Verbs followed by "to <verb>" ("we aim to model X" -> "Modeling X").
INTENT_VERBS = _TABLE.words("intent_verb")

#: Contribution verbs that also introduce a *named* artefact, with their cue weight.
NAMING_VERBS = _TABLE.weights("naming_verb")

#: Verbs whose final consonant doubles before -ing/-ed despite having 2+ syllables.
_DOUBLING = _TABLE.words("doubling_verb")


def _doubles(verb: str) -> bool:
    """Whether the final consonant doubles before a suffix (map -> mapping)."""
    return verb in _DOUBLING or bool(re.fullmatch(r"[^aeiou]*[aeiou][bdgklmnprt]", verb) and len(verb) <= 4)


def gerund(verb: str) -> str:
    """English -ing form of a base-form verb: model -> modeling, analyze -> analyzing."""
    v = verb.lower()
    if v.endswith("ie"):
        return v[:-2] + "ying"
    if v.endswith("e") and not v.endswith(("ee", "ye", "oe")) and len(v) > 2:
        return v[:-1] + "ing"
    if _doubles(v):
        return v + v[-1] + "ing"
    return v + "ing"


def _inflections(verb: str) -> set[str]:
    """Base, 3rd-person and past forms of a verb (British -lled/-lling included)."""
    forms = {verb}
    if re.search(r"[^aeiou]y$", verb):
        forms |= {verb[:-1] + "ies", verb[:-1] + "ied"}
    elif verb.endswith(("s", "sh", "ch", "x", "z")):
        forms |= {verb + "es", verb + "ed"}
    elif verb.endswith("e"):
        forms |= {verb + "s", verb + "d"}
    else:
        forms |= {verb + "s", verb + (verb[-1] if _doubles(verb) else "") + "ed"}
    if verb.endswith("l"):
        forms.add(verb + "led")
    return forms


def _verb_table() -> dict[str, str]:
    """Surface form -> base form for every verb the cue rules know."""
    table: dict[str, str] = {}
    for verb in OBJECT_VERBS | GERUND_VERBS | INTENT_VERBS | set(NAMING_VERBS):
        for form in _inflections(verb):
            table.setdefault(form, verb)
    return table


_VERB_FORMS = _verb_table()

_SUBJECT = (
    r"\b(?:we|this\s+(?:paper|work|study|article|thesis|note|report|submission)"
    r"|our\s+(?:work|paper|study|approach))"
)
_ADVERBS = (
    r"(?:\s+(?:[a-z]+ly|also|further|first|then|now|here|thus|therefore|instead|finally|next|"
    r"additionally|moreover|hence|accordingly|jointly|newly))*"
)
_CONTRIBUTION = re.compile(_SUBJECT + _ADVERBS + r"\s+([a-z]+)\b", re.IGNORECASE)
_RE_SUBJECT = re.compile(_SUBJECT + r"\b", re.IGNORECASE)
# "we bridge this gap and present X", "we draw on Y to introduce X"
_COORDINATED = re.compile(r"\b(?:and|to)" + _ADVERBS + r"\s+([a-z]+)\b")

# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------

# One name token: letters/digits joined by - . / (GPT-4o, Llama-3.1-8B, Walk2Pers),
# optionally ending in "+" signs (GraphSAGE++).
_TOKEN = r"[^\W_](?:[^\W_]|[-./](?=[^\W_]))*\+*"
_RE_SPAN = re.compile(_TOKEN + r"(?: " + _TOKEN + r"){0,3}")
# What may follow a name introduced by a cue: punctuation, the end, or a function word.
_NAME_FOLLOW = re.compile(
    r"\s*(?:[,(:;—–)]|$|[.!?](?:\s|$))|\s+-\s|\s+[a-z]+ly\b|\s+(?:a|an)\s"
    r"|\s+(?:that|which|to|for|as|with|in|on|is|and|by|via|using|who|where|achieves|outperforms|"
    r"consists|comprising|consisting|extends|combines|builds|learns|leverages|uses|can|trained|based)\b"
)
# Phrases that hand a name to what was just described.
_NAMING_KEYS = (
    "called",
    "named",
    "dubbed",
    "termed",
    "coined",
    "namely",
    "refer",
    "denoted",
    "put f",
    "proposing",
    "introducing",
    "presenting",
    "developing",
    "designing",
    "we call",
    "we term",
    "we name",
    "we dub",
    "address",
    "tackle",
    "overcome",
    "solve",
    "resolve",
    "bridge",
    "fill",
    "close",
    "mitigate",
    "alleviate",
)
_NAMING_HINT = re.compile("|".join(_NAMING_KEYS))
_NAMING_PHRASE = re.compile(
    r"\b(?:(?:called|named|dubbed|termed|coined)(?:\s+as)?|namely|(?:referred|refer)\s+to\s+as|denoted\s+as"
    r"|put\s+(?:forth|forward)|(?:by|through)\s+(?:proposing|introducing|presenting|developing|designing)"
    r"|(?:address|tackle|overcome|solve|resolve|bridge|fill|close|mitigate|alleviate)\b[^.;]{0,60}?\bwith"
    r"|(?:which|that)\s+we\s+(?:call|name|term|dub)"
    r"|we\s+(?:call|name|term|dub)\s+(?:it|this|them|these|our\s+[a-z\-]+(?:\s+[a-z\-]+)?"
    r"|the\s+(?:resulting|proposed)\s+[a-z\-]+))\s+(?:the\s+)?",
    re.IGNORECASE,
)
#: Nouns for the contribution itself: "our method WISER", "the proposed algorithm, SAMoSSA".
_ARTEFACT_NOUNS = (
    r"(?:method|model|approach|framework|algorithm|system|benchmark|dataset|tool|toolkit|architecture"
    r"|agent|technique|pipeline|library|network|metric|estimator|solver|policy|simulator|platform|suite"
    r"|solution|sampler|optimizer|module|loss|attack|defense|layer|mechanism|strategy|procedure|engine)"
)
_OUR_ARTEFACT = re.compile(
    r"\b(?:[Oo]ur|[Tt]he\s+proposed|[Tt]he\s+resulting|[Tt]his)\s+(?:[a-z][\w-]*\s+){0,3}?"
    + _ARTEFACT_NOUNS
    + r"(,?)\s+(?:,\s*)?"
    # "Our instantiation of this framework, ZeroFlow, achieves ..." (any noun, name between commas)
    + r"|\b[Oo]ur\s+(?:[a-z][\w-]*\s+){0,4}?[a-z][\w-]*(,)\s+(?=\S+,)"
)
# The descriptor noun phrase before a name ("a novel two-stage framework, namely X")
# ends at the first clause word; names found beyond it are incidental.
_DESCRIPTOR_END = re.compile(
    r"(?<![\w-])(?:that|which|where|who|whose|to|for|by|with|based|on|using|via|consisting|comprising"
    r"|through|from|in|across|over|under|between|of|when|while|as)\b|[.;:]|,\s+(?!namely\b|called\b|"
    r"termed\b|dubbed\b|named\b|i\.e\.)(?=[a-z])"
)
_CLAUSE_END = re.compile(r"[.;:](?:\s|$)")
_RE_ACRONYM_PAREN = re.compile(r"\(\s*(" + _TOKEN + r")\s*\)")
_RE_ARTICLE = re.compile(r"(?:the|a|an)\s+(?:novel\s+|new\s+)?", re.IGNORECASE)
_RE_HEAD_NOUN = re.compile(r"\s+(?:" + _ARTEFACT_NOUNS + r"|" + "|".join(sorted(_HEAD_NOUNS)) + r")\b")
_RE_ARTEFACT_NAME = re.compile(r"\b" + _ARTEFACT_NOUNS + r"s?\s+\(?(?=\S)")
_RESULT_VERB_LIST = tuple(_TABLE.ordered("result_verb"))


_RE_INNER_CAP = re.compile(r"[a-z][A-Z]")
_RE_UPPER = re.compile(r"[A-Z]")
_RE_DIGIT = re.compile(r"\d")
_RE_ALPHA = re.compile(r"[A-Za-z]")


@lru_cache(maxsize=65536)
def _is_strong_token(token: str) -> bool:
    """Name-shaped on its own: internal capitals, 2+ capitals, or letters mixed with digits."""
    if token.islower() and not _RE_DIGIT.search(token) and not token.endswith("+"):
        return False  # fast path: most words
    if re.search(r"-[a-z]+$", token):
        return False  # a modifier such as "GPU-friendly" or "LLM-based"
    return bool(
        _RE_INNER_CAP.search(token)
        or len(_RE_UPPER.findall(token)) >= 2
        or (_RE_DIGIT.search(token) and _RE_ALPHA.search(token) and len(token) > 2)
        or token.endswith("+")
    )


def _is_common(name: str) -> bool:
    """Generic acronyms (LLM, RAG ...) and their plurals (LLMs) are not paper names."""
    core = re.sub(r"(?<=[A-Z])s$", "", name)
    return core.upper().replace("-", "") in COMMON_ACRONYMS


def _name_quality(name: str) -> int:
    """2: name-shaped (BehaviorBench, PGRF-Net); 1: Title Case words (Lean Finder); 0: not a name."""
    tokens = name.split()
    if not tokens or tokens[0] in _NOT_NAME_START or _is_common(name):
        return 0
    if any(_is_strong_token(t) for t in tokens):
        return 2
    if all(t[:1].isupper() for t in tokens) and len(tokens) <= 3:
        return 1
    return 0


def _span_at(text: str, pos: int) -> re.Match[str] | None:
    """A run of name-like tokens starting exactly at `pos` (Title Case or name-shaped)."""
    m = _RE_SPAN.match(text, pos)
    if not m:
        return None
    kept = []  # only the leading tokens that look like parts of a name
    for tok in m.group(0).split(" "):
        if not (tok[:1].isupper() or tok[:1].isdigit() or _is_strong_token(tok)):
            break
        kept.append(tok)
    if not kept:
        return None
    return _RE_SPAN.match(text, pos, pos + len(" ".join(kept)))


def _acronym_long_form(acronym: str, before: str) -> str | None:
    """Schwartz & Hearst (2003): the words before "(ACR)" that spell the acronym, if any.

    Letters of the acronym are matched right to left against the preceding text;
    the first letter must start a word.  Returns e.g. "Arbitrary Preference
    Mapping" for ("APM", "... introduce the Arbitrary Preference Mapping ").
    """
    short = [c.lower() for c in acronym if c.isalnum()]
    if len(short) < 2 or not acronym[:1].isalpha():
        return None
    words = before.split()
    window = " ".join(words[-min(len(short) + 5, len(short) * 2) :])
    s_idx, l_idx = len(short) - 1, len(window) - 1
    while s_idx >= 0:
        c = short[s_idx]
        while l_idx >= 0 and (window[l_idx].lower() != c or (s_idx == 0 and l_idx > 0 and window[l_idx - 1].isalnum())):
            l_idx -= 1
        if l_idx < 0:
            return None
        l_idx -= 1
        s_idx -= 1
    start = window.rfind(" ", 0, l_idx + 1) + 1
    long_form = window[start:].strip(" ,")
    n_words = len(re.split(r"[\s\-]+", long_form))
    # Each capital of the acronym should roughly stand for a word of the long form.
    n_caps = sum(c.isupper() for c in acronym)
    if n_words < 2 or n_words < n_caps // 2 or long_form.lower().startswith(("the ", "a ", "an ")):
        return None
    return long_form


def _is_expansion_of(name: str, paren: str) -> bool:
    """Whether "(paren)" after a name spells it out: EMCift (Extensible Multi-Center ...)."""
    words = [w for w in re.split(r"[\s\-]+", paren) if w]
    caps = [c for c in name if c.isupper()]
    if len(words) < 2 or not paren[:1].isupper() or len(caps) < 2:
        return False
    it = iter(c for c in paren if c.isupper())
    return all(c in it for c in caps)  # the name's capitals are a subsequence of the paren's


def _fix_case(expansion: str) -> str:
    """Undo initial-letter highlighting in expansions: "VIrtual Sequential" -> "Virtual Sequential"."""
    return re.sub(r"\b([A-Z])([A-Z])([a-z]{2,})\b", lambda m: m.group(1) + m.group(2).lower() + m.group(3), expansion)


# ---------------------------------------------------------------------------
# Candidates
# ---------------------------------------------------------------------------


@dataclass
class _Candidate:
    """A possible name of the paper's own contribution, with what we know about it."""

    name: str
    weight: float  # strength of the cue that introduced it
    order: int  # global character offset: earlier introductions are usually the main one
    sentence: int  # index of the sentence that introduced it
    end: int  # offset in that sentence just after the name (and its parenthesis); -1 if unknown
    expansion: str = ""  # spelled-out acronym, if any
    descriptor: str = ""  # the noun phrase before it ("a large-scale dataset")
    score: float = 0.0


@dataclass
class _Where:
    """Where a cue was found: sentence index, its global offset, and the cue's weight."""

    idx: int
    offset: int
    weight: float


def _acronym_candidate(sentence: str, start: int, limit: int, at: _Where, anchored: bool) -> _Candidate | None:
    """The first acronym in sentence[start:limit] defined by the words before it.

    With `anchored`, the spelled-out form must begin at `start` (after an
    optional article): "we introduce Sparse Model Soups (SMS), ...".  A generic
    acronym ("Large Language Models (LLMs)") stops the search: it is not a name.
    """
    for m in _RE_ACRONYM_PAREN.finditer(sentence, start, limit):
        acronym = m.group(1)
        if not _is_strong_token(acronym):
            continue
        long_form = _acronym_long_form(acronym, sentence[start : m.start()])
        if not long_form:
            continue
        lead = sentence[start : m.start()].rsplit(long_form, 1)[0]
        if anchored and not re.fullmatch(r"\s*(?:(?:a|an|the)\s+)?", lead, re.IGNORECASE):
            return None
        # Right after a cue even a short acronym is the name ("Instructive Decoding (ID)"),
        # but a plural one never is ("Large Language Models (LLMs)"); elsewhere generic
        # acronyms are background, and end the search.
        plural = bool(re.search(r"[A-Z]s$", acronym))
        if _is_common(acronym) and (plural or not anchored):
            return None
        cand = _Candidate(acronym, at.weight, at.offset + m.start(), at.idx, m.end(), long_form, lead.strip())
        head = re.match(r"\s+([a-z]+)\b", sentence[m.end() :])
        if head and head.group(1) in _HEAD_NOUNS:  # "the ... (APM) benchmark"
            cand.expansion += " " + head.group(1)
            cand.end = m.end() + head.end()
        return cand
    return None


def _candidate_from_span(
    sentence: str, span: re.Match[str], min_quality: int, at: _Where, descriptor: str = ""
) -> _Candidate | None:
    """Validate a name span and attach its expansion, if a parenthesis spells it out."""
    name, end = span.group(0), span.end()
    paren, after = _after_paren(sentence, end)
    if paren and _RE_ACRONYM_PAREN.fullmatch(f"({paren})") and " " in name and _acronym_long_form(paren, name):
        # "Contrastive Retrospection (ConSpec)": the acronym is the name.
        if _is_common(paren):
            return None  # "Large Language Models (LLMs)"
        return _Candidate(paren, at.weight, at.offset + span.start(), at.idx, after, name, descriptor)
    if not _NAME_FOLLOW.match(sentence, end) or _name_quality(name) < min_quality:
        return None
    expansion = paren if paren and _is_expansion_of(name, paren) else ""
    return _Candidate(name, at.weight, at.offset + span.start(), at.idx, after, expansion, descriptor)


_RE_PAREN_AT = re.compile(r"\s*\(([^()]{1,200})\)")


def _after_paren(sentence: str, pos: int) -> tuple[str, int]:
    """The content of a "(...)" right at `pos` (skipping spaces) and the offset after it."""
    m = _RE_PAREN_AT.match(sentence, pos)
    return (m.group(1).strip(), m.end()) if m else ("", pos)


def _clause_limit(sentence: str, start: int) -> int:
    """End of the clause that starts at `start` (at most WINDOW characters on)."""
    end = min(len(sentence), start + WINDOW)
    clause = _CLAUSE_END.search(sentence, start, end)
    return clause.start() if clause else end


def _skip_spaces(sentence: str, pos: int) -> int:
    """Offset of the first character at or after `pos` that is not a space or comma."""
    while pos < len(sentence) and sentence[pos] in " ,":
        pos += 1
    return pos


def _name_in_object(sentence: str, pos: int, at: _Where) -> _Candidate | None:
    """The name a contribution cue introduces, looking right after the verb at `pos`.

    Either the name comes first ("we propose EMCift (...), a ...", "we introduce
    Sparse Model Soups (SMS)"), or a short descriptor comes first and the name
    follows as an acronym or appositive ("a two-stage framework, namely VISTA",
    "a metric Modality Contribution Ratio (MCR)", "a scaling framework
    ScaleLong").  Anything beyond the descriptor is incidental.
    """
    start = _skip_spaces(sentence, pos)
    limit = _clause_limit(sentence, start)
    cand = _acronym_candidate(sentence, start, limit, at, anchored=True)
    if cand:
        return cand
    span = _span_at(sentence, start)
    if span:
        cand = _candidate_from_span(sentence, span, 1, at)
        if cand:
            return cand
    # "the Meta-Adapter, a ...", "a ConjNorm method": an article, then a name-shaped word.
    article = _RE_ARTICLE.match(sentence, start)
    span = _span_at(sentence, article.end()) if article else None
    if span and _name_quality(span.group(0)) == 2:
        head = _RE_HEAD_NOUN.match(sentence, span.end())
        if head:
            return _Candidate(span.group(0), at.weight, at.offset + span.start(), at.idx, head.end())
        cand = _candidate_from_span(sentence, span, 2, at)
        if cand:
            return cand
    stop = _DESCRIPTOR_END.search(sentence, start, min(limit, start + 160))
    region_end = stop.start() if stop else min(limit, start + 160)
    cand = _acronym_candidate(sentence, start, min(region_end + 1, len(sentence)), at, anchored=False)
    if cand:
        return cand
    # "a new benchmark, FooBench, ...", "a framework, namely Foo", "a scaling framework ScaleLong that",
    # "a backdoor attack framework (VillanDiffusion)"
    joints = [m for m in re.finditer(r",\s+(?:(?:namely|called|termed|dubbed|named)\s+)?", sentence[: region_end + 1])]
    joints += list(_RE_ARTEFACT_NAME.finditer(sentence, 0, region_end + 1))
    for m in sorted(joints, key=lambda m: m.start()):
        if m.start() < start:
            continue
        span = _span_at(sentence, m.end())
        if span:
            cand = _candidate_from_span(sentence, span, 2, at, sentence[start : m.end()].strip(" ,"))
            if cand:
                return cand
    return None


def _named_after(sentence: str, pos: int, at: _Where, min_quality: int) -> _Candidate | None:
    """A name placed right at `pos` by a naming phrase ("called X", "our method X")."""
    limit = _clause_limit(sentence, pos)
    cand = _acronym_candidate(sentence, pos, limit, at, anchored=True)
    if cand:
        return cand
    span = _span_at(sentence, pos)
    return _candidate_from_span(sentence, span, min_quality, at) if span else None


def _sentence_candidates(sentence: str, at: _Where) -> list[_Candidate]:
    """All cue-introduced names in one sentence."""
    found: list[_Candidate | None] = []
    low = sentence.lower()  # cheap substring tests skip most regex work on most sentences
    # "we propose X", "this paper introduces X", and "we ... and present X".
    has_we = _RE_SUBJECT.search(sentence) if ("we " in low or "this " in low or "our " in low) else None
    if has_we:
        cues = list(_CONTRIBUTION.finditer(sentence))
        cues += [m for m in _COORDINATED.finditer(sentence) if m.start() > has_we.start()]
        for m in cues:
            verb = _VERB_FORMS.get(m.group(1).lower())
            if verb in NAMING_VERBS:
                found.append(_name_in_object(sentence, m.end(), _Where(at.idx, at.offset, NAMING_VERBS[verb])))
    if _NAMING_HINT.search(low):
        for m in _NAMING_PHRASE.finditer(sentence):
            found.append(_named_after(sentence, m.end(), _Where(at.idx, at.offset, CUES["naming_phrase"]), 1))
    if "our " in low or "the proposed " in low or "the resulting " in low or "this " in low:
        for m in _OUR_ARTEFACT.finditer(sentence):
            # "Our model, Coeditor, is ..." may be Title Case; without the comma it must be name-shaped.
            found.append(
                _named_after(sentence, m.end(), _Where(at.idx, at.offset, CUES["our_artefact"]), 1 if m.group(1) else 2)
            )
    # "FooBench is a benchmark ..." at the start of a sentence.
    span = _span_at(sentence, 0)
    if span and re.match(r"\s+is\s+(?:a|an)\s", sentence[span.end() :]) and _name_quality(span.group(0)) == 2:
        found.append(_Candidate(span.group(0), CUES["is_a"], at.offset, at.idx, span.end()))
    return [c for c in found if c is not None]


_EDGE_PUNCT = "()[]{},.;:!?\"'“”‘’"


def _recurring_candidates(text: str, offsets: list[int]) -> list[_Candidate]:
    """Name-shaped words used like the paper's own artefact ("our X", "X outperforms") 3+ times.

    An acronym the abstract defines from lower-case words ("generalized policy
    improvement (GPI)") names a general concept, not the contribution.
    """
    counts: dict[str, int] = {}
    for word in text.split():
        if word.islower():
            continue  # fast path: no capital letter, not a name
        tok = word.strip(_EDGE_PUNCT)
        if tok and _is_strong_token(tok):
            counts[tok] = counts.get(tok, 0) + 1
    frequent = {tok for tok, n in counts.items() if n >= 3 and _name_quality(tok) == 2}
    if not frequent:
        return []
    generic = {
        m.group(1)
        for m in _RE_ACRONYM_PAREN.finditer(text)
        if re.search(r"\b[a-z][\w-]*\s*$", text[max(0, m.start() - 40) : m.start()])
    }
    found = []
    for tok in sorted(frequent - generic):
        # "our X" or "X outperforms/achieves ...": plain substring tests, no per-name regex.
        hits = [text.find(f"{our} {tok}") for our in ("our", "Our")]
        hits += [text.find(f"{tok} {verb}") for verb in _RESULT_VERB_LIST]
        hits = [h for h in hits if h >= 0]
        if hits:
            pos = min(hits)
            idx = max(i for i, off in enumerate(offsets) if off <= pos)
            found.append(_Candidate(tok, CUES["recurring"], pos, idx, -1))
    return found


_RE_REPO = re.compile(r"(?:github|gitlab|huggingface)\.(?:com|co|io)/[\w.-]+/(" + _TOKEN + r")", re.IGNORECASE)


def _repository_candidates(text: str, offsets: list[int]) -> list[_Candidate]:
    """A name-shaped code repository ("github.com/user/GlucoBench") usually names the method."""
    found: list[_Candidate] = []
    if ".co" not in text and ".io" not in text:
        return found  # no URL at all: skip the regex
    for m in _RE_REPO.finditer(text):
        name = m.group(1)
        if _name_quality(name) == 2 and not name.lower().startswith(("http", "www")):
            idx = max(i for i, off in enumerate(offsets) if off <= m.start())
            found.append(_Candidate(name, CUES["repository"], m.start(), idx, -1))
    return found


def _count(name: str, text: str) -> int:
    """Mentions of `name`, including as the stem of related names (Omni-Reward in Omni-RewardBench)."""
    n, at = 0, text.find(name)
    while at >= 0:
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "-_"):
            n += 1
        at = text.find(name, at + len(name))
    return n


def _best_candidate(text: str, sentences: list[str], offsets: list[int]) -> _Candidate | None:
    """The most likely name of the paper's main contribution, or None."""
    cands: dict[str, _Candidate] = {}
    for i, sentence in enumerate(sentences):
        for cand in _sentence_candidates(sentence, _Where(i, offsets[i], 0.0)):
            old = cands.get(cand.name)
            if old is None:
                cands[cand.name] = cand
                continue
            # Seen before: keep the first introduction, with the strongest cue and any expansion.
            old.weight = max(old.weight, cand.weight)
            old.expansion = old.expansion or cand.expansion
    for cand in _recurring_candidates(text, offsets) + _repository_candidates(text, offsets):
        cands.setdefault(cand.name, cand)
    if not cands:
        return None
    first = min(
        (c for c in cands.values() if c.weight >= CUES["first_min_weight"]), key=lambda c: c.order, default=None
    )
    for c in cands.values():
        # The cue matters most; frequent mention and coming first break ties (an
        # umbrella name introduced first beats the sub-benchmark mentioned twice).
        mentions = min(_count(c.name, text), int(CUES["max_mentions"]))
        c.score = c.weight + CUES["per_mention"] * mentions + (CUES["first_bonus"] if c is first else 0.0)
    return max(cands.values(), key=lambda c: (c.score, -c.order))


# ---------------------------------------------------------------------------
# Headlines
# ---------------------------------------------------------------------------


def _bad_end(word: str) -> bool:
    """Whether a headline should not end on `word` (function word or likely adjective)."""
    w = word.strip(".,;:!?\"'“”‘’").lower()
    if not w or w in BAD_ENDINGS:
        return True
    if re.fullmatch(r"[\d.,%]+", w):
        return True  # "... across 500" lost its noun
    if not word[:1].islower() or w in _NOUN_EXCEPTIONS or re.search(r"\d", w):
        return False  # names, acronyms and tokens with digits end a phrase fine
    if "-" in w:
        # Hyphenated compounds are mostly modifiers ("real-world", "large-scale"),
        # except with noun-forming prefixes or endings ("self-attention", "fine-tuning").
        first, _, last = w.partition("-")
        return not (first in _NOUN_PREFIXES or last.endswith(("ing", "tion", "ment", "ness", "ity", "off", "up")))
    return not _looks_like_noun(w)


def _looks_like_noun(w: str) -> bool:
    """Crude: words with typical adjective/adverb/participle endings are not nouns."""
    if w in _NOUN_EXCEPTIONS:
        return True
    if len(w) > 4 and (w.endswith("ly") or (w.endswith("ed") and not w.endswith("eed"))):
        return False
    return not (len(w) > 4 and w.endswith(("ive", "ous", "able", "ible", "ful", "ic", "al", "ary", "less")))


def _hard_cut(phrase: str) -> str:
    """Cut at the first clause boundary; a leading "that"-clause survives a very short head."""
    m = _HARD_BOUNDARY.search(phrase, 1)  # a boundary at the very start cuts nothing
    if m:
        phrase = phrase[: m.start()]
    words = phrase.split()
    for i, w in enumerate(words):
        if w.lower() == "that" and i >= 4:  # "a framework that ..." keeps its clause
            return " ".join(words[:i])
    return phrase.strip()


def _soft_boundary(word: str) -> bool:
    """A word a phrase may be cut before: preposition, conjunction, or participle ("designed")."""
    w = word.lower()
    return w in SOFT_BOUNDARIES or (len(w) > 5 and w.endswith("ed") and w.isalpha() and not w.endswith("eed"))


def trim_phrase(phrase: str, max_words: int, slack: int = SLACK_WORDS) -> str:
    """Shorten a phrase to about `max_words`, ending at a sensible boundary.

    Order of preference: the whole clause if it is short enough and ends on a
    content word; else the longest prefix that stops before a preposition or
    conjunction; else a hard word limit with trailing function words removed.
    """
    words = _hard_cut(phrase).split()
    if not words:
        return ""
    if len(words) <= max_words + slack and not _bad_end(words[-1]):
        return " ".join(_drop_open_clause(words))
    for k in range(min(max_words, len(words) - 1), MIN_WORDS - 1, -1):
        if _soft_boundary(words[k]) and not _bad_end(words[k - 1]):
            return " ".join(words[:k])
    words = words[:max_words]
    while len(words) > 1 and _bad_end(words[-1]):
        words.pop()
    return " ".join(_drop_open_clause(words))


def _drop_open_clause(words: list[str]) -> list[str]:
    """ "... an analysis that suggests" -> "... an analysis": a relative clause needs its object."""
    while len(words) > MIN_WORDS and words[-2].lower() in {"that", "which", "who", "whose"}:
        words = words[:-2]
    return words


def _drop_filler(phrase: str) -> str:
    """Remove what a title does not need: "novel"/"new", and acronym parentheses "(RL)"."""
    phrase = re.sub(r"\s*\([^()\s]{1,20}\)", "", phrase)
    phrase = re.sub(r"^(?:novel|new)\s+(?=\S)", "", phrase.lstrip(), flags=re.IGNORECASE)

    def article(m: re.Match[str]) -> str:  # "a novel architecture" -> "an architecture"
        return m.group(1)[0] + ("n " if m.group(2).lower() in "aeiou" else " ") + m.group(2)

    return re.sub(r"\b(an?|An?)\s+(?:novel|new)\s+(\S)", article, phrase)


def _headline(phrase: str, max_words: int, slack: int = SLACK_WORDS) -> str:
    """Phrase -> headline: filler dropped, trimmed, first letter capitalised."""
    return _polish(trim_phrase(_drop_filler(phrase), max_words, slack))


def _polish(phrase: str) -> str:
    """Tidy surrounding punctuation and capitalise the first letter."""
    phrase = phrase.strip(" ,;:-–—.\"'“”‘’")
    return phrase[:1].upper() + phrase[1:] if phrase else ""


def _third_person_base(verb: str) -> str:
    """ "tokenizes" -> "tokenize", "applies" -> "apply", "matches" -> "match" (best effort)."""
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if re.search(r"(?:ch|sh|ss|x|z)es$", verb):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def _infinitive_phrase(rest: str) -> str:
    """ "to directly model X" -> "Modeling X" (skipping adverbs and "1)" list markers)."""
    m = re.match(
        r"to\s+(?:(?:\d\)|\([a-z0-9]\)|[a-z]+ly|further|also|first|then|better|both|jointly)\s+)*"
        r"([a-z]+)\b(.*)",
        rest,
        re.IGNORECASE | re.DOTALL,
    )
    if not m:
        return ""
    return gerund(m.group(1)) + m.group(2)


_INTRO = re.compile(
    r"^(?:(?:[A-Z][a-z]+ly|However|Moreover|Furthermore|Nowadays|Today|Here|Thus|Therefore|To this end"
    r"|In (?:recent years|the past (?:few )?(?:years|decades?)|practice|particular|contrast|addition)"
    r"|Over the past (?:few )?(?:years|decades?)|To date|Yet|Still|Instead|Finally|First|Second|Third"
    r"|In this (?:paper|work|study))\s*,\s*)+"
)


def _object_phrases(sentence: str) -> Iterator[str]:
    """The contribution phrases of a sentence: "we study X" -> "X", "... and design Y" -> "Y"."""
    cues = list(_CONTRIBUTION.finditer(sentence))
    if cues:  # verbs coordinated with the first one: "we study how X and design Y"
        cues += [m for m in _COORDINATED.finditer(sentence) if m.start() > cues[0].start()]
    for m in cues:
        verb = _VERB_FORMS.get(m.group(1).lower())
        if verb is None:
            continue
        rest = sentence[m.end() : m.end() + WINDOW].lstrip(" ,")
        rest = re.sub(r"^(?:and|or)\s+[a-z]+\s+", "", rest)  # "we propose and analyze X"
        if verb in INTENT_VERBS or rest.lower().startswith("to "):
            phrase = _infinitive_phrase(rest)
        elif verb in OBJECT_VERBS or verb in NAMING_VERBS:
            phrase = re.sub(
                r"^(?:the\s+)?(?:problem|task|question|challenge|setting|notion)\s+of\s+", "", rest, flags=re.IGNORECASE
            )
        else:
            phrase = gerund(verb) + " " + rest
        # "we show that ..." makes a poor title; "we study how X ..." a good one ("How X ...").
        if phrase and not re.match(r"(?i)(?:\w+ing\s+)?(?:that|it|them)\b", phrase):
            yield phrase


# Headlines that point back into the abstract ("this gap", "these methods") read badly alone.
_ANAPHORA = re.compile(r"\b(?:this|these|those|such|above|aforementioned|said|its|their|it|them)\b", re.IGNORECASE)


_SUBORDINATE = re.compile(
    r"(?:While|Although|Though|Whereas|Despite|Since|As|Because|Given|Unlike|When)\b[^,]{3,150}, "
)


def _first_sentence_phrase(sentence: str) -> str:
    """The first sentence without its introductory adverbial or leading appositive.

    "Cancer, a leading cause of death globally, occurs due to ..." ->
    "Cancer occurs due to ...": the comma would otherwise cut it to one word.
    """
    sentence = _INTRO.sub("", sentence)
    m = _SUBORDINATE.match(sentence)
    if m and len(sentence[m.end() :].split()) >= 5:
        sentence = sentence[m.end() :]  # "While X, Y" -> "Y"
    head, sep, rest = sentence.partition(", ")
    if sep and len(head.split()) < MIN_WORDS:
        _, sep2, tail = rest.partition(", ")
        if sep2:
            return f"{head} {tail}"
    return sentence


def _plain_headline(
    sentences: list[str], max_words: int = PLAIN_HEADLINE_WORDS, avoid: str = "", contribution_only: bool = False
) -> str:
    """A headline from the main contribution sentence, else (unless `contribution_only`) the first sentence.

    `avoid` is a name already in the title; a phrase that merely repeats it is skipped.
    """
    for sentence in sentences:
        for phrase in _object_phrases(sentence):
            if avoid:
                phrase = "" if phrase.startswith(avoid) else _without_name(phrase, avoid)
            headline = _headline(phrase, max_words, slack=0) if phrase else ""
            if len(headline.split()) >= MIN_WORDS and not _ANAPHORA.search(headline):
                return headline
    if contribution_only:
        return ""
    for sentence in sentences[:2]:
        headline = _headline(_first_sentence_phrase(sentence[:WINDOW]), max_words, slack=0)
        if len(headline.split()) >= MIN_WORDS:
            return headline
    return _headline(sentences[0][:WINDOW], max_words, slack=0) if sentences else ""


def _appositive(sentence: str, pos: int) -> str:
    """The description right after a name: ", a benchmark for ...", " is a ...", ", which learns ..."."""
    rest = sentence[pos : pos + WINDOW]
    rest = re.sub(r"^\s*\([^()]{0,200}\)", "", rest)  # "ESM-AA (ESM All-Atom), a ..."
    m = re.match(r"\s*(?:,|—|–|:|\s-)\s*(?:which\s+is\s+|i\.e\.,?\s+)?((?:a|an|the|one)\s.*)", rest, re.DOTALL)
    if not m:
        m = re.match(r"\s+is\s+((?:a|an|the)\s.*)", rest, re.DOTALL)
    if m:
        return m.group(1)
    m = re.match(r"\s*,?\s+(for|to)\s+(.*)", rest, re.DOTALL)
    if m:
        return _infinitive_phrase("to " + m.group(2)) if m.group(1) == "to" else m.group(2)
    # ", which tokenizes X" / " that learns X" / ", couples a ..." -> "Tokenizing X", "Coupling a ..."
    m = re.match(r"\s*,?\s*(?:which|that)\s+(?:[a-z]+ly\s+)?([a-z]+s)\b(.*)", rest, re.DOTALL) or re.match(
        r"\s*,\s+(?:[a-z]+ly\s+)?([a-z]+s)\b(\s+(?:a|an|the|both|each|two|three|multiple|its)\b.*)", rest, re.DOTALL
    )
    if m and m.group(1) not in {"is", "was", "has", "does"}:
        return gerund(_third_person_base(m.group(1))) + m.group(2)
    return ""


def _without_name(phrase: str, name: str) -> str:
    """Cut a describing phrase before it names the thing itself ("a flow network called X")."""
    at = phrase.find(name) if name else -1
    if at < 0:
        return phrase
    return _RE_TRAILING_NAMING.sub("", phrase[:at])


_RE_TRAILING_NAMING = re.compile(r"(?:[\s,]+(?:called|named|dubbed|termed|coined|namely)(?:\s+as)?(?:\s+the)?)?[\s,]*$")


def _name_headline(cand: _Candidate, sentences: list[str], max_words: int) -> str:
    """Describe a named contribution: expansion, appositive, "X is a ...", descriptor, or plain."""
    if cand.expansion:
        return _polish(_fix_case(cand.expansion))
    phrases = []
    if cand.end >= 0:
        phrases.append(_appositive(sentences[cand.sentence], cand.end))
    for sentence in sentences:
        for article in (" is a ", " is an "):  # "FooBench is a benchmark ..."
            at = sentence.find(cand.name + article)
            if at >= 0:
                phrases.append(sentence[at + len(cand.name) + 4 :][:WINDOW])
    phrases.append(cand.descriptor)
    for phrase in phrases:
        headline = _headline(_without_name(phrase, cand.name), max_words)
        if _ANAPHORA.search(headline):
            continue
        if len(headline.split()) >= MIN_WORDS or (len(headline.split()) == 2 and phrase is not cand.descriptor):
            return headline
    return _plain_headline(sentences, max_words, avoid=cand.name)


# ---------------------------------------------------------------------------
# Text preparation and assembly
# ---------------------------------------------------------------------------

_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "cf.", "Fig.", "Eq.", "Sec.", "approx.", "resp.", "etc.", "al.")
_SENTENCE_END = re.compile(r"[.!?](\s*)(?=[A-Z0-9\"“(\[])")


def split_sentences(text: str) -> list[str]:
    """Split cleaned text into sentences, also at "decide.We" (missing space), not after "e.g."."""
    parts, last = [], 0
    for m in _SENTENCE_END.finditer(text):
        # Without a space, only "word.Word" is a boundary (not "e.g.BERT", "v1.2", "U.S.").
        if not m.group(1) and not (
            re.match(r"[a-z]{2}$", text[max(0, m.start() - 2) : m.start()])
            and re.match(r"[A-Z][a-z]", text[m.end() : m.end() + 2])
        ):
            continue
        parts.append(text[last : m.start() + 1])
        last = m.end()
    parts.append(text[last:])
    parts = [p.strip() for p in parts if p.strip()]
    merged: list[str] = []
    for part in parts:
        if merged and merged[-1].endswith(_ABBREVIATIONS) and not merged[-1].endswith("etc."):
            merged[-1] += " " + part
        else:
            merged.append(part)
    return merged


def _prepare(abstract: str) -> str:
    r"""Clean the abstract, first dropping unexpanded macros such as ``\modelname{}``.

    Such macros stand for the paper's name, which we cannot know; keeping their
    command name ("modelname") would put a placeholder in the title.
    """

    def drop_macro(m: re.Match[str]) -> str:
        return m.group(0) if is_known_command(m.group(1)) else ""

    return clean_text(re.sub(r"\\([A-Za-z]+)(?:\{\})?(?![A-Za-z{])", drop_macro, abstract))


def _compose(name: str, headline: str) -> str:
    """ "NAME: headline", or the part that exists."""
    if name and headline and headline.lower() != name.lower():
        return f"{name}: {headline}"
    return name or headline


def _fit(title: str) -> str:
    """Enforce MAX_TITLE_CHARS at a word boundary, without a dangling function word or parenthesis."""
    title = title.strip(" ,;:-–—.")
    if len(title) > MAX_TITLE_CHARS:
        words = title[: MAX_TITLE_CHARS + 1].split()
        if len(" ".join(words)) > MAX_TITLE_CHARS:
            words = words[:-1]  # the last word was cut in the middle
        while len(words) > 1 and _bad_end(words[-1]):
            words.pop()
        title = " ".join(words) or title[:MAX_TITLE_CHARS]
    if title.count("(") > title.count(")"):
        title = title[: title.rfind("(")] or title
    return title.strip(" ,;:-–—.")


# "Link sign prediction on a signed graph is a task to ..." names the paper's topic.
_RE_TOPIC = re.compile(r"([A-Z][\w-]*(?: [\w-]+){0,7}?) (?:is|are) (?:a|an|one of the|the) ")
_NOT_TOPIC = re.compile(
    r"(?i)(?:a|an|the|this|these|that|those|it|its|there|one|many|most|some|such|our|we|in|on|as"
    r"|what|how|why|which|who|when|where)\b"
)


def _topic_title(sentences: list[str]) -> str:
    """ "Topic: headline" when the abstract opens by defining its topic, else "".

    Only for abstracts without a named contribution: the topic (the subject of
    an opening "X is a ..." sentence) tells what the paper is about, the
    contribution headline what it does.  Dropped when the two overlap or the
    result would be too long.
    """
    m = _RE_TOPIC.match(sentences[0])
    if not m or _NOT_TOPIC.match(m.group(1)) or re.search(r"[(),;:]", m.group(1)) or len(m.group(1).split()) > 7:
        return ""
    topic = m.group(1)
    stems = {w[:5].lower() for w in re.split(r"[\s-]+", topic) if len(w) >= 5}
    for max_words in range(PLAIN_HEADLINE_WORDS, 3, -2):
        headline = _plain_headline(sentences[1:], max_words, contribution_only=True)
        if not headline or stems & {w[:5].lower() for w in re.split(r"[\s-]+", headline)}:
            return ""  # no contribution sentence, or it already says the topic
        title = f"{topic}: {headline}"
        if len(title) <= MAX_TITLE_CHARS:
            return title
    return ""


def _derive(abstract: str) -> str:
    """The title rules proper (see `derive_title`)."""
    text = _prepare(abstract[:MAX_INPUT_CHARS])
    sentences = split_sentences(text)
    if not sentences:
        return ""
    offsets, pos = [], 0
    for sentence in sentences:
        pos = text.find(sentence, pos)
        offsets.append(max(pos, 0))
    cand = _best_candidate(text, sentences, offsets)
    if cand is None:
        return _topic_title(sentences) or _fit(_plain_headline(sentences))
    # Shrink the headline until "NAME: headline" fits the length limit.
    for max_words in range(NAME_HEADLINE_WORDS, 1, -2):
        title = _compose(cand.name, _name_headline(cand, sentences, max_words))
        if len(title) <= MAX_TITLE_CHARS:
            return title
    return _fit(cand.name)


def derive_title(abstract: str) -> str:
    """A short display title for an untitled abstract (see the module docstring).

    Never raises; returns "Untitled" for empty or whitespace-only input and a
    non-empty string of at most MAX_TITLE_CHARS characters otherwise.
    """
    if not isinstance(abstract, str) or not abstract.strip():
        return "Untitled"
    try:
        title = _derive(abstract)
    except Exception:  # pragma: no cover - defensive: a title must never break ingest
        title = ""
    if not title:  # nothing sentence-like: the cleaned text itself, if any
        title = clean_text(abstract[:MAX_INPUT_CHARS])
    return _fit(title) or "Untitled"
