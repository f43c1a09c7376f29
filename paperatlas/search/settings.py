"""SearchSettings: the fusion weights, depths, floors and index backends one search runs with (a
module of its own, so the rooms of search/ that read it need not import the engine that uses them)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from .. import settings as environment
from ..errors import PaperatlasError
from ..overrides import parse_overrides
from .fusion import NORMALIZERS


@dataclass
class SearchSettings:
    """How search ranks. Defaults tuned on the SciFact *train* split only (809 claims);
    docs/search.md has the sweep. Test-split numbers are reported, never tuned on."""

    keyword_index: str = "bm25"  # "bm25" (built in, saved beside the library), "bm25s", "fts5"
    # BM25: k1/b barely matter on SciFact train (nDCG@10 0.700-0.710 over k1 0.9-1.5, b 0.6-0.9);
    # repeating the title 3x beats 2x and 1x (0.709 / 0.705 / 0.701 at k1 1.2, b 0.75).
    k1: float = 1.2
    b: float = 0.75
    title_weight: int = 3
    # the keyword index reads each paper's keywords after its abstract: on the paraphrase set's train
    # half (8,117 venue papers, 5,478 with keywords) hybrid MRR@10 0.852 -> 0.880 once, the same twice or
    # three times (test 0.765 -> 0.772); TL;DR text too: 0.868. SciFact has none, so it is unchanged
    index_keywords: bool = True
    vector_index: str = "auto"  # "numpy" (exact), "faiss-ivf" (approximate), "auto": by size
    # auto: exact below this many vectors, faiss IVF-SQ8 above. Exact float32 costs ~8 ms per
    # query at 100k on one core (more on a busy machine), IVF ~1 ms at recall@10 ~0.97 (bench search)
    ann_threshold: int = 50_000
    fusion: str = "convex"  # "convex" (normalised scores) or "rrf" (ranks only)
    # convex: how each list is put on [0, 1] before the weighted sum: "max" divides by the list's best
    # score, "minmax" also moves its worst candidate to 0, "zscore" standardises. "max" keeps a semantic
    # list whose cosines sit close together close together, and a score no longer depends on how deep
    # the lists were fetched. Picked with the weight on three dev sets (docs/search.md: minmax 0.5 ->
    # max 0.55 moves SciFact dev 0.7868 -> 0.7880, paraphrase train 0.943 -> 0.962, the 402 written dev
    # paraphrases 0.854 -> 0.858 with minilm-tuned-r11)
    norm: str = "max"
    semantic_weight: float = 0.55  # convex: weight of the semantic list (keyword gets 1 - this)
    # the same for queries routed to the multilingual index (CJK script): tuned on the 54 Chinese
    # queries of tests/data/crosslingual_queries.jsonl (686 papers), hybrid MRR@10 0.682 / 0.702 / 0.711 / 0.712
    # at 0.5 / 0.7 / 0.8 / 0.9 (semantic alone 0.708): an acronym ("LLM") matches too much by keyword
    crosslingual_semantic_weight: float = 0.8
    # queries routed to the multilingual index: "calibrated" fuses the model's cosine on its
    # calibrated scale (search/floor.py: SCALES) with min-max keyword scores, so a clearly better
    # meaning match wins and the score shown says how good the match is; "minmax" scales each list
    # to [0, 1] within the answer (the top hit always 1.000, however weak)
    crosslingual_fusion: str = "calibrated"
    # a Chinese query's keyword side also searches the English words of the terms glossary.tsv knows
    # (search/glossary.py); docs/crosslingual.md has the figures with and without
    glossary: bool = True
    # ...and, when the glossary reads at least `glossary_min_share` of its Chinese characters, the
    # English reading is searched as an English query and blended in with weight glossary_weight * share
    glossary_weight: float = 0.5
    glossary_min_share: float = 0.5
    # a Chinese query searches the multilingual index once it covers this share of the papers; before,
    # as with no index (the glossary's English): the papers a partial index lacks cannot be found by
    # meaning, so a quarter of the index (random papers) answered worse than none (zh test MRR@10 0.34
    # against 0.58, half 0.53, 90% 0.73; benchmarks/zh_first_minute.py --partial). 0.95 rather than 1:
    # a few papers stored since the last build do not send every Chinese query back to minute one
    multilingual_min_coverage: float = field(
        default_factory=lambda: float(environment.get("multilingual_min_coverage"))
    )
    # where a language model is configured, a query in CJK script is also rendered in English by it
    # (lib.llm.query_english, stored per query) and that English searched as an English query, blended
    # in with this weight; it stands in for the glossary's reading. Tuned on the train half of
    # tests/data/zh_queries.jsonl at 8,117 papers with Qwen2.5-Coder-1.5B, greedy renderings: MRR@10
    # 0.831 / 0.889 / 0.892 / 0.841 at 0.3 / 0.5 / 0.7 / 0.9 (docs/crosslingual.md has the test figures)
    translation_weight: float = 0.7
    complete_scores: bool = True  # hybrid: score every candidate in both lists, not "missing = worst"
    depth: int = 100  # candidates taken from each list before fusing
    rrf_k: int = 60
    persist: bool = True  # save built indexes beside the library file
    # semantic / hybrid: no hits for a query with no real match (search/floor.py; calibrated per
    # embedder by `paperatlas eval floor`: SciFact train claims against nonsense queries)
    floor: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def parse_overrides(cls, text: str) -> dict[str, Any]:
        """ "norm=minmax,semantic_weight=0.5" -> {"norm": "minmax", "semantic_weight": 0.5}, each value
        read as its field's type; an unknown name or a value of the wrong type is refused with the fix."""
        out = parse_overrides(cls().to_dict(), text, "search setting")
        if "norm" in out and out["norm"] not in NORMALIZERS:
            raise PaperatlasError(f"unknown norm {out['norm']!r}", f"use one of: {', '.join(NORMALIZERS)}")
        return out
