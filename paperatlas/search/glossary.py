"""The English words of a Chinese query: a small zh -> en glossary of machine-learning terms.

Papers are written in English, so the keyword index finds nothing for 用户模拟器 (its character
bigrams occur in no abstract), and the multilingual model's cross-lingual view blurs as a library
grows. The glossary (glossary.tsv beside this file: data a reader can scan and extend) turns the
Chinese terms it knows into English words that the keyword route can match: 用户模拟器 -> user
simulator. Longest match first, left to right, so 大语言模型 is one term rather than 大 + 语言模型;
characters no term covers are skipped (their bigrams still go to the keyword index as before).
Pure functions; the table is read once.
"""

from __future__ import annotations

import functools
from pathlib import Path

from .cjk import CJK_RUN

TABLE = Path(__file__).with_name("glossary.tsv")


@functools.cache
def glossary(path: Path = TABLE) -> dict[str, str]:
    """Chinese term -> its English words, from `path` (`zh<TAB>en` rows; `#` comments skipped)."""
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        zh, sep, en = line.partition("\t")
        if not sep or not zh.strip() or not en.strip():
            raise ValueError(f"{path}:{n}: expected `Chinese<TAB>English`, got {line!r}")
        out[zh.strip()] = en.strip()
    return out


def translate(text: str, table: dict[str, str] | None = None) -> tuple[str, float]:
    """(the English words of the Chinese terms in `text` that the glossary knows, in order, each
    once; the share of `text`'s CJK characters those terms cover). ("", 0.0) when it knows none.
    Latin-script words in `text` are not repeated: they search as typed."""
    table = glossary() if table is None else table
    longest = max(map(len, table), default=0)
    found: list[str] = []
    covered = total = 0
    for m in CJK_RUN.finditer(text or ""):
        run, i = m.group(0), 0
        total += len(run)
        while i < len(run):
            for size in range(min(longest, len(run) - i), 0, -1):
                en = table.get(run[i : i + size])
                if en is not None and (size > 1 or len(run) == 1):
                    found.append(en)
                    covered += size
                    i += size
                    break
            else:
                i += 1
    english = " ".join(dict.fromkeys(" ".join(found).split()))
    return english, (covered / total if total else 0.0)


def english_terms(text: str, table: dict[str, str] | None = None) -> str:
    """The English words of the Chinese terms in `text` that the glossary knows ("" when none)."""
    return translate(text, table)[0]


def latin_words(text: str) -> str:
    """What `text` holds outside its CJK runs (the acronyms and English terms typed in a Chinese query)."""
    return " ".join(CJK_RUN.sub(" ", text or "").split())


@functools.cache
def chinese_terms(path: Path = TABLE) -> dict[str, str]:
    """English phrase (lower case) -> its Chinese term: the reverse of the glossary, for showing English
    labels in Chinese. A row's English reads as the whole phrase, the phrase without its acronyms
    ("graph neural network" of "graph neural network GNN"), each acronym and each of two spellings
    ("over-smoothing oversmoothing"); the first row wins."""
    out: dict[str, str] = {}
    for zh, en in glossary(path).items():
        words = en.split()
        acronyms = [w for w in words if len(w) > 1 and w.isupper()]
        plain = " ".join(w for w in words if w not in acronyms)
        bare = [w.replace("-", "").lower() for w in words]
        spellings = [w for w, b in zip(words, bare) if bare.count(b) > 1]
        for phrase in (en, plain, *acronyms, *spellings):
            if phrase:
                out.setdefault(phrase.lower(), zh)
    return out


def _singular(phrase: str) -> str:
    """'diffusion models' -> 'diffusion model' (the glossary writes terms in the singular)."""
    head, _, last = phrase.rpartition(" ")
    if len(last) > 4 and last.endswith("ies"):
        last = last[:-3] + "y"
    elif len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is")):
        last = last[:-1]
    return f"{head} {last}".strip()


def chinese_phrase(phrase: str, table: dict[str, str] | None = None) -> str | None:
    """The glossary's Chinese for one English phrase (None when it knows none)."""
    table = chinese_terms() if table is None else table
    p = " ".join(phrase.lower().split())
    return table.get(p) or table.get(_singular(p))


def chinese_label(label: str, table: dict[str, str] | None = None) -> str:
    """A topic label ("diffusion models, image generation, denoising") with each phrase the glossary
    knows in Chinese (扩散模型、图像生成、去噪); phrases it does not know stay as written, so the label
    reads the same in both languages where the glossary is silent."""
    parts = [p.strip() for p in label.split(",")]
    if not any(parts):
        return label
    said = [chinese_phrase(p, table) or p for p in parts]
    if said == parts:
        return label
    return "、".join(dict.fromkeys(said))
