"""Candidate key phrases of a text: 1-3 word runs that a researcher would read as a topic.

Phrases never cross a stop word or an academic boilerplate word ("we propose", "in this
paper", "state of the art", "results show" all vanish), so what is left are runs such as
"diffusion models" or "protein structure prediction". Each phrase has a matching key
(lower case, plural -s removed) so "Diffusion Models" and "diffusion model" count as one.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

# English function words (a compact list; phrases break at them).
STOP_WORDS = frozenset(
    """
a about above across after again against all almost alone along already also although always am among an and
another any anybody anyone anything anyway anywhere are around as at back be became because become becomes
been before beforehand behind being below beside besides between beyond both but by can cannot could did do
does doing done down due during each either else elsewhere enough etc even ever every everyone everything
everywhere except few for former formerly from further furthermore had has have having he hence her here
hereby herein hers herself him himself his how however i ie if in indeed instead into is it its itself just
last latter least less let like likely made mainly many may me meanwhile might mine more moreover most mostly
much must my myself namely neither never nevertheless next no nobody none nor not nothing now nowhere of off
often on once one only onto or other others otherwise our ours ourselves out over own per perhaps please
rather really same several she should since so some somehow someone something sometimes somewhere still such
than that the their theirs them themselves then thence there thereafter thereby therefore therein these they
this those though through throughout thus to together too toward towards under until up upon us very via was
we well were what whatever when whenever where whereas whereby wherein whether which while who whoever whole
whom whose why will with within without would yet you your yours yourself yourselves eg e.g i.e vs versus
i ii iii iv
""".split()
)

# Academic boilerplate: words that never start, end or join a topic phrase.
GENERIC_WORDS = frozenset(
    """
overlooked concern concerns largest smallest larger smaller higher lower future futures et al give gives giving see seen reduce reduces reduced reducing log able abstract achieve achieved achieves achieving across additionally address addresses addressing adopt
adopts advance advances advantage advantages aim aimed aims allow allowing allows alternative analyse analyze
analyzes applicable applied applies apply applying approach approaches appropriate approximately arbitrary art
assume assumed assumes attain attains attempt available based benchmark-based benefit benefits best better
better-than bring brings broad broadly called capture captures capturing certain challenge challenges
challenging claim clearly closely combine combined combines commonly compare compared comparing comparison
competitive comprehensive concretely conduct conducted consequently consider considerable considerably
considered consistently consists construct constructed contain containing contains contribute contributes
contribution contributions core critical critically crucial crucially current deal define defined demonstrate
demonstrated demonstrates demonstrating derive derived derives describe described designed desirable despite
detailed determine develop developed different difficult directly easily effect effective effectively
effectiveness effects efficacy efficient efficiently emerging empirical empirically employ employs enable
enables enabling encourage enhance enhanced enhances enhancing enjoy ensure especially essential establish
evaluate evaluated evaluates evaluating evaluations evidence exact exactly examine examines exhibit exhibits
existing experiment experimental experiments explicit explicitly exploit exploiting exploits explore extend
extended extends extensive extensively facilitate fail fails far fewer finally find findings first focus
follow following form found fully fundamental furthermore gain gains generally generate generated generates
generating generic given good great greatly handle hard help helps high highlight highlights highly however
ideas identifies identify illustrate impact implement implemented important improve improved improvement
improvements improves improving including incorporate incorporates increase increased increases increasing
increasingly independently infer inferred infers insight insights inspired instance instances interesting
introduce introduced introduces investigate investigates involve involves issue issues key known lack largely
lastly lead leading leads learn learned learns learnt leverage leverages leveraging likewise limited little
lower main maintaining major make makes making manner margin meanwhile mere merely method methods minimal
mitigate modern moreover motivate motivated namely naturally nearly necessary need needs new notable notably
novel number numbers numerous observations observe observed obtain obtained obtaining obtains occur offer
offering offers open order outperform outperformance outperformed outperforming outperforms overall paper
particular particularly pave perform performed performing performs popular possible potential potentially
powerful practical practice present presents previous previously primarily principled prior produce produces
progress prominent promising properly proposal propose proposed proposes prove proved proves provide provided
provides providing proving publicly rapid rapidly readily realistic reasonable recent recently regarding
relative relatively relevant relies rely relying remain remains remarkable remarkably report reported
represent represents require requires requiring research respectively result resulting results reveal rich
same satisfactory scenario scenarios second seek show showcase showcases showing shown shows significance
significant significantly simple simply size solid solve solves solving specifically state-of-the-art strong
stronger strongly studies study substantial substantially successful successfully suffer suffers sufficient
suggest suggests suitable superior support supports surpass surpasses surpassing surprisingly tackle tackles
take takes taking task tasks techniques term terms theoretical theoretically thereby thorough thoroughly three
three-fold toward towards trained trains tremendous true two typically ubiquitous underlying unlike
unprecedented use used uses using usually utilize valuable various vast verify versatile via viable vital way
ways whereas whilst wide widely widespread without work works yield yielding yields
""".split()
)

# Multi-word phrases that survive the word lists but say nothing about the topic.
STOP_PHRASES = frozenset(
    {
        "real world",
        "real-world",
        "wide range",
        "large language",
        "large margin",
        "code available",
        "extensive experiment",
        "et al",
        "open source",
        "ablation study",
        "case study",
        "key idea",
        "main idea",
        "deep learning",
        "machine learning",
        "neural network",
        "deep neural network",
        "paper propose",
        "proposed method",
        "proposed approach",
        "experimental result",
        "numerical experiment",
        "empirical result",
        "empirical study",
        "downstream task",
        "baseline method",
        "various task",
        "different task",
        "real-world dataset",
        "benchmark dataset",
        "synthetic dataset",
        "public dataset",
        "learning model",
        "learning method",
        "learning algorithm",
        "training data",
        "model performance",
        "strong baseline",
        "github com",
        "https github",
        "http github",
        "anonymous github",
    }
)

# Words a phrase cannot end with: an adjective waiting for its noun.
_DANGLING = frozenset({"neural", "large", "deep", "multi", "non", "pre", "semi", "graph-based"})

# Words that may sit inside a phrase but are too vague to be a label on their own.
VAGUE_ALONE = frozenset(
    """
model learning data network training algorithm framework performance system function representation
information dataset analysis process space structure tool setting time cost level inference distribution loss
accuracy parameter feature input output sample quality error bound prediction objective domain architecture
signal knowledge scale state understanding design evaluation code problem method task approach generation
large deep neural small multiple single specific general robust complex efficient effective adaptive unified
standard long short low global local new high human real step type class result application
machine example set guarantee optimal
""".split()
)

# One pass finds words and the punctuation that ends a phrase (a phrase never spans a comma
# or a sentence end); group 1 is a word, anything else a break.
_SCAN = re.compile(
    r"([A-Za-z][A-Za-z0-9]*(?:[-'][A-Za-z0-9]+)*|[0-9]+[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)|[0-9]+|[.,;:!?()\[\]{}\"/|=+*<>$%&#@^~`\\]|\s[-\u2013\u2014]\s"
)
_URLISH = re.compile(r"https?://\S+|www\.\S+|\S+@\S+")


_PLURAL_EXCEPTIONS = frozenset(
    {
        "series",
        "species",
        "physics",
        "dynamics",
        "robotics",
        "statistics",
        "mathematics",
        "economics",
        "graphics",
        "analytics",
        "semantics",
        "genomics",
        "kinetics",
    }
)


def _singular(w: str) -> str:
    """policies -> policy, processes -> process, approaches -> approach, models -> model."""
    if len(w) <= 3 or not w.endswith("s") or w in _PLURAL_EXCEPTIONS:
        return w
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "ches", "shes", "zzes")):
        return w[:-2]
    if w.endswith(("ss", "us", "is", "ias", "'s")):
        return w
    return w[:-1]


@lru_cache(maxsize=200_000)
def word_key(w: str) -> str:
    """The matching key of one word: lower case, plural -s removed."""
    return _singular(w.lower())


# -ly words that are nouns, not adverbs
_LY_NOUNS = frozenset(
    {
        "anomaly",
        "family",
        "assembly",
        "supply",
        "monopoly",
        "butterfly",
        "italy",
        "reply",
        "homophily",
        "heterophily",
        "poly",
    }
)


@lru_cache(maxsize=200_000)
def _is_break(tok: str) -> bool:
    low = tok.lower()
    if low in STOP_WORDS or low in GENERIC_WORDS or len(low) < 2 or low.isdigit():
        return True
    # adverbs (automatically, significantly...) never belong to a topic phrase
    return len(low) >= 6 and low.endswith("ly") and low not in _LY_NOUNS and not low.endswith("phily")


def runs(text: str) -> list[list[str]]:
    """Maximal runs of topic words (original case), split at punctuation and stop words."""
    if "://" in text or "www." in text or "@" in text:
        text = _URLISH.sub(" . ", text)
    out: list[list[str]] = []
    run: list[str] = []
    for m in _SCAN.finditer(text):
        tok = m.group(1)
        if tok is not None and tok.endswith("'s"):
            tok = tok[:-2]
        if tok is None or _is_break(tok):
            if run:
                out.append(run)
                run = []
        else:
            run.append(tok)
    if run:
        out.append(run)
    return out


def phrase_key(words: Sequence[str]) -> str:
    return " ".join(word_key(w) for w in words)


def is_label_worthy(key: str) -> bool:
    """A key phrase that can stand in a label (not a stop phrase, not one vague word)."""
    if key in STOP_PHRASES:
        return False
    words = key.split()
    if len(words) == 1 and len(key) < 3:
        return False
    if len(words) > 1 and (words[-1] in _DANGLING or key.endswith("large language")):
        return False  # "spiking neural", "large language": the noun is missing
    # "training data", "neural network": every word vague -> the phrase is vague too
    return not all(w in VAGUE_ALONE for w in words)


def candidate_keys(text: str, max_n: int = 3) -> Counter[str]:
    """Counts of the 1..max_n-word phrase keys in `text`."""
    c: Counter[str] = Counter()
    for run in runs(text):
        keys = [word_key(w) for w in run]
        for n in range(1, max_n + 1):
            for i in range(len(keys) - n + 1):
                c[" ".join(keys[i : i + n])] += 1
    return c


def surface_forms(texts: Iterable[str], keys: set[str], max_n: int = 3) -> dict[str, str]:
    """The most readable written form of each key: lower case unless it is mostly written
    with capitals inside the word (an acronym such as "LLMs" or "GFlowNets")."""
    seen: dict[str, Counter[str]] = {k: Counter() for k in keys}
    for text in texts:
        for run in runs(text):
            ks = [word_key(w) for w in run]
            for n in range(1, max_n + 1):
                for i in range(len(ks) - n + 1):
                    k = " ".join(ks[i : i + n])
                    if k in seen:
                        seen[k][" ".join(run[i : i + n])] += 1
    out: dict[str, str] = {}
    for k, forms in seen.items():
        if not forms:
            out[k] = k
            continue
        total = sum(forms.values())

        # words with an upper-case letter after the first (LLMs, GFlowNets, BERT) keep their case
        def marked(f: str) -> bool:
            # "LLMs", "GFlowNets", "ReLU" keep their case; "Out-of-Distribution" does not
            return any(any(ch.isupper() for ch in part[1:]) for w in f.split() for part in w.split("-"))

        acr = Counter({f: c for f, c in forms.items() if marked(f)})
        if acr and sum(acr.values()) * 2 >= total:
            out[k] = acr.most_common(1)[0][0]
        else:
            lowered: Counter[str] = Counter()
            for f, c in forms.items():
                lowered[" ".join(w if marked(w) else w.lower() for w in f.split())] += c
            out[k] = lowered.most_common(1)[0][0]
    return out


def _initials(key: str) -> str:
    return "".join(w[0] for w in key.replace("-", " ").split())


def _same_stem(a: str, b: str) -> bool:
    """robot/robotic, interpretable/interpretability, molecule/molecular."""
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n >= 5 and n >= 0.75 * min(len(a), len(b))


def overlaps(a: str, b: str) -> bool:
    """True when one key repeats a word of the other ("diffusion" vs "diffusion model"),
    shares its stem ("robot" vs "robotic") or abbreviates it ("llm" vs "large language model")."""
    wa, wb = a.split(), b.split()
    if any(_same_stem(x, y) for x in wa for y in wb):
        return True
    for short, long in ((a, b), (b, a)):
        if " " not in short and " " in long and len(short) >= 2 and short == _initials(long):
            return True
    return False


def pick_diverse(ranked: Sequence[tuple[str, float]], k: int, counts: Mapping[str, float] | None = None) -> list[str]:
    """The best k keys from a (key, score) list, skipping keys that share a word with a
    better one; a longer phrase replaces a shorter one it contains when it is nearly as
    frequent (so "diffusion" becomes "diffusion models")."""
    chosen: list[str] = []
    for key, _ in ranked:
        if not is_label_worthy(key):
            continue
        clash = [c for c in chosen if overlaps(c, key)]
        if not clash:
            if len(chosen) < k:
                chosen.append(key)
            continue
        if counts is None:
            continue
        # upgrade "diffusion" -> "diffusion model" (or "gradient" + "descent" -> "gradient
        # descent") when the longer phrase contains them and is at least half as frequent
        inside = all(f" {c} " in f" {key} " for c in clash)
        if inside and counts.get(key, 0) >= 0.5 * max(counts.get(c, 0) for c in clash):
            at = chosen.index(clash[0])
            chosen[at] = key
            chosen = [c for c in chosen if c not in clash[1:]]
    return chosen
