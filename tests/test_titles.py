"""derive_title: display titles for untitled abstracts, on the real seed lists and on invented ones."""

from __future__ import annotations

import re
import time

import pytest
from conftest import SHARED, need
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paperatlas.ingest.titles import MAX_TITLE_CHARS, derive_title, gerund, split_sentences, trim_phrase

SEEDS = SHARED / "seeds"


def seed_paragraphs() -> list[str]:
    """Every abstract of every seed list: skip the header line, split on blank lines."""
    out: list[str] = []
    for path in sorted(need(SEEDS).glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        first = next(i for i, line in enumerate(lines) if line.strip())
        body = "\n".join(lines[first + 1 :])
        out += [p.strip() for p in re.split(r"\n\s*\n", body) if p.strip()]
    return out


def seed_abstract(marker: str) -> str:
    """The one seed abstract containing `marker` (so the tests do not depend on file order)."""
    hits = [p for p in seed_paragraphs() if marker in p]
    assert len(hits) == 1, f"{marker!r} matches {len(hits)} seed abstracts"
    return hits[0]


# (text that identifies the abstract, the name its title must start with)
NAMED_SEEDS = [
    ("real-world behavioral traces", "BehaviorBench"),
    ("semantic search engine for Lean", "Lean Finder"),
    ("Hoeffding tolerances", "CAPAL"),
    ("chess transformer model design", "Chessformer"),
    ("Sequential Target Attention", "VISTA"),
    ("atom-level MD trajectories", "ATMOS"),
    ("user-summarization model", "PLUS"),
    ("Dual-Path Drift Harmonization", "EMCift"),
    ("single-cell perturbation", "scPertCRL"),
    ("language-based user profiles", "BLUE"),
    ("timely, personalized recommendations", "ProPerSim"),
    ("native-like response quality", "MENLO"),
    ("game RAG benchmarks", "ChronoPlay"),
    ("action-conditioned geometric steps", "Walk2Pers"),
    ("Multi-Faceted Evidence Extractor", "PGRF-Net"),
    ("omni-modal reward modeling", "Omni-Reward"),
    ("user-like thinking and mimicking", "MIMIC-Bench"),
]


@pytest.mark.parametrize("marker, name", NAMED_SEEDS, ids=[n for _, n in NAMED_SEEDS])
def test_seed_titles_name_the_contribution(marker: str, name: str) -> None:
    title = derive_title(seed_abstract(marker))
    assert title.startswith(name + ": "), title
    headline = title[len(name) + 2 :]
    assert 2 <= len(headline.split()) <= 14, title
    assert headline[0].isupper()


def test_seed_headlines_describe_the_contribution() -> None:
    """The headline is the appositive after the name, or the acronym's expansion."""
    expected = {
        "real-world behavioral traces": "BehaviorBench: A benchmark for modeling user decisions from real-world behavioral traces",
        "Dual-Path Drift Harmonization": "EMCift: Extensible Multi-Center Modeling with Dual-Path Drift Harmonization",
        "Sequential Target Attention": "VISTA: Virtual Sequential Target Attention",
        "user-summarization model": "PLUS: Preference Learning Using Summarization",
        "Hoeffding tolerances": "CAPAL: Class-query Active, Persistent-noise-Aware Learning",
        "single-cell perturbation": "scPertCRL: A causally structured generative framework for single-cell perturbation prediction",
        "semantic search engine for Lean": "Lean Finder: A semantic search engine for Lean and mathlib",
        "atom-level MD trajectories": "ATMOS: A generative framework based on State Space Models",
    }
    for marker, title in expected.items():
        assert derive_title(seed_abstract(marker)) == title


# (text that identifies the abstract, words its title must contain) for abstracts
# that introduce no named artefact, plus incidental names the title must avoid.
UNNAMED_SEEDS = [
    ("controllable user simulators", ["controllable simulation", "causal"]),
    ("two providers who strategically balance", ["game", "two providers"]),
    ("fair multi-user dueling bandit", ["dueling bandit"]),
    ("Stackelberg game", ["LLM routing"]),
    ("Link sign prediction", ["signed graph", "statistical dependency among edges"]),
    ("Brain stimulation is a powerful tool", ["computational framework"]),
    ("behavior-relevant modules", ["behavior-relevant modules"]),
    ("solver-verifier gap", ["self-improvement"]),
    ("learning human habits", ["human habits"]),
    ("mere exposure, hedonic adaptation", ["user interest", "ads"]),
]


@pytest.mark.parametrize("marker, words", UNNAMED_SEEDS, ids=[m for m, _ in UNNAMED_SEEDS])
def test_seed_titles_without_a_name(marker: str, words: list[str]) -> None:
    title = derive_title(seed_abstract(marker))
    for word in words:
        assert word.lower() in title.lower(), title
    # no incidental names or placeholder macros promoted to the paper's name
    for wrong in ("CopulaGNN", "LLM:", "modelname", "ITI", "Llama", "In this work", "We "):
        assert wrong not in title, title


def test_seed_titles_avoid_incidental_names() -> None:
    assert not derive_title(seed_abstract("Modality Contribution Ratio")).startswith(("MLLM", "MM-Vet", "AMPS"))
    assert not derive_title(seed_abstract("Arbitrary Preference Mapping")).startswith(("Llama", "RAG", "Qwen"))
    assert not derive_title(seed_abstract("language-based user profiles")).startswith(("Amazon", "LLM"))


def test_all_seed_titles_are_short_and_clean() -> None:
    paragraphs = seed_paragraphs()
    assert len(paragraphs) == 29
    for abstract in paragraphs:
        title = derive_title(abstract)
        assert 10 <= len(title) <= MAX_TITLE_CHARS, title
        assert not re.search(r"[\\{}$*_]|\s$|[.,;:]$", title), title
        assert not re.search(r"\b(?:the|of|a|an|and|for|to|with)$", title), title


# Invented abstracts (not in the seeds), one phrasing style each: (abstract, expected title).
INVENTED = [
    (
        "Attention over long sequences is memory-bound on modern accelerators. We propose a tiling strategy that "
        "fuses the softmax and the two matrix multiplications into a single kernel pass, so intermediate scores "
        "never leave on-chip memory. We call our method FlashFoo. On 7B-parameter models FlashFoo speeds up "
        "training by 2.1x and reduces memory traffic fourfold without changing numerical results.",
        "FlashFoo: A tiling strategy that fuses the softmax",
    ),
    (
        "Inductive node embedding remains brittle when graphs grow over time. This paper presents GraphSAGE++, an "
        "inductive representation learning framework that samples neighbourhoods adaptively and aggregates them "
        "with attention. Experiments on citation and protein graphs show consistent gains over GraphSAGE and GAT.",
        "GraphSAGE++: An inductive representation learning framework",
    ),
    (
        "Designing proteins that bind a given target is slow and expensive. Our framework, termed DeepX, couples a "
        "geometric encoder with a diffusion decoder to generate binders conditioned on the target surface. DeepX "
        "recovers native binding motifs and improves in-silico success rates by 35%.",
        "DeepX: Coupling a geometric encoder with a diffusion decoder",
    ),
    (
        "Vision transformers waste computation on redundant tokens. We introduce Hierarchical Token Merging (HiTM), "
        "a plug-in module that progressively merges similar tokens across layers. HiTM halves the FLOPs of ViT-B "
        "with less than 0.3% accuracy loss on ImageNet-1K.",
        "HiTM: Hierarchical Token Merging",
    ),
    (
        "We study the sample complexity of learning halfspaces under Massart noise in the distribution-free "
        "setting. We show that a simple reweighting scheme achieves near-optimal error, and we complement it with "
        "a matching statistical query lower bound.",
        "The sample complexity of learning halfspaces under Massart noise",
    ),
    (
        "Multilingual evaluation of code models is scattered across incompatible suites such as HumanEval and "
        "MBPP. Models are usually compared on ImageNet-style leaderboards that reward memorisation. To address "
        "this, we introduce CrossBench, a benchmark of 12,000 programming tasks translated into 18 languages with "
        "executable tests. We evaluate 30 models, including Llama-3.1-8B and GPT-4o, on CrossBench and find large "
        "gaps for low-resource languages.",
        "CrossBench: A benchmark of 12,000 programming tasks translated into 18 languages",
    ),
    (
        "Subword tokenizers such as BERT's WordPiece (Devlin et al., 2019) and RoBERTa's byte-level BPE fragment "
        "rare words. We present TinyTok, a 4 KB tokenizer that learns merges from character n-gram statistics. "
        "TinyTok matches the downstream accuracy of BPE while shrinking vocabularies by 90%.",
        "TinyTok: A 4 KB tokenizer",
    ),
    (
        "PolyMorph is a compiler that lowers tensor programs to heterogeneous accelerators. It searches layouts "
        "and fusion plans jointly with a learned cost model. PolyMorph outperforms TVM by 1.8x on average across "
        "40 workloads.",
        "PolyMorph: A compiler that lowers tensor programs to heterogeneous accelerators",
    ),
    (
        "Household robots must follow long instructions that refer to objects seen minutes earlier. We develop a "
        "retrieval-augmented planner, dubbed RAPlan, that stores episodic memories as scene graphs and queries "
        "them before each action. RAPlan doubles task success on long-horizon benchmarks.",
        "RAPlan: A retrieval-augmented planner",
    ),
    (
        "Large language models (LLMs) struggle to keep facts consistent across long documents. We propose SPARK, "
        "a sparse retrieval-and-revision loop that checks every generated claim against the source. SPARK reduces "
        "factual errors of LLMs by 40% on summarisation benchmarks.",
        "SPARK: A sparse retrieval-and-revision loop",
    ),
    (
        "Simulating fluids at interactive rates requires compact representations. We present a new framework, "
        "namely Neural Flow Fields (NFF), that represents velocity fields with multiresolution hash grids. NFF "
        "runs 50x faster than numerical solvers at comparable accuracy.",
        "NFF: Neural Flow Fields",
    ),
    (
        "Deep ensembles are surprisingly well calibrated. We aim to understand why averaging independently "
        "trained networks improves calibration, and we trace the effect to the diversity of their last-layer "
        "features.",
        "Understanding why averaging independently trained networks improves calibration",
    ),
    (
        "Mixture-of-experts layers route tokens with a fixed top-k rule. We present **S**parse **A**daptive "
        "**R**outing (**SAR**), a router that learns how many experts each token needs. SAR cuts expert "
        "computation by 30% at equal perplexity.",
        "SAR: Sparse Adaptive Routing",
    ),
    (
        r"Probing classifiers often confound what a representation encodes with what the probe can learn. We "
        r"introduce \textsc{MetaProbe}, a suite of control tasks and calibrated baselines for probing studies. "
        r"Using \textsc{MetaProbe}, we revisit 25 published probing results and find that 9 do not survive "
        r"proper controls.",
        "MetaProbe: A suite of control tasks and calibrated baselines for probing studies",
    ),
    (
        "Retrieval-augmented generation fails when retrieved passages contradict each other. We study how models "
        "resolve such conflicts and design a verification step that re-ranks passages by consistency. "
        "Experiments show that our method, CoVeR, improves exact match by 6 points on conflict-heavy questions, "
        "and CoVeR remains robust when half of the passages are adversarial. CoVeR is cheap to run.",
        "CoVeR: A verification step that re-ranks passages by consistency",
    ),
    (
        "Open chat models lag behind proprietary ones on multi-turn tool use. We release Hermes-2, a "
        "7B-parameter assistant trained on 1M synthetic tool-use dialogues. Hermes-2 rivals models five times "
        "its size on three agent benchmarks.",
        "Hermes-2: A 7B-parameter assistant trained on 1M synthetic tool-use dialogues",
    ),
    (
        "Reinforcement learning from human feedback (RLHF) is the dominant paradigm for aligning language models. "
        "In this work, we analyze the failure modes of reward models under distribution shift and show that "
        "they over-reward verbosity.",
        "Analyzing the failure modes of reward models under distribution shift",
    ),
    (
        "Reading long scientific PDFs on small screens is tedious. We present Quill Reader, an open-source "
        "reading assistant that reflows equations and links every citation to its context. A study with 40 "
        "researchers shows faster comprehension.",
        "Quill Reader: An open-source reading assistant",
    ),
    (
        "Graph neural networks are vulnerable to adversarial edge perturbations.",
        "Graph neural networks are vulnerable to adversarial edge perturbations",
    ),
    (
        "Loss curvature is a classical lens on generalization. In this paper, we investigate whether sharpness "
        "predicts out-of-distribution robustness across 500 trained vision models, and we find that it does not "
        "once model size is controlled for.",
        "Loss curvature: Whether sharpness predicts out-of-distribution robustness",
    ),
]


@pytest.mark.parametrize("abstract, expected", INVENTED, ids=[t.split(":")[0][:24] for _, t in INVENTED])
def test_invented_abstracts(abstract: str, expected: str) -> None:
    assert derive_title(abstract) == expected


def test_incidental_names_are_not_the_title() -> None:
    """Baselines, datasets and models mentioned in passing never become the paper's name."""
    titles = {derive_title(a) for a, _ in INVENTED}
    for incidental in ("HumanEval", "ImageNet", "Llama", "GPT-4o", "BERT", "RoBERTa", "TVM", "LLMs", "RLHF", "ViT-B"):
        assert not any(t.startswith(incidental) for t in titles), incidental


def test_empty_and_whitespace_input() -> None:
    assert derive_title("") == "Untitled"
    assert derive_title("   \n\t ") == "Untitled"
    assert derive_title(None) == "Untitled"  # type: ignore[arg-type]


def test_long_abstract_without_punctuation_is_cut() -> None:
    title = derive_title("word " * 500)
    assert 0 < len(title) <= MAX_TITLE_CHARS


@pytest.mark.parametrize(
    "abstract",
    [
        "we propose " * 10_000,
        "We propose FooNet, a model. " * 3_000,
        "we introduce Alpha Beta Gamma (ABG) " * 3_000,
        "(ABC) " * 20_000,
        "called X-1 " * 20_000,
        "our method, X-1, " * 10_000,
        "a" * 200_000,
        ". " * 50_000,
        "\\emph{" * 20_000,
    ],
    ids=lambda a: repr(a[:14]),
)
def test_pathological_abstracts_are_fast(abstract: str) -> None:
    start = time.perf_counter()
    title = derive_title(abstract)
    # a guard against catastrophic backtracking (minutes, or never), not a speed target: these take
    # milliseconds on a quiet machine, and a loaded CI box must not fail them
    assert time.perf_counter() - start < 30.0
    assert 0 < len(title) <= MAX_TITLE_CHARS


def test_helpers() -> None:
    assert gerund("model") == "modeling"
    assert gerund("analyze") == "analyzing"
    assert gerund("map") == "mapping"
    assert gerund("study") == "studying"
    assert split_sentences("One e.g. two. Three decide.We go on. Fig. 2 shows it.") == [
        "One e.g. two.",
        "Three decide.",
        "We go on.",
        "Fig. 2 shows it.",
    ]
    assert trim_phrase("a framework for the automated and continuous generation of game benchmarks", 4) == (
        "a framework"
    )


ABSTRACTISH = st.lists(
    st.sampled_from(
        [
            "We propose",
            "we introduce",
            "called",
            "namely",
            "(",
            ")",
            ",",
            ".",
            " ",
            "FooNet",
            "LLM",
            "LLMs",
            "a",
            "framework",
            "the",
            "of",
            "\\emph{",
            "}",
            "$",
            "**",
            "Large Language Models",
            "(LLM)",
            "is a",
            "our method",
            "X-1",
            "ABC",
            "\n\n",
            "—",
            "that",
            "which",
            "to",
            "\\modelname{}",
            "github.com/u/Repo2",
            "é",
            "中文",
        ]
    ),
    max_size=60,
).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=600), ABSTRACTISH))
def test_derive_title_never_raises(abstract: str) -> None:
    title = derive_title(abstract)
    assert isinstance(title, str) and title
    assert len(title) <= 120
    if not abstract.strip():
        assert title == "Untitled"


def test_the_word_lists_and_cue_weights_are_a_table(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """titles.tsv beside titles.py holds every word list and cue weight the rules read; a bad row is
    refused with its line."""
    import pytest

    from paperatlas.ingest import titles

    assert titles.NAMING_VERBS["introduce"] == 3.0 and titles.CUES["naming_phrase"] == 3.0
    assert "the" in titles.BAD_ENDINGS and "LLM" in titles.COMMON_ACRONYMS
    lists = set(titles._TABLE.rows)
    assert lists == {
        "bad_ending",
        "soft_boundary",
        "noun_exception",
        "noun_prefix",
        "common_acronym",
        "not_name_start",
        "head_noun",
        "object_verb",
        "gerund_verb",
        "intent_verb",
        "doubling_verb",
        "result_verb",
        "naming_verb",
        "cue",
    }
    bad = tmp_path / "t.tsv"
    bad.write_text("# ok\nbad_ending\ta\nnaming_verb\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 3"):
        titles._Table(bad)
