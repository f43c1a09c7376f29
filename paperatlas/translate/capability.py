"""A whole paper in another language, section by section, through the configured model.

Each section goes in chunks a small model can translate whole (`protect.chunks`), with its heading
and the part of the paper's glossary it uses; mathematics, citations, URLs and code travel as
placeholders and are put back after the reply (`protect.mask`). A chunk is stored only when the
checker finds nothing lost and the reply is in the language asked for; otherwise it is asked once
more, firmly, naming what was lost, and if that fails too the chunk is not stored and its section
shows the original with a note. So nothing is half-stored: a section is translated when every chunk
of it is, an edited section retranslates alone (each chunk is keyed by the hash of what was sent),
and a killed run resumes where it stopped (what was stored stays stored).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import PaperatlasError
from ..llm import prompts
from ..fulltext.capability import SectionText  # one section as the full text keeps it
from ..store.vector_cache import text_hash
from . import glossary as gloss
from . import protect

TASK = "translate_section"
PROMPT_VERSION = prompts.VERSIONS[TASK]
GLOSSARY_VERSION = "glossary-1"
GLOSSARY_TASK = "translate_glossary"
CHUNK_CHARS = 1800  # a 1.5B model translates ~1,800 characters whole; more and it starts to summarise
# tokens: a Chinese rendering of English prose is about as many tokens as its source, plus room
TOKENS_PER_CHAR = 0.45
# a 1.5B model on 2 CPU cores, before anything is measured: Qwen2.5-Coder-1.5B took 8-17 s for passages
# of 500-1,350 characters and 17 s for a paper's glossary (docs/translate.md); a full passage and its
# occasional second try round that up
DEFAULT_SECONDS_PER_CHUNK = 30.0
LANG_NAMES = {"zh": "Simplified Chinese (简体中文)", "en": "English"}


@dataclass
class TranslatedSection:
    index: int
    heading: str
    page: int
    source: str
    text: str  # the translation, "" when not (yet) translated
    heading_text: str = ""
    done: bool = False
    note: str = ""
    model: str = ""
    created_at: str = ""
    check: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "heading": self.heading,
            "heading_translated": self.heading_text,
            "page": self.page,
            "source": self.source,
            "text": self.text,
            "done": self.done,
            "note": self.note,
            "model": self.model,
            "created_at": self.created_at,
            "check": self.check,
        }


@dataclass
class Estimate:
    sections: int
    chunks: int
    todo: int  # chunks not stored yet
    chars: int
    tokens: int  # what the todo chunks will spend, sent and written
    seconds: float
    basis: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "sections": self.sections,
            "chunks": self.chunks,
            "todo": self.todo,
            "chars": self.chars,
            "tokens": self.tokens,
            "seconds": round(self.seconds, 1),
            "basis": self.basis,
        }


@dataclass
class FullTranslation:
    paper_id: str
    lang: str
    sections: list[TranslatedSection]
    glossary: dict[str, str]
    check: protect.Check
    spent_chunks: int = 0
    stopped: str = ""  # why a run stopped before the end (the spending cap), "" when it did not

    @property
    def complete(self) -> bool:
        return all(s.done for s in self.sections)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.paper_id,
            "lang": self.lang,
            "complete": self.complete,
            "sections": [s.to_dict() for s in self.sections],
            "glossary": self.glossary,
            "check": self.check.to_dict(),
            "spent_chunks": self.spent_chunks,
            "stopped": self.stopped,
        }

    def markdown(self) -> str:
        """The translated paper as Markdown a reader can keep (the original where a section is not
        translated, marked so)."""
        out = []
        for s in self.sections:
            head = s.heading_text or s.heading
            if head:
                out.append(f"## {head}" + (f" ({s.heading})" if s.heading_text and s.heading else ""))
            if s.page:
                out.append(f"<!-- p.{s.page} -->")
            if s.done:
                out.append(s.text)
            else:
                out.append(f"> {s.note or 'not translated yet'}\n\n{s.source}")
        return "\n\n".join(out).strip() + "\n"


def _prompt(chunk: str, heading: str, terms: dict[str, str], lang: str) -> list[dict[str, str]]:
    glossary = "\n".join(f"{t} => {r}" for t, r in terms.items())
    return [
        {
            "role": "system",
            "content": "You are a professional translator of machine-learning research papers.",
        },
        {
            "role": "user",
            "content": f"Translate this passage of a research paper into {LANG_NAMES[lang]}.\n"
            f"It is from the section: {heading or '(untitled)'}.\n"
            + (f"Use these renderings of the paper's terms:\n{glossary}\n" if glossary else "")
            + "Copy every placeholder such as {v1} exactly as written, in the right place. Keep numbers, "
            "acronyms, model and dataset names as they are. Reply with the translation only.\n\n" + chunk,
        },
    ]


def _firmer(lost: Sequence[str], lang: str) -> str:
    what = "; ".join(lost[:8])
    return (
        f"That translation lost: {what}. Translate the passage again into {LANG_NAMES[lang]}, copying every "
        "placeholder like {v1}, every number and every term exactly as given. Reply with the translation only."
    )


class Translator:
    """Whole-paper translation for one library: `lib.translator`.

    `sections_of(paper_id)` gives the paper's body as `SectionText`s (the full-text capability);
    `llm` is the library's language-model layer, whose client sends the requests and whose store
    part keeps each checked chunk like every generated text (model, prompt version, time)."""

    def __init__(self, lib: Any, llm: Any, fulltext: Any) -> None:
        """`fulltext`: the full-text capability (its `sections_of`), or that function itself."""
        self.lib = lib
        self.llm = llm
        self.sections_of: Callable[[str], list[SectionText]] = getattr(fulltext, "sections_of", fulltext)

    @property
    def store(self) -> Any:
        return self.lib.store

    # -- what a run will do ---------------------------------------------------------------------
    def _plan(self, paper_id: str) -> list[tuple[SectionText, list[str]]]:
        sections = self.sections_of(paper_id)
        if not sections:
            raise PaperatlasError(
                f"paper {paper_id} has no full text in this library, so there is nothing to translate",
                f"attach its PDF first: `paperatlas fulltext add {paper_id} FILE.pdf` "
                f"(or `paperatlas fulltext fetch {paper_id}`)",
            )
        return [(s, protect.chunks(s.paragraphs, CHUNK_CHARS)) for s in sections]

    def _subject(self, paper_id: str, section: int, chunk: int) -> str:
        return f"{paper_id}#s{section}.{chunk}"

    def _hash(self, chunk: str, heading: str, terms: dict[str, str]) -> str:
        return text_hash(json.dumps([chunk, heading, sorted(terms.items())], ensure_ascii=False))

    def _stored(self, subject: str, lang: str, h: str) -> dict[str, Any] | None:
        # the language-model layer's own cache read: by the configured model or any, past today's checks
        return self.llm._cached(subject, TASK, lang, h)

    def estimate(self, paper_ids: Sequence[str], lang: str = "zh") -> Estimate:
        """Sections, chunks, chunks still to translate, tokens and seconds, before anything is sent."""
        sections = chunks = todo = chars = 0
        for pid in paper_ids:
            pid = self.lib.get(pid).id
            plan = self._plan(pid)
            glossary = self.glossary(pid, lang, generate=False, sections=[s for s, _ in plan])
            for s, cs in plan:
                sections += 1
                for i, c in enumerate(cs):
                    chunks += 1
                    terms = gloss.used_in(glossary, c)
                    if self._stored(self._subject(pid, s.index, i), lang, self._hash(c, s.heading, terms)) is None:
                        todo += 1
                        chars += len(c)
        per, basis = self._seconds_per_chunk()
        tokens = int(chars * TOKENS_PER_CHAR * 2)
        return Estimate(sections, chunks, todo, chars, tokens, todo * per, basis)

    def _seconds_per_chunk(self) -> tuple[float, str]:
        try:
            timing = json.loads(self.store.get_meta("llm_timing") or "{}")
        except ValueError:
            timing = {}
        cfg = self.llm.config
        model = (cfg.model if cfg else "") or next(iter(timing), "")
        n, total = timing.get(model, {}).get(TASK, [0, 0.0])
        if n:
            return total / n, f"mean of {n} section requests to {model}"
        return DEFAULT_SECONDS_PER_CHUNK, "a 1.5B model on 2 CPU cores (nothing measured here yet)"

    # -- the glossary -----------------------------------------------------------------------------
    def glossary(
        self,
        paper_id: str,
        lang: str = "zh",
        generate: bool = True,
        sections: Sequence[SectionText] | None = None,
    ) -> dict[str, str]:
        """The paper's terms and their renderings (stored per paper and language).

        Grows, never changes: a term once rendered keeps its rendering, and only terms new to the
        paper (an edited section) are sent, so an edit does not retranslate the sections that did not
        change through a glossary that did. `sections`: the paper's, when the caller has read them."""
        if sections is None:
            sections = self.sections_of(paper_id)
        found = gloss.terms(["\n".join(s.paragraphs) for s in sections])
        subject = f"{paper_id}#glossary"
        rows = self.store.llm.generated_for([subject], GLOSSARY_TASK, lang).get(subject, [])
        known: dict[str, str] = {}
        for row in reversed(rows):  # oldest first, so a newer row adds to it
            if row.get("prompt_version") == GLOSSARY_VERSION:
                known.update(_glossary_json(row["text"]))
        missing = [t for t in found if t not in known]
        if missing and generate and not self.lib.read_only:
            client = self.llm.client()
            _permit()
            messages = [
                {"role": "system", "content": "You are a professional translator of machine-learning research."},
                {
                    "role": "user",
                    "content": f"Render each term of a research paper in {LANG_NAMES[lang]}, as the field writes it. "
                    "One per line, as `term => rendering`, nothing else. Keep acronyms and names as they are.\n\n"
                    + "\n".join(missing),
                },
            ]
            c = client.chat(messages, max_tokens=24 * len(missing) + 32, temperature=0.0)
            # a term the model left out is rendered as itself, so it is not asked for again and again
            fresh = {t: t for t in missing} | gloss.parse_glossary(c.text, missing)
            known.update(fresh)
            self.store.llm.put_generated(
                subject,
                GLOSSARY_TASK,
                lang,
                client.model(),
                GLOSSARY_VERSION,
                text_hash("\n".join(sorted(known))),
                json.dumps(known, ensure_ascii=False),
            )
        return {t: known[t] for t in found if t in known}

    # -- the run ----------------------------------------------------------------------------------
    def translate(
        self,
        paper_id: str,
        lang: str = "zh",
        generate: bool = True,
        max_chunks: int | None = None,
        progress: Callable[[int, int, str], None] | None = None,
    ) -> FullTranslation:
        """The paper's body in `lang`: stored chunks as they are, the rest from the model (when
        `generate`), at most `max_chunks` requests in this call (the spending cap; run again to go on).

        Raises:
            PaperatlasError: no full text; NoEndpoint when something is to be made and no model is set.
        """
        if lang not in LANG_NAMES or lang == "en":
            raise PaperatlasError(f"unsupported language {lang!r} for a whole paper", "use --lang zh")
        pid = self.lib.get(paper_id).id
        plan = self._plan(pid)
        glossary = self.glossary(pid, lang, generate=generate, sections=[s for s, _ in plan])
        total_chunks = sum(len(cs) for _, cs in plan)
        done_chunks = spent = 0
        stopped = ""
        overall = protect.Check()
        out: list[TranslatedSection] = []
        for s, cs in plan:
            source = "\n\n".join(p.strip() for p in s.paragraphs if p.strip())
            texts: list[str | None] = []
            notes: list[str] = []
            model, created = "", ""
            sec_check = protect.Check()
            for i, c in enumerate(cs):
                terms = gloss.used_in(glossary, c)
                h = self._hash(c, s.heading, terms)
                subject = self._subject(pid, s.index, i)
                row = self._stored(subject, lang, h)
                if row is None and generate and not stopped:
                    if max_chunks is not None and spent >= max_chunks:
                        stopped = f"stopped after {spent} requests (the cap of this run); run it again to go on"
                    else:
                        spent += 1
                        row, note = self._make(subject, c, s.heading, terms, lang, h)
                        if note:
                            notes.append(note)
                if row is not None:
                    texts.append(row["text"])
                    model, created = row["model"], max(created, row["created_at"])
                    sec_check.add(protect.check(c, row["text"], terms))
                else:
                    texts.append(None)
                done_chunks += 1
                if progress:
                    progress(done_chunks, total_chunks, s.heading)
            done = all(t is not None for t in texts) and bool(texts)
            heading_text = self._heading(pid, s, lang, glossary, generate and not stopped) if done else ""
            overall.add(sec_check)
            out.append(
                TranslatedSection(
                    s.index,
                    s.heading,
                    s.page,
                    source,
                    "\n\n".join(t for t in texts if t is not None) if done else "",
                    heading_text,
                    done,
                    "; ".join(notes) if notes else ("" if done else "not translated yet"),
                    model,
                    created,
                    sec_check.to_dict(),
                )
            )
        return FullTranslation(pid, lang, out, glossary, overall, spent, stopped)

    def _heading(self, pid: str, s: SectionText, lang: str, glossary: dict[str, str], generate: bool) -> str:
        """A section heading in `lang` (short: translated with the glossary, stored like a chunk)."""
        if not s.heading.strip():
            return ""
        terms = gloss.used_in(glossary, s.heading)
        h = self._hash(s.heading, "", terms)
        subject = self._subject(pid, s.index, -1)
        row = self._stored(subject, lang, h)
        if row is None and generate:
            row, _ = self._make(subject, s.heading, "(a section heading)", terms, lang, h)
        return str(row["text"]).strip().splitlines()[0][:200] if row and row["text"].strip() else ""

    def _make(
        self, subject: str, chunk: str, heading: str, terms: dict[str, str], lang: str, h: str
    ) -> tuple[dict[str, Any] | None, str]:
        """(stored row, note): one chunk from the model, checked; asked once more when something was
        lost; stored only when nothing was. The note says why a chunk was not stored."""
        from ..llm.capability import is_chinese  # the same judge of "is this Chinese" as every text

        client = self.llm.client()
        masked = protect.mask(chunk)
        messages = _prompt(masked.text, heading, terms, lang)
        max_tokens = int(len(chunk) * TOKENS_PER_CHAR * 1.6) + 64
        started = time.monotonic()
        text, lost = "", ["nothing"]
        for attempt in range(2):
            _permit()
            c = client.chat(messages, max_tokens=max_tokens, temperature=0.0 if attempt == 0 else 0.2)
            reply = c.text.strip()
            if len(reply) > 4 * len(chunk) + 200:  # a model that runs on is not translating
                lost = [f"a reply {len(reply)} characters long for {len(chunk)} sent"]
                reply = ""
            else:
                text, missing = protect.unmask(reply, masked)
                result = protect.check(chunk, text, terms)
                lost = [f"placeholder {{v{n}}}" for n in missing] + result.lost
                if lang == "zh" and not is_chinese(text):
                    lost.insert(0, NOT_CHINESE)
            if not lost:
                break
            messages = [
                *messages,
                {"role": "assistant", "content": reply[:4000]},
                {"role": "user", "content": _firmer(lost, lang)},
            ]
        seconds = time.monotonic() - started
        self.llm._record_time(client.model(), TASK, seconds)
        if lost or self.lib.read_only:
            return None, (_lost_note(lost) if lost else "")
        return self.store.llm.put_generated(subject, TASK, lang, client.model(), PROMPT_VERSION, h, text), ""


NOT_CHINESE = "the reply is not in Chinese"


def _lost_note(lost: Sequence[str]) -> str:
    """Why a passage was kept in the original: the reply was not Chinese, and/or what it lost."""
    spans = [x for x in lost if x != NOT_CHINESE][:4]
    why = ["the model's reply was not in Chinese"] if NOT_CHINESE in lost else []
    if spans:
        why.append(f"the model's translation lost {'; '.join(spans)}")
    return "kept in the original: " + ", and ".join(why)


def _permit() -> None:
    """Ask the surface's spend guard, when one is set, before a request goes to the model: a web page
    that translates spends the owner's model like POST /ask does (same site, a reader, the budget)."""
    from ..llm.capability import SPEND

    permit = SPEND.get()
    if permit is not None:
        permit(TASK)


def _glossary_json(text: str) -> dict[str, str]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
