"""The FAQ reads the body of a paper when it has one: the best passage for each of its questions joins
the abstract, within a small model's budget; a FAQ made from the abstract before the PDF was read is
still shown until a new one is made. A real PDF (tests/data/pdfs), a loopback endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_translate_full import Endpoint

from paperatlas import Library
from paperatlas.fulltext.reader import read_pdf

PDF = Path(__file__).parent / "data" / "pdfs" / "N18-3011.pdf"
ANSWER = "Q: What problem does it address?\nA: Finding papers.\nQ: What is the method?\nA: A graph."


def test_faq_reads_the_body_within_a_small_models_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY", "PAPERATLAS_LLM_MAX_TOKENS"):
        monkeypatch.delenv(k, raising=False)
    doc = read_pdf(PDF.read_bytes())
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "N18-3011", "title": doc.title, "abstract": doc.abstract}) + "\n")
    ep = Endpoint(lambda messages: ANSWER)
    try:
        with Library(tmp_path / "lib.db", embedder="hashing") as lib:
            lib.ingest([f])
            lib.llm.configure(ep.url, "qwen2.5-1.5b-instruct")
            before = lib.llm.faq("N18-3011")
            assert before is not None and "Passages of the paper" not in ep.requests[-1]["messages"][1]["content"]
            assert lib.fulltext.add("N18-3011", PDF).ok
            shown = lib.llm.faq("N18-3011", generate=False)  # the abstract's FAQ, until a new one is made
            assert shown is not None and shown.created_at == before.created_at and len(ep.requests) == 1
            after = lib.llm.faq("N18-3011")
            assert after is not None and len(ep.requests) == 2
            prompt = ep.requests[-1]["messages"][1]["content"]
            body = prompt.split("Passages of the paper:", 1)[1].split("\n\nAnswer these four", 1)[0]
            passages = [x for x in body.split("\n") if x.startswith("[p.")]
            assert 2 <= len(passages) <= 4 and "abstract and these passages" in prompt
            assert all(len(x) <= 500 + 80 for x in passages)  # a small model's share per passage
            assert len(prompt) < len(doc.abstract) + 4 * 600 + 600
            again = lib.llm.faq("N18-3011")
            assert again is not None and again.cached and len(ep.requests) == 2
            assert lib.llm.faq("N18-3011", generate=False).created_at == after.created_at  # type: ignore[union-attr]
    finally:
        ep.stop()


def test_a_small_models_source_is_cut_by_the_question_not_from_the_front() -> None:
    """An answer late in an abstract survives the cut to a small model's budget: the sentences that
    share the question's words are kept, in their order, with "…" where text was left out."""
    from paperatlas.llm import capability
    from paperatlas.llm.capability import _trim

    text = (
        "Graph neural networks are widely used. They pass messages along edges. "
        "Many layers make node features alike. We study this over-smoothing in deep networks. "
        "Our margin is 0.5 and the batch size is 32 for every dataset we train on."
    )
    cut = _trim(text, 90, "What batch size did they train with?")
    assert "batch size is 32" in cut and cut.startswith("…") and len(cut) <= 90 + 4
    assert _trim(text, 90, "") == text[:90].rsplit(" ", 1)[0] + " …"  # no question: the start
    assert _trim(text, 90, "quantum chromodynamics") == _trim(text, 90)  # no shared word: the start
    assert _trim(text, 1000, "batch size") == text  # it fits: whole
    capability.TRIM_BY_QUESTION = False
    try:
        assert "batch size" not in _trim(text, 90, "What batch size did they train with?")
    finally:
        capability.TRIM_BY_QUESTION = True
