"""Display titles for untitled abstracts.

Some conference lists are bare abstracts.  `derive_title` gives each one a short,
readable title using general cues, never a table of known paper names:

1. If the abstract introduces a named system, benchmark or method ("we propose
   scPertCRL, a causally structured generative framework for ..."), the title is
   ``"NAME: headline"``.  The name must follow a contribution cue (we
   introduce/present/propose/develop..., "called X", "namely X", "X is a ...")
   or recur as the subject of results, and must look like a name (CamelCase,
   internal capitals, digits, hyphenated capitals, ALL-CAPS, or Title Case right
   after the cue).  The headline is the acronym's expansion when the name is an
   acronym defined in parentheses, otherwise the appositive that follows the
   name ("a benchmark for modeling user decisions from ..."), cut at a clause
   boundary.
2. Otherwise the headline of the main contribution sentence ("we study X" ->
   "X", "we formalize X" -> "Formalizing X"), or of the first sentence.

Titles are cleaned of LaTeX/Markdown (via `clean_text`), at most
`MAX_TITLE_CHARS` long, and never empty ("Untitled" for empty input).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .clean import clean_text, is_known_command

__all__ = ["derive_title", "MAX_TITLE_CHARS"]

MAX_TITLE_CHARS = 100
NAME_HEADLINE_WORDS = 10  # the headline after "NAME: "
PLAIN_HEADLINE_WORDS = 12  # a headline standing alone
SLACK_WORDS = 2  # a phrase this much over the limit is kept whole if it ends well
MIN_WORDS = 3  # never cut a phrase shorter than this at a soft boundary

# ---------------------------------------------------------------------------
# Word lists (grammar, not paper names)
# ---------------------------------------------------------------------------

#: A headline must not end on one of these.
STOPWORDS = {
    "a", "an", "the", "of", "for", "to", "in", "on", "with", "and", "or", "by", "from", "via",
    "using", "as", "at", "into", "onto", "that", "which", "who", "whose", "where", "when",
    "while", "its", "their", "our", "his", "her", "this", "these", "those", "is", "are", "be",
    "been", "being", "was", "were", "both", "either", "neither", "each", "every", "such",
    "than", "not", "but", "over", "under", "between", "among", "toward", "towards", "through",
    "across", "without", "within", "upon", "based", "can", "could", "may", "might", "will",
    "would", "should", "must", "we", "it", "they", "more", "most", "less", "very", "also",
    "only", "new", "novel", "then", "thus", "so", "if", "whether", "how", "what", "about",
    "after", "before", "during", "against", "beyond", "per", "all", "any", "some", "many",
    "much", "several", "two", "three", "one", "other", "own", "same", "do", "does", "has",
    "have", "had", "e.g.", "i.e.", "etc.", "vs.", "like", "including", "namely",
}

#: Words a long phrase may be cut before (prepositions, conjunctions, relatives).
#: "of" is deliberately absent: it binds too tightly ("capable of", "number of").
SOFT_BOUNDARIES = {
    "for", "with", "via", "using", "in", "on", "and", "or", "to", "by", "from", "under",
    "through", "across", "between", "among", "without", "who", "whose", "where", "when",
    "while", "based", "toward", "towards", "into", "over", "against", "upon", "within", "at",
    "as", "beyond", "that", "which", "than", "since", "because", "leveraging", "enabling",
    "allowing", "achieving", "yielding", "resulting", "consisting", "comprising",
}

#: Where a headline phrase always ends: punctuation, relative/contrastive clauses,
#: examples, and purpose clauses ("... to address the challenge of ...").
_HARD_BOUNDARY = re.compile(
    r",(?=\s)|;|:(?=\s)|\s[(\[]|[()\[\]]|—|\s[–-]\s|[.!?](?=\s|$)"
    r"|\b(?:which|whereas|while|thereby|whereby|i\.e\.|e\.g\.|such as|in order to|so as to|so that"
    r"|to (?:address|tackle|overcome|bridge|mitigate|solve|handle|alleviate|resolve|remedy|close))\b",
    re.IGNORECASE,
)

#: Nouns ending in adjective-like suffixes; they are fine at the end of a headline.
_NOUN_EXCEPTIONS = {
    "retrieval", "signal", "interval", "trial", "proposal", "removal", "survival", "approval",
    "potential", "tutorial", "manual", "journal", "terminal", "material", "individual",
    "capital", "arrival", "rival", "animal", "portal", "principal", "goal", "total", "rational",
    "metric", "topic", "logic", "heuristic", "graphic", "arithmetic", "diagnostic", "music",
    "traffic", "clinic", "epidemic", "pandemic", "critic", "mechanic", "fabric", "rubric",
    "logistic", "objective", "alternative", "perspective", "initiative", "incentive",
    "narrative", "derivative", "primitive", "archive", "motive", "directive", "detective",
    "hundred", "variable", "table", "cable", "observable", "deliverable", "family", "anomaly",
    "assembly", "supply", "reply", "italy", "monopoly", "butterfly", "ally", "rally",
}

#: Compound prefixes that make a hyphenated word a noun ("self-improvement").
_NOUN_PREFIXES = {"self", "pre", "post", "re", "co", "non", "fine", "trade", "follow", "sub", "semi",
                  "meta", "de", "cross", "multi", "inter", "over", "under"}

#: Generic acronyms that are never a paper's own name.
COMMON_ACRONYMS = {
    "AI", "AGI", "ML", "DL", "RL", "NLP", "NLU", "NLG", "CV", "LLM", "MLLM", "VLM", "LVLM", "LM",
    "PLM", "SLM", "RLHF", "RLAIF", "SFT", "DPO", "PPO", "GPU", "TPU", "CPU", "CNN", "RNN", "GNN",
    "GCN", "MLP", "LSTM", "GAN", "VAE", "SSM", "RAG", "QA", "VQA", "MD", "DFA", "NFA", "SOTA",
    "API", "UI", "KG", "NER", "ASR", "TTS", "OCR", "MT", "IR", "COT", "ICL", "MOE", "VIT", "IID",
    "OOD", "SGD", "ODE", "PDE", "SDE", "MDP", "POMDP", "MCMC", "PCA", "SVM", "KL", "MSE", "FID",
    "BLEU", "AUC", "ROC", "US", "USA", "UK", "EU", "ID", "IDS", "DNN", "NN", "TD", "IRL",
    "MARL", "LORA", "PEFT", "BERT", "GPT", "HMM", "EM", "VR", "AR", "IOT", "3D", "2D", "RGB",
}

#: Words that start sentences or noun phrases and are never names themselves.
_NOT_NAME_START = {
    "The", "A", "An", "Our", "This", "These", "That", "Those", "Its", "Their", "It", "We", "In",
    "On", "For", "To", "With", "By", "From", "As", "At", "Such", "Each", "Both", "All", "Any",
    "Here", "There", "However", "Moreover", "Furthermore", "Finally", "First", "Second",
    "Third", "Then", "Specifically", "Based", "Unlike", "Using", "Given", "Existing", "Recent",
    "Large", "Several", "Many", "Most", "Some", "Two", "Three", "One", "New", "Novel",
}

#: Nouns that may follow "(ACR)" and belong to the name's headline ("... (APM) benchmark").
_HEAD_NOUNS = {
    "benchmark", "dataset", "framework", "model", "method", "algorithm", "metric", "system",
    "approach", "architecture", "library", "toolkit", "suite", "corpus", "task", "pipeline",
    "protocol", "paradigm", "network", "agent", "platform", "environment", "loss", "score",
    "mechanism", "module", "strategy", "technique", "test", "challenge", "simulator", "engine",
}

# ---------------------------------------------------------------------------
# Verbs
# ---------------------------------------------------------------------------

#: Verbs whose object is itself a good title ("we study X" -> "X").
OBJECT_VERBS = {
    "propose", "introduce", "present", "study", "investigate", "examine", "explore",
    "consider", "pose", "develop", "design", "build", "construct", "offer", "provide",
    "describe", "revisit", "create", "devise", "contribute", "establish", "address",
    "tackle", "curate", "release", "report",
}
#: Verbs that need to stay in the title as a gerund ("we formalize X" -> "Formalizing X").
GERUND_VERBS = {
    "model", "formalize", "formalise", "formulate", "analyze", "analyse", "characterize",
    "characterise", "quantify", "learn", "frame", "extend", "unify", "generalize", "leverage",
    "benchmark", "evaluate", "measure", "identify", "rethink", "reconsider", "explain",
    "uncover", "train", "scale", "compare", "adapt", "apply", "use", "exploit", "enable",
    "improve", "accelerate", "reduce", "derive", "prove", "bound", "estimate", "predict",
    "detect", "align", "teach", "personalize", "simulate", "represent", "map", "recast",
}
#: Verbs followed by "to <verb>" ("we aim to model X" -> "Modeling X").
INTENT_VERBS = {"aim", "seek", "attempt", "strive", "set", "wish", "want", "try"}

#: Contribution verbs that also introduce a *named* artefact, with their cue weight.
NAMING_VERBS = {
    "introduce": 3.0, "present": 3.0, "propose": 3.0, "develop": 2.0, "design": 2.0,
    "build": 2.0, "create": 2.0, "devise": 2.0, "contribute": 2.0, "offer": 2.0,
    "construct": 1.0, "curate": 1.0, "collect": 1.0, "release": 1.0, "establish": 1.0,
    "provide": 1.0, "describe": 1.0,
}

#: Verbs whose final consonant doubles before -ing/-ed despite having 2+ syllables.
_DOUBLING = {"control", "submit", "commit", "permit", "refer", "transfer", "compel", "propel",
             "admit", "omit", "equip", "regret", "occur", "prefer", "deter", "set"}


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

# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------

# One name token: letters/digits joined by - . / (GPT-4o, Llama-3.1-8B, Walk2Pers),
# optionally ending in "+" signs (GraphSAGE++).
_TOKEN = r"[^\W_](?:[^\W_]|[-./](?=[^\W_]))*\+*"
_RE_TOKEN = re.compile(_TOKEN)
_RE_SPAN = re.compile(_TOKEN + r"(?: " + _TOKEN + r"){0,3}")
# What may follow a name introduced by a cue: punctuation, the end, or a function word.
_NAME_FOLLOW = re.compile(
    r"\s*(?:[,(:;—–]|$|[.!?](?:\s|$))|\s+-\s"
    r"|\s+(?:that|which|to|for|as|with|in|on|is|and|by|via|using|who|achieves|outperforms|"
    r"consists|comprising|consisting|extends|combines|builds|learns|leverages|uses)\b"
)
_NAMING_PHRASE = re.compile(
    r"\b(?:called|named|dubbed|termed|coined|namely|(?:referred|refer)\s+to\s+as|(?:termed|denoted)\s+as"
    r"|we\s+(?:call|name|term|dub)\s+(?:it|this|them|these|our\s+[a-z\-]+(?:\s+[a-z\-]+)?"
    r"|the\s+(?:resulting|proposed)\s+[a-z\-]+))\s+",
    re.IGNORECASE,
)
# The descriptor noun phrase before a name ("a novel two-stage framework, namely X")
# ends at the first clause word; names found beyond it are incidental.
_DESCRIPTOR_END = re.compile(
    r"\b(?:that|which|where|who|whose|to|for|by|with|based|on|using|via|consisting|comprising"
    r"|through|from|in|across|over|under|between|of|when|while|as)\b|[.;:]|,\s+(?!namely\b|called\b|"
    r"termed\b|dubbed\b|named\b|i\.e\.)(?=[a-z])"
)
_RE_ACRONYM_PAREN = re.compile(r"\(\s*(" + _TOKEN + r")\s*\)")
_RESULT_VERBS = r"(?:outperforms|achieves|surpasses|improves|attains|yields|delivers|enables|reduces|sets)"


def _is_strong_token(token: str) -> bool:
    """Name-shaped on its own: internal capitals, 2+ capitals, or letters mixed with digits."""
    return bool(
        re.search(r"[a-z][A-Z]", token)
        or len(re.findall(r"[A-Z]", token)) >= 2
        or (re.search(r"\d", token) and re.search(r"[A-Za-z]", token) and len(token) > 2)
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
    # Keep only the leading tokens that look like parts of a name.
    kept = []
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
    window = " ".join(words[-min(len(short) + 5, len(short) * 2):])
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
    if n_words < 2 or n_words < len(short) // 2 or long_form.lower().startswith(("the ", "a ", "an ")):
        return None
    return long_form


def _is_expansion_of(name: str, paren: str) -> bool:
    """Whether "(paren)" after a name spells it out: EMCift (Extensible Multi-Center ...)."""
    words = [w for w in re.split(r"[\s\-]+", paren) if w]
    if len(words) < 2 or not paren[:1].isupper():
        return False
    initials = "".join(w[0].upper() for w in words if w[0].isalpha())
    caps = [c for c in name if c.isupper()]
    if len(caps) < 2:
        return False
    it = iter(initials)
    return all(c in it for c in caps)  # capitals of the name are a subsequence of the initials


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
    end: int  # offset in that sentence just after the name (and its parenthesis)
    expansion: str = ""  # spelled-out acronym, if any
    descriptor: str = ""  # the noun phrase before it ("a large-scale dataset")
    score: float = 0.0


def _after_paren(sentence: str, pos: int) -> tuple[str, int]:
    """The content of a "(...)" right at `pos` (skipping spaces) and the offset after it."""
    m = re.compile(r"\s*\(([^()]{1,200})\)").match(sentence, pos)
    return (m.group(1).strip(), m.end()) if m else ("", pos)


def _candidate_from_span(sentence: str, span: re.Match[str], min_quality: int, weight: float,
                         idx: int, offset: int, descriptor: str = "") -> _Candidate | None:
    """Validate a name span and attach its acronym/expansion; None if not a name."""
    name, end = span.group(0), span.end()
    paren, after = _after_paren(sentence, end)
    if paren and _RE_ACRONYM_PAREN.fullmatch(f"({paren})") and " " in name:
        # "Virtual Sequential Target Attention (VISTA)": the acronym is the name.
        if _acronym_long_form(paren, name) and not _is_common(paren):
            return _Candidate(paren, weight, offset + span.start(), idx, after, name, descriptor)
        if _is_common(paren):
            return None  # "Large Language Models (LLMs)"
    if not _NAME_FOLLOW.match(sentence, end) or _name_quality(name) < min_quality:
        return None
    if paren and _is_expansion_of(name, paren):
        return _Candidate(name, weight, offset + span.start(), idx, after, paren, descriptor)
    return _Candidate(name, weight, offset + span.start(), idx, end, "", descriptor)


def _name_in_object(sentence: str, pos: int, weight: float, idx: int, offset: int) -> _Candidate | None:
    """The name a contribution cue introduces, looking right after the verb at `pos`.

    Either the name comes first ("we propose EMCift (...), a ..."), or a short
    descriptor comes first and the name follows as an acronym or appositive
    ("we propose a two-stage framework, namely VISTA", "a metric Modality
    Contribution Ratio (MCR)").  Anything beyond the descriptor is incidental.
    """
    start = pos + len(sentence[pos:]) - len(sentence[pos:].lstrip(" ,"))
    span = _span_at(sentence, start)
    if span:
        cand = _candidate_from_span(sentence, span, 1, weight, idx, offset)
        if cand:
            return cand
    stop = _DESCRIPTOR_END.search(sentence, start, min(len(sentence), start + 160))
    region_end = stop.start() if stop else min(len(sentence), start + 160)
    # An acronym defined inside the descriptor, e.g. "the Arbitrary Preference Mapping (APM) benchmark".
    for m in _RE_ACRONYM_PAREN.finditer(sentence, start, region_end + 1):
        acronym = m.group(1)
        if _is_common(acronym) or not _is_strong_token(acronym):
            continue
        long_form = _acronym_long_form(acronym, sentence[start:m.start()])
        if long_form:
            descriptor = sentence[start:m.start()].rsplit(long_form, 1)[0]
            cand = _Candidate(acronym, weight, offset + m.start(), idx, m.end(), long_form, descriptor)
            head = re.match(r"\s+([a-z]+)\b", sentence[m.end():])
            if head and head.group(1) in _HEAD_NOUNS:
                cand.expansion += " " + head.group(1)
                cand.end = m.end() + head.end()
            return cand
    # "a new benchmark, FooBench, ..." / "a novel framework, namely Foo"
    for m in re.finditer(r",\s+(?:namely\s+|called\s+|termed\s+|dubbed\s+|named\s+)?", sentence[:region_end + 1]):
        if m.start() < start:
            continue
        span = _span_at(sentence, m.end())
        if span:
            cand = _candidate_from_span(sentence, span, 2, weight, idx, offset, sentence[start:m.start()])
            if cand:
                return cand
    return None


def _sentence_candidates(sentence: str, idx: int, offset: int) -> list[_Candidate]:
    """All cue-introduced names in one sentence."""
    found: list[_Candidate] = []
    for m in _CONTRIBUTION.finditer(sentence):
        verb = _VERB_FORMS.get(m.group(1).lower())
        if verb in NAMING_VERBS:
            cand = _name_in_object(sentence, m.end(), NAMING_VERBS[verb], idx, offset)
            if cand:
                found.append(cand)
    for m in _NAMING_PHRASE.finditer(sentence):
        span = _span_at(sentence, m.end())
        if span:
            cand = _candidate_from_span(sentence, span, 1, 3.0, idx, offset)
            if cand:
                found.append(cand)
    # "FooBench is a benchmark ..." at the start of a sentence.
    span = _span_at(sentence, 0)
    if span and re.match(r"\s+is\s+(?:a|an)\s", sentence[span.end():]) and _name_quality(span.group(0)) == 2:
        found.append(_Candidate(span.group(0), 2.0, offset, idx, span.end()))
    return found


def _recurring_candidates(text: str, sentences: list[str], offsets: list[int]) -> list[_Candidate]:
    """Name-shaped words used like the paper's own artefact ("our X", "X outperforms") 3+ times."""
    counts: dict[str, int] = {}
    for tok in _RE_TOKEN.findall(text):
        if _is_strong_token(tok) and _name_quality(tok) == 2:
            counts[tok] = counts.get(tok, 0) + 1
    found = []
    for tok, n in counts.items():
        if n < 3:
            continue
        own = re.search(r"\b[Oo]ur\s+" + re.escape(tok) + r"\b|(?<![\w-])" + re.escape(tok) + r"\s+" + _RESULT_VERBS, text)
        if own:
            idx = next(i for i, off in reversed(list(enumerate(offsets))) if off <= own.start())
            found.append(_Candidate(tok, 0.5, own.start(), idx, -1))
    return found


def _count(name: str, text: str) -> int:
    """Mentions of `name`, including as the stem of related names (Omni-Reward in Omni-RewardBench)."""
    return len(re.findall(r"(?<![\w-])" + re.escape(name), text))


def _best_candidate(text: str, sentences: list[str], offsets: list[int]) -> _Candidate | None:
    """The most likely name of the paper's main contribution, or None."""
    cands: dict[str, _Candidate] = {}
    for i, sentence in enumerate(sentences):
        for cand in _sentence_candidates(sentence, i, offsets[i]):
            old = cands.get(cand.name)
            if old is None or cand.weight > old.weight:
                if old is not None:  # keep the richer details of the first introduction
                    cand.expansion = cand.expansion or old.expansion
                    cand.order = min(cand.order, old.order)
                cands[cand.name] = cand
    for cand in _recurring_candidates(text, sentences, offsets):
        cands.setdefault(cand.name, cand)
    if not cands:
        return None
    first = min((c for c in cands.values() if c.weight >= 1), key=lambda c: c.order, default=None)
    for c in cands.values():
        # The cue matters most; frequent mention and coming first break ties (an
        # umbrella name introduced first beats the sub-benchmark mentioned twice).
        c.score = c.weight + 0.5 * min(_count(c.name, text), 6) + (1.0 if c is first else 0.0)
    return max(cands.values(), key=lambda c: (c.score, -c.order))


# ---------------------------------------------------------------------------
# Headlines
# ---------------------------------------------------------------------------


def _bad_end(word: str) -> bool:
    """Whether a headline should not end on `word` (function word or likely adjective)."""
    w = word.strip(".,;:!?\"'“”‘’").lower()
    if not w or w in STOPWORDS:
        return True
    if not word[:1].islower() or w in _NOUN_EXCEPTIONS or re.search(r"\d", w):
        return False  # names, acronyms and numbers end a phrase fine
    if "-" in w:
        head, _, last = w.rpartition("-")
        return head.split("-")[0] not in _NOUN_PREFIXES and not _looks_like_noun(last)
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
    m = _HARD_BOUNDARY.search(phrase)
    if m and m.start() > 0:
        phrase = phrase[: m.start()]
    words = phrase.split()
    for i, w in enumerate(words):
        if w.lower() == "that" and i >= 4:  # "a framework that ..." keeps its clause
            return " ".join(words[:i])
    return phrase.strip()


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
        return " ".join(words)
    for k in range(min(max_words, len(words) - 1), MIN_WORDS - 1, -1):
        if words[k].lower() in SOFT_BOUNDARIES and not _bad_end(words[k - 1]):
            return " ".join(words[:k])
    words = words[:max_words]
    while len(words) > 1 and _bad_end(words[-1]):
        words.pop()
    return " ".join(words)


def _drop_filler(phrase: str) -> str:
    """ "a novel framework" -> "a framework": titles do not advertise novelty."""
    phrase = re.sub(r"^(?:novel|new)\s+(?=\S)", "", phrase.lstrip(), flags=re.IGNORECASE)
    phrase = re.sub(r"\b(a|an|A|An)\s+(?:novel|new)\s+(?=\S)", lambda m: m.group(1)[0] + " ", phrase)
    return re.sub(r"\b([Aa]) (?=[aeiouAEIOU])", r"\1n ", phrase)


def _headline(phrase: str, max_words: int, slack: int = SLACK_WORDS) -> str:
    """Phrase -> headline: filler dropped, trimmed, first letter capitalised."""
    return _polish(trim_phrase(_drop_filler(phrase), max_words, slack))


def _polish(phrase: str) -> str:
    """Tidy surrounding punctuation and capitalise the first letter."""
    phrase = phrase.strip(" ,;:-–—.")
    return phrase[:1].upper() + phrase[1:] if phrase else ""


def _infinitive_phrase(rest: str) -> str:
    """ "to directly model X" -> "Modeling X" (skipping adverbs and "1)" list markers)."""
    m = re.match(r"to\s+(?:(?:\d\)|\([a-z0-9]\)|[a-z]+ly)\s+)*([a-z]+)\b(.*)", rest, re.IGNORECASE | re.DOTALL)
    if not m:
        return ""
    return gerund(m.group(1)) + m.group(2)


def _object_phrase(sentence: str) -> str:
    """The contribution phrase of a sentence ("we study X" -> "X"), or "" if none."""
    for m in _CONTRIBUTION.finditer(sentence):
        verb = _VERB_FORMS.get(m.group(1).lower())
        if verb is None:
            continue
        rest = sentence[m.end():].lstrip(" ,")
        rest = re.sub(r"^(?:[a-z]+ly\s+)+", "", rest)
        if verb in INTENT_VERBS or rest.lower().startswith("to "):
            phrase = _infinitive_phrase(rest)
        elif verb in OBJECT_VERBS or verb in NAMING_VERBS:
            phrase = re.sub(r"^(?:the\s+)?(?:problem|task|question|challenge|setting|notion)\s+of\s+", "", rest,
                            flags=re.IGNORECASE)
        else:
            phrase = gerund(verb) + " " + rest
        # "we show that ..." and anaphoric objects ("this gap") make poor titles.
        if phrase and not re.match(r"(?i)(?:that|this|these|those|it|them|how|whether|why)\b", phrase):
            return phrase
    return ""


def _plain_headline(sentences: list[str], max_words: int = PLAIN_HEADLINE_WORDS) -> str:
    """A headline from the main contribution sentence, else from the first sentence."""
    for sentence in sentences:
        phrase = _object_phrase(sentence)
        if phrase:
            headline = _headline(phrase, max_words, slack=0)
            if len(headline.split()) >= 2:
                return headline
    return _headline(sentences[0], max_words, slack=0) if sentences else ""


def _appositive(sentence: str, pos: int) -> str:
    """The description right after a name: ", a benchmark for ..." / " is a ..." / " for ..."."""
    rest = sentence[pos:]
    m = re.match(r"\s*(?:,|—|–|:|\s-)\s*(?:which\s+is\s+|i\.e\.,?\s+)?((?:a|an|the|one)\s.*)", rest, re.DOTALL)
    if not m:
        m = re.match(r"\s+is\s+((?:a|an|the)\s.*)", rest, re.DOTALL)
    if m:
        return m.group(1)
    m = re.match(r"\s*,?\s+(for|to)\s+(.*)", rest, re.DOTALL)
    if m:
        return _infinitive_phrase("to " + m.group(2)) if m.group(1) == "to" else m.group(2)
    return ""


def _name_headline(cand: _Candidate, sentences: list[str], max_words: int) -> str:
    """Describe a named contribution: expansion, appositive, "X is a ...", descriptor, or plain."""
    if cand.expansion:
        return _polish(_fix_case(cand.expansion))
    candidates = []
    if cand.end >= 0:
        candidates.append(_appositive(sentences[cand.sentence], cand.end))
    for sentence in sentences:
        m = re.search(r"(?<![\w-])" + re.escape(cand.name) + r"\s+is\s+((?:a|an)\s.*)", sentence, re.DOTALL)
        if m:
            candidates.append(m.group(1))
    if len(cand.descriptor.split()) >= 3:
        candidates.append(cand.descriptor)
    for phrase in candidates:
        headline = _headline(phrase, max_words)
        if len(headline.split()) >= 2:
            return headline
    return _plain_headline(sentences, max_words)


# ---------------------------------------------------------------------------
# Text preparation and assembly
# ---------------------------------------------------------------------------

_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "cf.", "Fig.", "Eq.", "Sec.", "approx.", "resp.", "etc.", "al.")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(\[])|(?<=[a-z]{2}[.!?])(?=[A-Z][a-z])")


def split_sentences(text: str) -> list[str]:
    """Split cleaned text into sentences, also at "decide.We" (missing space), not after "e.g."."""
    parts = [p for p in _SENTENCE_END.split(text) if p.strip()]
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
    """Enforce MAX_TITLE_CHARS at a word boundary, without a dangling function word."""
    title = title.strip(" ,;:-–—.")
    if len(title) <= MAX_TITLE_CHARS:
        return title
    words = title[: MAX_TITLE_CHARS + 1].split()
    if len(" ".join(words)) > MAX_TITLE_CHARS:
        words = words[:-1]
    while len(words) > 1 and _bad_end(words[-1]):
        words.pop()
    return " ".join(words).strip(" ,;:-–—") or title[:MAX_TITLE_CHARS]


def _derive(abstract: str) -> str:
    """The title rules proper (see `derive_title`)."""
    text = _prepare(abstract)
    sentences = split_sentences(text)
    if not sentences:
        return ""
    offsets, pos = [], 0
    for sentence in sentences:
        pos = text.find(sentence, pos)
        offsets.append(max(pos, 0))
    cand = _best_candidate(text, sentences, offsets)
    if cand is None:
        return _fit(_plain_headline(sentences))
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
    if not title:
        title = _fit(clean_text(abstract)) or abstract.strip()[:MAX_TITLE_CHARS]
    title = _fit(title)
    return title if title else "Untitled"
