"""A Chinese request that a model answers in English: the language check, the one firmer retry,
and the honest label (never stored as the Chinese text). A scripted client stands in for the model
in the unit tests; the last test runs the real llama.cpp server."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paperatlas import Library
from paperatlas.llm import prompts
from paperatlas.llm.capability import NOT_CHINESE_NOTE, is_chinese
from paperatlas.search.cjk import letter_counts

PAPER = {
    "id": "p-lora",
    "title": "Low-rank adapters for cheap fine-tuning",
    "abstract": "Fine-tuning large models is expensive. We propose low-rank adapters that train 0.1% of the "
    "weights. They match full fine-tuning on GLUE.",
    "authors": ["Ada Lovelace"],
    "venue": "ICLR",
    "year": 2024,
}
ZH = "我们提出低秩适配器（LoRA），只训练 0.1% 的权重，在 GLUE 上与全量微调相当。"
EN = "We propose low-rank adapters that match full fine-tuning on GLUE."


@dataclass
class _Chat:
    text: str
    seconds: float = 0.01


class ScriptedClient:
    """Answers each chat with the next scripted reply and keeps the messages it was sent."""

    endpoint = "http://127.0.0.1:9/v1"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict[str, str]]] = []

    def chat(
        self, messages: list[dict[str, str]], max_tokens: int, temperature: float = 0.2, on_text: Any = None
    ) -> _Chat:
        self.sent.append(messages)
        return _Chat(self.replies.pop(0))

    def model(self) -> str:
        return "scripted"


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY"):
        monkeypatch.delenv(k, raising=False)
    src = tmp_path / "p.jsonl"
    src.write_text(json.dumps(PAPER) + "\n", encoding="utf-8")
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest([src])
    yield lib
    lib.close()


def _script(lib: Library, monkeypatch: pytest.MonkeyPatch, *replies: str) -> ScriptedClient:
    fake = ScriptedClient(*replies)
    lib.llm.configure(fake.endpoint, "scripted")
    monkeypatch.setattr(lib.llm, "client", lambda: fake)
    return fake


def test_letters_are_counted_and_short_texts_are_not_judged() -> None:
    assert letter_counts("") == (0, 0) and letter_counts("0.1%, 2024!") == (0, 0)
    assert letter_counts("LoRA：低秩") == (2, 4)
    assert is_chinese(ZH) and is_chinese("LoRA：大型语言模型的低秩适应")  # Latin acronyms inside are fine
    assert is_chinese("BERT：深度双向Transformer的预训练")  # 8 characters beside 15 Latin letters
    assert not is_chinese(EN) and not is_chinese("We propose LoRA (低秩适配) for GLUE fine-tuning.")
    assert is_chinese("GPT-4") and is_chinese("Mixtral")  # a name alone: too few letters to tell


def test_chinese_first_time_is_stored_with_one_request(lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = _script(lib, monkeypatch, ZH)
    g = lib.llm.tldr("p-lora", "zh")
    assert (g.lang, g.text, g.note, len(fake.sent)) == ("zh", ZH, "", 1)
    assert lib.llm.tldr("p-lora", "zh").cached


def test_english_then_chinese_retries_once_firmly_and_stores_the_chinese(
    lib: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _script(lib, monkeypatch, EN, ZH)
    g = lib.llm.tldr("p-lora", "zh")
    assert (g.lang, g.text, g.note) == ("zh", ZH, "")
    assert len(fake.sent) == 2
    second = fake.sent[1]
    assert second[-2] == {"role": "assistant", "content": EN} and second[-1]["content"] == prompts.FIRMER_ZH
    assert lib.llm.stored_tldrs(["p-lora"], "zh")["p-lora"].text == ZH


def test_english_twice_is_labelled_english_and_not_stored_as_chinese(
    lib: Library, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _script(lib, monkeypatch, EN, EN + " Again.")
    g = lib.llm.tldr("p-lora", "zh")
    assert g.lang == "en" and g.generated and g.note == NOT_CHINESE_NOTE and g.text.startswith("We propose")
    assert g.to_dict()["note"] == NOT_CHINESE_NOTE and len(fake.sent) == 2
    assert lib.llm.stored_tldrs(["p-lora"], "zh") == {} and lib.llm.stats()["generated"] == []
    # an English request is never second-guessed
    fake.replies = [EN]
    assert lib.llm.tldr("p-lora", "en").lang == "en" and len(fake.sent) == 3


def test_translation_and_answer_carry_the_label(lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    _script(lib, monkeypatch, EN, EN, ZH)  # the title stays English twice, the abstract comes in Chinese
    t = lib.llm.translate("p-lora", "zh")
    assert t.lang == "en" and t.to_dict()["note"] == NOT_CHINESE_NOTE and t.abstract == ZH
    assert lib.llm.stored_titles(["p-lora"], "zh") == {}
    assert lib.llm.stored_abstract("p-lora", "zh") is not None


def test_real_server_zh_tldr_is_chinese_or_labelled(tmp_path: Path, lib: Library, llm_proxy) -> None:
    """Whatever the fixture model writes, a zh TL;DR is Chinese and stored, or English, marked and not stored."""
    lib.llm.configure(llm_proxy.url)
    g = lib.llm.tldr("p-lora", "zh", mode="generate")
    sent = llm_proxy.chat_requests()
    stored = lib.llm.stored_tldrs(["p-lora"], "zh")
    if is_chinese(g.text):
        assert g.lang == "zh" and not g.note and stored["p-lora"].text == g.text
    else:
        assert g.lang == "en" and g.note == NOT_CHINESE_NOTE and stored == {}
    if len(sent) == 2:  # the first reply was not Chinese: the second asked firmly
        assert json.loads(sent[1]["body"])["messages"][-1]["content"] == prompts.FIRMER_ZH
    else:
        assert len(sent) == 1 and g.lang == "zh"


def test_a_batch_counts_what_it_did_not_keep_and_leaves_it_to_do(lib: Library, monkeypatch: pytest.MonkeyPatch) -> None:
    _script(lib, monkeypatch, EN, EN + " Again.")
    st = lib.llm.translate_batch(["p-lora"], "zh", title_only=True)
    assert (st.done, st.not_kept, st.not_kept_ids, st.failed) == (0, 1, ["p-lora"], 0)
    assert st.to_dict()["not_kept"] == 1 and lib.llm.estimate(["p-lora"], "zh", title_only=True)["todo"] == 1


def test_the_page_after_generate_carries_one_current_not_kept_mark() -> None:
    """Back to the referring page with its own query; `llm=not-kept` only when nothing was kept, never twice."""
    from starlette.requests import Request

    from paperatlas.web.llm_views import back_to_page

    def referred(url: str) -> Request:
        headers = [(b"host", b"127.0.0.1:8000"), (b"referer", url.encode())]
        return Request({"type": "http", "method": "POST", "path": "/generate", "headers": headers, "query_string": b""})

    page = "http://127.0.0.1:8000/paper/p-1?lang=zh&llm=not-kept"
    assert (
        back_to_page(referred(page), "/paper/p-1", not_kept=True).headers["location"]
        == "/paper/p-1?lang=zh&llm=not-kept"
    )
    assert back_to_page(referred(page), "/paper/p-1", not_kept=False).headers["location"] == "/paper/p-1?lang=zh"
    assert (
        back_to_page(referred("http://evil.example/x"), "/paper/p-1", not_kept=False).headers["location"]
        == "/paper/p-1"
    )
