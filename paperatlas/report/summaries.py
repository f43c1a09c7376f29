"""A readable label and a one-sentence summary per theme, in English and Chinese, written by the
configured language model from the theme's most central papers and citing them.

The topic model's labels are its c-TF-IDF key phrases ("policy, reward, offline"): exact but not
prose. With an endpoint configured (docs/llm.md) each theme gets a label a reader would write and a
sentence grounded in the papers it was shown; the texts are cached in the library's `llm_texts`, keyed
by the papers shown and the prompt, so a second report sends nothing and a theme whose central papers
change is written afresh. Without an endpoint nothing is sent and the report keeps its key phrases and
extractive descriptions (and says so).
"""

from __future__ import annotations

from ..i18n import Note

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..llm import reply
from ..errors import PaperatlasError
from ..llm.capability import SPEND, is_chinese
from ..llm.prompts import LANG_NAMES
from ..store.vector_cache import text_hash

if TYPE_CHECKING:
    from ..core import LibraryCore
    from ..llm import Llm

TASK = "theme_summary"
VERSION = "theme-1"
MAX_TOKENS = 160
MODES = ("auto", "cached", "off")
PAPERS_SHOWN = 5
ABSTRACT_CHARS = 600

_CITE = re.compile(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_ANY_BRACKET = re.compile(r"\[[^\[\]\n]{0,200}\]")
_LABEL = re.compile(r"^\s*(?:label|标签|名称)\s*[:：]\s*(.+)$", re.IGNORECASE | re.MULTILINE)
_SUMMARY = re.compile(r"^\s*(?:summary|摘要|概述|总结)\s*[:：]\s*(.+)$", re.IGNORECASE | re.MULTILINE)


def messages(phrases: Sequence[str], papers: Sequence[tuple[str, str]], lang: str) -> list[dict[str, str]]:
    """The prompt: the theme's key phrases and its central papers, numbered for citation."""
    docs = "\n\n".join(
        f"[{n}] {title}\n{reply.strip_reference_marks(abstract)[:ABSTRACT_CHARS]}"
        for n, (title, abstract) in enumerate(papers, 1)
    )
    return [
        {"role": "system", "content": "You are a careful research assistant. Answer only from the text you are given."},
        {
            "role": "user",
            "content": f"These are the most central papers of one theme of a conference. Its key phrases: "
            f"{', '.join(phrases)}.\n\n{docs}\n\n"
            f"In {LANG_NAMES[lang]}, give the theme a short name (2 to 6 words) and one sentence (at most 35 "
            "words) saying what its papers work on; after the sentence put the numbers of the papers it rests "
            "on in brackets, like [1][3]. Reply in exactly two lines:\nLabel: ...\nSummary: ...",
        },
    ]


def parse(text: str, shown: Sequence[str]) -> dict[str, Any] | None:
    """(label, summary, cited ids) from the model's answer; citations of papers it was not shown are
    dropped. None when the answer has no usable text, or fails the checks on model output (a text
    stored before them included: the theme is then written afresh)."""
    if not reply.usable(text, MAX_TOKENS):
        return None
    text = text.strip()
    if not text:
        return None
    lm, sm = _LABEL.search(text), _SUMMARY.search(text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    label = (lm.group(1) if lm else lines[0]).strip()
    summary = sm.group(1) if sm else " ".join(lines[1:] if not lm else [ln for ln in lines if ln != lm.group(0)])
    cited: list[str] = []
    dropped = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal dropped
        for k in reply.citation_numbers(m.group(1)):
            if k is not None and 1 <= k <= len(shown):
                if shown[k - 1] not in cited:
                    cited.append(shown[k - 1])
            else:
                dropped += 1
        return ""

    label = _ANY_BRACKET.sub("", _CITE.sub("", label)).strip(" \"'“”*#")[:80]
    summary, named, dropped_named = reply.resolve_citations(_CITE.sub(sub, summary), shown)
    for pid in named:
        if pid not in cited:
            cited.append(pid)
    dropped += dropped_named
    summary = " ".join(summary.split()).strip()
    if not re.search(r"[^\W\d_]", label):  # punctuation or numbers only ("[", ":"): not a name
        return None
    return {"label": label, "text": summary, "cites": cited, "dropped_citations": dropped}


def _subject(shown: Sequence[str]) -> str:
    return "theme:" + hashlib.sha1("\n".join(shown).encode("utf-8")).hexdigest()[:16]


def summarise_themes(
    lib: LibraryCore, llm: Llm, themes: list[dict[str, Any]], mode: str = "cached", hints: list[str] | None = None
) -> list[str]:
    """Add `summary` ({lang: {label, text, cites, model}}) to each theme of a report, in place.

    mode: "auto" asks the configured endpoint for what is not cached (nothing without one),
    "cached" only reads stored texts (never sends anything), "off" does nothing.
    Returns notes for the reader: no endpoint, or the endpoint that failed (the report stays complete);
    what the person making the report can do about them goes to `hints`.
    """
    if mode not in MODES:
        raise PaperatlasError(f"unknown summaries mode {mode!r}", f"use one of: {', '.join(MODES)}")
    if mode == "off" or not themes:
        return []
    store = lib.store
    cfg = llm.config
    generate = mode == "auto" and cfg is not None
    notes: list[str] = []
    missing = unusable = not_chinese = 0
    for t in themes:
        shown = list(t.get("central") or t["ids"])[:PAPERS_SHOWN]
        papers = lib.get_many(shown)
        shown = [p.id for p in papers]
        if not shown:
            continue
        subject = _subject(shown)
        for lang in LANG_NAMES:
            msgs = messages(t.get("phrases") or t["label"].split(", "), [(p.title, p.abstract) for p in papers], lang)
            h = text_hash(msgs[-1]["content"])
            if cfg is not None and cfg.model:
                row = store.llm.get_generated(subject, TASK, lang, cfg.model, VERSION, h)
            else:
                row = store.llm.latest_generated(subject, TASK, lang, VERSION, h)
            if row is not None and not reply.usable(row.get("text"), MAX_TOKENS):
                row = None  # kept before today's checks on model output: as if never written
            if row is None and generate:
                try:
                    client = llm.client()
                    permit = SPEND.get()
                    if permit is not None:  # a visitor's page view may not spend the owner's model
                        permit(TASK)
                    answer = client.chat(msgs, MAX_TOKENS)
                except PaperatlasError as e:
                    notes.append(
                        Note(
                            "the language model failed ({error}): the themes keep their key-phrase labels "
                            "and extractive descriptions",
                            error=e.message,
                        )
                    )
                    generate = False
                else:
                    # stored even when it does not parse: the same model on the same prompt would be
                    # asked again at every report for an answer it already gave (the client's checks
                    # on model output have passed, so what is stored is bounded and clean)
                    model = client.model()  # the cache's key; shown by its name below
                    if lib.read_only:
                        row = {"text": answer.text, "model": model}
                    else:
                        row = store.llm.put_generated(subject, TASK, lang, model, VERSION, h, answer.text)
            got = parse(row["text"], shown) if row else None
            if got is None:
                if row:
                    unusable += 1
                else:
                    missing += 1
                continue
            if lang == "zh" and not is_chinese(f"{got['label']} {got['text']}"):
                # a Chinese summary written in English is not shown as Chinese (the English one stands)
                not_chinese += 1
                continue
            got["model"] = reply.model_name(row["model"])  # type: ignore[index]
            t.setdefault("summary", {})[lang] = got
    if unusable:
        notes.append(
            Note(
                "{n} theme texts the language model wrote have no usable label: those themes keep the "
                "topic model's key phrases",
                n=unusable,
            )
        )
    if not_chinese:
        notes.append(
            Note("{n} Chinese theme texts came back in English: those themes show no Chinese summary", n=not_chinese)
        )
    if cfg is None and missing:
        notes.append(
            Note(
                "no language-model endpoint is configured: the theme labels are the topic model's key phrases "
                "(c-TF-IDF) and the descriptions are sentences of the themes' central papers"
            )
        )
        if hints is not None:
            hints.append(Note("docs/llm.md configures a language model for written theme summaries"))
    elif missing and not notes and mode == "cached":
        notes.append(Note("{n} theme summaries are not written yet", n=missing))
        if hints is not None:
            hints.append(Note("`paperatlas report` with a language-model endpoint writes them"))
    return notes
