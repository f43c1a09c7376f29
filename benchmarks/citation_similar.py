"""`similar` with citation neighbours against content-only `similar`, on held-out citations (ACM-CR).

ACM-CR (../shared/data/acm_cr) gives 50 citing papers with their reference lists (the cited papers
that are in its collection). The library here holds the citing papers, the papers they cite and
collection papers they do not cite (to --papers in all), embedded with the default model; the
reference lists are stored as the citation tables `enrich` fills.

For each citing paper q of a part, q's reference list is hidden; then for each paper c it cites,
`similar(c)` should bring back q's other references (papers cited together with c). Content-only
ranks by the embedding; the blend adds `lib.citations.citation_neighbours(c)` (co-citation by the
remaining citing papers, bibliographic coupling, direct links) with a weight chosen on the dev half
(25 citing papers) and reported on the test half. Prints recall@10 for both, and the paired 90%
interval of the difference on the test half.

Task B, in the same run: `similar(q)` itself with q's references hidden should bring them back; the
citation signal there is the reference lists of q's 20 nearest papers by content.

    nice -n 19 .venv/bin/python benchmarks/citation_similar.py [--papers 1000] [--data ../shared/data/acm_cr]

One run (999 papers, default embedder, 2-core machine; figures move in the third decimal between runs):
task A test recall@10 content-only 0.3027, co-citation at the dev-chosen weight 0.25 0.2945 (difference
-0.0083, 90% interval -0.0274 .. +0.0123); task B: weight 0 (content-only, 0.5225) won on dev, every
citation weight was worse (0.1: 0.4751). So `similar` stays content-only.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from paperatlas import Library
from paperatlas_lab.bench.quality import default_data_root
from paperatlas.citations import LINK_KINDS, blend
from paperatlas_lab.eval.bootstrap import paired_interval
from paperatlas.store.citations import CitationRecord

WEIGHTS = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0]
VARIANTS = {"all links": LINK_KINDS, "co-citation only": ("cocited",), "co-citation + coupling": ("cocited", "coupled")}
K = 10
HOP_SEEDS = 20  # content neighbours whose reference lists vote in task B


def load(data: Path, papers: int, seed: int) -> tuple[list[dict], dict[str, list[str]]]:
    citing = [json.loads(line) for line in (data / "citations.jsonl").open(encoding="utf-8")]
    refs = {c["paper_doi"]: list(dict.fromkeys(c["cited_in_collection"])) for c in citing}
    cited = {d for r in refs.values() for d in r}
    rows: list[dict] = [
        {"id": c["paper_doi"], "title": c["title"], "abstract": c["abstract"], "venue": c["venue_dir"]} for c in citing
    ]
    others: list[dict] = []
    with gzip.open(data / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            row = {"id": d["_id"], "title": d["title"], "abstract": d.get("text") or "", "venue": d.get("venue") or ""}
            if d["_id"] in cited:
                rows.append(row)
            elif d.get("text"):
                others.append(row)
    random.Random(seed).shuffle(others)
    rows += others[: max(0, papers - len(rows))]
    return rows, refs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, help="the ACM-CR folder (default: acm_cr in the shared evaluation data)")
    ap.add_argument("--papers", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()
    if a.data is None:
        here = Path(__file__).resolve().parents[1]
        roots = [
            default_data_root(),
            Path("../shared/data"),
            here.parent / "shared" / "data",
            here.parents[1] / "shared" / "data",
        ]
        a.data = next((r / "acm_cr" for r in roots if r and (r / "acm_cr" / "citations.jsonl").is_file()), None)
        if a.data is None:
            raise SystemExit("no ACM-CR here: give --data PATH/acm_cr")
    rows, refs = load(a.data, a.papers, a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "papers.jsonl"
        src.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
        lib = Library(str(Path(tmp) / "lib.db"))
        rep = lib.ingest([str(src)])
        start = time.monotonic()
        lib.embed()
        print(f"library: {rep.new} papers ({len(refs)} citing), embedded in {time.monotonic() - start:.0f} s")
        ids = set(lib.store.paper_ids())
        refs = {q: [d for d in r if d in ids] for q, r in refs.items() if q in ids}
        lib.store.citations.save(
            [CitationRecord(pid, pid, True, "acm-cr", 1.0, None, [], refs.get(pid, []), []) for pid in sorted(ids)]
        )
        order = sorted(refs)
        random.Random(a.seed).shuffle(order)
        parts = {"dev": order[: len(order) // 2], "test": order[len(order) // 2 :]}
        arms = [(name, w) for name in VARIANTS for w in WEIGHTS]
        scores: dict[str, dict[tuple[str, float], list[float]]] = {}
        scores_b: dict[str, dict[float, list[float]]] = {}
        for part, qs in parts.items():
            scores[part] = {arm: [] for arm in arms}
            scores_b[part] = {w: [] for w in WEIGHTS}
            for q in qs:
                lib.store.citations.save([CitationRecord(q, q, True, "acm-cr", 1.0, None, [], [], [])])  # hidden
                per_w: dict[tuple[str, float], list[float]] = {arm: [] for arm in arms}
                for c in refs[q]:
                    relevant = set(refs[q]) - {c}
                    if not relevant:
                        continue
                    content = lib.engine.similar(c, 200)
                    for name, kinds in VARIANTS.items():
                        links = lib.citations.citation_neighbours(c, kinds)
                        for w in WEIGHTS:
                            top = [pid for pid, _ in blend(content, links, w) if pid != c][:K]
                            per_w[(name, w)].append(len(relevant & set(top)) / min(K, len(relevant)))
                # task B: similar(q) itself, q's references hidden; the citation signal is the
                # reference lists of q's content neighbours (what papers like it cite)
                content_q = [(pid, sc) for pid, sc in lib.engine.similar(q, 200)]
                hop: dict[str, float] = {}
                for n, sim in content_q[:HOP_SEEDS]:
                    for pid, strength in lib.citations.citation_neighbours(n, ("cites",)).items():
                        hop[pid] = hop.get(pid, 0.0) + max(0.0, sim) * strength
                for w in WEIGHTS:
                    top = [pid for pid, _ in blend(content_q, hop, w) if pid != q][:K]
                    scores_b[part][w].append(len(set(refs[q]) & set(top)) / min(K, len(refs[q])))
                lib.store.citations.save([CitationRecord(q, q, True, "acm-cr", 1.0, None, [], refs[q], [])])
                for arm in arms:
                    if per_w[arm]:
                        scores[part][arm].append(float(np.mean(per_w[arm])))  # one number per citing paper
        lib.close()
    dev = {arm: float(np.mean(v)) for arm, v in scores["dev"].items()}
    best = max(arms, key=lambda arm: (dev[arm], -arm[1]))
    print(f"recall@{K} of a paper's co-references in similar(paper), mean over citing papers")
    print(f"{'links':<24} weight  dev     test")
    for arm in arms:
        mark = "  <- chosen on dev" if arm == best else ""
        print(f"{arm[0]:<24} {arm[1]:<7} {dev[arm]:.4f}  {float(np.mean(scores['test'][arm])):.4f}{mark}")
    base, chosen = np.array(scores["test"][(arms[0][0], 0.0)]), np.array(scores["test"][best])
    lo, hi = paired_interval(chosen - base, rng=np.random.default_rng(a.seed))
    print(
        f"test: content-only {base.mean():.4f}, {best[0]} at weight {best[1]} {chosen.mean():.4f}, "
        f"difference {chosen.mean() - base.mean():+.4f} (90% interval {lo:+.4f} .. {hi:+.4f}, {len(base)} citing papers)"
    )
    dev_b = {w: float(np.mean(v)) for w, v in scores_b["dev"].items()}
    best_b = max(WEIGHTS, key=lambda w: (dev_b[w], -w))
    print(f"\nrecall@{K} of a citing paper's own (hidden) references in similar(paper); citation signal: the")
    print(f"reference lists of its {HOP_SEEDS} nearest papers by content, weighted by their similarity")
    print("weight  dev     test")
    for w in WEIGHTS:
        mark = "  <- chosen on dev" if w == best_b else ""
        print(f"{w:<7} {dev_b[w]:.4f}  {float(np.mean(scores_b['test'][w])):.4f}{mark}")
    base_b, chosen_b = np.array(scores_b["test"][0.0]), np.array(scores_b["test"][best_b])
    lo, hi = paired_interval(chosen_b - base_b, rng=np.random.default_rng(a.seed))
    print(
        f"test: content-only {base_b.mean():.4f}, with neighbours' references at weight {best_b} {chosen_b.mean():.4f}, "
        f"difference {chosen_b.mean() - base_b.mean():+.4f} (90% interval {lo:+.4f} .. {hi:+.4f}, {len(base_b)} citing papers)"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
