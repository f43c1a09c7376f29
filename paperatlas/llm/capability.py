"""`lib.llm`: TL;DRs, FAQs, translations, answers and poster cheat-sheets, from whichever
OpenAI-compatible endpoint the reader configured, cached in the library; fully useful with none
(the extractive TL;DR needs no model, and nothing is ever sent unless an endpoint is set)."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, PaperatlasError
from ..models import Paper
from ..search.cjk import has_cjk, letter_counts
from ..store.vector_cache import text_hash
from . import prompts, reply
from .client import LlmClient, LlmConfig, LlmError, no_endpoint, redact
from .extractive import EXTRACTIVE_MODEL, clean, extractive_tldr
from .models import Answer, BatchStatus, CheatItem, Faq, Generated, Translation

if TYPE_CHECKING:
    from ..core import LibraryCore
    from ..readers import Readers
else:
    LibraryCore = Any

# seconds per paper when nothing was measured yet: Qwen2.5-1.5B Q4_K_M on 2 quiet CPU cores
# (a title in 1.3 s, a 290-token abstract in 24.7 s); replaced by what this library measured
DEFAULT_SECONDS = {"translate_title": 1.5, "translate_abstract": 25.0}
_PREFIX = re.compile(r"^\s*(?:tl;?dr|summary|translation|译文|翻译|answer)\s*[:：]\s*", re.IGNORECASE)
_TIMING_KEY = "llm_timing"
# below this share of CJK among the letters a "Chinese" text is not Chinese: a real translation keeps
# acronyms and model names in Latin letters ("BERT：深度双向Transformer的预训练" is 0.35), but an English
# sentence with a Chinese gloss in brackets stays well under it
MIN_CJK_SHARE = 0.2
log = logging.getLogger(__name__)
# set by a surface that serves visitors: called with the task before the endpoint is asked, it raises
# (a PaperatlasError) to refuse; asking a model spends the owner's model and stores a text, so the web
# lets only a signed-in reader of its own pages do it, within a budget (docs/security.md)
SPEND: ContextVar[Callable[[str], None] | None] = ContextVar("paperatlas_llm_spend", default=None)
# a model this small (parameters, from its name) gets fewer, shorter passages: its context is short
# and it loses the question in a long prompt
SMALL_MODEL_PARAMS = 4e9
ASK_PASSAGES = {"small": (3, 500), "large": (10, 900)}  # (at most this many papers, characters each)
# a text with fewer letters is not judged: a title that is a name ("GPT-4", "Mixtral") stays itself
MIN_LETTERS_TO_JUDGE = 8
NOT_CHINESE_NOTE = (
    "the model answered in English twice when asked for Chinese: shown as English, not stored as the "
    "Chinese text (a larger model writes Chinese)"
)


def is_chinese(text: str) -> bool:
    """True when `text` reads as Chinese (enough of its letters are CJK characters), or is too short
    to tell (a name, an acronym, a formula)."""
    cjk, latin = letter_counts(text)
    return cjk + latin < MIN_LETTERS_TO_JUDGE or cjk / (cjk + latin) >= MIN_CJK_SHARE


def _tidy(text: str) -> str:
    """A model's answer without a label it was not asked for, wrapping quotes or trailing blank lines."""
    text = _PREFIX.sub("", text.strip())
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1]
    return text.strip()


# a small model often labels a rendered query ('Search query in English: "home loan rates"')
_QUERY_LABEL = re.compile(
    r"^\s*(?:the\s+)?(?:english\s+)?(?:search\s+)?(?:query|translation|english)(?:\s+in\s+english)?\s*[:：]\s*",
    re.IGNORECASE,
)


def _query_text(text: str) -> str:
    """A rendered query as one line, without a label or the quotes around it."""
    line = _one_line(_tidy(text))
    line = _QUERY_LABEL.sub("", line)
    if len(line) > 1 and line[0] in "\"'“" and line[-1] in "\"'”":
        line = line[1:-1]
    return line.strip()


def _first_paragraph(text: str) -> str:
    return next((p.strip() for p in text.split("\n\n") if p.strip()), "")


def _one_line(text: str) -> str:
    return " ".join(_first_paragraph(text).split())


class Llm:
    """The language-model layer of one library.

    Example:
        >>> lib.llm.tldr("2106.09685").text  # extractive without an endpoint  # doctest: +SKIP
        >>> lib.llm.configure("http://127.0.0.1:8080/v1")  # doctest: +SKIP
        >>> lib.llm.translate("2106.09685", "zh").title  # doctest: +SKIP
    """

    def __init__(self, lib: LibraryCore, readers: Readers) -> None:
        self.lib = lib
        self._readers = readers
        self._url: str | None = None
        self._model: str | None = None
        self._client: LlmClient | None = None
        self._client_key: Any = None
        self._lock = threading.Lock()
        self._batch: BatchStatus | None = None
        self._batch_lock = threading.Lock()
        self._stop = threading.Event()

    # -- configuration ---------------------------------------------------------------------
    def configure(self, url: str | None = None, model: str | None = None) -> None:
        """Use this endpoint and model (None: $PAPERATLAS_LLM_URL / $PAPERATLAS_LLM_MODEL)."""
        with self._lock:
            self._url, self._model = url, model
            self._client = None

    @property
    def config(self) -> LlmConfig | None:
        return LlmConfig.from_env(self._url, self._model)

    @property
    def configured(self) -> bool:
        return self.config is not None

    def client(self) -> LlmClient:
        """The endpoint's client; NoEndpoint when none is configured (nothing is sent then)."""
        cfg = self.config
        if cfg is None:
            raise no_endpoint()
        with self._lock:
            if self._client is None or self._client_key != cfg:
                self._client, self._client_key = LlmClient(cfg), cfg
            return self._client

    @property
    def store(self) -> Any:
        return self.lib.store

    def _paper(self, paper_id: str) -> Paper:
        return self.lib.get(paper_id)

    # -- the cache -------------------------------------------------------------------------
    def _cached(self, subject: str, task: str, lang: str, h: str) -> dict[str, Any] | None:
        """A current text for this request: by the configured model, or by any model when none is named."""
        cfg = self.config
        version = prompts.VERSIONS[task]
        if cfg is not None and cfg.model:
            row = self.store.llm.get_generated(subject, task, lang, cfg.model, version, h)
        else:
            row = self.store.llm.latest_generated(subject, task, lang, version, h)
        if row is not None and not reply.usable(row.get("text"), prompts.MAX_TOKENS[task]):
            # kept before today's checks (too long, control characters): as if never written, so it is
            # written afresh, and never shown
            log.warning("a stored %s text of %s fails the checks on model output: treated as absent", task, subject)
            return None
        if row is not None:
            row = {**row, "model": reply.model_name(row.get("model") or "")}
        return row  # type: ignore[no-any-return]

    def _generate(
        self,
        subject: str,
        task: str,
        lang: str,
        h: str,
        messages: list[dict[str, str]],
        post: Callable[[str], str] = _tidy,
        on_text: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """(row, cached): the stored text, or a new one from the endpoint, stored before it is returned."""
        row = self._cached(subject, task, lang, h)
        if row is not None:
            return row, True
        client = self.client()
        permit = SPEND.get()
        if permit is not None:
            permit(task)
        temperature = prompts.TEMPERATURE.get(task, 0.2)
        c = client.chat(messages, prompts.MAX_TOKENS[task], temperature=temperature, on_text=on_text)
        text = post(c.text)
        seconds = c.seconds
        wrong_lang = False
        if lang == "zh" and text and not is_chinese(text):
            # small models often answer a Chinese request in English: ask once more, firmly, showing the
            # reply that was not Chinese
            firmer = [
                *messages,
                {"role": "assistant", "content": c.text},
                {"role": "user", "content": prompts.FIRMER_ZH},
            ]
            c = client.chat(firmer, prompts.MAX_TOKENS[task], temperature=temperature, on_text=on_text)
            seconds += c.seconds
            text = post(c.text) or text
            wrong_lang = not is_chinese(text)
        if not text:
            raise LlmError(
                f"language-model endpoint {client.endpoint}: the model {reply.model_name(client.model())!r} wrote "
                f"nothing for {task} of {subject}",
                "try again, or configure a larger model",
                client.endpoint,
            )
        model = client.model()  # the name requests use (a server may answer with a file path instead)
        version = prompts.VERSIONS[task]
        self._record_time(model, task, seconds)
        if not reply.usable(text, prompts.MAX_TOKENS[task]):  # the client's checks hold for what post() made
            raise LlmError(
                f"language-model endpoint {client.endpoint}: the reply for {task} of {subject} fails the checks "
                "on model output (not kept)",
                "try again, or configure another model",
                client.endpoint,
            )
        if self.lib.read_only or wrong_lang:
            # an English text is never stored as the Chinese one: it is returned marked English, and the
            # next request asks again (perhaps of a better model)
            return {
                "subject": subject,
                "task": task,
                "lang": "en" if wrong_lang else lang,
                "note": NOT_CHINESE_NOTE if wrong_lang else "",
                "model": reply.model_name(model),
                "prompt_version": version,
                "text_hash": h,
                "text": text,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }, False
        row = self.store.llm.put_generated(subject, task, lang, model, version, h, text)
        return {**row, "model": reply.model_name(row.get("model") or model)}, False

    def _record_time(self, model: str, task: str, seconds: float) -> None:
        """Keep the running time per request of each task and model: estimates for batches come from it."""
        if self.lib.read_only or seconds <= 0:
            return
        try:
            timing = json.loads(self.store.get_meta(_TIMING_KEY) or "{}")
            n, total = timing.setdefault(model, {}).get(task, [0, 0.0])
            timing[model][task] = [n + 1, round(total + seconds, 3)]
            self.store.set_meta(_TIMING_KEY, json.dumps(timing))
        except (ValueError, TypeError, PaperatlasError):
            pass

    @staticmethod
    def _lang(lang: str) -> str:
        lang = (lang or "en").lower().replace("_", "-").split("-")[0]
        if lang not in prompts.LANGS:
            raise PaperatlasError(f"unsupported language {lang!r}", f"use one of: {', '.join(prompts.LANGS)}")
        return lang

    # -- TL;DR -----------------------------------------------------------------------------
    def tldr(
        self, paper_id: str, lang: str = "en", mode: str = "auto", on_text: Callable[[str], None] | None = None
    ) -> Generated:
        """A one-sentence TL;DR of a paper.

        Args:
            paper_id: the paper.
            lang: "en" or "zh".
            mode: "auto" (a stored or generated one when an endpoint is configured, else extractive),
                "generate" (from the endpoint; NoEndpoint without one), "extractive" (never asks a model).
            on_text: streamed pieces of a new generation, as they come.

        Returns:
            Generated; `generated` is False for the extractive TL;DR (which is always English).
        """
        lang = self._lang(lang)
        if mode not in ("auto", "generate", "extractive"):
            raise PaperatlasError(f"unknown TL;DR mode {mode!r}", "use auto, generate or extractive")
        p = self._paper(paper_id)
        if mode != "extractive" and p.abstract.strip():
            passages = self._tldr_passages(p)
            # with a body the text is keyed by the passages too; one made from the abstract alone (before
            # the PDF was read) is still shown until a new one is made
            h = self._tldr_hashes(p, passages)[0]
            row = self._cached(p.id, "tldr", lang, h)
            if row is None and (mode == "generate" or self.configured):
                row, cached = self._generate(
                    p.id,
                    "tldr",
                    lang,
                    h,
                    prompts.tldr(p.title, clean(p.abstract), lang, passages),
                    post=lambda t: _one_line(_tidy(t)),
                    on_text=on_text,
                )
            else:
                if row is None and passages:
                    row = self._cached(p.id, "tldr", lang, text_hash(p.text))
                cached = True
            if row is not None:
                return Generated(
                    p.id,
                    "tldr",
                    row.get("lang") or lang,
                    row["text"],
                    row["model"],
                    True,
                    row["prompt_version"],
                    row["created_at"],
                    cached,
                    note=row.get("note") or "",
                )
        text = extractive_tldr(p.abstract) or p.title
        note = ""
        if lang != "en":
            note = (
                "no language model is configured: this is the English sentence of the abstract (--llm-url "
                "gives a translated TL;DR)"
            )
        return Generated(p.id, "tldr", "en", text, EXTRACTIVE_MODEL, False, EXTRACTIVE_MODEL, note=note)

    def stored_tldrs(self, paper_ids: Sequence[str], lang: str = "en") -> dict[str, Generated]:
        """The current generated TL;DRs of these papers that the library already holds (sends nothing):
        of a paper with a body, the one made from it, else the one made from the abstract before."""
        return self._stored("tldr", paper_ids, self._lang(lang), lambda p: self._tldr_hashes(p, self._tldr_passages(p)))

    def _tldr_hashes(self, p: Paper, passages: Sequence[str]) -> list[str]:
        """What a TL;DR of `p` is keyed by: with a body its passages too; the abstract's own key after."""
        plain = text_hash(p.text)
        return [text_hash("\x00".join([p.text, *passages])), plain] if passages else [plain]

    def _tldr_passages(self, p: Paper) -> list[str]:
        """The passages of the paper's body a TL;DR reads beside the abstract (none without a body):
        where it says what it contributes and what it found. A small model gets two short ones, a
        larger one three longer ones. Ranked by words alone, so a stored TL;DR stays current when the
        paper's passages are embedded later."""
        _, chars = passage_budget(self._model_for_budget(), 1)
        return self._body_passages(p, prompts.TLDR_BODY_QUERIES[: 2 if chars < 900 else 3], chars)

    def _body_passages(self, p: Paper, queries: Sequence[str], chars: int) -> list[str]:
        """The best passage of the paper's body for each query (by words alone: a stored text stays
        current when the passages are embedded later), each once, labelled with its page and section
        and trimmed to `chars`."""
        found: dict[int, Any] = {}
        for q in queries:
            for f in self.lib.contributions("passages"):
                for x in f(q, [p.id], 1, 1, mode="keyword"):
                    found.setdefault(x.n, x)
        return [
            f"p.{x.page}"
            + (f", {x.section}" if x.section else "")
            + ": "
            + _trim(reply.strip_reference_marks(x.text), chars)
            for x in found.values()
        ]

    def _stored(
        self, task: str, paper_ids: Sequence[str], lang: str, hash_of: Callable[[Paper], str | Sequence[str]]
    ) -> dict[str, Generated]:
        papers = self.store.get_papers(list(paper_ids))
        rows = self.store.llm.generated_for(list(papers), task, lang)
        out: dict[str, Generated] = {}
        version = prompts.VERSIONS[task]
        for pid, p in papers.items():
            wanted = hash_of(p)
            hashes = [wanted] if isinstance(wanted, str) else list(wanted)
            current = [r for r in rows.get(pid, []) if r["prompt_version"] == version]
            row = next((r for h in hashes for r in current if r["text_hash"] == h), None)
            if row:
                if not reply.usable(row["text"], prompts.MAX_TOKENS[task]):
                    continue  # kept before today's checks: as if never written
                out[pid] = Generated(
                    pid,
                    task,
                    lang,
                    row["text"],
                    reply.model_name(row["model"]),
                    True,
                    row["prompt_version"],
                    row["created_at"],
                    True,
                )
        return out

    # -- FAQ -------------------------------------------------------------------------------
    def faq(self, paper_id: str, lang: str = "en", generate: bool = True) -> Faq | None:
        """Problem, method, result and limits, from the abstract (None: not stored and `generate` False)."""
        lang = self._lang(lang)
        p = self._paper(paper_id)
        passages = self._faq_passages(p)
        # with a body the text is keyed by the passages too; one made from the abstract alone (before the
        # PDF was read) is still shown until a new one is made
        h = text_hash("\x00".join([p.text, *passages])) if passages else text_hash(p.text)
        if not generate or not self.configured:
            row = self._cached(p.id, "faq", lang, h)
            if row is None and passages:
                row = self._cached(p.id, "faq", lang, text_hash(p.text))
            if row is None and not generate:
                return None
            cached = True
            if row is None:
                raise no_endpoint()
        else:
            messages = prompts.faq(p.title, clean(p.abstract), lang, passages)
            row, cached = self._generate(p.id, "faq", lang, h, messages)
        return Faq(
            p.id,
            row.get("lang") or lang,
            parse_faq(row["text"]),
            row["text"],
            row["model"],
            row["prompt_version"],
            row["created_at"],
            cached,
            note=row.get("note") or "",
        )

    def _faq_passages(self, p: Paper) -> list[str]:
        """The best passage of the paper's body for each FAQ question (none without a body), trimmed
        to the model's budget: a small model's context holds the abstract and four short passages."""
        _, chars = passage_budget(self._model_for_budget(), 1)
        return self._body_passages(p, prompts.FAQ_BODY_QUERIES, chars)

    # -- translation -----------------------------------------------------------------------
    def translate(
        self,
        paper_id: str,
        lang: str = "zh",
        title_only: bool = False,
        on_text: Callable[[str], None] | None = None,
        generate: bool = True,
    ) -> Translation:
        """The paper's title (and abstract) in `lang`, from the store or the endpoint.

        Raises:
            NoEndpoint: nothing is stored and no endpoint is configured (nothing was sent).
            NotFound: `generate` is False and nothing is stored.
        """
        lang = self._lang(lang)
        p = self._paper(paper_id)

        def one(task: str, text: str, kind: str) -> tuple[dict[str, Any], bool]:
            h = text_hash(text)
            if not generate:
                row = self._cached(p.id, task, lang, h)
                if row is None:
                    raise NotFound(
                        f"no stored {lang} translation of {p.id}",
                        f"`paperatlas translate {p.id} --lang {lang}` makes one",
                    )
                return row, True
            return self._generate(p.id, task, lang, h, prompts.translate(clean(text), kind, lang), on_text=on_text)

        title, c1 = one("translate_title", p.title, "title")
        abstract: dict[str, Any] = {"text": "", "created_at": ""}
        c2 = True
        if not title_only and p.abstract.strip():
            abstract, c2 = one("translate_abstract", p.abstract, "abstract")
        notes = [r.get("note") for r in (title, abstract) if r.get("note")]
        return Translation(
            p.id,
            "en" if notes else lang,
            _one_line(title["text"]),
            abstract["text"],
            title["model"],
            p.title,
            p.abstract,
            prompts.VERSIONS["translate_abstract" if abstract["text"] else "translate_title"],
            max(title["created_at"], abstract["created_at"]),
            c1 and c2,
            note=notes[0] if notes else "",
        )

    def stored_titles(self, paper_ids: Sequence[str], lang: str = "zh") -> dict[str, Generated]:
        """Current translated titles the library holds for these papers (for list pages; sends nothing)."""
        return self._stored("translate_title", paper_ids, self._lang(lang), lambda p: text_hash(p.title))

    def stored_abstract(self, paper_id: str, lang: str = "zh") -> Generated | None:
        return self._stored("translate_abstract", [paper_id], self._lang(lang), lambda p: text_hash(p.abstract)).get(
            paper_id
        )

    def translated_texts(self, lang: str = "zh") -> dict[str, str]:
        """paper id -> its current translated title and abstract joined, for the keyword index."""
        out: dict[str, str] = {}
        for task in ("translate_title", "translate_abstract"):
            for batch in self.store.llm.iter_generated(task, lang):
                for r in batch:
                    if reply.usable(r["text"], prompts.MAX_TOKENS[task]):
                        out[r["subject"]] = (out.get(r["subject"], "") + " " + r["text"]).strip()
        return out

    # -- batch translation -------------------------------------------------------------------
    def seconds_per_paper(self, title_only: bool = False) -> tuple[float, str]:
        """(estimated seconds to translate one paper, where the figure comes from)."""
        tasks = ["translate_title"] + ([] if title_only else ["translate_abstract"])
        try:
            timing = json.loads(self.store.get_meta(_TIMING_KEY) or "{}")
        except ValueError:
            timing = {}
        cfg = self.config
        model = (cfg.model if cfg else "") or next(iter(timing), "")
        measured = timing.get(model, {})
        total, basis = 0.0, []
        for t in tasks:
            n, s = measured.get(t, [0, 0.0])
            if n:
                total += s / n
                basis.append(f"{t}: mean of {n} requests to {model}")
            else:
                total += DEFAULT_SECONDS[t]
                basis.append(f"{t}: {DEFAULT_SECONDS[t]} s, a 1.5B model on 2 CPU cores (nothing measured yet)")
        return total, "; ".join(basis)

    def estimate(self, paper_ids: Sequence[str], lang: str = "zh", title_only: bool = False) -> dict[str, Any]:
        """How long translating these papers takes, before anything is sent: papers still to do,
        seconds per 100 papers and in all (papers already translated cost nothing)."""
        lang = self._lang(lang)
        todo = self._todo(paper_ids, lang, title_only)
        per, basis = self.seconds_per_paper(title_only)
        return {
            "papers": len(list(paper_ids)),
            "todo": len(todo),
            "already": len(list(paper_ids)) - len(todo),
            "seconds_per_100": round(per * 100),
            "eta_s": round(per * len(todo)),
            "basis": basis,
        }

    def _todo(self, paper_ids: Sequence[str], lang: str, title_only: bool) -> list[str]:
        ids = list(dict.fromkeys(paper_ids))
        have_t = self.stored_titles(ids, lang)
        if title_only:
            return [i for i in ids if i not in have_t]
        have_a = self._stored("translate_abstract", ids, lang, lambda p: text_hash(p.abstract))
        papers = self.store.get_papers(ids)
        return [i for i in ids if i in papers and (i not in have_t or (papers[i].abstract.strip() and i not in have_a))]

    def translate_batch(
        self,
        paper_ids: Sequence[str],
        lang: str = "zh",
        title_only: bool = False,
        progress: Callable[[BatchStatus], None] | None = None,
    ) -> BatchStatus:
        """Translate every paper not yet translated; each is stored as soon as it is done, so a run that
        is killed resumes where it stopped. Stops at the first unreachable-endpoint error (the others
        are counted as failed and listed in `error`). A paper the model translated into another
        language than `lang` is counted in `not_kept` and stays to do."""
        lang = self._lang(lang)
        self.client()  # NoEndpoint before anything starts
        ids = list(dict.fromkeys(paper_ids))
        todo = self._todo(ids, lang, title_only)
        st = BatchStatus(lang, len(ids), done=len(ids) - len(todo), cached=len(ids) - len(todo), running=True)
        per, _ = self.seconds_per_paper(title_only)
        st.seconds_per_paper, st.eta_s = round(per, 2), round(per * len(todo))
        with self._batch_lock:
            self._batch = st
        self._stop.clear()
        started = time.monotonic()
        errors: list[str] = []
        lock = threading.Lock()

        def work(pid: str) -> None:
            if self._stop.is_set():
                return
            try:
                t = self.translate(pid, lang, title_only)
            except LlmError as e:
                with lock:
                    st.failed += 1
                    errors.append(f"{pid}: {e.message}")
                if "unreachable" in e.message or "connect" in e.message:
                    self._stop.set()
                return
            with lock:
                if t.note:  # written in another language: shown, never stored, so the paper is still to do
                    st.not_kept += 1
                    st.not_kept_ids.append(pid)
                else:
                    st.done += 1
                made = st.done + st.not_kept - st.cached
                rate = (time.monotonic() - started) / made
                st.seconds_per_paper = round(rate, 2)
                st.eta_s = round(rate * (st.total - st.done - st.failed - st.not_kept))
            if progress:
                progress(st)

        cfg = self.config
        try:
            with ThreadPoolExecutor(max_workers=cfg.concurrency if cfg else 1) as pool:
                list(pool.map(work, todo))
        finally:
            st.running = False
            st.error = "; ".join(errors[:5]) + (f" (and {len(errors) - 5} more)" if len(errors) > 5 else "")
            if progress:
                progress(st)
        return st

    def translate_in_background(
        self, paper_ids: Sequence[str], lang: str = "zh", title_only: bool = False
    ) -> threading.Thread | None:
        """Start translate_batch in a thread unless one runs (None then); `batch_status()` follows it."""
        with self._batch_lock:
            if self._batch is not None and self._batch.running:
                return None
            self._batch = BatchStatus(self._lang(lang), len(paper_ids), running=True)

        def run() -> None:
            try:
                self.translate_batch(paper_ids, lang, title_only)
            except PaperatlasError as e:
                with self._batch_lock:
                    if self._batch is not None:
                        self._batch.running, self._batch.error = False, e.message

        t = threading.Thread(target=run, name="llm-translate", daemon=True)
        t.start()
        return t

    def batch_status(self) -> BatchStatus | None:
        return self._batch

    def stop_batch(self) -> None:
        self._stop.set()

    # -- ask the conference ----------------------------------------------------------------
    def ask(
        self,
        question: str,
        limit: int = 5,
        on_text: Callable[[str], None] | None = None,
        venue: str | None = None,
        year: int | None = None,
        paper: str | None = None,
    ) -> Answer:
        """Answer `question` from what the hybrid search retrieves (see _answer); from one paper only
        with `paper`."""
        answer = self._answer(question, limit, on_text, venue, year, generate=True, paper=paper)
        assert answer is not None
        return answer

    def stored_answer(
        self,
        question: str,
        limit: int = 5,
        venue: str | None = None,
        year: int | None = None,
        paper: str | None = None,
    ) -> Answer | None:
        """The answer the library holds for `question` over today's retrieved papers (None: none;
        nothing is sent)."""
        return self._answer(question, limit, None, venue, year, generate=False, paper=paper)

    def _answer(
        self,
        question: str,
        limit: int,
        on_text: Callable[[str], None] | None,
        venue: str | None,
        year: int | None,
        generate: bool,
        paper: str | None = None,
    ) -> Answer | None:
        """Answer `question` from the abstracts the hybrid search retrieves, citing paper ids; from a
        paper's body instead, where it has one (`passages`), citing paper and page.

        The answer is in the question's language; it says "not in these papers" when they do not
        answer. Every cited id is among the retrieved (a citation of anything else is dropped and
        counted in `dropped`). A small model is given fewer, shorter sources (`passage_budget`).
        With `generate` False only a stored answer is returned (None when there is none): nothing
        is sent."""
        question = " ".join(question.split())
        if not question:
            raise PaperatlasError("empty question", 'ask something, e.g. paperatlas ask "which papers use LoRA?"')
        lang = "zh" if has_cjk(question) else "en"
        limit = max(1, min(int(limit), 10))
        scope = f"\x00{paper}" if paper else ""
        subject = "ask:" + hashlib.sha1(f"{lang}\x00{question.lower()}{scope}".encode()).hexdigest()[:20]
        known = self._model_for_budget()
        # the budget depends on the model; before its name is known (it is asked of the endpoint only
        # when something is to be generated) a stored answer is looked for under each budget
        budgets = [passage_budget(known, limit)] if known else sorted({passage_budget(m, limit) for m in ("1b", "")})
        found = max(n for n, _ in budgets)
        if paper and generate:  # one paper asked: its passages are found by meaning too
            for asked in self.lib.contributions("asked_about"):
                asked(self._paper(paper).id)
        # the words passages of English bodies are found and cut by: a Chinese question's English
        words = question if lang == "en" else (self._english_words(question, ask_model=generate) or question)
        pool = [self._paper(paper)] if paper else self._retrieve(question, words, found, venue, year)
        if not pool:
            return Answer(question, lang, prompts.NOT_FOUND[lang], [], [], "", not_found=True, generated=False)

        def key(sources: list[tuple[int, str, str]], labels: list[str]) -> str:
            return text_hash("\x00".join(f"{lab}\x00{text_hash(src[2])}" for lab, src in zip(labels, sources)))

        row, cached = None, True
        for n, chars in budgets:
            sources, labels, evidence = self._evidence(words, pool[:n], bool(paper), chars)
            row = self._cached(subject, "ask", lang, key(sources, labels))
            if row is not None:
                papers = pool[:n]
                break
        if row is None:
            if not generate:
                return None
            n, chars = passage_budget(self.client().model(), limit)
            if n > found and not paper:
                pool = self._retrieve(question, words, n, venue, year)
            papers = pool[:n]
            sources, labels, evidence = self._evidence(words, papers, bool(paper), chars)
            row, cached = self._generate(
                subject,
                "ask",
                lang,
                key(sources, labels),
                prompts.ask(question, sources, lang),
                post=lambda t: t.strip(),
                on_text=on_text,
            )
        retrieved = [{"id": p.id, "title": p.title} for p in papers]
        # a source of the body is cited as [paper p.N]; `cited` keeps the paper ids, each retrieved
        answer, cited_labels, dropped = resolve_citations(row["text"], labels)
        cited = list(dict.fromkeys(lab.split(" p.")[0] for lab in cited_labels))
        not_found = not cited and _says_not_found(answer, lang)
        closest: list[dict[str, Any]] = []
        if not_found:
            answer = prompts.NOT_FOUND[lang]
            closest = closest_sentences(words, evidence)  # a Chinese question: through its English words
        return Answer(
            question,
            row.get("lang") or lang,
            answer,
            cited,
            retrieved,
            row["model"],
            not_found,
            dropped,
            row["prompt_version"],
            row["created_at"],
            cached,
            note=row.get("note") or "",
            passages=evidence,
            closest=closest,
        )

    def _english_words(self, question: str, ask_model: bool = True) -> str:
        """A Chinese question's English: the glossary's reading and the model's rendering (stored
        when the question was searched; with `ask_model` False only a stored one: nothing is sent)."""
        from ..search.query import parse

        reading = self.lib.engine.glossary_reading(parse(question))
        if ask_model:
            english = self.query_english(question) or ""
        else:
            q = " ".join(question.split())
            row = self._cached("q:" + hashlib.sha1(q.encode()).hexdigest()[:20], "translate_query", "en", text_hash(q))
            english = str(row["text"]) if row is not None else ""
        return " ".join(x for x in (reading[0] if reading else "", english) if x)

    def _model_for_budget(self) -> str:
        """The model's name as far as it is known without asking the endpoint."""
        cfg = self.config
        if cfg is None:
            return ""
        if cfg.model:
            return cfg.model
        c = self._client
        return c._model if c is not None else ""

    def _evidence(
        self, question: str, papers: Sequence[Paper], one: bool, chars: int = 900
    ) -> tuple[list[tuple[int, str, str]], list[str], list[dict[str, Any]]]:
        """The numbered sources the model is given, the label each is cited by, and the evidence
        as `ask --json` lists it: the best passages of a paper's body where it has one (cited by
        paper and page), its abstract otherwise. `chars` is the model's budget per source: a small
        model gets fewer passages as well as shorter ones."""
        small = chars < 900
        per, total = ((3, 4) if small else (6, 8)) if one else ((1, 4) if small else (2, 8))
        # the best passages of the papers' bodies, from a capability that keeps them (the full text)
        found = [x for f in self.lib.contributions("passages") for x in f(question, [p.id for p in papers], per, total)]
        by_paper: dict[str, list[Any]] = {}
        for x in found:
            by_paper.setdefault(x.id, []).append(x)
        sources: list[tuple[int, str, str]] = []
        labels: list[str] = []
        evidence: list[dict[str, Any]] = []
        for p in papers:
            for x in by_paper.get(p.id, []):
                where = f"p.{x.page}" + (f", {x.section}" if x.section else "")
                text = _trim(reply.strip_reference_marks(x.text), chars, question)
                sources.append((len(sources) + 1, f"{p.title} ({where})", text))
                labels.append(f"{p.id} p.{x.page}")
                evidence.append({"id": p.id, "page": x.page, "section": x.section, "text": x.text, "n": x.n})
            # one paper asked: its abstract too (what it is about, which passages may lack)
            if p.id not in by_paper or (one and p.abstract.strip()):
                abstract = _trim(reply.strip_reference_marks(clean(p.abstract)), chars, question)
                sources.append((len(sources) + 1, p.title, abstract))
                labels.append(p.id)
                evidence.append({"id": p.id, "page": None, "section": "abstract", "text": abstract})
        return sources, labels, evidence

    def _retrieve(self, question: str, words: str, limit: int, venue: str | None, year: int | None) -> list[Paper]:
        """The papers an answer may use: the hybrid search's first `limit`, and among them, in turn,
        the papers whose body holds a passage sharing most of the question's words (`words`: its
        English, for a question in Chinese; from a capability that keeps full texts). A question
        about what a paper's body says ("what margin does the triplet loss use?") often shares no
        word with its abstract: the search alone finds no good match there. A question in Chinese is
        searched in English too: search asks query_english itself."""
        found = [h.paper for h in self.lib.search(question, limit=limit, venue=venue, year=year)]
        wanted = _wanted(words)
        need = _need(wanted)
        if need is None:
            return found
        body = [
            x.id
            for f in self.lib.contributions("body_matches")
            for x in f(words, limit, venue, year)
            if _shared(wanted, x.text) >= need
        ]
        if not body:
            return found
        by_id = {p.id: p for p in found}
        by_id.update({p.id: p for p in self.lib.get_many([i for i in body if i not in by_id])})
        merged: list[str] = []
        for pair in itertools.zip_longest([p.id for p in found], body):
            merged.extend(i for i in pair if i is not None and i not in merged)
        return [by_id[i] for i in merged if i in by_id][:limit]

    def query_english(self, text: str) -> str | None:
        """A search query in CJK script rendered in English by the configured model, stored so each
        query is asked once (about a second on a local CPU model). None without an endpoint, for a query
        with no CJK, or when the endpoint fails: search then goes on without it (the failure is logged,
        and the next search asks again)."""
        q = " ".join(text.split())
        if not q or not has_cjk(q) or not self.configured:
            return None
        subject = "q:" + hashlib.sha1(q.encode()).hexdigest()[:20]
        try:
            row, _ = self._generate(
                subject,
                "translate_query",
                "en",
                text_hash(q),
                prompts.translate(q, "query", "en"),
                post=_query_text,
            )
        except LlmError as e:
            log.warning("searching %r without its English rendering: %s", q, e)
            return None
        except PaperatlasError as e:  # refused for this request (another site, no reader, the budget)
            log.info("searching %r without its English rendering: %s", q, e.message)
            return None
        return str(row["text"]) or None

    # -- the poster cheat-sheet --------------------------------------------------------------
    def cheatsheet(
        self, reader: str | None = None, lang: str = "en", paper_ids: Sequence[str] | None = None, generate: bool = True
    ) -> list[CheatItem]:
        """For a reader's agenda (when the programme knows one) or saved list: per paper a one-line
        TL;DR in `lang` and questions worth asking its author (questions need an endpoint)."""
        lang = self._lang(lang)
        where: dict[str, dict[str, Any]] = {}
        if paper_ids is None:
            paper_ids = [p.id for p in self._readers.liked(reader)]
            agenda = self._agenda(reader)
            for item in agenda:
                pid = item.get("paper_id") or item.get("id")
                if pid:
                    where.setdefault(
                        pid,
                        {k: item.get(k) for k in ("session", "start", "end", "room", "poster_position") if item.get(k)},
                    )
            paper_ids = list(dict.fromkeys([*where, *paper_ids]))
        out: list[CheatItem] = []
        papers = self.lib.get_many(list(paper_ids))
        stored = {} if generate else self.stored_tldrs([p.id for p in papers], lang)
        for p in papers:
            tl = stored.get(p.id) or self.tldr(p.id, lang, mode="auto" if generate else "extractive")
            qs: list[str] = []
            qmodel = ""
            h = text_hash(p.text)
            row = self._cached(p.id, "questions", lang, h)
            if row is None and generate and self.configured and p.abstract.strip():
                row, _ = self._generate(p.id, "questions", lang, h, prompts.questions(p.title, clean(p.abstract), lang))
            if row is not None:
                qs, qmodel = parse_questions(row["text"]), row["model"]
            out.append(CheatItem(p.id, p.title, tl, qs, qmodel, where.get(p.id, {})))
        return out

    def _agenda(self, reader: str | None) -> list[dict[str, Any]]:
        """The reader's agenda items when the programme room is there (an empty list otherwise)."""
        programme = getattr(self.lib, "programme", None)
        agenda = getattr(programme, "agenda", None)
        if agenda is None:
            return []
        try:
            items = agenda(reader)
        except (PaperatlasError, TypeError):
            return []
        rows = list(getattr(items, "items", items) or []) + list(getattr(items, "unscheduled", []) or [])
        out = []
        for it in rows:
            d = it.to_dict() if hasattr(it, "to_dict") else it
            if isinstance(d, dict):
                out.append(d)
        return out

    # -- what was generated ------------------------------------------------------------------
    def library_stats(self) -> dict[str, Any]:
        """What `Library.stats()` shows of this capability."""
        return {"generated": self.stats()["generated"]}

    def stats(self) -> dict[str, Any]:
        """What the library holds that a model generated: texts per task, language and model."""
        rows = [
            {"task": t, "lang": lang, "model": reply.model_name(m), "prompt_version": v, "texts": n}
            for t, lang, m, v, n in self.store.llm.generated_counts()
        ]
        cfg = self.config
        return {
            "generated": rows,
            "texts": sum(r["texts"] for r in rows),
            "endpoint": redact(cfg.url) if cfg else None,
            "model": (cfg.model or None) if cfg else None,
        }


# a small model's sources are cut to its budget: by the question's words (the sentences that share the
# most of them), not from the front, which lost answers late in an abstract ("2-4x" at character 1,099)
TRIM_BY_QUESTION = True
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_WORD = re.compile(r"[^\W_]+", re.U)


def _trim(text: str, n: int, question: str = "") -> str:
    """`text` in about `n` characters: whole when it fits; else, with a question, the sentences that
    share most of its words (stemmed, stop words aside), in their order, "…" where text was left
    out; else (or when no sentence shares a word) its start."""
    if len(text) <= n:
        return text
    if question and TRIM_BY_QUESTION:
        kept = _by_question(text, n, question)
        if kept:
            return kept
    cut = text[:n].rsplit(" ", 1)[0]
    return cut + " …"


# the words that ask rather than say: an answer does not repeat them (search's stop words are few: 33)
QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how does do did can could would should is are was were "
    "use used uses using paper papers".split()
)


def _wanted(question: str) -> set[str]:
    """The stemmed words of a question that a sentence answering it is likely to share (stop words
    and question words aside)."""
    from ..search.bm25 import english_stopwords
    from ..search.snippets import stem

    stop = english_stopwords() | QUESTION_WORDS
    return {stem(w) for w in _WORD.findall(question.lower()) if w not in stop and len(w) > 1}


def _shared(wanted: set[str], sentence: str) -> int:
    from ..search.snippets import stem

    return len(wanted & {stem(w) for w in _WORD.findall(sentence.lower())})


def _need(wanted: set[str]) -> int | None:
    """How many of a question's words a text must share to be about it: at least two and at least
    half (None: a question of fewer than two such words is no ground to pick a text by)."""
    return max(2, (len(wanted) + 1) // 2) if len(wanted) >= 2 else None


CLOSEST_CHARS = 400  # a sentence longer than this is a run of text the splitter could not cut


def closest_sentences(question: str, evidence: Sequence[dict[str, Any]], limit: int = 3) -> list[dict[str, Any]]:
    """The sentences of the evidence that share most of the question's words, best first: at least
    two of them and at least half. Shown beside a "not in these papers" answer, so a reader sees what
    was read rather than a dead end (a small model refuses answers that lie in its sources); they are
    quotations, never an answer. Each: {"id", "page", "section", "text"}, and "n" (the passage) from a body."""
    wanted = _wanted(question)
    need = _need(wanted)
    if need is None:
        return []
    found: list[tuple[int, int, dict[str, Any]]] = []
    seen: set[str] = set()
    for order, x in enumerate(evidence):
        for sentence in _SENTENCE_END.split(str(x.get("text") or "")):
            sentence = " ".join(sentence.replace("…", " ").split())
            if not sentence or len(sentence) > CLOSEST_CHARS or sentence.lower() in seen:
                continue
            score = _shared(wanted, sentence)
            if score >= need:
                seen.add(sentence.lower())
                where = {"id": x.get("id"), "page": x.get("page"), "section": x.get("section") or ""}
                if x.get("n") is not None:  # the passage's anchor on the reader page
                    where["n"] = x["n"]
                found.append((-score, order, {**where, "text": sentence}))
    found.sort(key=lambda t: (t[0], t[1]))
    return [d for _, _, d in found[:limit]]


def _by_question(text: str, n: int, question: str) -> str:
    wanted = _wanted(question)
    sentences = [x for x in _SENTENCE_END.split(text) if x.strip()]
    scores = [_shared(wanted, x) for x in sentences]
    if not wanted or not any(scores):
        return ""
    chosen: set[int] = set()
    room = n
    for i in sorted(range(len(sentences)), key=lambda i: (-scores[i], i)):
        if len(sentences[i]) + 1 <= room:
            chosen.add(i)
            room -= len(sentences[i]) + 1
    if not chosen or not any(scores[i] for i in chosen):
        return ""
    out, last = [], -1
    for i in sorted(chosen):
        if i != last + 1:
            out.append("…")
        out.append(sentences[i])
        last = i
    if last != len(sentences) - 1:
        out.append("…")
    return " ".join(out)


def _says_not_found(answer: str, lang: str) -> bool:
    a = answer.lower()
    return (
        "not in these papers" in a
        or "do not answer" in a
        or "don't answer" in a
        or prompts.NOT_FOUND[lang] in answer
        or "没有答案" in answer
        or "未提及" in answer
    )


def resolve_citations(text: str, ids: Sequence[str]) -> tuple[str, list[str], int]:
    """(the answer with each [n] replaced by [paper id], the cited ids in order, citations dropped):
    see reply.resolve_citations (kept here for its callers)."""
    return reply.resolve_citations(text, ids)


def passage_budget(model: str, limit: int) -> tuple[int, int]:
    """(papers, characters of each abstract) an answer by `model` is given: a small model (under
    SMALL_MODEL_PARAMS parameters by its name, "qwen2.5-1.5b-instruct") gets fewer, shorter ones."""
    n, chars = ASK_PASSAGES["small" if model_params(model) < SMALL_MODEL_PARAMS else "large"]
    return max(1, min(limit, n)), chars


def model_params(model: str) -> float:
    """Parameters of a model as its name says ("1.5b", "270m", "8x7b"); infinity when it does not."""
    m = re.findall(r"(?<![\w.])(?:(\d+)x)?(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", reply.model_name(model).lower())
    if not m:
        return float("inf")
    k, x, unit = m[-1]
    return (int(k) if k else 1) * float(x) * (1e9 if unit == "b" else 1e6)


def parse_faq(text: str) -> list[dict[str, str]]:
    """[{"q", "a"}] from "Q: ... / A: ..." lines (one item holding the whole text if it has none)."""
    items: list[dict[str, str]] = []
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"^(?:\*\*)?(?:Q|问)\s*\d*\s*[:：.](?:\*\*)?\s*(.*)$", s)
        if m:
            items.append({"q": m.group(1).strip(), "a": ""})
            continue
        m = re.match(r"^(?:\*\*)?(?:A|答)\s*\d*\s*[:：.](?:\*\*)?\s*(.*)$", s)
        if m and items:
            items[-1]["a"] = (items[-1]["a"] + " " + m.group(1)).strip()
        elif s and items and items[-1]["a"]:
            items[-1]["a"] += " " + s
    items = [i for i in items if i["q"]]
    return items or ([{"q": "", "a": text.strip()}] if text.strip() else [])


def parse_questions(text: str) -> list[str]:
    """Up to three questions, one per line (numbering and bullets removed)."""
    out = []
    for line in text.splitlines():
        s = re.sub(r"^\s*(?:[-*•]|\d+[.)、]|Q\d*[:：])\s*", "", line).strip()
        if len(s) > 3:
            out.append(s)
    return out[:3]
