"""The checker's numbers as a real 1.5B model writes Chinese: no space around a number ("使用12层"),
and a magnitude changed in passing ("280M" written "280万", 2.8 million: seen in a real run on
N18-3011's abstract, benchmarks/translate_full.py)."""

from __future__ import annotations

from paperatlas.translate import protect


def test_a_number_beside_chinese_characters_is_found() -> None:
    c = protect.check("We use 12 layers and gain 3.5% over 1,024 runs.", "我们使用12层，在1,024次运行中提升3.5%。")
    assert c.ok and c.numbers == c.numbers_kept == 3, c.lost


def test_a_changed_magnitude_is_caught_and_a_kept_one_passes() -> None:
    source = "The graph has over 280M nodes; a 1.5B model reads 146K papers."
    wrong = protect.check(source, "该图包含超过280万个节点；一个1.5B模型阅读146K篇论文。")
    assert not wrong.ok and wrong.lost == ["number 280M"]
    kept = protect.check(source, "该图包含超过280M个节点；一个1.5B模型阅读146K篇论文。")
    assert kept.ok and kept.numbers == 3, kept.lost
    assert protect.prose_numbers("a 1.5B model")["1"] == 0  # taken whole, never as "1"


def test_a_hyphen_after_a_name_is_no_minus_sign() -> None:
    assert protect.check("Results on CoNLL-2003 and ACE-2005.", "在词-2003和词-2005上的结果。").ok
