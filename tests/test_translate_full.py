"""Whole-paper translation: what must be kept exactly (the checker), chunks, the glossary, and the run
against a loopback endpoint: stored only when checked, resumable, capped, an edited section alone
retranslated, a model that drops a formula or answers in English leaves nothing half-stored."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import pytest

from paperatlas import Library
from paperatlas.translate import SectionText, Translator
from paperatlas.translate import glossary as gloss
from paperatlas.translate import protect
from ports import free_port

SOURCE = (
    "We fine-tune with Low-Rank Adaptation (LoRA) at rank $r=8$ and learning rate 3e-4, as in [12, 14] and "
    "(Hu et al., 2021). The loss is L(θ) = −∑_i log p_θ(y_i | x_i) over 1,024 examples; accuracy rises to "
    "93.4% (https://github.com/example/repo). Smith et al. (2020) use $$\\frac{a}{b}$$ too."
)


# -- the checker ------------------------------------------------------------------------------
def test_protected_spans_cover_math_citations_urls_and_code() -> None:
    kinds = {(sp.kind, sp.text) for sp in protect.protected_spans(SOURCE + " Run `pip install x`.")}
    assert ("math", "$r=8$") in kinds
    assert ("cite", "[12, 14]") in kinds and ("cite", "(Hu et al., 2021)") in kinds
    assert ("cite", "Smith et al. (2020)") in kinds
    assert ("math", "L(θ) = −∑_i log p_θ(y_i | x_i)") in kinds  # "log" does not end a formula
    assert ("url", "https://github.com/example/repo") in kinds
    assert ("code", "`pip install x`") in kinds
    assert ("math", "$$\\frac{a}{b}$$") in kinds


def test_mask_and_unmask_round_trip_and_forgive_full_width_braces() -> None:
    m = protect.mask(SOURCE)
    assert "$" not in m.text and "[12" not in m.text and "θ" not in m.text
    reply = m.text.replace("{v1}", "｛v1｝").replace("{v2}", "{ V2 }") + " {v99}"  # an invented one is dropped
    text, lost = protect.unmask(reply, m)
    assert text == SOURCE + " " and lost == []
    text, lost = protect.unmask(m.text.replace("{v3}", ""), m)
    assert lost == [3]


def test_check_counts_what_was_lost() -> None:
    good = protect.check(SOURCE, "我们" + SOURCE)
    assert good.ok and good.spans == good.spans_kept == 7 and good.numbers == good.numbers_kept == 3
    bad = protect.check(SOURCE, SOURCE.replace("93.4", "93").replace("$r=8$", "$r = 8$"))
    assert not bad.ok
    assert any("93.4" in x for x in bad.lost) and any("r=8" in x for x in bad.lost)
    terms = protect.check("The reward model is trained.", "训练了回报模型。", {"reward model": "奖励模型"})
    assert terms.terms == 1 and terms.terms_consistent == 0 and not terms.ok
    kept = protect.check("The reward model is trained.", "训练了奖励模型。", {"reward model": "奖励模型"})
    assert kept.ok and kept.terms_consistent == 1


def test_formula_traps_do_not_break_masking() -> None:
    trap = "Let $a}{b$ and $\\{x\\}$ cost \\$5 while $$ \\begin{cases} 1 \\end{cases} $$ holds; $5 and $6 are prices."
    m = protect.mask(trap)
    text, lost = protect.unmask(m.text, m)
    assert text == trap and lost == []
    assert "$a}{b$" in [sp.text for sp in m.spans]


def test_a_20000_character_section_goes_in_chunks_no_span_cut() -> None:
    para = " ".join(f"Sentence {i} cites [{i % 90 + 1}] and uses $x_{{{i}}}^2$ in the analysis." for i in range(400))
    assert len(para) > 20_000
    cs = protect.chunks([para], 1800)
    assert len(cs) > 10 and all(len(c) <= 1800 for c in cs)
    assert protect.mask(para).spans and sum(len(protect.mask(c).spans) for c in cs) == len(protect.mask(para).spans)
    assert " ".join(cs).split() == para.split()  # nothing lost between chunks


def test_glossary_terms_and_defensive_parse() -> None:
    found = gloss.terms(
        [
            "We use direct preference optimization (DPO) with Low-Rank Adaptation (LoRA). The reward model "
            "scores. A reward model again. The reward model once more."
        ]
    )
    assert found[:2] == ["Low-Rank Adaptation", "direct preference optimization"] and "reward model" in found
    reply = "Low-Rank Adaptation => 低秩适配\n- reward model: 奖励模型\nsomething else => 别的\nnoise\n" + "x" * 9000
    assert gloss.parse_glossary(reply, ["Low-Rank Adaptation", "reward model"]) == {
        "Low-Rank Adaptation": "低秩适配",
        "reward model": "奖励模型",
    }
    assert gloss.parse_glossary("reward model => " + "长" * 500, ["reward model"]) == {}


# -- the run, against a loopback endpoint --------------------------------------------------------
def _translate_double(prompt: str) -> str:
    """A translator double: the passage after the instructions, the glossary's renderings used, each
    English word written as a CJK character; placeholders and numbers left as sent."""
    passage = prompt.split("Reply with the translation only.\n\n", 1)[-1]
    for term, rendering in re.findall(r"^(.+?) => (.+)$", prompt, re.MULTILINE):
        passage = re.sub(re.escape(term), rendering, passage, flags=re.IGNORECASE)
    return re.sub(r"(?<![{\w])[A-Za-z]{2,}(?![\w}])", "词", passage)


class Endpoint:
    """An OpenAI-compatible /chat/completions on loopback answering with `answer(messages)`."""

    def __init__(self, answer: Callable[[list[dict[str, str]]], str]) -> None:
        self.answer = answer
        self.requests: list[dict[str, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._send({"data": [{"id": "double"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                endpoint.requests.append(body)
                text = endpoint.answer(body["messages"])
                self._send({"model": "double", "choices": [{"message": {"role": "assistant", "content": text}}]})

            def _send(self, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _glossary_or_translate(messages: list[dict[str, str]]) -> str:
    prompt = messages[-1]["content"] if messages[-1]["role"] == "user" else ""
    first = messages[1]["content"]
    if first.startswith("Render each term"):
        return "\n".join(f"{t} => 术语{i}" for i, t in enumerate(first.split("\n\n", 1)[1].splitlines()))
    return _translate_double(first if len(messages) == 2 else prompt + "\n\n" + first)


SECTIONS = [
    SectionText(0, "Introduction", 1, ["The reward model guides the policy [3]. " * 3, SOURCE]),
    SectionText(1, "Method", 2, ["We train the reward model for 20 epochs (Smith et al., 2020). " * 40]),
]


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_API_KEY", "PAPERATLAS_LLM_MAX_TOKENS"):
        monkeypatch.delenv(k, raising=False)
    f = tmp_path / "p.jsonl"
    f.write_text(json.dumps({"id": "p1", "title": "A paper", "abstract": "An abstract.", "year": 2024}) + "\n")
    lib = Library(tmp_path / "lib.db", embedder="hashing")
    lib.ingest([f])
    yield lib
    lib.close()


def _translator(lib: Library, sections: list[SectionText]) -> Translator:
    return Translator(lib, lib.llm, lambda pid: sections)


def test_full_translation_is_checked_stored_and_resumed(lib: Library) -> None:
    ep = Endpoint(_glossary_or_translate)
    try:
        lib.llm.configure(ep.url, "double")
        tr = _translator(lib, list(SECTIONS))
        est = tr.estimate(["p1"])
        assert est.sections == 2 and est.todo == est.chunks >= 3 and est.tokens > 0
        capped = tr.translate("p1", max_chunks=1)
        assert capped.stopped and not capped.complete and capped.spent_chunks == 1
        full = tr.translate("p1")
        assert full.complete, [s.note for s in full.sections]
        assert full.check.ok and full.check.spans == full.check.spans_kept > 0
        assert full.check.terms_consistent == full.check.terms > 0
        intro = full.sections[0]
        assert "$r=8$" in intro.text and "(Hu et al., 2021)" in intro.text and "93.4%" in intro.text
        assert intro.heading_text and intro.model == "double"
        assert "## " in full.markdown() and "$$\\frac{a}{b}$$" in full.markdown()
        n = len(ep.requests)
        again = tr.translate("p1")
        assert again.complete and len(ep.requests) == n  # everything from the store
        assert tr.estimate(["p1"]).todo == 0
        # an edited section is translated again alone
        edited = [SECTIONS[0], SectionText(1, "Method", 2, ["We train it for 30 epochs instead."])]
        tr2 = _translator(lib, edited)
        out = tr2.translate("p1")
        assert out.complete and "30" in out.sections[1].text
        assert 1 <= len(ep.requests) - n <= 2  # the new chunk (and its glossary, unchanged: none)
    finally:
        ep.stop()


def test_a_model_that_drops_a_formula_or_answers_in_english_stores_nothing(lib: Library) -> None:
    def drops(messages: list[dict[str, str]]) -> str:
        if messages[1]["content"].startswith("Render each term"):
            return "nonsense"
        return _translate_double(messages[1]["content"]).replace("{v1}", "")

    for answer, why in (
        (drops, "placeholder {v1}"),
        (lambda m: "This is English, not Chinese at all.", "not in Chinese"),
    ):
        ep = Endpoint(answer)
        try:
            lib.llm.configure(ep.url, "double")
            out = _translator(lib, [SectionText(0, "", 1, [SOURCE])]).translate("p1")
            assert not out.complete and out.sections[0].text == ""
            assert why in out.sections[0].note and "kept in the original" in out.sections[0].note
            chat = [r for r in ep.requests if "Render each term" not in r["messages"][1]["content"]]
            assert len(chat) == 2  # asked once more, firmly, then given up
            assert lib.store.llm.latest_generated("p1#s0.0", "translate_section", "zh", "section-1", "x") is None
        finally:
            ep.stop()


def test_no_full_text_says_how_to_attach_one(lib: Library) -> None:
    from paperatlas.errors import PaperatlasError

    with pytest.raises(PaperatlasError) as e:
        _translator(lib, []).translate("p1")
    assert "fulltext add p1" in e.value.fix


def test_a_term_inside_a_longer_term_is_not_asked_for_twice() -> None:
    g = {"pretrained language": "预训练语言", "pretrained language models": "预训练语言模型", "reward": "奖励"}
    assert gloss.used_in(g, "Pretrained language models are big.") == {"pretrained language models": "预训练语言模型"}


def test_cli_translate_full_on_a_real_pdf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The command a reader runs: an estimate that sends nothing, a capped run that resumes, the
    Markdown kept, the page's JSON in Chinese; and the errors that carry their fix."""
    from click.testing import CliRunner

    from paperatlas.cli import cli

    for k in ("PAPERATLAS_LLM_URL", "PAPERATLAS_LLM_MODEL", "PAPERATLAS_LLM_MAX_TOKENS"):
        monkeypatch.delenv(k, raising=False)
    pdf = Path(__file__).parent / "data" / "pdfs" / "N18-3011.pdf"
    db = tmp_path / "lib.db"
    runner = CliRunner()
    r = runner.invoke(cli, ["--db", str(db), "ingest", "--no-embed", str(pdf)])
    assert r.exit_code == 0, r.output
    pid = r.output.split(": ")[1].split()[0]
    r = runner.invoke(cli, ["--db", str(db), "translate", pid, "--full"])
    assert r.exit_code == 1 and "no language-model endpoint" in r.output  # before any promise of a run
    r = runner.invoke(cli, ["--db", str(db), "translate", pid, "--full", "--estimate", "--json"])
    est = json.loads(r.stdout)
    assert r.exit_code == 0 and est["todo"] == est["chunks"] > 2 and est["tokens"] > 0
    ep = Endpoint(_glossary_or_translate)
    try:
        url = ["--llm-url", ep.url, "--llm-model", "double"]
        r = runner.invoke(cli, ["--db", str(db), "translate", pid, "--full", "--max-requests", "2", *url])
        assert r.exit_code == 0 and "run it again to go on" in r.output
        out = tmp_path / "paper.zh.md"
        r = runner.invoke(cli, ["--db", str(db), "translate", pid, "--full", "-o", str(out), *url])
        assert r.exit_code == 0, r.output
        assert out.exists() and out.read_text(encoding="utf-8").startswith("## ")
        r = runner.invoke(cli, ["--db", str(db), "translate", pid, "--full", "--estimate", "--json"])
        assert json.loads(r.stdout)["todo"] == 0
    finally:
        ep.stop()
    with Library(db) as lib:
        from starlette.testclient import TestClient

        from paperatlas.web import create_app

        with TestClient(create_app(lib, owner_signin=True), base_url="http://127.0.0.1") as c:
            page = c.get(f"/paper/{pid}/read?lang=zh")
            assert page.status_code == 200 and 'class="zh-col"' in page.text and "原文（英文）" in page.text
            d = c.get(f"/paper/{pid}/read.json?lang=zh").json()
            assert (
                d["translation"]["complete"] and d["sections"][0]["index"] == d["translation"]["sections"][0]["index"]
            )
