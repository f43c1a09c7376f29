"""How Chinese text should be cut into keyword terms: measured on real Chinese abstracts.

Data: CSL (Chinese Scientific Literature, ydli-ai/CSL, Apache-2.0), `benchmark/kg/{dev,test}.tsv`:
each line holds an abstract with its title and the paper's own keywords. A query is the
keywords joined by spaces (as a reader types them), or only the first keyword (harder: one
term, often shared by several papers); the one relevant document is that paper,
among the split's 1,000 papers. Keyword-only BM25 (the library's index), three analyzers:

  whole-run  a CJK run without spaces is one term (what paperatlas did before issue 12)
  bigram     overlapping character bigrams of CJK runs (search/cjk.py; no dependency)
  jieba      jieba word segmentation (needs `pip install jieba`; not a dependency)

    git show <CSL commit>:benchmark/kg/test.tsv > /tmp/csl_kg_test.tsv
    python benchmarks/cjk_keyword.py /tmp/csl_kg_dev.tsv /tmp/csl_kg_test.tsv

tests/data/csl/ keeps 200 test lines for the test that checks the chosen analyzer.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from paperatlas.search import bm25  # noqa: E402
from paperatlas.search.cjk import CJK_RUN, split_cjk  # noqa: E402
from paperatlas.search.query import parse  # noqa: E402


def load(path: str | Path, first: int | None = None) -> list[tuple[str, str]]:
    """(document text, keyword query) per line of a CSL kg file (`first`: only the first N keywords)."""
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1].strip() and parts[2].strip():
            out.append((parts[1].strip(), " ".join(re.split(r"[_\s]+", parts[2].strip())[:first])))
    return out


def whole_run(text: str) -> list[str]:
    return bm25.TOKEN.findall(text)


def bigram(text: str) -> list[str]:
    rest, grams = split_cjk(text)
    return bm25.TOKEN.findall(rest) + grams


def jieba_cut() -> Callable[[str], list[str]] | None:
    try:
        import jieba
    except ImportError:
        return None
    jieba.setLogLevel(60)

    def cut(text: str) -> list[str]:
        rest = CJK_RUN.sub(" ", text)
        words = [w for run in CJK_RUN.findall(text) for w in jieba.cut_for_search(run) if w.strip()]
        return bm25.TOKEN.findall(rest) + words

    return cut


def evaluate(rows: list[tuple[str, str]], tok: Callable[[str], list[str]]) -> dict[str, float]:
    original = bm25.tokens
    bm25.tokens = tok  # the analyzer calls the module's tokens()
    try:
        t = time.perf_counter()
        idx = bm25.Bm25Index(title_weight=1)
        idx.build([(str(i), "", True, doc) for i, (doc, _) in enumerate(rows)])
        build_s = time.perf_counter() - t
        mrr = hit = 0.0
        for i, (_, q) in enumerate(rows):
            ids = [d for d, _ in idx.search(parse(q), 10)]
            if str(i) in ids:
                hit += 1
                mrr += 1 / (ids.index(str(i)) + 1)
    finally:
        bm25.tokens = original
    n = len(rows)
    return {"mrr@10": round(mrr / n, 4), "hit@10": round(hit / n, 4), "build_s": round(build_s, 2)}


def main() -> None:
    analyzers: dict[str, Callable[[str], list[str]] | None] = {
        "whole-run": whole_run,
        "bigram": bigram,
        "jieba": jieba_cut(),
    }
    for path in sys.argv[1:]:
        for first, what in ((None, "all keywords"), (1, "first keyword only")):
            rows = load(path, first)
            for name, tok in analyzers.items():
                if tok is None:
                    print(f"{Path(path).name}: {name}: not installed")
                    continue
                print(f"{Path(path).name} ({len(rows)} papers, {what}): {name:9s} {evaluate(rows, tok)}")


if __name__ == "__main__":
    main()
