"""The zh -> en glossary's coverage of common ML terms, and its reverse for Chinese topic labels."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from paperatlas import Library
from paperatlas.search.glossary import chinese_label, chinese_phrase, glossary, translate

from conftest import VENUE_PAPERS, need

OVER_SMOOTHING = ("over-smoothing", "oversmoothing", "over-smooth", "oversmooth")


@pytest.mark.slow  # embeds 320 real GNN papers with the packaged model (~15 s on 2 busy cores)
def test_gnn_over_smoothing_in_chinese_finds_the_over_smoothing_papers(tmp_path: Path) -> None:
    """图神经网络 过平滑 among the venue papers on graph neural networks, before any multilingual index:
    the glossary's English must carry 过平滑 (it read only 图神经网络, so GNN papers in general came
    first and over-smoothing ones were 2nd and 7th at best). The English query is the yardstick."""
    rows = []
    with gzip.open(need(VENUE_PAPERS), "rt", encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            text = f"{r['title']} {r['abstract']}".lower()
            if "graph neural" in text or "gnn" in text:
                rows.append(line)
    papers = tmp_path / "gnn.jsonl"
    papers.write_text("".join(rows), encoding="utf-8")
    with Library(tmp_path / "lib.db") as lib:
        lib.ingest(papers)
        lib.embed()
        assert lib.engine.multilingual_index() is None

        def on_topic(q: str) -> int:
            hits = lib.search(q, limit=8)
            return sum(any(w in f"{h.paper.title} {h.paper.abstract}".lower() for w in OVER_SMOOTHING) for h in hits)

        english = on_topic("graph neural network over-smoothing")
        assert english >= 4
        assert on_topic("图神经网络 过平滑") >= english - 1


def test_common_terms_are_read() -> None:
    assert translate("图神经网络 过平滑")[1] == 1.0
    assert "over-smoothing" in translate("过平滑")[0]
    assert "vanishing gradient" in translate("梯度消失")[0]
    assert "out-of-distribution" in translate("分布外检测")[0]


def test_every_glossary_row_is_a_chinese_term_with_english_words() -> None:
    from paperatlas.search.cjk import has_cjk

    for zh, en in glossary().items():
        assert has_cjk(zh) and not has_cjk(en), (zh, en)


@pytest.mark.parametrize(
    ("label", "zh"),
    [
        ("diffusion models, image generation, denoising", "扩散模型、图像生成、去噪"),
        ("graph neural networks, over-smoothing, message passing", "图神经网络、过平滑、消息传递"),
        ("federated learning, clients, privacy", "联邦学习、clients、隐私"),  # unknown phrases stay English
        ("topic 3", "topic 3"),
        ("", ""),
    ],
)
def test_a_topic_label_reads_in_chinese_where_the_glossary_knows_its_phrases(label: str, zh: str) -> None:
    assert chinese_label(label) == zh


def test_the_reverse_reads_acronyms_and_plurals() -> None:
    assert chinese_phrase("Graph Neural Network") == "图神经网络"
    assert chinese_phrase("GNN") == "图神经网络"
    assert chinese_phrase("large language models") is not None
    assert chinese_phrase("bananas") is None
