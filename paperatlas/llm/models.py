"""The shapes the language-model layer returns; each has the one `to_dict()` every surface prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Generated:
    """A text made for a paper: by a model (`generated` True) or by the extractive summariser.

    `model`, `created_at` and `prompt_version` say where it came from; `cached` that this request
    sent nothing to the endpoint."""

    id: str
    task: str
    lang: str
    text: str
    model: str
    generated: bool
    prompt_version: str = ""
    created_at: str = ""
    cached: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "task": self.task,
            "lang": self.lang,
            "text": self.text,
            "model": self.model,
            "generated": self.generated,
            "prompt_version": self.prompt_version,
            "created_at": self.created_at,
            "cached": self.cached,
        }
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class Faq:
    """The papers.cool-style questions (problem, method, result, limits) with their answers."""

    id: str
    lang: str
    items: list[dict[str, str]]
    text: str
    model: str
    prompt_version: str
    created_at: str
    cached: bool = False
    generated: bool = True
    note: str = ""  # why the text is not in the language asked for

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "lang": self.lang,
            "items": self.items,
            "text": self.text,
            "model": self.model,
            "generated": self.generated,
            "prompt_version": self.prompt_version,
            "created_at": self.created_at,
            "cached": self.cached,
        }
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class Translation:
    """A paper's title and abstract in another language, beside the originals."""

    id: str
    lang: str
    title: str
    abstract: str
    model: str
    original_title: str = ""
    original_abstract: str = ""
    prompt_version: str = ""
    created_at: str = ""
    cached: bool = False
    generated: bool = True
    note: str = ""  # why the text is not in the language asked for

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "id": self.id,
            "lang": self.lang,
            "title": self.title,
            "abstract": self.abstract,
            "model": self.model,
            "generated": self.generated,
            "prompt_version": self.prompt_version,
            "created_at": self.created_at,
            "cached": self.cached,
            "original_title": self.original_title,
            "original_abstract": self.original_abstract,
        }
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class Answer:
    """An answer from the retrieved abstracts only; `cited` are paper ids, all among `retrieved`.

    `not_found` says the papers do not answer the question; `dropped` counts citations the model
    made to papers it was not given (removed from the answer)."""

    question: str
    lang: str
    answer: str
    cited: list[str]
    retrieved: list[dict[str, Any]]
    model: str
    not_found: bool = False
    dropped: int = 0
    prompt_version: str = ""
    created_at: str = ""
    cached: bool = False
    generated: bool = True
    note: str = ""  # why the text is not in the language asked for
    # the evidence sent to the model: {"id", "page", "section", "text"} (page None: the abstract)
    passages: list[dict[str, Any]] = field(default_factory=list)
    # with "not in these papers": the sentences read that share most of the question's words,
    # quoted so the reader can judge (paperatlas.llm.capability.closest_sentences); never an answer
    closest: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "question": self.question,
            "lang": self.lang,
            "answer": self.answer,
            "cited": self.cited,
            "not_found": self.not_found,
            "retrieved": self.retrieved,
            "dropped_citations": self.dropped,
            "model": self.model,
            "generated": self.generated,
            "prompt_version": self.prompt_version,
            "created_at": self.created_at,
            "cached": self.cached,
            "passages": self.passages,
            "closest": self.closest,
        }
        if self.note:
            d["note"] = self.note
        return d


@dataclass
class CheatItem:
    """One paper of a poster cheat-sheet: a one-line TL;DR and questions worth asking its author."""

    id: str
    title: str
    tldr: Generated
    questions: list[str] = field(default_factory=list)
    questions_model: str = ""
    where: dict[str, Any] = field(default_factory=dict)  # session, room, poster position, start (the agenda's)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "tldr": self.tldr.text,
            "tldr_model": self.tldr.model,
            "tldr_generated": self.tldr.generated,
            "questions": self.questions,
            "questions_model": self.questions_model,
            "where": self.where,
        }


@dataclass
class BatchStatus:
    """Where a batch translation stands: done of total, the time per paper and what is left."""

    lang: str
    total: int
    done: int = 0
    cached: int = 0
    failed: int = 0
    not_kept: int = 0  # written in another language than asked: not stored, still to do
    not_kept_ids: list[str] = field(default_factory=list)
    running: bool = False
    seconds_per_paper: float | None = None
    eta_s: float | None = None
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "lang": self.lang,
            "total": self.total,
            "done": self.done,
            "cached": self.cached,
            "failed": self.failed,
            "not_kept": self.not_kept,
            "not_kept_ids": self.not_kept_ids[:50],
            "running": self.running,
            "seconds_per_paper": self.seconds_per_paper,
            "eta_s": self.eta_s,
            "error": self.error,
        }
